//! Gapless mode on every backend: numbers taken in the caller's transaction, given back by a
//! rollback, queued on the counter row, never skipped.

use crate::common;

use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use chrono::{TimeZone, Utc};
use common::{assert_distinct, TestConnection, TestDb};
use diesel::result::Error as DieselError;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::sequence::Sequence;
use diesel_seqgen::{DistributedId, Error, Generator, Spec};

backend_tests!(
    committed_numbers_are_exactly_one_to_n,
    first_numbers_of_a_period_without_a_pool,
    a_second_transaction_waits_and_gets_the_next_number,
    nowait_says_busy_and_leaves_the_transaction_usable,
    two_keys_in_opposite_declaration_order_never_deadlock,
    outside_a_transaction_is_refused_unless_allowed,
    every_period_starts_at_one,
    serializable_transactions_conflict_and_retry_without_a_gap,
);

fn gapless_spec(db: &TestDb<impl TestConnection>, name: &str) -> Spec {
    Spec::builder(db.key(name))
        .prefix("INV")
        .date("")
        .pad(6)
        .gapless()
        .build()
        .unwrap()
}

fn rollback() -> Error {
    Error::Database(DieselError::RollbackTransaction)
}

fn counter(id: &str) -> u64 {
    id[id.len() - 6..].parse().unwrap()
}

/// 8 threads insert rows in transactions, 10 % of which roll back after taking their number:
/// the committed numbers are exactly 1..=N.
fn committed_numbers_are_exactly_one_to_n<C: TestConnection>(db: TestDb<C>) {
    // MySQL names are at most 64 characters: keep the unique part short.
    let table = format!("gapless_rows_{:x}", {
        use std::hash::{BuildHasher, RandomState};
        RandomState::new().hash_one(db.key("rows")) >> 16
    });
    db.connect()
        .batch_execute(&format!(
            "CREATE TABLE {table} (id VARCHAR(64) NOT NULL PRIMARY KEY)"
        ))
        .unwrap();
    let pool = db.pool(9);
    let spec = Arc::new(gapless_spec(&db, "invoices"));
    // With a pool, MySQL creates the period's row beside the transactions (see
    // `first_numbers_of_a_period_without_a_pool`).
    let generator = Generator::builder().pool(pool.clone()).build();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (pool, spec, generator, table) =
                (pool.clone(), spec.clone(), generator.clone(), table.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                for i in 0..25 {
                    let result = conn.transaction(|conn| {
                        let id = generator.next_id(conn, &spec)?;
                        // The ID is seqgen's own formatting: safe to inline.
                        conn.batch_execute(&format!("INSERT INTO {table} (id) VALUES ('{id}')"))?;
                        if (t * 25 + i) % 10 == 0 {
                            return Err(rollback());
                        }
                        Ok(())
                    });
                    match result {
                        Ok(()) | Err(Error::Database(DieselError::RollbackTransaction)) => {}
                        Err(e) => panic!("thread {t}: {e}"),
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let rows = C::texts(
        &mut db.connect(),
        &format!("SELECT id AS text FROM {table}"),
    );
    let mut numbers: Vec<u64> = rows.iter().map(|id| counter(id)).collect();
    numbers.sort_unstable();
    assert_eq!(numbers.len(), 180); // 200 transactions, 20 rolled back
    assert_eq!(numbers, (1..=180).collect::<Vec<_>>());
}

/// Without a pool, transactions racing for a period's very first number may deadlock on
/// MySQL (InnoDB gap locks while creating the row): the database aborts one of them, the
/// caller gets `Error::TransactionConflict` and runs it again (`diesel_seqgen::retry_transaction`),
/// as it would for any deadlock. Never a gap, never a repeat.
fn first_numbers_of_a_period_without_a_pool<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(8);
    let spec = Arc::new(gapless_spec(&db, "racing"));
    let start = Arc::new(Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let (pool, spec, start) = (pool.clone(), spec.clone(), start.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                start.wait();
                diesel_seqgen::retry_transaction(&mut *conn, |conn| {
                    Generator::new().next_id(conn, &spec)
                })
                .unwrap()
            })
        })
        .collect();
    let mut numbers: Vec<u64> = handles
        .into_iter()
        .map(|h| counter(&h.join().unwrap()))
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=8).collect::<Vec<_>>());
}

/// A second transaction waits for the first to commit and gets the next number; after a
/// rollback the next caller gets the rolled-back number.
fn a_second_transaction_waits_and_gets_the_next_number<C: TestConnection>(db: TestDb<C>) {
    let spec = Arc::new(gapless_spec(&db, "queue"));
    let (taken_tx, taken_rx) = mpsc::channel();
    let first = {
        let (mut conn, spec) = (db.connect(), spec.clone());
        thread::spawn(move || {
            conn.transaction(|conn| {
                let id = Generator::new().next_id(conn, &spec)?;
                taken_tx.send(Instant::now()).unwrap();
                thread::sleep(Duration::from_millis(400));
                Ok::<_, Error>(id)
            })
            .unwrap()
        })
    };
    let first_taken = taken_rx.recv().unwrap();
    let mut conn = db.connect();
    let second = conn
        .transaction(|conn| Generator::new().next_id(conn, &spec))
        .unwrap();
    let waited = first_taken.elapsed();
    assert_eq!(first.join().unwrap(), "INV000001");
    assert_eq!(second, "INV000002");
    assert!(
        waited >= Duration::from_millis(300),
        "the second transaction should have queued behind the first, waited {waited:?}"
    );

    let rolled_back = conn.transaction(|conn| {
        assert_eq!(Generator::new().next_id(conn, &spec)?, "INV000003");
        Err::<(), _>(rollback())
    });
    assert!(rolled_back.is_err());
    let again = conn
        .transaction(|conn| Generator::new().next_id(conn, &spec))
        .unwrap();
    assert_eq!(again, "INV000003");
}

/// With `nowait`, a transaction that finds the counter held gets `Error::Busy` at once, and
/// can go on (and try again later).
fn nowait_says_busy_and_leaves_the_transaction_usable<C: TestConnection>(db: TestDb<C>) {
    let key = db.key("nowait");
    let waits = Spec::builder(&key).date("").gapless().build().unwrap();
    let nowait = Arc::new(
        Spec::builder(&key)
            .date("")
            .gapless_nowait()
            .build()
            .unwrap(),
    );
    let (mut holder, mut other) = (db.connect(), db.connect());
    let barrier = Arc::new(Barrier::new(2));
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let other_thread = {
        let (barrier, nowait) = (barrier.clone(), nowait.clone());
        thread::spawn(move || {
            barrier.wait(); // the holder has its number
            let started = Instant::now();
            let busy = other.transaction(|conn| {
                let err = Generator::new().next_id(conn, &nowait).unwrap_err();
                // The transaction survives the refusal.
                conn.batch_execute("SELECT 1")?;
                Ok::<_, Error>(err)
            });
            let elapsed = started.elapsed();
            release_tx.send(()).unwrap();
            (busy.unwrap(), elapsed, other)
        })
    };
    holder
        .transaction(|conn| {
            Generator::new().next_id(conn, &waits)?;
            barrier.wait();
            release_rx.recv().unwrap();
            Ok::<_, Error>(())
        })
        .unwrap();
    let (err, elapsed, mut other) = other_thread.join().unwrap();
    assert!(
        matches!(err, Error::Busy { ref key } if key.starts_with("nowait")),
        "{err:?}"
    );
    assert!(
        elapsed < Duration::from_secs(2),
        "nowait waited {elapsed:?}"
    );
    let next = other
        .transaction(|conn| Generator::new().next_id(conn, &nowait))
        .unwrap();
    assert!(next.ends_with("000002"), "{next}");
}

#[derive(DistributedId)]
struct Forward {
    #[distributed_id(key = "gapless_order_a", date = "", gapless)]
    a: String,
    #[distributed_id(key = "gapless_order_b", date = "", gapless)]
    b: String,
}

#[derive(DistributedId)]
struct Backward {
    #[distributed_id(key = "gapless_order_b", date = "", gapless)]
    b: String,
    #[distributed_id(key = "gapless_order_a", date = "", gapless)]
    a: String,
}

/// Two writers whose structs declare the same two gapless keys in opposite orders: both lock
/// them in key order, so neither ever waits for the other in a cycle (PostgreSQL and MySQL
/// would abort one with a deadlock error).
fn two_keys_in_opposite_declaration_order_never_deadlock<C: TestConnection>(db: TestDb<C>) {
    let barrier = Arc::new(Barrier::new(2));
    let forward = writer(&db, &barrier, || {
        let mut row = Forward {
            a: String::new(),
            b: String::new(),
        };
        move |conn: &mut C| {
            diesel_seqgen::assign_ids(conn, &mut row).map(|()| (row.a.clone(), row.b.clone()))
        }
    });
    let backward = writer(&db, &barrier, || {
        let mut row = Backward {
            b: String::new(),
            a: String::new(),
        };
        move |conn: &mut C| {
            diesel_seqgen::assign_ids(conn, &mut row).map(|()| (row.a.clone(), row.b.clone()))
        }
    });
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (x, y) in forward
        .join()
        .unwrap()
        .into_iter()
        .chain(backward.join().unwrap())
    {
        a.push(x);
        b.push(y);
    }
    assert_distinct(&a);
    assert_distinct(&b);
}

/// A thread that fills 30 records in 30 short transactions, once `barrier` lets it start;
/// `record` makes a fresh record's filler.
fn writer<C, F, G>(
    db: &TestDb<C>,
    barrier: &Arc<Barrier>,
    record: F,
) -> thread::JoinHandle<Vec<(String, String)>>
where
    C: TestConnection,
    F: Fn() -> G + Send + 'static,
    G: FnMut(&mut C) -> Result<(String, String), Error>,
{
    let (mut conn, barrier) = (db.connect(), barrier.clone());
    thread::spawn(move || {
        barrier.wait();
        // MariaDB may still abort a transaction now and then on gap locks that other tests'
        // new `db_key` rows take (what `diesel_seqgen::retry_transaction` is for); a lock-order
        // cycle between the two writers would abort most of their 30 overlapping ones.
        let mut conflicts = 0;
        (0..30)
            .map(|_| loop {
                let mut fill = record();
                match conn.transaction(|conn| {
                    let ids = fill(conn)?;
                    thread::sleep(Duration::from_millis(2));
                    Ok::<_, Error>(ids)
                }) {
                    Ok(ids) => break ids,
                    Err(Error::TransactionConflict(e)) if conflicts < 3 => {
                        conflicts += 1;
                        eprintln!("conflict {conflicts} of at most 3: {e}");
                    }
                    Err(e) => panic!("{e:?} after {conflicts} conflicts"),
                }
            })
            .collect()
    })
}

/// A gapless number outside a transaction is refused (it could be lost before its row is
/// written), unless the caller opts in.
fn outside_a_transaction_is_refused_unless_allowed<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let spec = gapless_spec(&db, "outside");
    let err = Generator::new().next_id(&mut conn, &spec).unwrap_err();
    assert!(matches!(err, Error::OutsideTransaction { .. }), "{err:?}");
    assert!(err.to_string().contains("inside a transaction"), "{err}");

    let key = db.key("sequence");
    assert!(diesel_seqgen::sequence::next_value(&mut conn, &key).is_err());
    let values = conn
        .transaction(|conn| diesel_seqgen::sequence::next_values(conn, &key, 3))
        .unwrap();
    assert_eq!(values, [1, 2, 3]);
    let sequence = Sequence::new(&key).unwrap().allow_outside_transaction();
    assert_eq!(sequence.next_value(&mut conn).unwrap(), 4);
}

/// As in batched mode, the counter starts at 1 in each new period.
fn every_period_starts_at_one<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let clock = Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2025, 12, 31, 23, 59, 59).unwrap(),
    ));
    let generator = Generator::builder().clock(clock.clone()).build();
    let spec = Spec::builder(db.key("yearly"))
        .prefix("INV")
        .date("%Y")
        .pad(6)
        .gapless()
        .build()
        .unwrap();
    let take = |conn: &mut C| {
        conn.transaction(|conn| generator.next_id(conn, &spec))
            .unwrap()
    };
    assert_eq!(take(&mut conn), "INV2025000001");
    assert_eq!(take(&mut conn), "INV2025000002");
    clock.advance(chrono::TimeDelta::seconds(1));
    assert_eq!(take(&mut conn), "INV2026000001");
}

/// Every session SERIALIZABLE: PostgreSQL aborts transactions whose counter changed since
/// their snapshot (`Error::TransactionConflict`); run again, as the error says, the committed
/// numbers are still exactly 1..=N.
fn serializable_transactions_conflict_and_retry_without_a_gap<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool_with(8, true);
    let spec = Arc::new(gapless_spec(&db, "serializable"));
    let generator = Generator::builder().pool(pool.clone()).build();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let (pool, spec, generator) = (pool.clone(), spec.clone(), generator.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                let mut ids = Vec::new();
                let mut conflicts = 0;
                while ids.len() < 10 {
                    match conn.transaction(|conn| generator.next_id(conn, &spec)) {
                        Ok(id) => ids.push(id),
                        Err(Error::TransactionConflict(_)) if conflicts < 500 => {
                            conflicts += 1;
                            thread::sleep(Duration::from_millis(1 + conflicts % 7));
                        }
                        Err(e) => panic!("{e}"),
                    }
                }
                ids
            })
        })
        .collect();
    let mut numbers: Vec<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .map(|id| counter(&id))
        .collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=40).collect::<Vec<_>>());
}
