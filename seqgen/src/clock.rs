//! Where time comes from. The clock decides the period a new ID belongs to.
//!
//! Any clock is safe: periods are separate `db_key` rows, so a clock that runs behind only
//! stamps IDs with an older date (drawing from that date's counter); it never reissues one.

use std::sync::atomic::{AtomicI64, Ordering};

use chrono::{DateTime, TimeDelta, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current time.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// The system clock shifted by a fixed offset: for simulating an instance whose clock is off.
#[derive(Debug, Clone, Copy)]
pub struct OffsetClock(pub TimeDelta);

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.0
    }
}

/// A clock that stands still until it is set: for tests and examples.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use seqgen::{Clock, FixedClock};
///
/// let clock = FixedClock::new(Utc.with_ymd_and_hms(2025, 7, 2, 23, 59, 59).unwrap());
/// clock.advance(TimeDelta::seconds(1));
/// assert_eq!(clock.now(), Utc.with_ymd_and_hms(2025, 7, 3, 0, 0, 0).unwrap());
/// ```
#[derive(Debug)]
pub struct FixedClock {
    micros: AtomicI64,
}

impl FixedClock {
    /// A clock showing `at`.
    pub fn new(at: DateTime<Utc>) -> Self {
        FixedClock {
            micros: AtomicI64::new(at.timestamp_micros()),
        }
    }

    /// Sets the time.
    pub fn set(&self, at: DateTime<Utc>) {
        self.micros.store(at.timestamp_micros(), Ordering::SeqCst);
    }

    /// Moves the time by `by` (negative to go back).
    pub fn advance(&self, by: TimeDelta) {
        let by = by
            .num_microseconds()
            .expect("advance by less than 292,000 years");
        self.micros.fetch_add(by, Ordering::SeqCst);
    }
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        DateTime::from_timestamp_micros(self.micros.load(Ordering::SeqCst))
            .expect("a FixedClock holds a valid time")
    }
}
