//! When a period ends: the first second the date part prints something else.

use chrono::{DateTime, TimeDelta, Timelike, Utc};

use super::Spec;

/// How far [`Spec::period_ends`] looks: no date part that changes less often is a period.
const HORIZON_DAYS: i64 = 800;

impl Spec {
    /// The first second after `now` at which the period differs from the one at `now` (in the
    /// spec's time zone); `None` without a date part, or when it does not change within two
    /// years.
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    ///
    /// let monthly = diesel_seqgen_core::Spec::builder("orders").date("%y%m").build()?;
    /// let now = Utc.with_ymd_and_hms(2026, 11, 25, 15, 0, 0).unwrap();
    /// assert_eq!(monthly.period_ends(now), Some(Utc.with_ymd_and_hms(2026, 12, 1, 0, 0, 0).unwrap()));
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn period_ends(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        if self.date().is_empty() || self.reset() == Some(super::Reset::Never) {
            return None;
        }
        let now = now.with_nanosecond(0).unwrap_or(now);
        // The counter's period, which a reset makes longer than the printed date's.
        let counter_at = |at| self.counter_period(&self.period_at(at));
        let period = counter_at(now);
        let differs = |seconds: i64| counter_at(now + TimeDelta::seconds(seconds)) != period;
        // Doubling steps find a second in another period, halving ones the first such second.
        let (mut same, mut other) = (0i64, 1i64);
        while !differs(other) {
            same = other;
            other *= 2;
            if other > HORIZON_DAYS * 86_400 {
                return None;
            }
        }
        while other - same > 1 {
            let middle = same + (other - same) / 2;
            if differs(middle) {
                other = middle;
            } else {
                same = middle;
            }
        }
        Some(now + TimeDelta::seconds(other))
    }
}
