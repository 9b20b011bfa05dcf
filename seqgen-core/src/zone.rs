//! The time zone a spec's period is computed in.

use chrono::{DateTime, FixedOffset, Utc};

/// The time zone a spec's date part is computed in: the period changes at midnight there.
///
/// The default is UTC, the same on every instance. A named zone of the IANA database
/// (`Europe/Paris`) follows its daylight-saving changes: the period changes at local midnight
/// all year. `Local` is each machine's own zone: only safe when every instance runs in the
/// same one (it never causes a duplicate, but two instances in different zones stamp
/// different dates at the same moment).
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
    /// A zone of the IANA time zone database, e.g. `Europe/Paris` (through `chrono-tz`: the
    /// `tz` feature).
    #[cfg(feature = "tz")]
    Named(chrono_tz::Tz),
}

impl TimeZone {
    /// `utc`, `local`, a fixed offset `±HH:MM`, or (with the `tz` feature) an IANA zone name
    /// (`Europe/Paris`, `America/New_York`); `None` for anything else.
    ///
    /// ```
    /// use diesel_seqgen_core::TimeZone;
    /// assert_eq!(TimeZone::parse("utc"), Some(TimeZone::Utc));
    /// assert!(matches!(TimeZone::parse("+08:00"), Some(TimeZone::Fixed(_))));
    /// assert_eq!(TimeZone::parse("Mars/Olympus"), None);
    /// # #[cfg(feature = "tz")]
    /// assert!(matches!(TimeZone::parse("Europe/Paris"), Some(TimeZone::Named(_))));
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        use crate::date_pattern::{parse_time_zone, ZoneSpec};
        #[cfg(feature = "tz")]
        if let Ok(named) = text.parse::<chrono_tz::Tz>() {
            // `UTC` is a name there too: keep the cheaper, equal variant.
            if !matches!(text, "utc" | "UTC" | "Z") {
                return Some(TimeZone::Named(named));
            }
        }
        Some(match parse_time_zone(text)? {
            ZoneSpec::Utc => TimeZone::Utc,
            ZoneSpec::Local => TimeZone::Local,
            ZoneSpec::Offset(secs) => TimeZone::Fixed(FixedOffset::east_opt(secs)?),
        })
    }

    /// The calendar date in this zone at `now`.
    pub fn local_date(self, now: DateTime<Utc>) -> chrono::NaiveDate {
        match self {
            TimeZone::Utc => now.date_naive(),
            TimeZone::Local => now.with_timezone(&chrono::Local).date_naive(),
            TimeZone::Fixed(offset) => now.with_timezone(&offset).date_naive(),
            #[cfg(feature = "tz")]
            TimeZone::Named(zone) => now.with_timezone(&zone).date_naive(),
        }
    }

    /// The first moment of the calendar day `day` in this zone (midnight, or the first moment
    /// after it where a daylight-saving change skips midnight).
    pub fn start_of_day(self, day: chrono::NaiveDate) -> DateTime<Utc> {
        use chrono::TimeZone as _;
        let first = |zone: &dyn Fn(chrono::NaiveDateTime) -> Option<DateTime<Utc>>| {
            // A skipped midnight: the hour after it exists.
            (0..=2).find_map(|hour| zone(day.and_hms_opt(hour, 0, 0)?))
        };
        let start = match self {
            TimeZone::Utc => first(&|t| Some(t.and_utc())),
            TimeZone::Local => first(&|t| {
                let local = chrono::Local.from_local_datetime(&t).earliest()?;
                Some(local.with_timezone(&Utc))
            }),
            TimeZone::Fixed(offset) => first(&|t| {
                Some(
                    offset
                        .from_local_datetime(&t)
                        .earliest()?
                        .with_timezone(&Utc),
                )
            }),
            #[cfg(feature = "tz")]
            TimeZone::Named(zone) => {
                first(&|t| Some(zone.from_local_datetime(&t).earliest()?.with_timezone(&Utc)))
            }
        };
        start.unwrap_or_else(|| day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc())
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
            #[cfg(feature = "tz")]
            TimeZone::Named(zone) => now.with_timezone(&zone).format(pattern).to_string(),
        }
    }
}
