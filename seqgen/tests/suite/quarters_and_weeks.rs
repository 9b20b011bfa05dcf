//! Quarters (`%q`) and ISO weeks (`%G-W%V`) as periods on every backend: one counter per
//! quarter, beginning at local midnight in a zone east of UTC; one per ISO week, shared by the
//! last days of a calendar year and the first of the next when they are one ISO week; fiscal
//! quarters, from the fiscal year's first day. Batched and gapless, on the default generator
//! with documents dated across each boundary, and on a generator whose clock crosses it (the
//! clock is the point there: the boundaries ahead of today are reached no other way).

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};
use common::{TestConnection, TestDb};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{FiscalYear, Generator, Result, Scoped, Spec, TimeZone as Zone};

backend_tests!(
    a_quarter_counts_from_one_at_local_midnight,
    a_quarter_counts_from_one_at_local_midnight_on_the_default_generator,
    an_iso_week_across_new_year_is_one_counter,
    an_iso_week_across_new_year_is_one_counter_on_the_default_generator,
    a_fiscal_quarter_counts_from_the_fiscal_years_day,
);

/// The next ID of a batched and of a gapless key (in a transaction), both taken by `next`.
fn both<'s, C: TestConnection>(
    conn: &mut C,
    batched: Scoped<'s>,
    gapless: Scoped<'s>,
    next: impl Fn(&mut C, Scoped<'s>) -> Result<String>,
) -> [String; 2] {
    let batched = next(conn, batched).unwrap();
    let gapless = conn.transaction(|conn| next(conn, gapless)).unwrap();
    [batched, gapless]
}

fn quarterly<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .format("Q{date}-{seq}")
        .date("%q-%Y")
        .pad(4)
        .time_zone(Zone::parse("+09:00").unwrap())
}

/// 23:59:59 on 30 September at +09:00, and a second later.
fn tokyo_quarter_end() -> [DateTime<Utc>; 2] {
    let last = Utc.with_ymd_and_hms(2026, 9, 30, 14, 59, 59).unwrap();
    [last, last + TimeDelta::seconds(1)]
}

fn a_quarter_counts_from_one_at_local_midnight<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let [last, first] = tokyo_quarter_end();
    let clock = Arc::new(FixedClock::new(last));
    let generator = Generator::builder().clock(clock.clone()).build();
    let batched = quarterly(&db, "batched").build().unwrap();
    let gapless = quarterly(&db, "gapless").gapless().build().unwrap();
    let mut take = || {
        let next = |conn: &mut C, target| generator.next_id(conn, target);
        both(&mut conn, (&batched).into(), (&gapless).into(), next)
    };
    assert_eq!(take(), ["Q3-2026-0001", "Q3-2026-0001"]);
    assert_eq!(take(), ["Q3-2026-0002", "Q3-2026-0002"]);
    clock.set(first);
    assert_eq!(take(), ["Q4-2026-0001", "Q4-2026-0001"]);
}

/// The same boundary on the default generator, with documents dated at those moments.
fn a_quarter_counts_from_one_at_local_midnight_on_the_default_generator<C: TestConnection>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let batched = quarterly(&db, "batched").build().unwrap();
    let gapless = quarterly(&db, "gapless").gapless().build().unwrap();
    let [last, first] = tokyo_quarter_end();
    let mut take = |moment: DateTime<Utc>| {
        let next = diesel_seqgen::global::next_id::<C>;
        both(
            &mut conn,
            batched.dated(moment),
            gapless.dated(moment),
            next,
        )
    };
    assert_eq!(take(last), ["Q3-2026-0001", "Q3-2026-0001"]);
    assert_eq!(take(last), ["Q3-2026-0002", "Q3-2026-0002"]);
    assert_eq!(take(first), ["Q4-2026-0001", "Q4-2026-0001"]);
}

fn weekly<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .format("{date}-{seq}")
        .date("%G-W%V")
        .pad(3)
}

/// 31 December 2026, then 1 January 2027: ISO week 53 of 2026 both; then week 1 of 2027.
fn an_iso_week_across_new_year_is_one_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 12, 31, 12, 0, 0).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let batched = weekly(&db, "batched").build().unwrap();
    let gapless = weekly(&db, "gapless").gapless().build().unwrap();
    let mut take = || {
        let next = |conn: &mut C, target| generator.next_id(conn, target);
        both(&mut conn, (&batched).into(), (&gapless).into(), next)
    };
    assert_eq!(take(), ["2026-W53-001", "2026-W53-001"]);
    clock.advance(TimeDelta::days(1));
    assert_eq!(take(), ["2026-W53-002", "2026-W53-002"]);
    clock.advance(TimeDelta::days(3));
    assert_eq!(take(), ["2027-W01-001", "2027-W01-001"]);
}

/// The last New Year on the default generator, with documents dated across it: 29 December
/// 2025 begins ISO week 1 of 2026.
fn an_iso_week_across_new_year_is_one_counter_on_the_default_generator<C: TestConnection>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let batched = weekly(&db, "batched").build().unwrap();
    let gapless = weekly(&db, "gapless").gapless().build().unwrap();
    let on = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let days = [
        on(2025, 12, 28),
        on(2025, 12, 29),
        on(2025, 12, 31),
        on(2026, 1, 1),
    ];
    let ids: Vec<String> = days
        .into_iter()
        .map(|day| {
            let next = diesel_seqgen::global::next_id::<C>;
            let [id, gapless] = both(&mut conn, batched.dated(day), gapless.dated(day), next);
            assert_eq!(id, gapless);
            id
        })
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
/// Year and a quarter's end, on the default generator.
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
    let ids: Vec<String> = days
        .into_iter()
        .map(|day| {
            let next = diesel_seqgen::global::next_id::<C>;
            let [id, gapless] = both(&mut conn, batched.dated(day), gapless.dated(day), next);
            assert_eq!(id, gapless);
            id
        })
        .collect();
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
