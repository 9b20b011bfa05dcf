//! The time zone a spec's period is computed in.

use chrono::{DateTime, FixedOffset, Utc};

/// The time zone a spec's date part is computed in: the period changes at midnight there.
///
/// The default is UTC, the same on every instance. `Local` is each machine's own zone: only
/// safe when every instance runs in the same one (it never causes a duplicate, but two
/// instances in different zones stamp different dates at the same moment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum TimeZone {
    /// Coordinated Universal Time.
    #[default]
    Utc,
    /// The machine's local time zone.
    Local,
    /// A fixed offset from UTC, e.g. `+08:00`.
    Fixed(FixedOffset),
}

impl TimeZone {
    /// `utc`, `local`, or a fixed offset `±HH:MM`; `None` for anything else.
    ///
    /// ```
    /// use diesel_seqgen_core::TimeZone;
    /// assert_eq!(TimeZone::parse("utc"), Some(TimeZone::Utc));
    /// assert!(matches!(TimeZone::parse("+08:00"), Some(TimeZone::Fixed(_))));
    /// assert_eq!(TimeZone::parse("Europe/Paris"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        use crate::date_pattern::{parse_time_zone, ZoneSpec};
        Some(match parse_time_zone(text)? {
            ZoneSpec::Utc => TimeZone::Utc,
            ZoneSpec::Local => TimeZone::Local,
            ZoneSpec::Offset(secs) => TimeZone::Fixed(FixedOffset::east_opt(secs)?),
        })
    }

    /// `now` formatted with a strftime `pattern` in this zone.
    pub fn format(self, now: DateTime<Utc>, pattern: &str) -> String {
        match self {
            TimeZone::Utc => now.format(pattern).to_string(),
            TimeZone::Local => now
                .with_timezone(&chrono::Local)
                .format(pattern)
                .to_string(),
            TimeZone::Fixed(offset) => now.with_timezone(&offset).format(pattern).to_string(),
        }
    }
}
