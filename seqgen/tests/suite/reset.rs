//! The counter's reset apart from the printed date (`reset = "year"`, `"never"`, …) on every
//! backend: `SO20261127-00042` numbering per year, `DOC-2026-11-27-000123` never starting
//! again, a quarter that starts at local midnight east of UTC and an ISO week shared by two
//! calendar years, while each ID prints its day: batched and gapless, on a generator whose
//! clock crosses the boundary (ahead of today: reached no other way), and each with a twin on
//! the default generator, documents dated across a past boundary of the same kind. Documents
//! dated across New Year through the derive are in `reset_documents.rs`, the follower's door
//! in `reset_deferred.rs`.

use crate::common;

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use common::{TestConnection, TestDb};
use diesel_seqgen::admin;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{Generator, Reset, Spec, TimeZone as Zone};

backend_tests!(
    a_year_of_printed_days_is_one_counter,
    a_block_goes_on_across_printed_days_of_its_counter,
    a_never_key_counts_on_over_two_years,
    a_quarter_of_printed_days_starts_at_local_midnight,
    an_iso_week_of_printed_days_spans_new_year,
    a_year_of_printed_days_is_one_counter_on_the_default_generator,
    a_never_key_counts_on_over_two_years_on_the_default_generator,
    a_quarter_of_printed_days_starts_at_local_midnight_on_the_default_generator,
    an_iso_week_of_printed_days_spans_new_year_on_the_default_generator,
);

fn utc(y: i32, m: u32, d: u32, h: u32, mi: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, m, d, h, mi, s).unwrap()
}

/// What `take` gives from a batched and a gapless spec (in a transaction) at each moment of
/// `clock`'s walk.
fn walk<C: TestConnection>(
    conn: &mut C,
    specs: [&diesel_seqgen::SpecBuilder; 2],
    moments: &[DateTime<Utc>],
) -> [Vec<String>; 2] {
    let clock = Arc::new(FixedClock::new(moments[0]));
    let generator = Generator::builder().clock(clock.clone()).build();
    let batched = specs[0].clone().build().unwrap();
    let gapless = specs[1].clone().gapless().build().unwrap();
    let mut ids = [Vec::new(), Vec::new()];
    for &moment in moments {
        clock.set(moment);
        ids[0].push(generator.next_id(conn, &batched).unwrap());
        let id = conn.transaction(|conn| generator.next_id(conn, &gapless));
        ids[1].push(id.unwrap());
    }
    ids
}

/// [`walk`] on the default generator, with documents dated at each moment.
fn walk_dated<C: TestConnection>(
    conn: &mut C,
    specs: [&diesel_seqgen::SpecBuilder; 2],
    moments: &[DateTime<Utc>],
) -> [Vec<String>; 2] {
    let batched = specs[0].clone().build().unwrap();
    let gapless = specs[1].clone().gapless().build().unwrap();
    let mut ids = [Vec::new(), Vec::new()];
    for &moment in moments {
        ids[0].push(diesel_seqgen::global::next_id(conn, batched.dated(moment)).unwrap());
        let id =
            conn.transaction(|conn| diesel_seqgen::global::next_id(conn, gapless.dated(moment)));
        ids[1].push(id.unwrap());
    }
    ids
}

fn yearly<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .prefix("SO")
        .date("%Y%m%d-")
        .pad(5)
        .reset(Reset::Year)
}

fn never<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .prefix("DOC-")
        .date("%Y-%m-%d-")
        .pad(6)
        .reset(Reset::Never)
}

/// Printed days counted per quarter at +09:00.
fn quarterly<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .format("{date}-{seq}")
        .date("%Y%m%d")
        .pad(4)
        .time_zone(Zone::parse("+09:00").unwrap())
        .reset(Reset::Quarter)
}

fn weekly<C: TestConnection>(db: &TestDb<C>, name: &str) -> diesel_seqgen::SpecBuilder {
    Spec::builder(db.key(name))
        .format("{date}-{seq}")
        .date("%Y%m%d")
        .pad(3)
        .reset(Reset::Week)
}

/// The batched and the gapless spec of `of` on `db`, named apart.
fn both<C: TestConnection>(
    db: &TestDb<C>,
    of: fn(&TestDb<C>, &str) -> diesel_seqgen::SpecBuilder,
) -> [diesel_seqgen::SpecBuilder; 2] {
    [of(db, "batched"), of(db, "gapless")]
}

/// The number at the end of an ID.
pub(crate) fn number(id: &str) -> u64 {
    id.rsplit('-').next().unwrap().parse().unwrap()
}

fn a_year_of_printed_days_is_one_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let [batched_spec, gapless_spec] = both(&db, yearly);
    let moments = [
        utc(2026, 11, 27, 9, 0, 0),
        utc(2026, 12, 31, 23, 59, 59),
        utc(2027, 1, 1, 0, 0, 0),
        utc(2027, 1, 2, 8, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, [&batched_spec, &gapless_spec], &moments);
    assert_eq!(
        gapless,
        [
            "SO20261127-00001",
            "SO20261231-00002",
            "SO20270101-00001",
            "SO20270102-00002"
        ]
    );
    // Batched: each ID prints its day, the year's numbers only go up, and 2027 starts at 1.
    let days: Vec<&str> = batched.iter().map(|id| &id[2..10]).collect();
    assert_eq!(days, ["20261127", "20261231", "20270101", "20270102"]);
    assert!(number(&batched[1]) > number(&batched[0]), "{batched:?}");
    assert_eq!(number(&batched[2]), 1, "{batched:?}");
    assert!(number(&batched[3]) > 1, "{batched:?}");
    // The database holds one row per year, whatever days were printed.
    let spec = gapless_spec.gapless().build().unwrap();
    let rows = admin::counters(&mut conn, Some(spec.key())).unwrap();
    let periods: Vec<(&str, i64)> = rows
        .iter()
        .filter(|row| !row.period.is_empty())
        .map(|row| (row.period.as_str(), row.current_value))
        .collect();
    assert_eq!(periods, [("2026", 2), ("2027", 2)]);
}

/// A generator's block is its counter's, not its printed day's: past midnight it goes on
/// serving the year's numbers under the new date, though another instance reserved meanwhile
/// (which would keep the block from going back to the counter, leaving a hole); at New Year
/// the next year's counter starts at 1. Its twin on the default generator is
/// `reset_documents.rs` after `use_pool`: documents of two dates of a year served from one
/// cached block, numbers 1 and 2.
fn a_block_goes_on_across_printed_days_of_its_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = yearly(&db, "orders").build().unwrap();
    let clock = Arc::new(FixedClock::new(utc(2026, 12, 30, 23, 59, 59)));
    let generator = Generator::builder().clock(clock.clone()).build();
    let other = Generator::builder().clock(clock.clone()).build();
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "SO20261230-00001"
    );
    assert_eq!(other.next_id(&mut conn, &spec).unwrap(), "SO20261230-00101");
    clock.set(utc(2026, 12, 31, 0, 0, 0));
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "SO20261231-00002"
    );
    assert_eq!(other.next_id(&mut conn, &spec).unwrap(), "SO20261231-00102");
    clock.set(utc(2027, 1, 1, 0, 0, 0));
    assert_eq!(
        generator.next_id(&mut conn, &spec).unwrap(),
        "SO20270101-00001"
    );
}

/// `DOC-2026-12-31-000001`, then `DOC-2027-01-01-000002` and a year later `…-000003`.
fn a_never_key_counts_on_over_two_years<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let [batched_spec, gapless_spec] = both(&db, never);
    let moments = [
        utc(2026, 12, 31, 12, 0, 0),
        utc(2027, 1, 1, 12, 0, 0),
        utc(2028, 1, 1, 12, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, [&batched_spec, &gapless_spec], &moments);
    assert_eq!(
        gapless,
        [
            "DOC-2026-12-31-000001",
            "DOC-2027-01-01-000002",
            "DOC-2028-01-01-000003"
        ]
    );
    assert_eq!(batched[0], "DOC-2026-12-31-000001");
    assert!(number(&batched[1]) > 1 && number(&batched[2]) > number(&batched[1]));
    assert!(batched[2].starts_with("DOC-2028-01-01-"), "{batched:?}");
    // One row: the key's own.
    let key = gapless_spec.build().unwrap();
    let rows = admin::counters(&mut conn, Some(key.key())).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].period.as_str(), rows[0].current_value), ("", 3));
}

/// Printed days, counted per quarter at +09:00: the quarter ends at local midnight.
fn a_quarter_of_printed_days_starts_at_local_midnight<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let last = utc(2026, 9, 30, 14, 59, 59); // 23:59:59 in Tokyo
    let moments = [utc(2026, 7, 1, 0, 0, 0), last, last + TimeDelta::seconds(1)];
    let [batched, gapless] = walk(&mut conn, both(&db, quarterly).each_ref(), &moments);
    assert_eq!(gapless, ["20260701-0001", "20260930-0002", "20261001-0001"]);
    assert_eq!(batched[0], "20260701-0001");
    assert_eq!(batched[2], "20261001-0001");
}

/// Printed days, counted per ISO week: 31 December 2026 and 1 January 2027 are both in week
/// 53 of 2026, one counter; 4 January 2027 begins week 1.
fn an_iso_week_of_printed_days_spans_new_year<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let moments = [
        utc(2026, 12, 31, 12, 0, 0),
        utc(2027, 1, 1, 12, 0, 0),
        utc(2027, 1, 4, 12, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, both(&db, weekly).each_ref(), &moments);
    assert_eq!(gapless, ["20261231-001", "20270101-002", "20270104-001"]);
    assert_eq!(batched[0], "20261231-001");
    assert!(number(&batched[1]) > 1, "{batched:?}");
    assert_eq!(batched[2], "20270104-001");
}

/// The last New Year, on the default generator: one counter for 2025's days, another for
/// 2026's, batched (one block for the year's dates) and gapless alike.
fn a_year_of_printed_days_is_one_counter_on_the_default_generator<C: TestConnection>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let moments = [
        utc(2025, 11, 27, 9, 0, 0),
        utc(2025, 12, 31, 23, 59, 59),
        utc(2026, 1, 1, 0, 0, 0),
        utc(2026, 1, 2, 8, 0, 0),
    ];
    let expected = [
        "SO20251127-00001",
        "SO20251231-00002",
        "SO20260101-00001",
        "SO20260102-00002",
    ];
    let ids = walk_dated(&mut conn, both(&db, yearly).each_ref(), &moments);
    assert_eq!(ids, [expected, expected]);
}

/// A key that never resets, over the last two New Years, on the default generator.
fn a_never_key_counts_on_over_two_years_on_the_default_generator<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let moments = [
        utc(2024, 12, 31, 12, 0, 0),
        utc(2025, 1, 1, 12, 0, 0),
        utc(2026, 1, 1, 12, 0, 0),
    ];
    let expected = [
        "DOC-2024-12-31-000001",
        "DOC-2025-01-01-000002",
        "DOC-2026-01-01-000003",
    ];
    let ids = walk_dated(&mut conn, both(&db, never).each_ref(), &moments);
    assert_eq!(ids, [expected, expected]);
}

/// The same quarter's end at +09:00, on the default generator.
fn a_quarter_of_printed_days_starts_at_local_midnight_on_the_default_generator<
    C: TestConnection,
>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let last = utc(2026, 9, 30, 14, 59, 59); // 23:59:59 in Tokyo
    let moments = [utc(2026, 7, 1, 0, 0, 0), last, last + TimeDelta::seconds(1)];
    let expected = ["20260701-0001", "20260930-0002", "20261001-0001"];
    let ids = walk_dated(&mut conn, both(&db, quarterly).each_ref(), &moments);
    assert_eq!(ids, [expected, expected]);
}

/// A past New Year whose days share an ISO week, on the default generator: 31 December 2020
/// and 1 January 2021 are both in week 53 of 2020; 4 January 2021 begins week 1.
fn an_iso_week_of_printed_days_spans_new_year_on_the_default_generator<C: TestConnection>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    let moments = [
        utc(2020, 12, 31, 12, 0, 0),
        utc(2021, 1, 1, 12, 0, 0),
        utc(2021, 1, 4, 12, 0, 0),
    ];
    let expected = ["20201231-001", "20210101-002", "20210104-001"];
    let ids = walk_dated(&mut conn, both(&db, weekly).each_ref(), &moments);
    assert_eq!(ids, [expected, expected]);
}
