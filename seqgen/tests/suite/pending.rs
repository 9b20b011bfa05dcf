//! Gapless numbers given after the commit (`diesel_seqgen::pending`): writers commit rows with
//! no number, one in ten rolled back, while two followers number them; committed rows get
//! exactly 1..N, rolled-back rows nothing. Rows of three months and two scopes number in their
//! own counters. A batch whose rows another writer numbered meanwhile writes nothing.

use crate::common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::Duration;

use common::{TestConnection, TestDb};
use diesel::Column;
use diesel_seqgen::pending::{self, FollowConnection, PendingRows};
use diesel_seqgen::{Error, Spec};

backend_tests!(
    committed_rows_get_exactly_1_to_n_while_followers_run,
    committed_rows_get_exactly_1_to_n_while_followers_run_after_use_pool,
    committed_rows_get_exactly_1_to_n_while_followers_run_on_the_defaults,
    rows_of_three_months_and_two_scopes_number_in_their_own_counters,
    rows_of_three_months_and_two_scopes_number_in_their_own_counters_after_use_pool,
    rows_of_three_months_and_two_scopes_number_in_their_own_counters_on_the_defaults,
    a_batch_numbered_meanwhile_writes_nothing,
    a_batch_numbered_meanwhile_writes_nothing_after_use_pool,
    through_the_derive_the_insert_leaves_the_number_to_the_follower,
    through_the_derive_the_insert_leaves_the_number_to_the_follower_after_use_pool,
    no_writer_waits_for_another_writers_commit,
    no_writer_waits_for_another_writers_commit_after_use_pool,
);

/// How a test starts: the database's default generator as it comes, or given a pool by
/// `diesel_seqgen::global::use_pool`, the README's start-up call (the default generator then
/// creates rows and claims shapes beside the caller's transaction, on the pool).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    Plain,
    UsePool,
}

impl Start {
    /// Sets `scratch` up as this start says.
    fn on<C: TestConnection>(self, scratch: &common::Scratch<'_, C>) {
        if self == Start::UsePool {
            diesel_seqgen::global::use_pool(scratch.pool(4)).unwrap();
        }
    }
}

/// The longest a committed row may wait for its number in these tests: far above what a
/// follower takes (milliseconds), far below a lock wait's timeout (50 s on MariaDB), which a
/// wait of seqgen on itself would run into.
const LONGEST_WAIT: Duration = Duration::from_secs(10);

diesel::table! {
    pend (id) {
        id -> BigInt,
        number -> Nullable<Text>,
        company -> Nullable<Text>,
        issued_on -> Nullable<Date>,
    }
}

/// An invoice numbered after its commit, per company and month of its date.
#[derive(diesel::Insertable, diesel_seqgen::DistributedId)]
#[diesel(table_name = pend)]
struct DeferredInvoice {
    #[distributed_id(
        key = "deferred_invoices",
        prefix = "D",
        date = "%y%m-",
        pad = 6,
        gapless = "deferred",
        scope = "company",
        period_from = "issued_on"
    )]
    number: Option<String>,
    company: String,
    issued_on: chrono::NaiveDate,
}

const WRITERS: usize = 4;
const PER_WRITER: usize = 40;

/// A table whose rows commit without a number: an integer key that orders them, the number
/// (unique in its scope), a scope and a document date.
fn create_table<'a, C: TestConnection>(db: &'a TestDb<C>, name: &str) -> common::Scratch<'a, C> {
    let id = match C::NAME {
        "sqlite" => "id INTEGER PRIMARY KEY",
        "postgres" => "id BIGSERIAL PRIMARY KEY",
        _ => "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    };
    let table = format!(
        "CREATE TABLE pend ({id}, number VARCHAR(20), company VARCHAR(20), issued_on DATE, \
         UNIQUE (company, number))"
    );
    common::scratch_with_table(db, name, &table, None)
}

fn invoices(key: &str) -> Spec {
    Spec::builder(key)
        .prefix("INV")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap()
}

/// Every row's number, `None` where it has none, in id order.
fn numbers<C: TestConnection>(conn: &mut C) -> Vec<Option<String>> {
    C::texts(
        conn,
        "SELECT COALESCE(number, '-') AS text FROM pend ORDER BY id",
    )
    .into_iter()
    .map(|n| (n != "-").then_some(n))
    .collect()
}

/// The counters of `ids`, numbered by `prefix_len` characters of text before a 6-digit number.
fn assert_one_to_n(ids: &[String], prefix_len: usize) {
    let mut counters: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for id in ids {
        counters
            .entry(&id[..prefix_len])
            .or_default()
            .push(id[prefix_len..].parse().unwrap());
    }
    for (counter, mut numbers) in counters {
        numbers.sort_unstable();
        let n = numbers.len() as u64;
        assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "counter {counter}");
    }
}

/// Four writers commit 40 rows each in their own transactions (one in ten rolled back, each
/// holding its transaction a moment after the insert) while two followers run, until the
/// followers numbered every committed row (the time from the last commit printed; past
/// [`LONGEST_WAIT`] the test fails); a last round after they stop finds nothing. Every
/// committed row has a number, the numbers are exactly 1..N, and no rolled-back row was ever
/// seen (its id is missing, not unnumbered).
fn committed_rows_get_exactly_1_to_n_while_followers_run<C>(db: TestDb<C>)
where
    C: TestConnection + FollowConnection,
{
    committed_rows_numbered(db, Start::Plain, Some(16));
}

fn committed_rows_get_exactly_1_to_n_while_followers_run_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection + FollowConnection,
{
    committed_rows_numbered(db, Start::UsePool, Some(16));
}

/// The twin of the two above on what a user gets: `use_pool`, and the followers' batches of
/// 500 rows.
fn committed_rows_get_exactly_1_to_n_while_followers_run_on_the_defaults<C>(db: TestDb<C>)
where
    C: TestConnection + FollowConnection,
{
    committed_rows_numbered(db, Start::UsePool, None);
}

/// Writers commit (one in ten rolls back) while two followers number the rows, in batches of
/// `batch` rows (the default's 500 with `None`).
fn committed_rows_numbered<C>(db: TestDb<C>, start: Start, batch: Option<usize>)
where
    C: TestConnection + FollowConnection,
{
    let scratch = create_table(&db, "pending");
    start.on(&scratch);
    let spec = invoices(&db.key("pending"));
    let rows = PendingRows::of(pend::number, pend::id);
    let rows = batch.map_or(rows, |batch| rows.batch(batch));
    let stop = AtomicBool::new(false);
    let barrier = Arc::new(Barrier::new(WRITERS));
    let committed = thread::scope(|s| {
        let followers: Vec<_> = (0..2)
            .map(|_| {
                let (scratch, spec, stop) = (&scratch, &spec, &stop);
                s.spawn(move || {
                    let mut conn = scratch.connect();
                    pending::follow(&mut conn, spec, rows, Duration::from_millis(5), stop)
                })
            })
            .collect();
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (scratch, barrier) = (&scratch, barrier.clone());
                s.spawn(move || {
                    let mut conn = scratch.connect();
                    barrier.wait();
                    let mut committed = 0;
                    for i in 0..PER_WRITER {
                        let rollback = (w * PER_WRITER + i) % 10 == 3;
                        let done = conn.transaction(|conn| {
                            conn.batch_execute("INSERT INTO pend (company) VALUES ('acme')")?;
                            thread::sleep(Duration::from_millis(2));
                            if rollback {
                                return Err(diesel::result::Error::RollbackTransaction);
                            }
                            Ok(())
                        });
                        committed += usize::from(done.is_ok());
                    }
                    committed
                })
            })
            .collect();
        let committed: usize = writers.into_iter().map(|w| w.join().unwrap()).sum();
        // From the last commit until the followers numbered every committed row.
        let mut conn = scratch.connect();
        let took = crate::own_servers::wait_until(
            "the followers to number every committed row",
            LONGEST_WAIT,
            || numbers(&mut conn).iter().all(Option::is_some),
        );
        println!("the followers numbered the last committed rows {took:.1?} after their commit");
        stop.store(true, Ordering::Relaxed);
        for follower in followers {
            follower.join().unwrap().unwrap();
        }
        committed
    });
    // A last round on the defaults a user gets (batches of 500; the followers' batches of 16
    // are the point above: many short transactions interleaved with the writers): nothing left.
    let mut conn = scratch.connect();
    let defaults = PendingRows::of(pend::number, pend::id);
    assert_eq!(
        pending::number_pending(&mut conn, &spec, defaults)
            .unwrap()
            .rows,
        0
    );
    let numbers = numbers(&mut conn);
    assert_eq!(
        numbers.len(),
        committed,
        "a rolled-back row is in the table"
    );
    let ids: Vec<String> = numbers
        .into_iter()
        .map(|n| n.expect("a committed row without a number"))
        .collect();
    assert_eq!(ids.len(), WRITERS * PER_WRITER * 9 / 10);
    assert_one_to_n(&ids, 3);
}

/// Rows of January, February and March for two companies, interleaved, committed before any
/// follower ran: numbered at the next start, each (company, month) 1..n, each ID showing its
/// row's month; a row dated a year ahead and a row without a company wait.
fn rows_of_three_months_and_two_scopes_number_in_their_own_counters<C: TestConnection>(
    db: TestDb<C>,
) {
    months_and_scopes(db, Start::Plain, Some(7));
}

fn rows_of_three_months_and_two_scopes_number_in_their_own_counters_after_use_pool<
    C: TestConnection,
>(
    db: TestDb<C>,
) {
    months_and_scopes(db, Start::UsePool, Some(7));
}

/// The twin on what a user gets: `use_pool`, and one batch of up to 500 rows.
fn rows_of_three_months_and_two_scopes_number_in_their_own_counters_on_the_defaults<
    C: TestConnection,
>(
    db: TestDb<C>,
) {
    months_and_scopes(db, Start::UsePool, None);
}

/// Numbers 60 rows of two companies over three months in batches of `batch` rows (the
/// default's 500 with `None`: one batch).
fn months_and_scopes<C: TestConnection>(db: TestDb<C>, start: Start, batch: Option<usize>) {
    let scratch = create_table(&db, "pending_dated");
    start.on(&scratch);
    let spec = Spec::builder(db.key("pending_dated"))
        .prefix("")
        .date("%y%m-")
        .pad(6)
        .scoped()
        .gapless()
        .build()
        .unwrap();
    let mut conn = scratch.connect();
    let mut values = Vec::new();
    for i in 0..60 {
        let company = ["acme", "globex"][i % 2];
        values.push(format!(
            "('{company}', '2026-0{}-{:02}')",
            1 + (i / 2) % 3,
            1 + i % 28
        ));
    }
    values.push("('acme', '2099-01-01')".into());
    values.push("(NULL, '2026-01-05')".into());
    conn.batch_execute(&format!(
        "INSERT INTO pend (company, issued_on) VALUES {}",
        values.join(", ")
    ))
    .unwrap();
    let rows = PendingRows::of(pend::number, pend::id)
        .scoped_by(pend::company::NAME)
        .dated_by(pend::issued_on::NAME);
    let rows = batch.map_or(rows, |batch| rows.batch(batch));
    let done = pending::number_pending(&mut conn, &spec, rows).unwrap();
    assert_eq!((done.rows, done.left), (60, 2));
    let numbered = "FROM pend WHERE number IS NOT NULL ORDER BY id";
    let companies = C::texts(&mut conn, &format!("SELECT company AS text {numbered}"));
    let dates = C::texts(
        &mut conn,
        &format!("SELECT CAST(issued_on AS CHAR(10)) AS text {numbered}"),
    );
    let numbers = C::texts(&mut conn, &format!("SELECT number AS text {numbered}"));
    let mut ids = Vec::new();
    for ((company, date), number) in companies.iter().zip(&dates).zip(&numbers) {
        let month = format!("{}{}", &date[2..4], &date[5..7]);
        assert_eq!(number[..4], month, "{company} {date} {number}");
        ids.push(format!("{company}{number}"));
    }
    assert_eq!(ids.len(), 60);
    // The company and month before each number: "acme2601-", "globex2602-", ...
    let mut counters: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for id in &ids {
        let (counter, number) = id.split_at(id.len() - 6);
        counters
            .entry(counter.to_owned())
            .or_default()
            .push(number.parse().unwrap());
    }
    assert_eq!(counters.len(), 6, "{counters:?}");
    for (counter, mut numbers) in counters {
        numbers.sort_unstable();
        assert_eq!(numbers, (1..=10).collect::<Vec<_>>(), "{counter}");
    }
    // Nothing more to do: the two left wait, and a second call numbers nothing.
    let again = pending::number_pending(&mut conn, &spec, rows).unwrap();
    assert_eq!((again.rows, again.left), (0, 2));
}

/// A writer that numbers a row itself while a follower's batch is under way: the follower's
/// update finds fewer rows without a number than it took numbers for, writes nothing, and its
/// numbers go back with its transaction (servers; SQLite's follower waits for the writer's
/// lock and reads after it). The next call numbers the rest from where the counter was.
fn a_batch_numbered_meanwhile_writes_nothing<C: TestConnection>(db: TestDb<C>) {
    numbered_meanwhile(db, Start::Plain);
}

fn a_batch_numbered_meanwhile_writes_nothing_after_use_pool<C: TestConnection>(db: TestDb<C>) {
    numbered_meanwhile(db, Start::UsePool);
}

fn numbered_meanwhile<C: TestConnection>(db: TestDb<C>, start: Start) {
    let scratch = create_table(&db, "pending_raced");
    start.on(&scratch);
    let spec = invoices(&db.key("pending_raced"));
    let rows = PendingRows::of(pend::number, pend::id);
    let mut conn = scratch.connect();
    conn.batch_execute("INSERT INTO pend (company) VALUES ('a'), ('b'), ('c')")
        .unwrap();
    pending::number_pending(&mut conn, &spec, rows).unwrap();
    conn.batch_execute("INSERT INTO pend (company) VALUES ('d'), ('e')")
        .unwrap();

    let mut writer = scratch.connect();
    writer.batch_execute("BEGIN").unwrap();
    writer
        .batch_execute("UPDATE pend SET number = 'HAND1' WHERE company = 'd'")
        .unwrap();
    let mut watcher = scratch.connect();
    let raced = thread::scope(|s| {
        let follower = s.spawn(|| pending::number_pending(&mut conn, &spec, rows));
        // The follower's update waiting for the writer's row, as the server shows it (SQLite's
        // follower waits for the writer's lock before it reads, whenever it starts).
        let waited = std::time::Instant::now();
        while C::update_waits(&mut watcher, "pend") == Some(false) {
            assert!(
                waited.elapsed() < LONGEST_WAIT,
                "the follower never waited for the writer's row ({LONGEST_WAIT:?})"
            );
            thread::sleep(Duration::from_millis(5));
        }
        println!(
            "waited {:.1?} for the follower to wait for the writer's row",
            waited.elapsed()
        );
        writer.batch_execute("COMMIT").unwrap();
        follower.join().unwrap()
    });
    match (C::NAME, raced) {
        ("sqlite", Ok(done)) => assert_eq!(done.rows, 1),
        (
            _,
            Err(Error::NumberedMeanwhile {
                taken: 2,
                numbered: 1,
                ..
            }),
        ) => {
            let done = pending::number_pending(&mut conn, &spec, rows).unwrap();
            assert_eq!(done.rows, 1, "only 'e' waited");
        }
        (_, other) => panic!("{other:?}"),
    }
    let all: Vec<String> = numbers(&mut conn).into_iter().map(Option::unwrap).collect();
    assert_eq!(
        all,
        ["INV000001", "INV000002", "INV000003", "HAND1", "INV000004"]
    );
}

/// `gapless = "deferred"` through the derive: `insert_into` leaves the field NULL (no number,
/// no lock of seqgen's, in or out of a transaction; one in ten rolled back), and
/// `pending::rows_of` finds its spec, scope and date columns: each company's month 1..n.
fn through_the_derive_the_insert_leaves_the_number_to_the_follower<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    through_the_derive(db, Start::Plain);
}

fn through_the_derive_the_insert_leaves_the_number_to_the_follower_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    through_the_derive(db, Start::UsePool);
}

fn through_the_derive<C>(db: TestDb<C>, start: Start)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    let scratch = create_table(&db, "pending_derive");
    start.on(&scratch);
    let mut conn = scratch.connect();
    let mut committed = 0;
    for i in 0..40 {
        let mut invoice = DeferredInvoice {
            number: None,
            company: ["acme", "globex"][i % 2].to_owned(),
            issued_on: chrono::NaiveDate::from_ymd_opt(2026, 1 + (i / 2 % 3) as u32, 10).unwrap(),
        };
        let result = diesel::Connection::transaction(&mut conn, |conn| {
            diesel_seqgen::insert_into(pend::table)
                .values(&mut invoice)
                .execute(conn)?;
            if i % 10 == 7 {
                return Err(Error::Database(diesel::result::Error::RollbackTransaction));
            }
            Ok(())
        });
        assert_eq!(invoice.number, None, "the insert took a number");
        committed += usize::from(result.is_ok());
    }
    assert!(numbers(&mut conn).iter().all(Option::is_none));
    let (spec, rows) = pending::rows_of::<DeferredInvoice>(pend::id).unwrap();
    assert_eq!(spec.key(), "deferred_invoices");
    let done = pending::number_pending(&mut conn, spec, rows).unwrap();
    assert_eq!(done.rows as usize, committed);
    let numbered = "FROM pend ORDER BY id";
    let companies = C::texts(&mut conn, &format!("SELECT company AS text {numbered}"));
    let numbers = C::texts(&mut conn, &format!("SELECT number AS text {numbered}"));
    let mut counters: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (company, number) in companies.iter().zip(&numbers) {
        let (counter, n) = number.split_at(number.len() - 6);
        counters
            .entry(format!("{company} {counter}"))
            .or_default()
            .push(n.parse().unwrap());
    }
    assert_eq!(counters.len(), 6, "{counters:?}");
    for (counter, mut numbers) in counters {
        numbers.sort_unstable();
        let n = numbers.len() as u64;
        assert_eq!(numbers, (1..=n).collect::<Vec<_>>(), "{counter}");
    }
}

/// PostgreSQL: with `notify_on_commit`'s trigger, a commit wakes a follower that would
/// otherwise look again only after 30 s; the row is numbered within 2 s of its commit.
#[cfg(feature = "postgres")]
#[test]
fn a_commit_wakes_the_follower_on_postgres() {
    use diesel::RunQueryDsl;
    let Some(db) = TestDb::<diesel::PgConnection>::open("pending_notify") else {
        return;
    };
    let scratch = create_table(&db, "pending_notify");
    let spec = invoices(&db.key("pending_notify"));
    let rows = PendingRows::of(pend::number, pend::id);
    let mut conn = scratch.connect();
    pending::notify_on_commit(&mut conn, "pend").unwrap();
    let stop = AtomicBool::new(false);
    thread::scope(|s| {
        let follower = s.spawn(|| {
            let mut conn = scratch.connect();
            pending::follow(&mut conn, &spec, rows, Duration::from_secs(30), &stop)
        });
        // Its first round (nothing to do) done, it waits.
        thread::sleep(Duration::from_millis(500));
        diesel::sql_query("INSERT INTO pend (company) VALUES ('acme')")
            .execute(&mut conn)
            .unwrap();
        let committed = std::time::Instant::now();
        while numbers(&mut conn)[0].is_none() && committed.elapsed() < Duration::from_secs(2) {
            thread::sleep(Duration::from_millis(5));
        }
        let numbered = numbers(&mut conn)[0].is_some();
        stop.store(true, Ordering::Relaxed);
        // A last commit wakes it to see the stop.
        diesel::sql_query("INSERT INTO pend (company) VALUES ('acme')")
            .execute(&mut conn)
            .unwrap();
        if numbered {
            assert!(follower.join().unwrap().unwrap() >= 1);
        }
        assert!(numbered, "no follower woke within 2 s of the commit");
    });
}

/// Servers: a writer whose transaction stays open after inserting a deferred row holds no lock
/// another writer needs; the second writer's insert and commit pass within its 1 s lock wait
/// (a `gapless` number inside the transaction would make it wait, and fail). SQLite has one
/// writer at a time whatever the mode.
fn no_writer_waits_for_another_writers_commit<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    no_writer_waits(db, Start::Plain);
}

fn no_writer_waits_for_another_writers_commit_after_use_pool<C>(db: TestDb<C>)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    no_writer_waits(db, Start::UsePool);
}

fn no_writer_waits<C>(db: TestDb<C>, start: Start)
where
    C: TestConnection,
    DeferredInvoice: diesel_seqgen::insert::Insert<pend::table, C>,
{
    if C::NAME == "sqlite" {
        return;
    }
    let scratch = create_table(&db, "pending_nowait");
    start.on(&scratch);
    let invoice = || DeferredInvoice {
        number: None,
        company: "acme".to_owned(),
        issued_on: chrono::NaiveDate::from_ymd_opt(2026, 1, 10).unwrap(),
    };
    let (mut first, mut second) = (scratch.connect(), scratch.connect());
    C::short_lock_wait(&mut second);
    diesel::Connection::transaction(&mut first, |first| {
        diesel_seqgen::insert_into(pend::table)
            .values(&mut invoice())
            .execute(first)?;
        // The first transaction is open, its row inserted; the second commits meanwhile.
        let started = std::time::Instant::now();
        diesel::Connection::transaction(&mut second, |second| {
            diesel_seqgen::insert_into(pend::table)
                .values(&mut invoice())
                .execute(second)
        })
        .expect("the second writer waited for the first");
        assert!(started.elapsed() < Duration::from_secs(1));
        Ok::<_, Error>(())
    })
    .unwrap();
    let (spec, rows) = pending::rows_of::<DeferredInvoice>(pend::id).unwrap();
    assert_eq!(
        pending::number_pending(&mut first, spec, rows)
            .unwrap()
            .rows,
        2
    );
}
