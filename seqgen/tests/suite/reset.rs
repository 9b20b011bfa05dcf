//! The counter's reset apart from the printed date (`reset = "year"`, `"never"`, …) on every
//! backend: `SO20261127-00042` numbering per year, `DOC-2026-11-27-000123` never starting
//! again, a quarter that starts at local midnight east of UTC and an ISO week shared by two
//! calendar years, while each ID prints its day. Batched and gapless, on a generator whose clock
//! crosses the boundary, and through the derive's insert on the default generator (as it comes
//! and after `use_pool`) with documents dated across New Year; `gaps` and `adopt` read a year's
//! counter from IDs of many days.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Barrier};
use std::thread;

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};
use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin::{self, IdColumn};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{DistributedId, Error, Generator, Reset, Spec, TimeZone as Zone};

backend_tests!(
    a_year_of_printed_days_is_one_counter,
    a_block_goes_on_across_printed_days_of_its_counter,
    a_never_key_counts_on_over_two_years,
    a_quarter_of_printed_days_starts_at_local_midnight,
    an_iso_week_of_printed_days_spans_new_year,
    the_derive_resets_per_year_and_never_through_insert_into,
    the_derive_resets_per_year_and_never_after_use_pool,
    threads_numbering_days_of_two_years_never_repeat_a_years_number,
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

/// The number at the end of an ID.
fn number(id: &str) -> u64 {
    id.rsplit('-').next().unwrap().parse().unwrap()
}

fn a_year_of_printed_days_is_one_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = |name: &str| {
        Spec::builder(db.key(name))
            .prefix("SO")
            .date("%Y%m%d-")
            .pad(5)
            .reset(Reset::Year)
    };
    let moments = [
        utc(2026, 11, 27, 9, 0, 0),
        utc(2026, 12, 31, 23, 59, 59),
        utc(2027, 1, 1, 0, 0, 0),
        utc(2027, 1, 2, 8, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, [&spec("batched"), &spec("gapless")], &moments);
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
    let spec = spec("gapless").gapless().build().unwrap();
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
/// the next year's counter starts at 1.
fn a_block_goes_on_across_printed_days_of_its_counter<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = Spec::builder(db.key("orders"))
        .prefix("SO")
        .date("%Y%m%d-")
        .pad(5)
        .reset(Reset::Year)
        .build()
        .unwrap();
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
    let spec = |name: &str| {
        Spec::builder(db.key(name))
            .prefix("DOC-")
            .date("%Y-%m-%d-")
            .pad(6)
            .reset(Reset::Never)
    };
    let moments = [
        utc(2026, 12, 31, 12, 0, 0),
        utc(2027, 1, 1, 12, 0, 0),
        utc(2028, 1, 1, 12, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, [&spec("batched"), &spec("gapless")], &moments);
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
    let key = spec("gapless").build().unwrap();
    let rows = admin::counters(&mut conn, Some(key.key())).unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0].period.as_str(), rows[0].current_value), ("", 3));
}

/// Printed days, counted per quarter at +09:00: the quarter ends at local midnight.
fn a_quarter_of_printed_days_starts_at_local_midnight<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = |name: &str| {
        Spec::builder(db.key(name))
            .format("{date}-{seq}")
            .date("%Y%m%d")
            .pad(4)
            .time_zone(Zone::parse("+09:00").unwrap())
            .reset(Reset::Quarter)
    };
    let last = utc(2026, 9, 30, 14, 59, 59); // 23:59:59 in Tokyo
    let moments = [utc(2026, 7, 1, 0, 0, 0), last, last + TimeDelta::seconds(1)];
    let [batched, gapless] = walk(&mut conn, [&spec("batched"), &spec("gapless")], &moments);
    assert_eq!(gapless, ["20260701-0001", "20260930-0002", "20261001-0001"]);
    assert_eq!(batched[0], "20260701-0001");
    assert_eq!(batched[2], "20261001-0001");
}

/// Printed days, counted per ISO week: 31 December 2026 and 1 January 2027 are both in week
/// 53 of 2026, one counter; 4 January 2027 begins week 1.
fn an_iso_week_of_printed_days_spans_new_year<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = |name: &str| {
        Spec::builder(db.key(name))
            .format("{date}-{seq}")
            .date("%Y%m%d")
            .pad(3)
            .reset(Reset::Week)
    };
    let moments = [
        utc(2026, 12, 31, 12, 0, 0),
        utc(2027, 1, 1, 12, 0, 0),
        utc(2027, 1, 4, 12, 0, 0),
    ];
    let [batched, gapless] = walk(&mut conn, [&spec("batched"), &spec("gapless")], &moments);
    assert_eq!(gapless, ["20261231-001", "20270101-002", "20270104-001"]);
    assert_eq!(batched[0], "20261231-001");
    assert!(number(&batched[1]) > 1, "{batched:?}");
    assert_eq!(batched[2], "20270104-001");
}

diesel::table! {
    reset_docs (id) {
        id -> Text,
        doc_no -> Text,
        issued_on -> Date,
    }
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = reset_docs)]
struct Order {
    #[distributed_id(
        key = "reset_orders",
        prefix = "SO",
        date = "%Y%m%d-",
        pad = 5,
        reset = "year",
        period_from = "issued_on"
    )]
    id: String,
    #[distributed_id(
        key = "reset_docs",
        prefix = "DOC-",
        date = "%Y-%m-%d-",
        pad = 6,
        reset = "never",
        period_from = "issued_on",
        gapless
    )]
    doc_no: String,
    issued_on: NaiveDate,
}

fn the_derive_resets_per_year_and_never_through_insert_into<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Order>: Insert<reset_docs::table, C>,
{
    derive_across_new_year(db, false);
}

fn the_derive_resets_per_year_and_never_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Order>: Insert<reset_docs::table, C>,
{
    derive_across_new_year(db, true);
}

/// Documents dated across the last New Year, one by one and in a bulk, numbered per year
/// (batched) and never reset (gapless); then `gaps` and `adopt` read the year's counter back
/// from the IDs of its many days.
fn derive_across_new_year<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Order>: Insert<reset_docs::table, C>,
{
    let table = "CREATE TABLE reset_docs (id VARCHAR(30) PRIMARY KEY, \
                 doc_no VARCHAR(30) NOT NULL, issued_on DATE NOT NULL)";
    let scratch = common::scratch_with_table(&db, "reset", table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let mut conn = scratch.connect();
    let on = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let order = |issued_on| Order {
        id: String::new(),
        doc_no: String::new(),
        issued_on,
    };
    let mut rows = Vec::new();
    for day in [on(2025, 12, 30), on(2025, 12, 31), on(2026, 1, 1)] {
        let mut one = vec![order(day)];
        conn.transaction(|conn| {
            diesel_seqgen::insert_into(reset_docs::table)
                .values(&mut one)
                .execute(conn)
        })
        .unwrap();
        rows.extend(one);
    }
    let mut bulk = vec![order(on(2026, 1, 2)), order(on(2026, 11, 27))];
    conn.transaction(|conn| {
        diesel_seqgen::insert_into(reset_docs::table)
            .values(&mut bulk)
            .execute(conn)
    })
    .unwrap();
    rows.extend(bulk);
    let docs: Vec<&str> = rows.iter().map(|r| r.doc_no.as_str()).collect();
    assert_eq!(
        docs,
        [
            "DOC-2025-12-30-000001",
            "DOC-2025-12-31-000002",
            "DOC-2026-01-01-000003",
            "DOC-2026-01-02-000004",
            "DOC-2026-11-27-000005"
        ]
    );
    let orders: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    for (order, row) in orders.iter().zip(&rows) {
        assert!(order.starts_with(&row.issued_on.format("SO%Y%m%d-").to_string()));
    }
    assert_eq!(orders[0], "SO20251230-00001");
    assert_eq!(
        orders[2], "SO20260101-00001",
        "2026 starts again: {orders:?}"
    );
    assert!(
        number(orders[1]) > 1 && number(orders[4]) > number(orders[3]),
        "{orders:?}"
    );
    // The table's IDs as the tools read them: a year's counter, from IDs of many days.
    let ids = IdColumn::new("reset_docs", "id");
    let spec = admin::recorded_spec(&mut conn, "reset_orders").unwrap();
    assert_eq!(spec.shape(), "SO{date:%Y%m%d-}{seq:5}{reset:year}");
    let report = admin::gaps(&mut conn, &spec, ids, "20261127-").unwrap();
    assert_eq!(report.found, 3, "all of 2026: {report:?}");
    assert!(report.duplicates.is_empty(), "{report:?}");
    let check = admin::adopt(&mut conn, &spec, ids).unwrap();
    let highest: Vec<(&str, u64)> = check
        .counters
        .iter()
        .map(|c| (c.period.as_str(), c.highest))
        .collect();
    assert_eq!(
        highest,
        [("2025", number(orders[1])), ("2026", number(orders[4]))]
    );
}

/// Threads insert documents dated on four days across New Year, one a transaction, one in
/// ten rolled back, after `use_pool`: no year's number is handed out on two days (batched, per
/// year), and the committed numbers of the key that never resets are exactly 1..N (gapless).
fn threads_numbering_days_of_two_years_never_repeat_a_years_number<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Order>: Insert<reset_docs::table, C>,
{
    const THREADS: usize = 4;
    const PER_THREAD: usize = 20;
    let table = "CREATE TABLE reset_docs (id VARCHAR(30) PRIMARY KEY, \
                 doc_no VARCHAR(30) NOT NULL, issued_on DATE NOT NULL)";
    let scratch = common::scratch_with_table(&db, "reset_threads", table, None);
    diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    let days = [(2025, 12, 30), (2025, 12, 31), (2026, 1, 1), (2026, 1, 2)]
        .map(|(y, m, d)| NaiveDate::from_ymd_opt(y, m, d).unwrap());
    let barrier = Arc::new(Barrier::new(THREADS));
    let rows: Vec<Order> = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (barrier, scratch) = (barrier.clone(), &scratch);
                s.spawn(move || {
                    let mut conn = scratch.connect();
                    barrier.wait();
                    let mut mine = Vec::new();
                    for i in 0..PER_THREAD {
                        let mut order = vec![Order {
                            id: String::new(),
                            doc_no: String::new(),
                            issued_on: days[(t + i) % days.len()],
                        }];
                        let rollback = (t * PER_THREAD + i) % 10 == 0;
                        // A deadlock between first numbers on MySQL is run again, as an
                        // application does.
                        let done = diesel_seqgen::retry_transaction(&mut conn, |conn| {
                            diesel_seqgen::insert_into(reset_docs::table)
                                .values(&mut order)
                                .execute(conn)?;
                            if rollback {
                                return Err(Error::Database(
                                    diesel::result::Error::RollbackTransaction,
                                ));
                            }
                            Ok(())
                        });
                        if done.is_ok() {
                            mine.extend(order);
                        }
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(rows.len(), THREADS * PER_THREAD * 9 / 10);
    let mut per_year: BTreeMap<&str, HashSet<u64>> = BTreeMap::new();
    for row in &rows {
        assert!(row
            .id
            .starts_with(&row.issued_on.format("SO%Y%m%d-").to_string()));
        let fresh = per_year
            .entry(&row.id[2..6])
            .or_default()
            .insert(number(&row.id));
        assert!(fresh, "{} repeats a number of its year", row.id);
    }
    assert_eq!(per_year.len(), 2, "{per_year:?}");
    let mut docs: Vec<u64> = rows.iter().map(|row| number(&row.doc_no)).collect();
    docs.sort_unstable();
    assert_eq!(docs, (1..=rows.len() as u64).collect::<Vec<_>>());
}
