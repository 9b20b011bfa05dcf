//! The behaviour suite on diesel-async's connections: `AsyncPgConnection`,
//! `AsyncMysqlConnection`, and SQLite through `SyncConnectionWrapper`. Each scenario mirrors one
//! of the blocking suite's (periods, batches, transactions, gapless with rollbacks, policies,
//! identity, release), plus what only tasks can do: many tasks on one key, and futures dropped
//! mid-reservation.
#![cfg(any(
    feature = "async-sqlite",
    feature = "async-postgres",
    feature = "async-mysql"
))]

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use chrono::{TimeZone, Utc};
use common::{assert_distinct, TestConnection, TestDb};
use diesel::connection::SimpleConnection;
use diesel::{Connection, ExpressionMethods, Insertable, QueryDsl};
use diesel_async::{AsyncConnection, RunQueryDsl, TransactionManager};
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::nonblocking as sq;
use diesel_seqgen::sequence::Sequence;
use diesel_seqgen::{DistributedId, Error, Spec};

/// An async connection the suite runs on, beside the blocking one its database is set up with.
trait AsyncTest: AsyncConnection<Backend: diesel_seqgen::backend::AsyncBackend> + 'static {
    /// The blocking connection of the same backend (migrations, lock holders, checks).
    type Sync: TestConnection;
    /// A new connection to the test database at `url`.
    fn open(url: &str) -> impl std::future::Future<Output = Self> + Send;
    /// Runs `sql` (Diesel's statements are concrete per backend, the tests generic).
    fn execute(&mut self, sql: String) -> impl std::future::Future<Output = usize> + Send;
}

#[cfg(feature = "async-sqlite")]
type AsyncSqlite =
    diesel_async::sync_connection_wrapper::SyncConnectionWrapper<diesel::SqliteConnection>;

#[cfg(feature = "async-sqlite")]
impl AsyncTest for AsyncSqlite {
    type Sync = diesel::SqliteConnection;
    async fn open(url: &str) -> Self {
        let mut conn = diesel::SqliteConnection::establish(url).unwrap();
        diesel_seqgen::sqlite::configure(&mut conn).unwrap();
        AsyncSqlite::new(conn)
    }
    async fn execute(&mut self, sql: String) -> usize {
        diesel::sql_query(sql).execute(self).await.unwrap()
    }
}

#[cfg(feature = "async-postgres")]
impl AsyncTest for diesel_async::AsyncPgConnection {
    type Sync = diesel::PgConnection;
    async fn open(url: &str) -> Self {
        Self::establish(url).await.unwrap()
    }
    async fn execute(&mut self, sql: String) -> usize {
        diesel::sql_query(sql).execute(self).await.unwrap()
    }
}

#[cfg(feature = "async-mysql")]
impl AsyncTest for diesel_async::AsyncMysqlConnection {
    type Sync = diesel::MysqlConnection;
    async fn open(url: &str) -> Self {
        Self::establish(url).await.unwrap()
    }
    async fn execute(&mut self, sql: String) -> usize {
        diesel::sql_query(sql).execute(self).await.unwrap()
    }
}

/// Instantiates `async fn name<A: AsyncTest>(db: TestDb<A::Sync>)` once per enabled async
/// backend, on a multi-threaded runtime (tasks move between threads, so futures must be
/// `Send`).
macro_rules! async_tests {
    ($($test:ident),* $(,)?) => {
        #[cfg(feature = "async-sqlite")]
        mod sqlite {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                if let Some(db) = $crate::common::TestDb::open(stringify!($test)) {
                    super::$test::<super::AsyncSqlite>(db).await;
                }
            })*
        }
        #[cfg(feature = "async-postgres")]
        mod postgres {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                if let Some(db) = $crate::common::TestDb::open(stringify!($test)) {
                    super::$test::<diesel_async::AsyncPgConnection>(db).await;
                }
            })*
        }
        #[cfg(feature = "async-mysql")]
        mod mysql {
            $(#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $test() {
                if let Some(db) = $crate::common::TestDb::open(stringify!($test)) {
                    super::$test::<diesel_async::AsyncMysqlConnection>(db).await;
                }
            })*
        }
    };
}

async_tests!(
    a_block_serves_from_memory_and_the_next_continues,
    many_tasks_and_two_instances_never_repeat,
    every_period_starts_at_one,
    inside_a_transaction_a_rollback_gives_the_numbers_back,
    gapless_committed_numbers_are_exactly_one_to_n,
    nowait_says_busy_and_leaves_the_transaction_usable,
    sequences_count_per_scope_and_refuse_outside_a_transaction,
    numeric_ids_check_digits_and_scopes,
    a_generator_refuses_another_database,
    release_gives_the_unused_numbers_back,
    a_dropped_reservation_never_serves_a_number_twice,
    a_bulk_reserves_once_per_scope,
    tasks_hand_out_exactly_one_to_n,
    another_shape_is_refused_while_a_block_is_held,
    numbers_after_the_commit_from_three_tasks,
);

mod reset;

fn spec(db: &TestDb<impl TestConnection>, name: &str, batch: u32) -> Spec {
    Spec::builder(db.key(name))
        .prefix("A")
        .date("")
        .pad(6)
        .batch(batch)
        .build()
        .unwrap()
}

fn gapless(db: &TestDb<impl TestConnection>, name: &str) -> Spec {
    Spec::builder(db.key(name))
        .prefix("G")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap()
}

/// The counter of an ID of six digits at its end.
fn counter(id: &str) -> u64 {
    id[id.len() - 6..].parse().unwrap()
}

/// A generator whose blocks are always the spec's `batch`.
fn fixed() -> sq::Generator {
    sq::Generator::from(diesel_seqgen::Generator::builder().fixed_batch().build())
}

fn rollback() -> Error {
    Error::Database(diesel::result::Error::RollbackTransaction)
}

/// One reservation serves a block from memory; the next block continues after it.
async fn a_block_serves_from_memory_and_the_next_continues<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    let spec = spec(&db, "orders", 10);
    let generator = fixed();
    let mut ids = vec![generator.next_id(&mut conn, &spec).await.unwrap()];
    ids.extend(generator.next_ids(&mut conn, &spec, 9).await.unwrap());
    assert_eq!(generator.reservations(), 1);
    ids.extend(generator.next_ids(&mut conn, &spec, 3).await.unwrap());
    assert_eq!(generator.reservations(), 2);
    let counters: Vec<u64> = ids.iter().map(|id| counter(id)).collect();
    assert_eq!(counters, (1..=13).collect::<Vec<_>>());
    assert_eq!(generator.stats()[0].served_from_memory, 9);
    // The default generator of this database, beside it, reserves its own block.
    let next = sq::next_id(&mut conn, &spec).await.unwrap();
    assert_eq!(counter(&next), 21);
}

/// 32 tasks on one key through one generator, and a second generator (another instance) at
/// the same time: every ID distinct, and the tasks of one generator share its reservations.
async fn many_tasks_and_two_instances_never_repeat<A: AsyncTest>(db: TestDb<A::Sync>) {
    let spec = Arc::new(spec(&db, "busy", 50));
    let instances = [fixed(), fixed()];
    let url = Arc::new(db.url.clone());
    let mut tasks = Vec::new();
    for task in 0..32 {
        let (spec, url) = (Arc::clone(&spec), Arc::clone(&url));
        let generator = instances[task % 2].clone();
        tasks.push(tokio::spawn(async move {
            let mut conn = A::open(&url).await;
            let mut ids = Vec::new();
            for round in 0..25 {
                if round % 5 == 0 {
                    ids.extend(generator.next_ids(&mut conn, &spec, 3).await.unwrap());
                } else {
                    ids.push(generator.next_id(&mut conn, &spec).await.unwrap());
                }
            }
            ids
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    assert_eq!(all.len(), 32 * (20 + 5 * 3));
    assert_distinct(&all);
    // Each generator served 560 numbers from blocks of 50: at most a block per 50 (and one
    // per task that found a block too small for its 3).
    for generator in &instances {
        assert!(
            generator.reservations() <= 560 / 50 + 16 + 1,
            "{generator:?}"
        );
    }
}

/// The invariant of batched mode for tasks, on the defaults (`invariant.rs` for
/// threads): 32 tasks on a multi-threaded runtime take IDs from one generator (blocks grow),
/// then `release`: the numbers handed out are exactly `1..=n`.
async fn tasks_hand_out_exactly_one_to_n<A: AsyncTest>(db: TestDb<A::Sync>) {
    let spec = Arc::new(Spec::builder(db.key("exact")).date("").build().unwrap());
    let generator = sq::Generator::new();
    let got = on_tasks::<A>(&db.url, Some(&generator), &spec).await;
    let mut conn = A::open(&db.url).await;
    generator.release(&mut conn).await.unwrap();
    assert_exact(got);
    let last = generator
        .as_ref()
        .last_value(&mut db.connect(), &spec)
        .unwrap();
    assert_eq!(last, Some(32 * 150));
}

/// 32 tasks, each on a connection of its own, take 150 numbers of `spec` from `generator`, or
/// from the process-wide default with `None` (one bulk of 10 in every 20 calls); returns them
/// all.
async fn on_tasks<A: AsyncTest>(
    url: &str,
    generator: Option<&sq::Generator>,
    spec: &Arc<Spec>,
) -> Vec<u64> {
    let mut tasks = Vec::new();
    for _ in 0..32 {
        let (generator, spec, url) = (generator.cloned(), Arc::clone(spec), url.to_owned());
        tasks.push(tokio::spawn(async move {
            let mut conn = A::open(&url).await;
            let mut got = Vec::new();
            while got.len() < 150 {
                if got.len() % 20 == 0 {
                    let ids = match &generator {
                        Some(generator) => generator.next_ids(&mut conn, &*spec, 10).await,
                        None => sq::next_ids(&mut conn, &*spec, 10).await,
                    };
                    got.extend(ids.unwrap().iter().map(|id| counter(id)));
                } else {
                    let id = match &generator {
                        Some(generator) => generator.next_id(&mut conn, &*spec).await,
                        None => sq::next_id(&mut conn, &*spec).await,
                    };
                    got.push(counter(&id.unwrap()));
                }
            }
            got
        }));
    }
    let mut all = Vec::new();
    for task in tasks {
        all.extend(task.await.unwrap());
    }
    all
}

/// The numbers are exactly `1..=n`.
fn assert_exact(mut got: Vec<u64>) {
    got.sort_unstable();
    let expected: Vec<u64> = (1..=got.len() as u64).collect();
    assert!(got == expected, "not exactly 1..={}: {got:?}", got.len());
}

/// A dated spec restarts at 1 in every period, on the generator's clock.
async fn every_period_starts_at_one<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 11, 23, 23, 59, 0).unwrap(),
    ));
    let generator = sq::Generator::from(
        diesel_seqgen::Generator::builder()
            .clock(Arc::clone(&clock))
            .build(),
    );
    let spec = Spec::builder(db.key("daily"))
        .prefix("D")
        .date("%Y%m%d")
        .pad(4)
        .batch(5)
        .build()
        .unwrap();
    assert_eq!(
        generator.next_ids(&mut conn, &spec, 2).await.unwrap(),
        ["D202611230001", "D202611230002"]
    );
    clock.set(Utc.with_ymd_and_hms(2026, 11, 24, 0, 0, 1).unwrap());
    assert_eq!(
        generator.next_id(&mut conn, &spec).await.unwrap(),
        "D202611240001"
    );
}

/// Without a pool, batched numbers needed inside a transaction are taken in it, uncached: a
/// rollback gives them back and the next caller gets them.
async fn inside_a_transaction_a_rollback_gives_the_numbers_back<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    let spec = spec(&db, "in_tx", 100);
    let generator = fixed();
    let rolled_back = conn
        .transaction(async |conn| {
            let ids = generator.next_ids(conn, &spec, 2).await?;
            assert_eq!(ids.iter().map(|id| counter(id)).collect::<Vec<_>>(), [1, 2]);
            Err::<(), _>(rollback())
        })
        .await;
    assert!(matches!(rolled_back, Err(Error::Database(_))));
    let committed = conn
        .transaction(async |conn| generator.next_id(conn, &spec).await)
        .await
        .unwrap();
    assert_eq!(counter(&committed), 1);
    // Nothing was cached from inside the transactions: outside, a block follows them.
    assert_eq!(
        counter(&generator.next_id(&mut conn, &spec).await.unwrap()),
        2
    );
}

/// Creates `async_gapless_numbers` once per test binary (concurrent `CREATE TABLE IF NOT EXISTS`
/// can fail on PostgreSQL).
fn rows_table<C: TestConnection>(db: &TestDb<C>) {
    static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = CREATING.lock().unwrap_or_else(|e| e.into_inner());
    db.connect()
        .batch_execute(
            "CREATE TABLE IF NOT EXISTS async_gapless_numbers \
             (run VARCHAR(191) NOT NULL, id VARCHAR(64) NOT NULL, PRIMARY KEY (run, id))",
        )
        .unwrap();
}

/// 8 tasks, each on its own connection, insert rows in transactions that take a gapless
/// number; 10 % roll back after taking it. The committed numbers are exactly 1..=N.
async fn gapless_committed_numbers_are_exactly_one_to_n<A: AsyncTest>(db: TestDb<A::Sync>) {
    rows_table(&db);
    let spec = Arc::new(gapless(&db, "invoices"));
    let run = Arc::new(db.key("run"));
    let url = Arc::new(db.url.clone());
    let mut tasks = Vec::new();
    for task in 0..8u32 {
        let (spec, run, url) = (Arc::clone(&spec), Arc::clone(&run), Arc::clone(&url));
        tasks.push(tokio::spawn(async move {
            let mut conn = A::open(&url).await;
            let mut committed = 0;
            for attempt in 0..15u32 {
                let roll_back = (task * 15 + attempt) % 10 == 3;
                // InnoDB's gap locks on the period's first row can abort a transaction: as an
                // app would, run it again (a bounded number of times: 20 was once too few
                // for 8 tasks on 2 busy cores).
                for _ in 0..100 {
                    let result = conn
                        .transaction(async |conn| {
                            let id = sq::next_id(conn, &spec).await?;
                            conn.execute(format!(
                            "INSERT INTO async_gapless_numbers (id, run) VALUES ('{id}', '{run}')"
                        ))
                            .await;
                            if roll_back {
                                return Err(rollback());
                            }
                            Ok(())
                        })
                        .await;
                    match result {
                        Ok(()) => committed += 1,
                        Err(Error::Database(diesel::result::Error::RollbackTransaction)) => {}
                        Err(Error::TransactionConflict(_)) => {
                            tokio::task::yield_now().await;
                            continue;
                        }
                        Err(e) => panic!("{e}"),
                    }
                    break;
                }
            }
            committed
        }));
    }
    let mut committed = 0;
    for task in tasks {
        committed += task.await.unwrap();
    }
    let mut check = db.connect();
    let ids = A::Sync::texts(
        &mut check,
        &format!("SELECT id AS text FROM async_gapless_numbers WHERE run = '{run}'"),
    );
    let numbers: BTreeSet<u64> = ids.iter().map(|id| counter(id)).collect();
    assert_eq!(ids.len(), committed);
    assert_eq!(numbers, (1..=committed as u64).collect(), "{ids:?}");
    assert_eq!(committed, 108, "120 attempts, 12 rolled back");
}

/// A `nowait` sequence whose counter another transaction holds fails with `Busy` at once and
/// leaves the caller's transaction usable.
async fn nowait_says_busy_and_leaves_the_transaction_usable<A: AsyncTest>(db: TestDb<A::Sync>) {
    let key = db.key("receipts");
    let sequence = Sequence::new(key.as_str()).unwrap().nowait().unwrap();
    let (mut holder, mut waiter) = (A::open(&db.url).await, A::open(&db.url).await);
    // The row exists first (a missing row takes the nowait creation path, tested blocking).
    holder
        .transaction(async |conn| sq::next_values_of(conn, &sequence, 1).await)
        .await
        .unwrap();
    A::TransactionManager::begin_transaction(&mut holder)
        .await
        .unwrap();
    assert_eq!(
        sq::next_values_of(&mut holder, &sequence, 1).await.unwrap(),
        [2]
    );
    let busy = waiter
        .transaction(async |conn| {
            let busy = sq::next_values_of(conn, &sequence, 1).await;
            assert!(matches!(busy, Err(Error::Busy { .. })), "{busy:?}");
            // The transaction still works after the refusal.
            sq::next_value(conn, &db.key("other")).await
        })
        .await;
    // SQLite has one writer: while the holder writes, the other key waits too.
    if A::Sync::NAME != "sqlite" {
        assert_eq!(busy.unwrap(), 1);
    }
    A::TransactionManager::commit_transaction(&mut holder)
        .await
        .unwrap();
}

/// Plain gapless counters: per scope, and refused outside a transaction unless allowed.
async fn sequences_count_per_scope_and_refuse_outside_a_transaction<A: AsyncTest>(
    db: TestDb<A::Sync>,
) {
    let mut conn = A::open(&db.url).await;
    let key = db.key("lines");
    assert!(matches!(
        sq::next_value(&mut conn, &key).await,
        Err(Error::OutsideTransaction { .. })
    ));
    let scoped = Sequence::new(key.as_str()).unwrap().scoped().unwrap();
    let values = conn
        .transaction(async |conn| {
            let mut values = sq::next_values_of(conn, scoped.scope("order-1"), 2).await?;
            values.extend(sq::next_values_of(conn, scoped.scope("order-2"), 1).await?);
            values.extend(sq::next_values_of(conn, scoped.scope("order-1"), 1).await?);
            Ok::<_, Error>(values)
        })
        .await
        .unwrap();
    assert_eq!(values, [1, 2, 1, 3]);
    let allowed = Sequence::new(db.key("tickets"))
        .unwrap()
        .allow_outside_transaction();
    assert_eq!(
        sq::next_values_of(&mut conn, &allowed, 2).await.unwrap(),
        [1, 2]
    );
}

/// Policies on the async path: `i64` IDs, check digits, scopes, a spec that cannot fit.
async fn numeric_ids_check_digits_and_scopes<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    let generator = fixed();
    let numbers = Spec::builder(db.key("numbers"))
        .date("")
        .pad(8)
        .batch(5)
        .build()
        .unwrap();
    assert_eq!(generator.next_number(&mut conn, &numbers).await.unwrap(), 1);
    assert_eq!(
        generator
            .next_numbers(&mut conn, &numbers, 2)
            .await
            .unwrap(),
        [2, 3]
    );
    let text = spec(&db, "text", 5);
    assert!(matches!(
        generator.next_number(&mut conn, &text).await,
        Err(Error::NotNumeric { .. })
    ));
    let checked = Spec::builder(db.key("checked"))
        .prefix("C")
        .date("")
        .pad(5)
        .check(diesel_seqgen::Check::Luhn)
        .build()
        .unwrap();
    let id = generator.next_id(&mut conn, &checked).await.unwrap();
    assert!(checked.verify(&id), "{id}");
    let scoped = Spec::builder(db.key("scoped"))
        .prefix("S")
        .date("")
        .pad(3)
        .batch(5)
        .scoped()
        .build()
        .unwrap();
    let a = generator
        .next_id(&mut conn, scoped.scope("acme"))
        .await
        .unwrap();
    let b = generator
        .next_id(&mut conn, scoped.scope("globex"))
        .await
        .unwrap();
    let a2 = sq::next_ids(&mut conn, scoped.scope("acme"), 1)
        .await
        .unwrap();
    assert_eq!((a.as_str(), b.as_str()), ("S001", "S001"));
    assert_eq!(a2, ["S006"]); // the default generator's own block
    assert!(matches!(
        generator.next_id(&mut conn, &scoped).await,
        Err(Error::ScopeMismatch { .. })
    ));
    let tiny = Spec::builder(db.key("tiny"))
        .date("")
        .pad(1)
        .batch(5)
        .build()
        .unwrap();
    assert!(matches!(
        generator.next_numbers(&mut conn, &tiny, 10).await,
        Err(Error::Overflow { .. })
    ));
}

/// A generator that reserved on one database refuses to reserve on another.
async fn a_generator_refuses_another_database<A: AsyncTest>(db: TestDb<A::Sync>) {
    let other = db.scratch("other");
    diesel_seqgen::run_migrations(&mut other.connect()).unwrap();
    let spec = spec(&db, "identity", 1);
    let generator = fixed();
    let mut conn = A::open(&db.url).await;
    generator.next_id(&mut conn, &spec).await.unwrap();
    let mut elsewhere = A::open(&other.url).await;
    assert!(matches!(
        generator.next_id(&mut elsewhere, &spec).await,
        Err(Error::DifferentDatabase)
    ));
    // The block the refused reservation took there is a hole, never served; the default
    // generators tell the two databases apart, and each counts on its own.
    assert_eq!(
        counter(&sq::next_id(&mut elsewhere, &spec).await.unwrap()),
        2
    );
}

/// `release` gives back what a generator holds: the next instance continues without a hole.
async fn release_gives_the_unused_numbers_back<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    let spec = spec(&db, "released", 100);
    let generator = fixed();
    assert_eq!(
        counter(&generator.next_id(&mut conn, &spec).await.unwrap()),
        1
    );
    assert_eq!(generator.release(&mut conn).await.unwrap(), 99);
    assert_eq!(
        counter(&fixed().next_id(&mut conn, &spec).await.unwrap()),
        2
    );
    // Nothing it held is served afterwards: it reserves again.
    assert_eq!(
        counter(&generator.next_id(&mut conn, &spec).await.unwrap()),
        102
    );
}

diesel::table! {
    async_orders (order_no) {
        order_no -> Text,
        invoice_no -> Nullable<Text>,
        item -> Text,
    }
}

#[derive(Insertable, DistributedId, Clone)]
#[diesel(table_name = async_orders)]
struct NewOrder {
    #[distributed_id(key = "async_orders", prefix = "O", date = "", pad = 8, batch = 20)]
    order_no: String,
    item: String,
}

#[derive(Insertable, DistributedId)]
#[diesel(table_name = async_orders)]
struct NewInvoicedOrder {
    #[distributed_id(key = "async_orders", prefix = "O", date = "", pad = 8, batch = 20)]
    order_no: String,
    #[distributed_id(key = "async_invoices", prefix = "I", date = "", pad = 8, gapless)]
    invoice_no: Option<String>,
    item: String,
}

/// `insert_into(..).values(..).execute(..)`: batched fields filled and inserted, a bulk with
/// one reservation; a gapless field in a savepoint whose failure leaves the records unfilled.
macro_rules! derived_insert_tests {
    ($($module:ident, $feature:literal: $conn:ty;)*) => {$(
        #[cfg(feature = $feature)]
        mod $module {
            use super::*;
            type A = $conn;

            /// Compiles only if seqgen's futures on this concrete connection are `Send` for
            /// every lifetime, as axum handlers and `tokio::spawn` need: a gapless number
            /// inside diesel-async's own `transaction`, an insert with a gapless field, a
            /// `nowait` sequence (which once held diesel-async's transaction inside).
            #[allow(dead_code, unused_must_use)]
            fn futures_are_send(conn: &mut A, spec: &Spec, order: &mut NewInvoicedOrder) {
                fn is_send<T: Send>(_: &T) {}
                is_send(&conn.transaction(async |conn| sq::next_id(conn, spec).await));
                is_send(&sq::insert_into(async_orders::table).values(order).execute(conn));
                let sequence = Sequence::new("k").unwrap().nowait().unwrap();
                is_send(&sq::next_values_of(conn, &sequence, 1));
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_derived_insert_fills_and_a_failed_gapless_one_unfills() {
                let Some(db) = TestDb::<<A as AsyncTest>::Sync>::open("derived_insert") else {
                    return;
                };

    {
        static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one = CREATING.lock().unwrap_or_else(|e| e.into_inner());
        db.connect()
            .batch_execute(
                "CREATE TABLE IF NOT EXISTS async_orders (order_no VARCHAR(64) PRIMARY KEY, \
                 invoice_no VARCHAR(64) UNIQUE, item VARCHAR(64) NOT NULL)",
            )
            .unwrap();
    }
    let mut conn = A::open(&db.url).await;
    let mut one = NewOrder {
        order_no: String::new(),
        item: "tea".into(),
    };
    let inserted = sq::insert_into(async_orders::table)
        .values(&mut one)
        .execute(&mut conn)
        .await
        .unwrap();
    assert_eq!(inserted, 1);
    assert!(one.order_no.starts_with('O'), "{}", one.order_no);
    let generator = fixed();
    let mut bulk = vec![one.clone(); 5];
    bulk.iter_mut().for_each(|order| order.order_no.clear());
    // One reservation for the bulk; inserted row by row (diesel-async's SQLite wrapper has
    // no multi-row insert).
    generator.assign_ids(&mut conn, &mut bulk)
        .await
        .unwrap();
    for order in &mut bulk {
        sq::insert_into(async_orders::table)
            .values(order)
            .with_generator(&generator)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    assert_eq!(generator.reservations(), 1);
    let ids: Vec<&str> = bulk.iter().map(|o| o.order_no.as_str()).collect();
    assert_distinct(&ids);

    // Gapless: in a savepoint of its own; a failing insert (a duplicate order number) rolls
    // the invoice number back and leaves it unset, and the next insert takes it.
    let mut clash = NewInvoicedOrder {
        order_no: one.order_no.clone(),
        invoice_no: None,
        item: "clash".into(),
    };
    let failed = sq::insert_into(async_orders::table)
        .values(&mut clash)
        .execute(&mut conn)
        .await;
    assert!(failed.is_err());
    assert_eq!(clash.invoice_no, None);
    let mut ok = NewInvoicedOrder {
        order_no: String::new(),
        invoice_no: None,
        item: "ok".into(),
    };
    sq::insert_into(async_orders::table)
        .values(&mut ok)
        .execute(&mut conn)
        .await
        .unwrap();
    let taken: Vec<Option<String>> = diesel::RunQueryDsl::load(
        async_orders::table
            .filter(async_orders::invoice_no.is_not_null())
            .select(async_orders::invoice_no),
        &mut db.connect(),
    )
    .unwrap();
    // The static key is shared with earlier runs on the servers: the new number is the
    // highest, and no number repeats.
    let invoice = ok.invoice_no.clone().unwrap();
    assert!(taken.iter().flatten().all(|i| *i <= invoice), "{taken:?}");
    assert_distinct(&taken);

    // A gapless insert dropped midway (a timeout while its row waits for another
    // transaction's uncommitted row of the same key) leaves its record unfilled: its
    // transaction never commits, so the number goes to the next caller, and a retry of this
    // record must not insert it again. (SQLite: the other transaction would hold the whole
    // database, and the number is never taken.)
    if <A as AsyncTest>::Sync::NAME != "sqlite" {
        let held = db.key("held");
        let mut holder = db.connect();
        holder
            .batch_execute(&format!(
                "BEGIN; INSERT INTO async_orders (order_no, item) VALUES ('{held}', 'held')"
            ))
            .unwrap();
        let mut blocked = NewInvoicedOrder {
            order_no: held.clone(),
            invoice_no: None,
            item: "blocked".into(),
        };
        let mut waiting = A::open(&db.url).await;
        let dropped = tokio::time::timeout(
            Duration::from_millis(500),
            sq::insert_into(async_orders::table)
                .values(&mut blocked)
                .execute(&mut waiting),
        )
        .await;
        assert!(dropped.is_err(), "the insert did not wait: {dropped:?}");
        assert_eq!(blocked.invoice_no, None, "a dropped insert kept its gapless number");
        drop(waiting); // its transaction rolls back with the connection
        holder.batch_execute("ROLLBACK").unwrap();
    }
            }
        }
    )*};
}

derived_insert_tests! {
    derive_sqlite, "async-sqlite": AsyncSqlite;
    derive_postgres, "async-postgres": diesel_async::AsyncPgConnection;
    derive_mysql, "async-mysql": diesel_async::AsyncMysqlConnection;
}

/// A reservation that waits for a row another connection holds, dropped by a timeout (and a
/// task waiting for its turn, dropped with it), leaves the generator sound: once the lock is
/// gone it serves again, and nothing is ever served twice, by it or by another instance.
async fn a_dropped_reservation_never_serves_a_number_twice<A: AsyncTest>(db: TestDb<A::Sync>) {
    let spec = Arc::new(spec(&db, "dropped", 10));
    let generator = fixed();
    let mut served = generator
        .next_ids(&mut A::open(&db.url).await, &spec, 10)
        .await
        .unwrap();
    // Another connection holds the counter row (SQLite: the database's write lock).
    let mut holder = db.connect();
    let lock = match A::Sync::NAME {
        "sqlite" => "BEGIN IMMEDIATE".to_owned(),
        _ => format!(
            "BEGIN; SELECT current_value FROM db_key WHERE key_name = '{}' FOR UPDATE",
            spec.key()
        ),
    };
    holder.batch_execute(&lock).unwrap();
    let (reserving, waiting) = {
        let (g1, g2) = (generator.clone(), generator.clone());
        let (s1, s2) = (Arc::clone(&spec), Arc::clone(&spec));
        let url = db.url.clone();
        let mut c1 = A::open(&url).await;
        let mut c2 = A::open(&url).await;
        let reserving = tokio::spawn(async move {
            tokio::time::timeout(Duration::from_millis(300), g1.next_id(&mut c1, &s1)).await
        });
        // Started after the first holds the turn: it waits for it.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let waiting = tokio::spawn(async move {
            tokio::time::timeout(Duration::from_millis(300), g2.next_id(&mut c2, &s2)).await
        });
        (reserving.await.unwrap(), waiting.await.unwrap())
    };
    assert!(reserving.is_err(), "not blocked: {reserving:?}");
    assert!(waiting.is_err(), "not blocked: {waiting:?}");
    holder.batch_execute("COMMIT").unwrap();
    // The turn ended with the dropped futures: new connections get numbers at once.
    let mut conn = A::open(&db.url).await;
    let more = tokio::time::timeout(
        Duration::from_secs(10),
        generator.next_ids(&mut conn, &spec, 15),
    )
    .await
    .expect("the generator is stuck after a dropped reservation")
    .unwrap();
    served.extend(more);
    served.extend(fixed().next_ids(&mut conn, &spec, 15).await.unwrap());
    assert_distinct(&served);
    // The dropped reservation's block, if the database took it, is a hole: later numbers are
    // above every number served before.
    assert!(served[10..].iter().all(|id| counter(id) > 10), "{served:?}");
}

/// With a pool of async connections (diesel-async's deadpool and bb8 pools), a block needed
/// inside a transaction is reserved beside it and cached (a rollback does not take it back),
/// and the next block is reserved on a task before the current one runs dry. PostgreSQL and
/// MySQL: on SQLite the number is taken in the caller's transaction (one writer).
macro_rules! pool_tests {
    ($($module:ident, $feature:literal: $conn:ty;)*) => {$(
        #[cfg(all(feature = $feature, feature = "deadpool", feature = "bb8"))]
        mod $module {
            use super::*;
            use diesel_async::pooled_connection::{bb8, deadpool, AsyncDieselConnectionManager};
            type A = $conn;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn a_pool_reserves_beside_transactions_and_ahead() {
                let Some(db) = TestDb::<<A as AsyncTest>::Sync>::open("pools") else {
                    return;
                };
                let manager = || AsyncDieselConnectionManager::<A>::new(&db.url);
                let deadpool = deadpool::Pool::<A>::builder(manager())
                    .max_size(3)
                    .build()
                    .unwrap();
                let bb8 = bb8::Pool::<A>::builder()
                    .max_size(3)
                    .build(manager())
                    .await
                    .unwrap();
                let deadpool = diesel_seqgen::Generator::builder().fixed_batch().async_pool(deadpool);
                let bb8 = diesel_seqgen::Generator::builder().fixed_batch().async_pool(bb8);
                for (name, builder) in [("deadpool", deadpool), ("bb8", bb8)] {
                    let generator = sq::Generator::from(builder.build());
                    beside_and_ahead(&db, &generator, name).await;
                }
                // The invariant with a pool (the point here; default block sizes): tasks,
                // blocks reserved ahead on the pool, `release`, and exactly 1..=n. First on a
                // generator of one's own given the pool...
                let deadpool = deadpool::Pool::<A>::builder(manager()).max_size(4).build().unwrap();
                let generator = sq::Generator::from(
                    diesel_seqgen::Generator::builder().async_pool(deadpool).build(),
                );
                let exact = Arc::new(Spec::builder(db.key("exact_pool")).date("").build().unwrap());
                let got = on_tasks::<A>(&db.url, Some(&generator), &exact).await;
                generator.release(&mut A::open(&db.url).await).await.unwrap();
                assert_exact(got);
                // ...then its twin on what a user gets by default: the free functions'
                // generator, given the pool by `use_pool`. A database of its own: the default
                // generator is per database, and the rest of this test gives this one's a pool.
                let scratch = db.scratch("exact_default_pool");
                diesel_seqgen::run_migrations(&mut scratch.connect()).unwrap();
                let scratch_manager = AsyncDieselConnectionManager::<A>::new(&scratch.url);
                let pool = deadpool::Pool::<A>::builder(scratch_manager).max_size(4).build().unwrap();
                sq::use_pool(pool).await.unwrap();
                let got = on_tasks::<A>(&scratch.url, None, &exact).await;
                sq::release(&mut A::open(&scratch.url).await).await.unwrap();
                assert_exact(got);
                // The default generator of the database, given a pool.
                let pool = deadpool::Pool::<A>::builder(manager()).max_size(2).build().unwrap();
                sq::use_pool(pool).await.unwrap();
                let spec = spec(&db, "default_pool", 10);
                let mut conn = A::open(&db.url).await;
                let first = conn.transaction(async |conn| {
                    sq::next_id(conn, &spec).await?;
                    Err::<(), _>(rollback())
                })
                .await;
                assert!(first.is_err());
                // Reserved beside the rolled-back transaction and cached: the next is 2.
                assert_eq!(counter(&sq::next_id(&mut conn, &spec).await.unwrap()), 2);
            }

            /// `nonblocking::number_pending` after `use_pool`, the README's start-up call, on
            /// a database of its own (the default generator is per database): the follower's
            /// batch holds the key's row, and nothing of seqgen's waits for it on the pool.
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn numbers_after_the_commit_after_use_pool() {
                let Some(db) = TestDb::<<A as AsyncTest>::Sync>::open("pending_pool") else {
                    return;
                };
                let scratch = db.scratch("pending_pool");
                diesel_seqgen::run_migrations(&mut scratch.connect()).unwrap();
                let manager = AsyncDieselConnectionManager::<A>::new(&scratch.url);
                let pool = deadpool::Pool::<A>::builder(manager).max_size(4).build().unwrap();
                sq::use_pool(pool).await.unwrap();
                numbers_after_the_commit::<A>(&db, &scratch.url).await;
            }

            async fn beside_and_ahead(db: &TestDb<<A as AsyncTest>::Sync>, generator: &sq::Generator, name: &str) {
                let spec = spec(db, name, 10);
                let mut conn = A::open(&db.url).await;
                let rolled_back = conn.transaction(async |conn| {
                    assert_eq!(counter(&generator.next_id(conn, &spec).await?), 1);
                    Err::<(), _>(rollback())
                })
                .await;
                assert!(rolled_back.is_err());
                assert_eq!(generator.reservations(), 1);
                // 2..=8 from the block: past 80 %, the next block is reserved on a task.
                let ids = generator.next_ids(&mut conn, &spec, 7).await.unwrap();
                assert_eq!(counter(&ids[0]), 2);
                let waited = std::time::Instant::now();
                while generator.reservations() < 2 {
                    assert!(waited.elapsed() < Duration::from_secs(10), "{name}: nothing reserved ahead");
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                let next = generator.next_ids(&mut conn, &spec, 5).await.unwrap();
                let counters: Vec<u64> = next.iter().map(|id| counter(id)).collect();
                assert_eq!(counters, [9, 10, 11, 12, 13], "{name}");
                assert_eq!(generator.reservations(), 2, "{name}: the spare was served");
            }
        }
    )*};
}

pool_tests! {
    pool_postgres, "async-postgres": diesel_async::AsyncPgConnection;
    pool_mysql, "async-mysql": diesel_async::AsyncMysqlConnection;
}

/// Migrations without a blocking client library: through diesel-async's
/// `AsyncConnectionWrapper`, inside `spawn_blocking`, as the README shows, from code generic
/// over the connection.
macro_rules! wrapper_migration_tests {
    ($($module:ident, $feature:literal: $conn:ty;)*) => {$(
        #[cfg(feature = $feature)]
        mod $module {
            use super::*;
            use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
            type A = $conn;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn migrations_run_through_the_async_connection_wrapper() {
                let Some(db) = TestDb::<<A as AsyncTest>::Sync>::open("wrapper_migrations") else {
                    return;
                };
                let fresh = db.scratch("wrapper");
                let url = fresh.url.clone();
                tokio::task::spawn_blocking(move || {
                    let mut conn =
                        <AsyncConnectionWrapper<A> as Connection>::establish(&url).unwrap();
                    migrate(&mut conn);
                })
                .await
                .unwrap();
                let mut conn = A::open(&fresh.url).await;
                let spec = spec(&db, "wrapped", 5);
                assert_eq!(counter(&sq::next_id(&mut conn, &spec).await.unwrap()), 1);
            }
        }
    )*};
}

/// Generic setup code: seqgen's bound alone.
#[cfg(any(feature = "async-postgres", feature = "async-mysql"))]
fn migrate<C: diesel_seqgen::MigrateConnection>(conn: &mut C) {
    diesel_seqgen::run_migrations(conn).unwrap();
}

wrapper_migration_tests! {
    wrapper_postgres, "async-postgres": diesel_async::AsyncPgConnection;
    wrapper_mysql, "async-mysql": diesel_async::AsyncMysqlConnection;
}

#[derive(DistributedId)]
struct NewLine {
    #[distributed_id(
        key = "async_lines",
        prefix = "L",
        date = "",
        pad = 4,
        scope = "order_no"
    )]
    line_no: String,
    order_no: String,
}

/// `assign_ids` on a bulk of 12 lines of 3 orders: one reservation per order (scope), each
/// order's lines numbered from 1.
async fn a_bulk_reserves_once_per_scope<A: AsyncTest>(db: TestDb<A::Sync>) {
    let mut conn = A::open(&db.url).await;
    // The key is the derive's own: orders unique to this run start at 1 on the servers too.
    let orders: Vec<String> = (0..3).map(|i| db.key(&format!("order{i}"))).collect();
    let mut lines: Vec<NewLine> = (0..12)
        .map(|i| NewLine {
            line_no: String::new(),
            order_no: orders[i % 3].clone(),
        })
        .collect();
    let generator = fixed();
    generator.assign_ids(&mut conn, &mut lines).await.unwrap();
    assert_eq!(generator.reservations(), 3);
    for order in &orders {
        let numbers: Vec<&str> = lines
            .iter()
            .filter(|line| &line.order_no == order)
            .map(|line| line.line_no.as_str())
            .collect();
        assert_eq!(numbers, ["L0001", "L0002", "L0003", "L0004"], "{order}");
    }
}

/// diesel-async on PostgreSQL: a gapless record is numbered by its insert statement, as on
/// a blocking connection (one_statement.rs): after the key's first insert, one statement
/// per insert, and the records hold what the rows hold.
#[cfg(feature = "async-postgres")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gapless_insert_is_one_statement_on_postgres() {
    use diesel::connection::InstrumentationEvent;
    use diesel::pg::PgConnection;

    diesel::table! {
        async_one_rows (number) {
            number -> Text,
            code -> Text,
        }
    }
    #[derive(Insertable, DistributedId)]
    #[diesel(table_name = async_one_rows)]
    struct Row {
        #[distributed_id(key = "async_one_rows", prefix = "A", date = "", pad = 6, gapless)]
        number: String,
        code: String,
    }

    let Some(db) = TestDb::<PgConnection>::open("async_one_statement") else {
        return;
    };
    let mut conn = diesel_async::AsyncPgConnection::establish(&db.url)
        .await
        .unwrap();
    diesel_async::SimpleAsyncConnection::batch_execute(
        &mut conn,
        "CREATE TEMPORARY TABLE async_one_rows (number VARCHAR(32) PRIMARY KEY, code VARCHAR(32)); \
         DELETE FROM db_key WHERE key_name = 'async_one_rows'",
    )
    .await
    .unwrap();
    let generator = sq::Generator::from(diesel_seqgen::Generator::new());
    let statements = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut rows: Vec<Row> = (0..3)
        .map(|i| Row {
            number: String::new(),
            code: format!("c{i}"),
        })
        .collect();
    conn.transaction(async |conn| {
        for (i, row) in rows.iter_mut().enumerate() {
            if i == 1 {
                let sink = Arc::clone(&statements);
                conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
                    if let InstrumentationEvent::StartQuery { query, .. } = event {
                        sink.lock().unwrap().push(query.to_string());
                    }
                });
            }
            sq::insert_into(async_one_rows::table)
                .values(row)
                .with_generator(&generator)
                .execute(conn)
                .await?;
        }
        Ok::<_, Error>(())
    })
    .await
    .unwrap();
    // The two inserts, then the transaction's commit.
    let sent = statements.lock().unwrap().clone();
    assert_eq!(sent.len(), 3, "{sent:#?}");
    assert!(
        sent[..2].iter().all(|s| s.contains("WITH seqgen_n AS")),
        "{sent:#?}"
    );
    let numbers: Vec<&str> = rows.iter().map(|r| r.number.as_str()).collect();
    assert_eq!(numbers, ["A000001", "A000002", "A000003"]);
    let stored: Vec<(String, String)> = async_one_rows::table
        .select((async_one_rows::number, async_one_rows::code))
        .order(async_one_rows::number)
        .load(&mut conn)
        .await
        .unwrap();
    let expected: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.number.clone(), r.code.clone()))
        .collect();
    assert_eq!(stored, expected);
}

/// The async twin of `one_shape.rs`: while a generator holds a block of a key, each of the five
/// specs of another shape is refused (own and default generator, one number, a bulk, a scope,
/// gapless in a transaction) and the first spec goes on without a repeat.
async fn another_shape_is_refused_while_a_block_is_held<A: AsyncTest>(db: TestDb<A::Sync>) {
    use crate::one_shape::{assert_refused, counter, mutation, MUTATIONS};
    let mut conn = A::open(&db.url).await;
    let own = sq::Generator::new();
    for i in 0..MUTATIONS {
        for door in ["own", "default"] {
            let (case, first, second) = mutation(i, &db.key(&format!("{door}_{i}")), |b| b);
            let case = format!("async, {door} generator, {case}");
            let mut ids = Vec::new();
            for _ in 0..2 {
                ids.push(match door {
                    "own" => own.next_id(&mut conn, &first).await.unwrap(),
                    _ => sq::next_id(&mut conn, &first).await.unwrap(),
                });
                let refused = match door {
                    "own" => own.next_ids(&mut conn, &second, 2).await,
                    _ => sq::next_ids(&mut conn, &second, 2).await,
                };
                assert_refused(refused, &first, &second, &case);
            }
            let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
            assert_eq!(counters, [1, 2], "{case}: {ids:?}");
        }
        let (case, first, second) = mutation(i, &db.key(&format!("scoped_{i}")), |b| b.scoped());
        let mut ids = vec![own.next_id(&mut conn, first.scope("acme")).await.unwrap()];
        let refused = own.next_id(&mut conn, second.scope("acme")).await;
        assert_refused(refused, &first, &second, case);
        ids.push(own.next_id(&mut conn, first.scope("acme")).await.unwrap());
        let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
        assert_eq!(counters, [1, 2], "async, scoped, {case}");
        let (case, first, second) = mutation(i, &db.key(&format!("gapless_{i}")), |b| b.gapless());
        let mut ids = Vec::new();
        for _ in 0..2 {
            let id = conn.transaction(async |conn| own.next_id(conn, &first).await);
            ids.push(id.await.unwrap());
            let refused = conn.transaction(async |conn| sq::next_id(conn, &second).await);
            assert_refused(refused.await, &first, &second, case);
        }
        let counters: Vec<u64> = ids.iter().map(|id| counter(&first, id)).collect();
        assert_eq!(counters, [1, 2], "async, gapless, {case}");
    }
}

/// `nonblocking::number_pending`: three tasks number a table's rows at once (200 committed
/// before, 100 more committed meanwhile, one in ten of those rolled back); every committed row
/// ends with exactly one of 1..N. Its twin after `use_pool` is in `pool_tests!`.
async fn numbers_after_the_commit_from_three_tasks<A: AsyncTest>(db: TestDb<A::Sync>) {
    numbers_after_the_commit::<A>(&db, &db.url).await;
}

/// [`numbers_after_the_commit_from_three_tasks`] on the database at `url`, with `db`'s names.
async fn numbers_after_the_commit<A: AsyncTest>(db: &TestDb<A::Sync>, url: &str) {
    use diesel_seqgen::pending::PendingRows;
    let table = common::table_name(&db.key("pending"));
    let id = match <A::Sync as TestConnection>::NAME {
        "sqlite" => "id INTEGER PRIMARY KEY",
        "postgres" => "id BIGSERIAL PRIMARY KEY",
        _ => "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let mut setup = <A::Sync as diesel::Connection>::establish(url).unwrap();
    <A::Sync as TestConnection>::configure(&mut setup);
    setup
        .batch_execute(&format!(
            "CREATE TABLE {table} ({id}, number VARCHAR(20) UNIQUE, v INT); \
             INSERT INTO {table} (v) VALUES {}",
            vec!["(1)"; 200].join(", ")
        ))
        .unwrap();
    let spec = Arc::new(gapless(db, "pending"));
    let (url, table) = (Arc::new(url.to_owned()), Arc::new(table));
    let mut tasks = Vec::new();
    for task in 0..4 {
        let (spec, url, table) = (Arc::clone(&spec), Arc::clone(&url), Arc::clone(&table));
        tasks.push(tokio::spawn(async move {
            let mut conn = A::open(&url).await;
            let mut committed = 0;
            for i in 0..100u32 {
                if task == 3 {
                    let result = conn
                        .transaction(async |conn| {
                            conn.execute(format!("INSERT INTO {table} (v) VALUES (2)"))
                                .await;
                            if i % 10 == 4 {
                                return Err(rollback());
                            }
                            Ok(())
                        })
                        .await;
                    committed += usize::from(result.is_ok());
                } else {
                    let rows = PendingRows::new(&table, "number", "id").batch(25);
                    sq::number_pending(&mut conn, &spec, rows).await.unwrap();
                }
            }
            committed
        }));
    }
    let mut committed = 200;
    for task in tasks {
        committed += task.await.unwrap();
    }
    let mut conn = A::open(&url).await;
    sq::number_pending(&mut conn, &spec, PendingRows::new(&table, "number", "id"))
        .await
        .unwrap();
    let ids = A::Sync::texts(
        &mut setup,
        &format!("SELECT COALESCE(number, '-') AS text FROM {table}"),
    );
    assert_eq!(ids.len(), committed, "a rolled-back row is in the table");
    let numbers: BTreeSet<u64> = ids.iter().map(|id| counter(id)).collect();
    assert_eq!(numbers, (1..=committed as u64).collect(), "{ids:?}");
}
