//! Fiscal years: the period changes at the fiscal year's first local midnight, in two time
//! zones, named by the year it starts or ends in; the shape records it and reads back; the
//! rules refuse what cannot be a fiscal year.

use chrono::{DateTime, TimeZone as _, Utc};
use diesel_seqgen_core::{FiscalYear, Setting, Spec, SpecError, TimeZone};

fn utc(y: i32, m: u32, d: u32, h: u32, min: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, min, 0).unwrap()
}

fn april(tz: TimeZone) -> Spec {
    Spec::builder("invoices")
        .prefix("INV")
        .date("FY%Y-")
        .time_zone(tz)
        .fiscal_year(FiscalYear::starting(4, 1).unwrap())
        .pad(5)
        .build()
        .unwrap()
}

#[test]
fn the_period_changes_at_the_fiscal_years_first_midnight_in_utc() {
    let spec = april(TimeZone::Utc);
    assert_eq!(spec.period_at(utc(2026, 4, 1, 0, 0)), "FY2026-");
    assert_eq!(spec.period_at(utc(2026, 12, 31, 23, 59)), "FY2026-");
    assert_eq!(spec.period_at(utc(2027, 1, 1, 0, 0)), "FY2026-");
    assert_eq!(spec.period_at(utc(2027, 3, 31, 23, 59)), "FY2026-");
    assert_eq!(spec.period_at(utc(2027, 4, 1, 0, 0)), "FY2027-");
    assert_eq!(spec.format("FY2026-", 42), "INVFY2026-00042");
    // The period ends at the next fiscal year's first second.
    assert_eq!(
        spec.period_ends(utc(2026, 11, 26, 12, 0)),
        Some(utc(2027, 4, 1, 0, 0))
    );
}

#[test]
#[cfg(feature = "tz")]
fn the_period_changes_at_local_midnight_in_tokyo() {
    let spec = april(TimeZone::parse("Asia/Tokyo").unwrap());
    // April 1st begins in Tokyo at 15:00 UTC on March 31st.
    assert_eq!(spec.period_at(utc(2027, 3, 31, 14, 59)), "FY2026-");
    assert_eq!(spec.period_at(utc(2027, 3, 31, 15, 0)), "FY2027-");
    assert_eq!(
        spec.period_ends(utc(2026, 6, 1, 0, 0)),
        Some(utc(2027, 3, 31, 15, 0))
    );
}

#[test]
#[cfg(feature = "tz")]
fn a_year_named_by_its_end_in_sydney() {
    // Australia's FY2027: July 2026 to June 2027; July 1st begins at 14:00 UTC (AEST, +10).
    let spec = Spec::builder("orders")
        .date("FY%y")
        .time_zone(TimeZone::parse("Australia/Sydney").unwrap())
        .fiscal_year(FiscalYear::starting(7, 1).unwrap().named_by_end())
        .build()
        .unwrap();
    assert_eq!(spec.period_at(utc(2026, 6, 30, 13, 59)), "FY26");
    assert_eq!(spec.period_at(utc(2026, 6, 30, 14, 0)), "FY27");
    assert_eq!(spec.period_at(utc(2027, 1, 15, 0, 0)), "FY27");
}

#[test]
fn the_shape_records_the_fiscal_year_and_reads_back() {
    let spec = april(TimeZone::Utc);
    assert_eq!(spec.shape(), "INV{date:FY%Y-}{seq:5}{fiscal:04-01}");
    let read = Spec::from_shape("invoices", spec.shape()).unwrap();
    assert_eq!(read.fiscal_year(), spec.fiscal_year());
    assert_eq!(read.period_at(utc(2027, 3, 31, 12, 0)), "FY2026-");
    assert_eq!(read.shape(), spec.shape());
    let end = FiscalYear::parse("07-01,end").unwrap();
    assert_eq!(end.to_string(), "07-01,end");
    // Another fiscal start is another shape: one key keeps one.
    let october = Spec::builder("invoices")
        .prefix("INV")
        .date("FY%Y-")
        .fiscal_year(FiscalYear::starting(10, 1).unwrap())
        .pad(5)
        .build()
        .unwrap();
    assert_ne!(october.shape(), spec.shape());
    // A parsed ID names its fiscal year's counter.
    assert_eq!(spec.parse("INVFY2026-00042").unwrap().period, "FY2026-");
}

#[test]
fn what_cannot_be_a_fiscal_year_is_refused() {
    for text in [
        "4-01",
        "04-1",
        "13-01",
        "02-29",
        "04-31",
        "04-01,start",
        "",
        "ab-cd",
    ] {
        let err = FiscalYear::parse(text).unwrap_err();
        assert_eq!(err.setting(), Setting::Fiscal, "{text}");
        assert!(matches!(err, SpecError::FiscalYear(_)), "{text}: {err}");
    }
    assert!(FiscalYear::starting(4, 29).is_err());
    for pattern in ["", "%Y%m", "FY%Y-%d", "%H"] {
        let err = Spec::builder("k")
            .date(pattern)
            .fiscal_year(FiscalYear::starting(4, 1).unwrap())
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            SpecError::FiscalPattern(pattern.to_owned()),
            "{pattern}"
        );
        assert!(err.to_string().contains("FY%Y"), "{err}");
    }
}
