//! The statistics as metrics, with the `metrics` feature: counters and a histogram labelled
//! with the key, through the `metrics` facade, for whatever recorder the app installs (a
//! Prometheus exporter, say). Without the feature all of it compiles to nothing.
//!
//! Every metric has a help text and, but for the ratio (0 to 1), a unit ([`describe`]).
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
/// The buckets of [`RESERVATION_SECONDS`] to give a Prometheus recorder (0.5 ms to 2.5 s: a
/// reservation takes about a millisecond, much longer behind a lock), so that it renders a
/// histogram, whose `_bucket` series `histogram_quantile` reads, rather than a summary:
/// `PrometheusBuilder::set_buckets_for_metric(Matcher::Full(RESERVATION_SECONDS.into()),
/// RESERVATION_SECONDS_BUCKETS)` (the guide's "Metrics").
pub const RESERVATION_SECONDS_BUCKETS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];
/// Gauge: the part of its period's capacity the counter a key last reserved from has used, 0
/// to 1, for keys whose numbers stop at the end (the default policy, `letters`, series); set
/// in the application at each reservation. For a scoped key, the scope reserved from last;
/// [`CAPACITY_FULLEST_USED_RATIO`] is the fullest.
pub const CAPACITY_USED_RATIO: &str = "seqgen_capacity_used_ratio";
/// Gauge, from the `seqgen metrics` exporter, which reads every counter in `db_key`: the part
/// of its period's capacity a key's fullest current counter has used, 0 to 1 (one series per
/// key, whatever its scopes).
pub const CAPACITY_FULLEST_USED_RATIO: &str = "seqgen_capacity_fullest_used_ratio";
/// Gauge, from the `seqgen metrics` exporter: when the key's fullest counter runs out at the
/// rate its period went so far, as a Unix time; absent when it does not before its period ends.
pub const CAPACITY_RUNS_OUT: &str = "seqgen_capacity_runs_out_timestamp_seconds";
/// Gauge, from `seqgen check --textfile`: counters of a key behind its table (the next number
/// is one the table holds).
pub const CHECK_COUNTERS_BEHIND: &str = "seqgen_check_counters_behind";
/// Gauge, from `seqgen check --textfile`: rows of a key's table without an ID.
pub const CHECK_ROWS_WITHOUT_ID: &str = "seqgen_check_rows_without_id";
/// Gauge, from `seqgen metrics --pending`: committed rows of a table waiting for a follower to
/// number them (`gapless = "deferred"`).
pub const PENDING_ROWS: &str = "seqgen_pending_rows";
/// Gauge, from `seqgen metrics --listen --pending`: how long the oldest of those rows has
/// waited, since the exporter first saw the table reach it; 0 without any.
pub const PENDING_OLDEST_AGE: &str = "seqgen_pending_oldest_age_seconds";

/// Every metric seqgen exports, in-process (with the `metrics` feature) or from the `seqgen`
/// command: what dashboards and alert rules may name (`contrib/` is checked against it).
pub const ALL: &[&str] = &[
    RESERVATIONS,
    NUMBERS_RESERVED,
    SERVED_FROM_MEMORY,
    NUMBERS_ABANDONED,
    NUMBERS_GIVEN_BACK,
    RETRIES,
    CONFLICTS,
    RESERVATION_SECONDS,
    CAPACITY_USED_RATIO,
    CAPACITY_FULLEST_USED_RATIO,
    CAPACITY_RUNS_OUT,
    CHECK_COUNTERS_BEHIND,
    CHECK_ROWS_WITHOUT_ID,
    PENDING_ROWS,
    PENDING_OLDEST_AGE,
];

/// The help text of each metric, as exporters show it (they add the final period).
pub fn help(name: &str) -> &'static str {
    match name {
        RESERVATIONS => "Reservations: statements that took numbers from db_key",
        NUMBERS_RESERVED => "Numbers the reservations took",
        SERVED_FROM_MEMORY => "IDs served from a block held in memory",
        NUMBERS_ABANDONED => "Numbers reserved and dropped unserved (holes)",
        NUMBERS_GIVEN_BACK => "Numbers release gave back to their counters",
        RETRIES => "Reservation attempts repeated after a serialization failure",
        CONFLICTS => "Calls that failed because another transaction held or changed the counter",
        RESERVATION_SECONDS => "How long reservations took",
        CAPACITY_USED_RATIO => {
            "Part of its period's capacity the counter a key last reserved from has used (0 to 1)"
        }
        CAPACITY_FULLEST_USED_RATIO => {
            "Part of its period's capacity a key's fullest counter has used (0 to 1)"
        }
        CAPACITY_RUNS_OUT => {
            "When a key's fullest counter runs out at its period's rate so far (Unix time)"
        }
        CHECK_COUNTERS_BEHIND => "Counters of a key behind its table, as seqgen check found them",
        CHECK_ROWS_WITHOUT_ID => "Rows of a key's table without an ID, as seqgen check found them",
        PENDING_ROWS => "Committed rows of a table waiting for a follower to number them",
        PENDING_OLDEST_AGE => "How long the oldest row waiting for its number has waited",
        _ => "",
    }
}

/// Describes every metric (unit and help text) to the `metrics` recorder installed now. seqgen
/// calls it at its first reservation; call it yourself after installing a recorder to have the
/// descriptions before that.
pub fn describe() {
    #[cfg(feature = "metrics")]
    {
        use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
        for name in [
            RESERVATIONS,
            NUMBERS_RESERVED,
            SERVED_FROM_MEMORY,
            NUMBERS_ABANDONED,
            NUMBERS_GIVEN_BACK,
            RETRIES,
            CONFLICTS,
        ] {
            describe_counter!(name, Unit::Count, help(name));
        }
        describe_histogram!(
            RESERVATION_SECONDS,
            Unit::Seconds,
            help(RESERVATION_SECONDS)
        );
        // A ratio, 0 to 1: Prometheus' `_ratio`, no unit (`Unit::Percent` would say 0 to 100).
        describe_gauge!(CAPACITY_USED_RATIO, help(CAPACITY_USED_RATIO));
    }
}

/// [`describe`], once per process, at the first publication.
#[cfg(feature = "metrics")]
fn described() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(describe);
}

/// Sets the capacity used by the counter `key` last reserved from.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn capacity_used(key: &str, ratio: f64) {
    #[cfg(feature = "metrics")]
    {
        described();
        metrics::gauge!(CAPACITY_USED_RATIO, "key" => key.to_owned()).set(ratio);
    }
}

/// Adds `n` to the counter `name` of `key`.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn add(name: &'static str, key: &str, n: u64) {
    #[cfg(feature = "metrics")]
    if n > 0 {
        described();
        metrics::counter!(name, "key" => key.to_owned()).increment(n);
    }
}

/// Records how long a reservation of `key` took.
#[cfg_attr(not(feature = "metrics"), allow(unused_variables))]
pub(crate) fn reservation_time(key: &str, took: std::time::Duration) {
    #[cfg(feature = "metrics")]
    {
        described();
        metrics::histogram!(RESERVATION_SECONDS, "key" => key.to_owned())
            .record(took.as_secs_f64());
    }
}
