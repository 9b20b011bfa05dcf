//! What a generator did, per key: [`Generator::stats`](crate::Generator::stats) and
//! [`stats`](crate::global::stats()) for the process-wide default.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::time::Duration;

std::thread_local! {
    /// Attempts this thread repeated, for the statistics: a reservation reads it before and
    /// after (see `cache::Reserving`).
    static RETRIES: Cell<u64> = const { Cell::new(0) };
}

/// Counts an attempt this thread repeats.
pub(crate) fn count_retry() {
    RETRIES.set(RETRIES.get() + 1);
}

/// How many attempts this thread has repeated so far.
pub(crate) fn retries_so_far() -> u64 {
    RETRIES.get()
}

/// What a generator did for one key (all its periods) since it was built.
///
/// Counting costs nothing on the cached path: IDs served from memory are counted under the
/// lock that serves them, everything else once per reservation.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct KeyStats {
    /// The `db_key` key name.
    pub key: String,
    /// IDs served from a block already held in memory, without a round trip: the hits. (The
    /// first IDs of a block are served by the reservation that took it: the misses.)
    pub served_from_memory: u64,
    /// Reservations: statements that took numbers from the key's counter (a block in batched
    /// mode, in the foreground or ahead in the background; the numbers themselves in gapless
    /// mode or inside a transaction).
    pub reservations: u64,
    /// Numbers those reservations took.
    pub numbers_reserved: u64,
    /// Numbers reserved and then dropped unserved, which are holes in the numbering: the rest
    /// of a block when its period ended, a block reserved ahead that was no longer wanted, what
    /// [`release`](crate::Generator::release) could not give back.
    pub numbers_abandoned: u64,
    /// Numbers [`release`](crate::Generator::release) gave back to the counter.
    pub numbers_given_back: u64,
    /// Reservation attempts repeated after a serialization failure.
    pub retries: u64,
    /// Calls that failed because another transaction held or changed the counter:
    /// [`Error::TransactionConflict`](crate::Error::TransactionConflict) and
    /// [`Error::Busy`](crate::Error::Busy).
    pub conflicts: u64,
    /// How long the reservations took.
    pub reservation_time: Timings,
}

/// Durations of a kind of call: how many, their mean and the longest.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Timings {
    /// How many were timed.
    pub count: u64,
    /// Their sum.
    pub total: Duration,
    /// The longest.
    pub max: Duration,
}

impl Timings {
    /// The mean duration; zero when none was timed.
    pub fn mean(&self) -> Duration {
        match u32::try_from(self.count) {
            Ok(0) => Duration::ZERO,
            Ok(count) => self.total / count,
            Err(_) => Duration::from_secs_f64(self.total.as_secs_f64() / self.count as f64),
        }
    }

    pub(crate) fn record(&mut self, took: Duration) {
        self.count += 1;
        self.total += took;
        self.max = self.max.max(took);
    }

    fn add(&mut self, other: &Timings) {
        self.count += other.count;
        self.total += other.total;
        self.max = self.max.max(other.max);
    }
}

impl KeyStats {
    /// Adds `other` (the same key under another date pattern, or in another generator).
    fn add(&mut self, other: &KeyStats) {
        self.served_from_memory += other.served_from_memory;
        self.reservations += other.reservations;
        self.numbers_reserved += other.numbers_reserved;
        self.numbers_abandoned += other.numbers_abandoned;
        self.numbers_given_back += other.numbers_given_back;
        self.retries += other.retries;
        self.conflicts += other.conflicts;
        self.reservation_time.add(&other.reservation_time);
    }
}

/// One entry per key name, in key order, each the sum of the `parts` of that name.
pub(crate) fn per_key(parts: impl IntoIterator<Item = KeyStats>) -> Vec<KeyStats> {
    let mut keys: BTreeMap<String, KeyStats> = BTreeMap::new();
    for part in parts {
        keys.entry(part.key.clone())
            .or_insert_with(|| KeyStats {
                key: part.key.clone(),
                ..KeyStats::default()
            })
            .add(&part);
    }
    keys.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_add_up() {
        let mut t = Timings::default();
        assert_eq!(t.mean(), Duration::ZERO);
        t.record(Duration::from_millis(2));
        t.record(Duration::from_millis(4));
        assert_eq!(
            (t.count, t.mean(), t.max),
            (2, Duration::from_millis(3), Duration::from_millis(4))
        );
    }

    #[test]
    fn parts_of_one_key_are_summed() {
        let part = |key: &str, hits| KeyStats {
            key: key.into(),
            served_from_memory: hits,
            ..KeyStats::default()
        };
        let merged = per_key([part("b", 1), part("a", 2), part("b", 3)]);
        assert_eq!(merged, [part("a", 2), part("b", 4)]);
    }
}
