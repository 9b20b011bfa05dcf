//! The reset apart from the printed date through the derive, with documents dated across New
//! Year (`period_from`) on the default generator, as it comes and after `use_pool`: an order
//! number per year (batched) and a document number that never resets (gapless) on one model,
//! one by one, in a bulk and from many threads (no year's number twice, the `never` key exactly
//! 1..N); `gaps` and `adopt` read a year's counter back from IDs of many days.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Barrier};
use std::thread;

use chrono::NaiveDate;
use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::admin::{self, IdColumn};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::{DistributedId, Error};

use crate::reset::number;

backend_tests!(
    the_derive_resets_per_year_and_never_through_insert_into,
    the_derive_resets_per_year_and_never_after_use_pool,
    threads_numbering_days_of_two_years_never_repeat_a_years_number,
);

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
    // One block per year's counter, whichever of its dates a document has: no hole between
    // dates, though blocks are cached (after `use_pool`, beside the transaction).
    assert_eq!(
        orders,
        [
            "SO20251230-00001",
            "SO20251231-00002",
            "SO20260101-00001",
            "SO20260102-00002",
            "SO20261127-00003"
        ]
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
