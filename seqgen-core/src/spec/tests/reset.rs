//! The counter's reset apart from the printed date (`spec/reset.rs`).

use chrono::{DateTime, TimeZone as _, Utc};

use crate::{FiscalYear, Reset, Setting, Spec, TimeZone};

fn at(y: i32, m: u32, d: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, 12, 0, 0).unwrap()
}

fn spec(date: &str, reset: Reset) -> Spec {
    Spec::builder("k").date(date).reset(reset).build().unwrap()
}

/// The counter period at each day, under `reset` with a date printing the day.
fn counters(reset: Reset, days: &[(i32, u32, u32)]) -> Vec<String> {
    let daily = spec("%Y%m%d", reset);
    days.iter()
        .map(|&(y, m, d)| daily.counter_period(&daily.period_at(at(y, m, d))))
        .collect()
}

#[test]
fn a_printed_day_draws_from_the_counter_of_its_reset_period() {
    let days = [(2026, 12, 31), (2027, 1, 1), (2027, 6, 30), (2027, 7, 1)];
    assert_eq!(
        counters(Reset::Year, &days),
        ["2026", "2027", "2027", "2027"]
    );
    assert_eq!(
        counters(Reset::HalfYear, &days),
        ["2026-H2", "2027-H1", "2027-H1", "2027-H2"]
    );
    assert_eq!(
        counters(Reset::Quarter, &days),
        ["2026-Q4", "2027-Q1", "2027-Q2", "2027-Q3"]
    );
    assert_eq!(
        counters(Reset::Month, &days),
        ["2026-12", "2027-01", "2027-06", "2027-07"]
    );
    // 31 December 2026 and 1 January 2027 are both in ISO week 53 of 2026.
    assert_eq!(
        counters(Reset::Week, &days),
        ["2026-W53", "2026-W53", "2027-W26", "2027-W26"]
    );
    assert_eq!(counters(Reset::Day, &days)[0], "2026-12-31");
    assert_eq!(counters(Reset::Never, &days), ["", "", "", ""]);
}

#[test]
fn the_ids_print_the_date_and_count_per_reset_period() {
    let orders = Spec::builder("orders")
        .prefix("SO")
        .date("%Y%m%d-")
        .pad(5)
        .reset(Reset::Year);
    let orders = orders.build().unwrap();
    let day = orders.period_at(at(2026, 11, 27));
    assert_eq!(orders.format(&day, 42), "SO20261127-00042");
    let parts = orders.parse("SO20261127-00042").unwrap();
    assert_eq!(
        (parts.period.as_str(), orders.counter_of(&parts)),
        ("20261127-", Some(42))
    );
    assert_eq!(orders.counter_period(&parts.period), "2026");
    assert_eq!(orders.shape(), "SO{date:%Y%m%d-}{seq:5}{reset:year}");
    assert_eq!(orders.period(day).counter(), "2026");
    let read_back = Spec::from_shape("orders", orders.shape()).unwrap();
    assert_eq!(read_back.reset(), Some(Reset::Year));
    assert_eq!(read_back.shape(), orders.shape());
    assert!(!orders.is_plain(), "SQL would print the counter's period");
}

#[test]
fn partial_dates_tell_the_periods_they_print() {
    // Months tell months, quarters and years; ISO weeks tell weeks; two-digit years, years.
    assert_eq!(
        spec("%Y%m", Reset::Quarter).counter_period("202608"),
        "2026-Q3"
    );
    assert_eq!(
        spec("%Y%m", Reset::HalfYear).counter_period("202608"),
        "2026-H2"
    );
    assert_eq!(
        spec("Q%q-%Y", Reset::Year).counter_period("Q3-2026"),
        "2026"
    );
    assert_eq!(
        spec("%Y-Q%q", Reset::HalfYear).counter_period("2026-Q2"),
        "2026-H1"
    );
    assert_eq!(
        spec("%G-W%V", Reset::Week).counter_period("2026-W53"),
        "2026-W53"
    );
    assert_eq!(spec("%y%m%d", Reset::Year).counter_period("261127"), "2026");
    assert_eq!(
        spec("%d.%m.%Y", Reset::Month).counter_period("27.11.2026"),
        "2026-11"
    );
    assert_eq!(
        spec("%Y%m%d%H", Reset::Day).counter_period("2026112713"),
        "2026-11-27"
    );
    assert_eq!(spec("", Reset::Never).counter_period(""), "");
    // A two-digit year beside a weekday reads in the century the weekday agrees with.
    let dated = spec("%y%m%d %a", Reset::Day);
    assert_eq!(
        dated.counter_period(&dated.period_at(at(2070, 1, 1))),
        "2070-01-01"
    );
    assert_eq!(
        dated.counter_period(&dated.period_at(at(2026, 1, 1))),
        "2026-01-01"
    );
    // A two-digit year beside an ISO year early in January, when the two differ in their
    // first days: the year is read from its fields, not from a day they would disagree on.
    let iso = spec("%y-%G", Reset::Year);
    assert_eq!(iso.counter_period(&iso.period_at(at(2106, 1, 5))), "2106");
    assert_eq!(iso.counter_period(&iso.period_at(at(2027, 1, 1))), "2027");
}

#[test]
fn a_reset_the_printed_date_cannot_tell_is_refused() {
    for (date, reset) in [
        ("%Y%m", Reset::Day),
        ("%Y%m", Reset::Week),
        ("%Y", Reset::Month),
        ("%Y-Q%q", Reset::Month),
        ("%m%d", Reset::Year),
        // The ISO year is not the calendar year around New Year.
        ("%G-W%V", Reset::Year),
        ("%G-W%V", Reset::Month),
        ("%a", Reset::Day),
        ("", Reset::Year),
    ] {
        let built = Spec::builder("k").date(date).reset(reset).build();
        let error = built.expect_err(&format!("{date:?} under {reset}"));
        assert_eq!(error.setting(), Setting::Reset, "{date:?} under {reset}");
        assert!(
            error.to_string().contains("does not print which"),
            "{error}"
        );
    }
    // `never` goes with any date, and with none.
    for date in ["%m%d", "%a", "", "%Y-%m-%d"] {
        assert!(Spec::builder("k")
            .date(date)
            .reset(Reset::Never)
            .build()
            .is_ok());
    }
}

#[test]
fn fiscal_years_reset_on_their_first_day_under_any_printed_date() {
    let april = FiscalYear::starting(4, 1).unwrap();
    let invoices = Spec::builder("k")
        .date("%Y%m%d")
        .fiscal_year(april)
        .reset(Reset::FiscalYear);
    let invoices = invoices.build().unwrap();
    let march = invoices.period_at(at(2027, 3, 31));
    assert_eq!(march, "20270331", "the calendar date prints");
    assert_eq!(invoices.counter_period(&march), "FY2026");
    assert_eq!(
        invoices.counter_period(&invoices.period_at(at(2027, 4, 1))),
        "FY2027"
    );
    // A month tells a fiscal year starting on a 1st, not one starting on the 15th.
    let monthly = Spec::builder("k")
        .date("%Y%m")
        .fiscal_year(april)
        .reset(Reset::FiscalYear);
    assert_eq!(monthly.build().unwrap().counter_period("202703"), "FY2026");
    let mid = FiscalYear::starting(4, 15).unwrap();
    let monthly = Spec::builder("k")
        .date("%Y%m")
        .fiscal_year(mid)
        .reset(Reset::FiscalYear);
    let error = monthly.build().unwrap_err();
    assert!(error.to_string().contains("which fiscal year"), "{error}");
    // Either without the other is refused.
    let alone = Spec::builder("k").reset(Reset::FiscalYear).build();
    assert!(alone.unwrap_err().to_string().contains("needs `fiscal"));
    let other = Spec::builder("k")
        .fiscal_year(april)
        .reset(Reset::Year)
        .build();
    let error = other.unwrap_err();
    assert_eq!(error.setting(), Setting::Reset);
    assert!(
        error.to_string().contains("not with `reset = \"year\"`"),
        "{error}"
    );
}

#[test]
fn a_counter_period_ends_with_its_reset_not_with_the_printed_date() {
    let yearly = spec("%Y%m%d", Reset::Year);
    assert_eq!(
        yearly.period_ends(at(2026, 11, 27)),
        Some(Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0).unwrap())
    );
    assert_eq!(
        spec("%Y%m%d", Reset::Never).period_ends(at(2026, 11, 27)),
        None
    );
    // A quarter at +09:00 ends at local midnight.
    let tokyo = Spec::builder("k").date("%Y%m%d").reset(Reset::Quarter);
    let tokyo = tokyo
        .time_zone(TimeZone::parse("+09:00").unwrap())
        .build()
        .unwrap();
    let ends = tokyo.period_ends(at(2026, 12, 1)).unwrap();
    assert_eq!(ends, Utc.with_ymd_and_hms(2026, 12, 31, 15, 0, 0).unwrap());
}

#[test]
fn reset_names_read_back_and_unknown_ones_are_refused() {
    for reset in Reset::ALL {
        assert_eq!(Reset::parse(reset.name()), Ok(reset));
    }
    let error = Reset::parse("yearly").unwrap_err();
    assert!(error.to_string().contains("\"half-year\""), "{error}");
}
