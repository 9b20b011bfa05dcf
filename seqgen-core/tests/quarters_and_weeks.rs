//! Quarters (`%q`) and ISO weeks (`%G-W%V`) as periods: each prints and counts apart, in the
//! spec's time zone, and reads back.

use chrono::{TimeZone, Utc};
use diesel_seqgen_core::{Spec, TimeZone as Zone};

#[test]
fn a_quarter_begins_at_local_midnight_east_of_utc() {
    let spec = Spec::builder("k")
        .format("Q{date}-{seq}")
        .date("%q-%Y")
        .pad(4)
        .time_zone(Zone::parse("+09:00").unwrap())
        .build()
        .unwrap();
    // 23:59:59 on 30 September in Tokyo's offset, then midnight there: 15:00 UTC.
    let before = Utc.with_ymd_and_hms(2026, 9, 30, 14, 59, 59).unwrap();
    let after = Utc.with_ymd_and_hms(2026, 9, 30, 15, 0, 0).unwrap();
    assert_eq!(spec.format(&spec.period_at(before), 1), "Q3-2026-0001");
    assert_eq!(spec.format(&spec.period_at(after), 1), "Q4-2026-0001");
    assert_eq!(spec.period_ends(before), Some(after));
    assert_eq!(spec.parse("Q4-2026-0001").unwrap().period, "4-2026");
    // One digit: a quarter fits an `i64` form.
    let numeric = Spec::builder("k")
        .date("%Y%q")
        .pad(5)
        .numeric()
        .build()
        .unwrap();
    assert_eq!(numeric.numeric("20264", 12), Some(2026400012));
}

#[test]
fn the_last_days_of_a_year_can_be_the_next_years_first_iso_week() {
    let spec = Spec::builder("k")
        .format("{date}-{seq}")
        .date("%G-W%V")
        .pad(3)
        .build()
        .unwrap();
    let at = |y, m, d| spec.period_at(Utc.with_ymd_and_hms(y, m, d, 12, 0, 0).unwrap());
    // 31 December 2026 and 1 January 2027 are both in week 53 of ISO year 2026: one period.
    assert_eq!(at(2026, 12, 31), "2026-W53");
    assert_eq!(at(2027, 1, 1), at(2026, 12, 31));
    assert_eq!(at(2027, 1, 4), "2027-W01");
    // 29 December 2025 is already in week 1 of ISO year 2026.
    assert_eq!(at(2025, 12, 29), "2026-W01");
    assert_eq!(at(2025, 12, 28), "2025-W52");
    let id = spec.format("2026-W53", 7);
    assert_eq!(id, "2026-W53-007");
    let parts = spec.parse(&id).unwrap();
    assert_eq!(
        (parts.period.as_str(), spec.counter_of(&parts)),
        ("2026-W53", Some(7))
    );
}

#[test]
fn fiscal_quarters_start_at_the_fiscal_years_first_day() {
    use diesel_seqgen_core::FiscalYear;
    let spec = Spec::builder("k")
        .format("{date}-{seq}")
        .date("FY%Y-Q%q")
        .fiscal_year(FiscalYear::starting(4, 1).unwrap())
        .pad(4)
        .time_zone(Zone::parse("+09:00").unwrap())
        .build()
        .unwrap();
    let at = |y, m, d, h| spec.period_at(Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap());
    assert_eq!(at(2026, 4, 1, 12), "FY2026-Q1");
    assert_eq!(at(2026, 6, 30, 12), "FY2026-Q1");
    assert_eq!(at(2026, 7, 1, 12), "FY2026-Q2");
    assert_eq!(at(2026, 12, 31, 12), "FY2026-Q3");
    assert_eq!(at(2027, 3, 31, 12), "FY2026-Q4");
    // 15:00 UTC on 31 March is midnight of April 1st at +09:00: the next fiscal year.
    assert_eq!(at(2027, 3, 31, 15), "FY2027-Q1");
    let back = Spec::from_shape("k", spec.shape()).unwrap();
    assert_eq!(back.shape(), spec.shape());
    assert_eq!(spec.parse("FY2026-Q3-0042").unwrap().period, "FY2026-Q3");
    // A fiscal year starting on the 16th: its quarters do too.
    let mid = FiscalYear::starting(1, 16).unwrap();
    let day = |m, d| chrono::NaiveDate::from_ymd_opt(2026, m, d).unwrap();
    assert_eq!((mid.quarter(day(4, 15)), mid.quarter(day(4, 16))), (1, 2));
    assert_eq!(
        mid.quarter(day(1, 15)),
        4,
        "the end of the fiscal year that began in 2025"
    );
}
