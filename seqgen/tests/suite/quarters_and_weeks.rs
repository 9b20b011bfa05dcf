//! Quarters (`%q`) and ISO weeks (`%G-W%V`) as periods on every backend: one counter per
//! quarter, beginning at local midnight in a zone east of UTC; one per ISO week, shared by the
//! last days of a calendar year and the first of the next when they are one ISO week. Batched
//! and gapless on a generator with a clock, and the default generator with document dates;
//! fiscal quarters, from the fiscal year's first day.

use crate::common;

use std::sync::Arc;

use chrono::{NaiveDate, TimeDelta, TimeZone, Utc};
use common::{TestConnection, TestDb};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{FiscalYear, Generator, Spec, TimeZone as Zone};

backend_tests!(
    a_quarter_counts_from_one_at_local_midnight,
    an_iso_week_across_new_year_is_one_counter,
    a_fiscal_quarter_counts_from_the_fiscal_years_day,
);

fn a_quarter_counts_from_one_at_local_midnight<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    // 23:59:59 on 30 September at +09:00.
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 9, 30, 14, 59, 59).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let quarterly = |name: &str| {
        Spec::builder(db.key(name))
            .format("Q{date}-{seq}")
            .date("%q-%Y")
            .pad(4)
            .time_zone(Zone::parse("+09:00").unwrap())
    };
    let batched = quarterly("batched").build().unwrap();
    let gapless = quarterly("gapless").gapless().build().unwrap();
    let take = |conn: &mut C| {
        let batched = generator.next_id(conn, &batched).unwrap();
        let gapless = conn
            .transaction(|conn| generator.next_id(conn, &gapless))
            .unwrap();
        [batched, gapless]
    };
    assert_eq!(take(&mut conn), ["Q3-2026-0001", "Q3-2026-0001"]);
    assert_eq!(take(&mut conn), ["Q3-2026-0002", "Q3-2026-0002"]);
    clock.advance(TimeDelta::seconds(1));
    assert_eq!(take(&mut conn), ["Q4-2026-0001", "Q4-2026-0001"]);
}

fn an_iso_week_across_new_year_is_one_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let weekly = |name: &str| {
        Spec::builder(db.key(name))
            .format("{date}-{seq}")
            .date("%G-W%V")
            .pad(3)
    };
    // 31 December 2026, then 1 January 2027: ISO week 53 of 2026 both; then week 1 of 2027.
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 12, 31, 12, 0, 0).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let batched = weekly("batched").build().unwrap();
    let gapless = weekly("gapless").gapless().build().unwrap();
    let take = |conn: &mut C| {
        let batched = generator.next_id(conn, &batched).unwrap();
        let gapless = conn
            .transaction(|conn| generator.next_id(conn, &gapless))
            .unwrap();
        [batched, gapless]
    };
    assert_eq!(take(&mut conn), ["2026-W53-001", "2026-W53-001"]);
    clock.advance(TimeDelta::days(1));
    assert_eq!(take(&mut conn), ["2026-W53-002", "2026-W53-002"]);
    clock.advance(TimeDelta::days(3));
    assert_eq!(take(&mut conn), ["2027-W01-001", "2027-W01-001"]);

    // The default generator, with documents dated across the last New Year: 29 December
    // 2025 begins ISO week 1 of 2026.
    let dated = weekly("dated").build().unwrap();
    let on = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let ids: Vec<String> = [
        on(2025, 12, 28),
        on(2025, 12, 29),
        on(2025, 12, 31),
        on(2026, 1, 1),
    ]
    .into_iter()
    .map(|day| diesel_seqgen::global::next_id(&mut conn, dated.dated(day)).unwrap())
    .collect();
    assert_eq!(
        ids,
        [
            "2025-W52-001",
            "2026-W01-001",
            "2026-W01-002",
            "2026-W01-003"
        ]
    );
}

/// Fiscal years from April 1st, counted per quarter: documents dated across the fiscal New
/// Year and a quarter's end, on the default generator, batched and gapless.
fn a_fiscal_quarter_counts_from_the_fiscal_years_day<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let fiscal = |name: &str| {
        Spec::builder(db.key(name))
            .format("{date}-{seq}")
            .date("FY%Y-Q%q")
            .fiscal_year(FiscalYear::starting(4, 1).unwrap())
            .pad(4)
    };
    let batched = fiscal("batched").build().unwrap();
    let gapless = fiscal("gapless").gapless().build().unwrap();
    let on = |m, d| NaiveDate::from_ymd_opt(2026, m, d).unwrap();
    let days = [on(3, 31), on(4, 1), on(6, 30), on(7, 1), on(7, 2)];
    let mut ids = Vec::new();
    for day in days {
        let batched = diesel_seqgen::global::next_id(&mut conn, batched.dated(day)).unwrap();
        let gapless = conn
            .transaction(|conn| diesel_seqgen::global::next_id(conn, gapless.dated(day)))
            .unwrap();
        assert_eq!(batched, gapless);
        ids.push(batched);
    }
    assert_eq!(
        ids,
        [
            "FY2025-Q4-0001",
            "FY2026-Q1-0001",
            "FY2026-Q1-0002",
            "FY2026-Q2-0001",
            "FY2026-Q2-0002"
        ]
    );
}
