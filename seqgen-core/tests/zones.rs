//! Named time zones (the IANA database, through `chrono-tz`).

use diesel_seqgen_core::{Spec, TimeZone};

/// A named zone's period changes at local midnight on both daylight-saving days of a year, in
/// both hemispheres' sense of the change (Paris springs forward in March, Sydney in October).
#[test]
fn named_zones_change_period_at_local_midnight_all_year() {
    use chrono::{TimeZone as _, Utc};
    let spec = |zone: &str| {
        Spec::builder("k")
            .date("%Y%m%d")
            .time_zone(TimeZone::parse(zone).unwrap())
            .build()
            .unwrap()
    };
    let at = |y, m, d, h, mi, s| Utc.with_ymd_and_hms(y, m, d, h, mi, s).unwrap();
    let cases = [
        // Paris: +01:00 until 2026-03-29 01:00 UTC, +02:00 until 2026-10-25 01:00 UTC.
        ("Europe/Paris", at(2026, 3, 28, 22, 59, 59), "20260328"),
        ("Europe/Paris", at(2026, 3, 28, 23, 0, 0), "20260329"),
        ("Europe/Paris", at(2026, 3, 29, 22, 0, 0), "20260330"),
        ("Europe/Paris", at(2026, 10, 24, 22, 0, 0), "20261025"),
        ("Europe/Paris", at(2026, 10, 25, 22, 59, 59), "20261025"),
        ("Europe/Paris", at(2026, 10, 25, 23, 0, 0), "20261026"),
        // Sydney: +11:00 until 2026-04-05, +10:00 until 2026-10-04, then +11:00.
        ("Australia/Sydney", at(2026, 4, 4, 12, 59, 59), "20260404"),
        ("Australia/Sydney", at(2026, 4, 4, 13, 0, 0), "20260405"),
        ("Australia/Sydney", at(2026, 4, 5, 14, 0, 0), "20260406"),
        ("Australia/Sydney", at(2026, 10, 3, 14, 0, 0), "20261004"),
        ("Australia/Sydney", at(2026, 10, 4, 12, 59, 59), "20261004"),
        ("Australia/Sydney", at(2026, 10, 4, 13, 0, 0), "20261005"),
    ];
    for (zone, now, period) in cases {
        assert_eq!(spec(zone).period_at(now), period, "{zone} at {now}");
    }
    assert_eq!(TimeZone::parse("UTC"), Some(TimeZone::Utc));
    assert_eq!(TimeZone::parse("Mars/Olympus"), None);
}
