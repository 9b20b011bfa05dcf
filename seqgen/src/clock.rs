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

    /// The current Unix time in whole seconds. Read once per ID to notice a new period, so a
    /// clock with a cheaper way to tell it than [`now`](Clock::now) may override this.
    fn unix_second(&self) -> i64 {
        self.now().timestamp()
    }
}

/// The system clock (the default).
///
/// The once-per-ID check for a new period reads the kernel's coarse real-time clock on Linux
/// (updated every tick, a few milliseconds), so an ID may carry the previous date for up to a
/// tick after midnight. Uniqueness does not depend on it: every period has its own counter.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }

    fn unix_second(&self) -> i64 {
        #[cfg(target_os = "linux")]
        {
            // CLOCK_REALTIME_COARSE, through rustix's safe wrapper: no system call (vDSO).
            #[allow(clippy::useless_conversion)] // time_t is i32 on some 32-bit targets
            return i64::from(
                rustix::time::clock_gettime(rustix::time::ClockId::RealtimeCoarse).tv_sec,
            );
        }
        #[cfg(not(target_os = "linux"))]
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64)
    }
}

/// The system clock shifted by a fixed offset: for simulating an instance whose clock is off.
/// An offset past the range chrono can show stops at its first or last moment.
#[derive(Debug, Clone, Copy)]
pub struct OffsetClock(pub TimeDelta);

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        shifted(Utc::now(), self.0)
    }
}

/// `at + by`, saturating at the ends of chrono's range instead of panicking.
fn shifted(at: DateTime<Utc>, by: TimeDelta) -> DateTime<Utc> {
    at.checked_add_signed(by)
        .unwrap_or(if by < TimeDelta::zero() {
            DateTime::<Utc>::MIN_UTC
        } else {
            DateTime::<Utc>::MAX_UTC
        })
}

/// A clock that stands still until it is set: for tests and examples.
///
/// ```
/// use chrono::{TimeDelta, TimeZone, Utc};
/// use diesel_seqgen::clock::Clock;
/// use diesel_seqgen::clock::FixedClock;
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

    /// Moves the time by `by` (negative to go back), stopping at the ends of chrono's range.
    pub fn advance(&self, by: TimeDelta) {
        // One atomic step, so concurrent advances add up.
        let _ = self
            .micros
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |micros| {
                Some(shifted(from_micros(micros), by).timestamp_micros())
            });
    }
}

/// A time from microseconds that came from a `DateTime`, clamped to chrono's range.
fn from_micros(micros: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(micros).unwrap_or(if micros < 0 {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

impl Clock for FixedClock {
    fn now(&self) -> DateTime<Utc> {
        from_micros(self.micros.load(Ordering::SeqCst))
    }
}

impl<C: Clock + ?Sized> Clock for std::sync::Arc<C> {
    fn now(&self) -> DateTime<Utc> {
        (**self).now()
    }

    fn unix_second(&self) -> i64 {
        (**self).unix_second()
    }
}
