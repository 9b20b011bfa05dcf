//! The document's own date (`period_from = "issued_on"`): documents of three months
//! interleaved by many threads each number in their own month's row, batched (no ID twice)
//! and gapless (exactly 1..N per month, rollbacks included); a back-dated document continues
//! its month's row, which never goes back; a date far ahead is refused unless the spec allows
//! it; `spec.dated(date)` does the same without the derive, previews included.

use crate::common;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Barrier};
use std::thread;

use chrono::{Days, NaiveDate, TimeZone as _, Utc};
use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    documents_of_three_months_interleaved,
    gapless_documents_of_three_months_interleaved,
    a_back_dated_document_continues_its_month,
);

diesel::table! {
    dated_docs (id) {
        id -> Text,
        issued_on -> Date,
    }
}

#[derive(Insertable, DistributedId, Debug, Clone)]
#[diesel(table_name = dated_docs)]
struct Order {
    #[distributed_id(
        key = "dated_orders",
        prefix = "O",
        date = "%y%m",
        pad = 5,
        period_from = "issued_on"
    )]
    id: String,
    issued_on: NaiveDate,
}

#[derive(Insertable, DistributedId, Debug, Clone)]
#[diesel(table_name = dated_docs)]
struct Invoice {
    #[distributed_id(
        key = "dated_invoices",
        prefix = "I",
        date = "%y%m",
        pad = 5,
        period_from = "issued_on",
        gapless
    )]
    id: String,
    issued_on: NaiveDate,
}

const THREADS: usize = 4;
const PER_THREAD: usize = 30;

fn day(m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, m, d).unwrap()
}

/// January, February or March, in turn.
fn month_of(i: usize) -> NaiveDate {
    day(1 + (i % 3) as u32, 1 + (i % 28) as u32)
}

/// The IDs by the month they show, checking each shows its document's month.
fn by_month(rows: &[(String, NaiveDate)]) -> BTreeMap<String, Vec<u64>> {
    let mut months: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (id, issued_on) in rows {
        let month = issued_on.format("%y%m").to_string();
        assert_eq!(&id[1..5], month, "{id} of a document dated {issued_on}");
        months
            .entry(month)
            .or_default()
            .push(id[5..].parse().unwrap());
    }
    months
}

fn create_table<'a, C: TestConnection>(db: &'a TestDb<C>, name: &str) -> common::Scratch<'a, C> {
    let table = "CREATE TABLE dated_docs (id VARCHAR(20) PRIMARY KEY, issued_on DATE NOT NULL)";
    common::scratch_with_table(db, name, table, None)
}

/// Batched: every thread inserts documents of three months in turn, in bulks of three.
fn documents_of_three_months_interleaved<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Order>: diesel_seqgen::insert::Insert<dated_docs::table, C>,
{
    let scratch = create_table(&db, "dated");
    let generator = Generator::new();
    let barrier = Arc::new(Barrier::new(THREADS));
    let rows: Vec<(String, NaiveDate)> = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (generator, barrier, scratch) = (&generator, barrier.clone(), &scratch);
                s.spawn(move || {
                    let mut conn = scratch.connect();
                    barrier.wait();
                    let mut mine = Vec::new();
                    for chunk in 0..PER_THREAD / 3 {
                        let mut orders: Vec<Order> = (0..3)
                            .map(|i| Order {
                                id: String::new(),
                                issued_on: month_of(t + chunk + i),
                            })
                            .collect();
                        diesel_seqgen::insert_into(dated_docs::table)
                            .values(&mut orders)
                            .with_generator(generator)
                            .execute(&mut conn)
                            .unwrap();
                        mine.extend(orders.into_iter().map(|o| (o.id, o.issued_on)));
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
    let ids: HashSet<&String> = rows.iter().map(|(id, _)| id).collect();
    assert_eq!(ids.len(), THREADS * PER_THREAD, "an ID twice");
    let months = by_month(&rows);
    assert_eq!(months.len(), 3, "{months:?}");
}

/// Gapless: every thread inserts one document a transaction, of three months in turn, one in
/// ten rolled back; each month's committed numbers are exactly 1..N.
fn gapless_documents_of_three_months_interleaved<C>(db: TestDb<C>)
where
    C: TestConnection + diesel_seqgen::IdConnection,
    Vec<Invoice>: diesel_seqgen::insert::Insert<dated_docs::table, C>,
{
    let scratch = create_table(&db, "dated_gapless");
    let barrier = Arc::new(Barrier::new(THREADS));
    let rows: Vec<(String, NaiveDate)> = thread::scope(|s| {
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let (barrier, scratch) = (barrier.clone(), &scratch);
                s.spawn(move || {
                    let mut conn = scratch.connect();
                    barrier.wait();
                    let mut mine = Vec::new();
                    for i in 0..PER_THREAD {
                        let mut invoice = vec![Invoice {
                            id: String::new(),
                            issued_on: month_of(t + i),
                        }];
                        let rollback = (t * PER_THREAD + i) % 10 == 0;
                        // A deadlock between first numbers of a month on MySQL is run again,
                        // as an application does.
                        let done = diesel_seqgen::retry_transaction(&mut conn, |conn| {
                            diesel_seqgen::insert_into(dated_docs::table)
                                .values(&mut invoice)
                                .execute(conn)?;
                            if rollback {
                                return Err(Error::Database(
                                    diesel::result::Error::RollbackTransaction,
                                ));
                            }
                            Ok(())
                        });
                        if done.is_ok() {
                            mine.push((invoice[0].id.clone(), invoice[0].issued_on));
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
    for (month, mut numbers) in by_month(&rows) {
        numbers.sort_unstable();
        let n = numbers.len() as u64;
        assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "month {month}");
    }
}

/// Numbers in today's month first, then a document dated last month: it continues last
/// month's row, and today's goes on where it was. A date 40 days ahead is refused (the
/// default allows a day) until the spec allows 60; previews look at the date's month.
fn a_back_dated_document_continues_its_month<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 11, 26, 12, 0, 0).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let spec = |days: u32| {
        Spec::builder(db.key("back_dated"))
            .prefix("B")
            .date("%y%m")
            .pad(3)
            .max_days_ahead(days)
            .build()
            .unwrap()
    };
    let orders = spec(1);
    let october = day(10, 31);
    assert_eq!(
        generator.next_id(&mut conn, orders.dated(october)).unwrap(),
        "B2610001"
    );
    assert_eq!(generator.next_id(&mut conn, &orders).unwrap(), "B2611001");
    assert_eq!(
        generator.next_id(&mut conn, orders.dated(october)).unwrap(),
        "B2610002"
    );
    assert_eq!(generator.next_id(&mut conn, &orders).unwrap(), "B2611002");
    assert_eq!(
        generator
            .peek_next(&mut conn, orders.dated(october))
            .unwrap(),
        101
    );

    let ahead = day(11, 26).checked_add_days(Days::new(40)).unwrap();
    let refused = generator.next_id(&mut conn, orders.dated(ahead));
    assert!(
        matches!(refused, Err(Error::DateAhead { days: 1, .. })),
        "{refused:?}"
    );
    let allowing = spec(60);
    assert_eq!(
        generator.next_id(&mut conn, allowing.dated(ahead)).unwrap(),
        "B2701001"
    );
}
