//! The statistics as metrics, with the `metrics` feature: counters and a histogram labelled
//! with the key, through the `metrics` facade, for whatever recorder the app installs (a
//! Prometheus exporter, say). Without the feature all of it compiles to nothing.
//!
//! Published at each reservation and at `release`, never on the cached path: the IDs served
//! from memory and the numbers a new period left unused are added then, as what accrued since
//! the last publication, so those two lag by up to a block (about a second for a busy key).

/// Counter: reservations (statements that took numbers).
pub const RESERVATIONS: &str = "seqgen_reservations_total";
/// Counter: numbers the reservations took.
pub const NUMBERS_RESERVED: &str = "seqgen_numbers_reserved_total";
/// Counter: IDs served from a block held in memory.
pub const SERVED_FROM_MEMORY: &str = "seqgen_ids_served_from_memory_total";
/// Counter: numbers reserved and dropped unserved (holes).
pub const NUMBERS_ABANDONED: &str = "seqgen_numbers_abandoned_total";
/// Counter: numbers `release` gave back.
pub const NUMBERS_GIVEN_BACK: &str = "seqgen_numbers_given_back_total";
/// Counter: reservation attempts repeated after a serialization failure.
pub const RETRIES: &str = "seqgen_retries_total";
/// Counter: calls that failed because another transaction held or changed the counter.
pub const CONFLICTS: &str = "seqgen_conflicts_total";
/// Histogram: how long reservations took, in seconds.
pub const RESERVATION_SECONDS: &str = "seqgen_reservation_seconds";

/// Adds `n` to the counter `name` of `key`.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn add(name: &'static str, key: &str, n: u64) {
    #[cfg(feature = "metrics")]
    if n > 0 {
        metrics::counter!(name, "key" => key.to_owned()).increment(n);
    }
}

/// Records how long a reservation of `key` took.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn reservation_time(key: &str, took: std::time::Duration) {
    #[cfg(feature = "metrics")]
    metrics::histogram!(RESERVATION_SECONDS, "key" => key.to_owned()).record(took.as_secs_f64());
}
