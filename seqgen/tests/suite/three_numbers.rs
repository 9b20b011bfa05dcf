//! Three numbers on one model, each from a key of its own (issue 57): a batched order number,
//! a gapless invoice number per company and a public reference numbered after the commit,
//! through `diesel_seqgen::insert_into` (one row and bulks, one transaction in ten rolled
//! back), on the default generator as it comes and after `use_pool`, while a follower numbers
//! the references. No order number twice; each company's invoice numbers and the references
//! exactly 1..N over the committed rows.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::Duration;

use common::{assert_distinct, TestConnection, TestDb};
use diesel_seqgen::insert::Insert;
use diesel_seqgen::pending::{self, FollowConnection};
use diesel_seqgen::Error;

backend_tests!(
    three_numbers_on_one_model_each_from_its_key,
    three_numbers_on_one_model_each_from_its_key_after_use_pool,
);

diesel::table! {
    docs (id) {
        id -> BigInt,
        order_no -> Text,
        invoice_no -> Text,
        reference -> Nullable<Text>,
        company -> Text,
    }
}

#[derive(diesel::Insertable, diesel_seqgen::DistributedId)]
#[diesel(table_name = docs)]
struct NewDoc {
    #[distributed_id(key = "doc_orders", prefix = "ORD", date = "", pad = 8)]
    order_no: String,
    #[distributed_id(
        key = "doc_invoices",
        prefix = "INV",
        date = "",
        pad = 6,
        gapless,
        scope = "company"
    )]
    invoice_no: String,
    #[distributed_id(
        key = "doc_references",
        prefix = "REF",
        date = "",
        pad = 6,
        gapless = "deferred"
    )]
    reference: Option<String>,
    company: String,
}

const WRITERS: usize = 2;
const TRANSACTIONS: usize = 20;

/// The longest the follower may take to number the last committed row: far above what it
/// takes (milliseconds), far below a lock wait's timeout.
const LONGEST_WAIT: Duration = Duration::from_secs(10);

fn three_numbers_on_one_model_each_from_its_key<C>(db: TestDb<C>)
where
    C: TestConnection + FollowConnection,
    Vec<NewDoc>: Insert<docs::table, C>,
{
    three_numbers(db, false);
}

fn three_numbers_on_one_model_each_from_its_key_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection + FollowConnection,
    Vec<NewDoc>: Insert<docs::table, C>,
{
    three_numbers(db, true);
}

fn three_numbers<C>(db: TestDb<C>, use_pool: bool)
where
    C: TestConnection + FollowConnection,
    Vec<NewDoc>: Insert<docs::table, C>,
{
    let id = match C::NAME {
        "sqlite" => "id INTEGER PRIMARY KEY",
        "postgres" => "id BIGSERIAL PRIMARY KEY",
        _ => "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let table = format!(
        "CREATE TABLE docs ({id}, order_no VARCHAR(20) NOT NULL UNIQUE, \
         invoice_no VARCHAR(20) NOT NULL, reference VARCHAR(20) UNIQUE, \
         company VARCHAR(20) NOT NULL, UNIQUE (company, invoice_no))"
    );
    let scratch = common::scratch_with_table(&db, "three_numbers", &table, None);
    if use_pool {
        diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
    }
    let (spec, rows) = pending::rows_of::<NewDoc>(docs::id).unwrap();
    assert_eq!(spec.key(), "doc_references");
    let stop = AtomicBool::new(false);
    let committed = thread::scope(|s| {
        let follower = s.spawn(|| {
            let mut conn = scratch.connect();
            pending::follow(&mut conn, spec, rows, Duration::from_millis(5), &stop)
        });
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let scratch = &scratch;
                s.spawn(move || write(&mut scratch.connect(), w))
            })
            .collect();
        let committed: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
        let mut conn = scratch.connect();
        crate::own_servers::wait_until(
            "the follower to number every committed row",
            LONGEST_WAIT,
            || {
                C::texts(
                    &mut conn,
                    "SELECT 'x' AS text FROM docs WHERE reference IS NULL",
                )
                .is_empty()
            },
        );
        stop.store(true, Ordering::Relaxed);
        follower.join().unwrap().unwrap();
        committed
    });

    let mut conn = scratch.connect();
    let mut column = |name: &str| C::texts(&mut conn, &format!("SELECT {name} AS text FROM docs"));
    let (orders, invoices) = (column("order_no"), column("invoice_no"));
    let (references, companies) = (column("reference"), column("company"));
    assert_eq!(orders.len(), committed, "a rolled-back row is in the table");
    assert_distinct(&orders);
    assert!(orders.iter().all(|o| o.starts_with("ORD")), "{orders:?}");
    let mut per_company: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (company, invoice) in companies.iter().zip(&invoices) {
        per_company
            .entry(company)
            .or_default()
            .push(number_after(invoice, "INV"));
    }
    assert_eq!(per_company.len(), 2);
    for (company, numbers) in per_company {
        assert_one_to_n(numbers, company);
    }
    let references = references.iter().map(|r| number_after(r, "REF")).collect();
    assert_one_to_n(references, "references");
}

/// Writer `w`'s transactions: one row, or (every third) a bulk of three rows of both
/// companies; one in ten rolled back. Run again on a conflict, as the guide tells users
/// (`retry_transaction`). How many rows committed.
fn write<C>(conn: &mut C, w: usize) -> usize
where
    C: TestConnection,
    Vec<NewDoc>: Insert<docs::table, C>,
{
    let mut committed = 0;
    for i in 0..TRANSACTIONS {
        let size = if i % 3 == 0 { 3 } else { 1 };
        let rollback = (w * TRANSACTIONS + i) % 10 == 7;
        let done = diesel_seqgen::retry_transaction(conn, |conn| {
            let mut docs: Vec<NewDoc> = (0..size)
                .map(|k| NewDoc {
                    order_no: String::new(),
                    invoice_no: String::new(),
                    reference: None,
                    company: ["acme", "globex"][(i + k) % 2].to_owned(),
                })
                .collect();
            diesel_seqgen::insert_into(docs::table)
                .values(&mut docs)
                .execute(conn)?;
            assert!(
                docs.iter().all(|d| d.reference.is_none()),
                "a reference before the commit"
            );
            thread::sleep(Duration::from_millis(1));
            if rollback {
                return Err(Error::Database(diesel::result::Error::RollbackTransaction));
            }
            Ok(())
        });
        match done {
            Ok(()) => committed += size,
            Err(Error::Database(diesel::result::Error::RollbackTransaction)) if rollback => {}
            Err(e) => panic!("writer {w}, transaction {i}: {e}"),
        }
    }
    committed
}

/// The number of `id`, after its prefix.
fn number_after(id: &str, prefix: &str) -> u64 {
    id.strip_prefix(prefix)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{id} is not {prefix} and a number"))
}

fn assert_one_to_n(mut numbers: Vec<u64>, counter: &str) {
    numbers.sort_unstable();
    let n = numbers.len() as u64;
    assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "{counter}");
}
