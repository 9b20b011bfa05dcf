//! Numbers taken inside the caller's transaction, with and without a pool.

use crate::common;

use common::{assert_distinct, TestConnection, TestDb};
use diesel::result::Error as DieselError;
use diesel_seqgen::{Generator, Spec};

backend_tests!(
    with_a_pool_the_caller_never_holds_the_counter_lock,
    without_a_pool_numbers_are_taken_in_the_transaction,
    serializable_sessions_retry_and_never_duplicate,
    the_default_generator_uses_a_pool_given_to_it,
);

fn spec(db: &TestDb<impl TestConnection>, name: &str) -> Spec {
    Spec::builder(db.key(name))
        .prefix("X")
        .date("")
        .pad(8)
        .batch(10)
        .build()
        .unwrap()
}

/// With a pool (PostgreSQL, MySQL), a block needed inside a transaction is reserved on a
/// pooled connection and committed at once: another instance can reserve while the caller's
/// transaction is still open, and the caller's rollback takes nothing back.
fn with_a_pool_the_caller_never_holds_the_counter_lock<C: TestConnection>(db: TestDb<C>) {
    let generator = Generator::builder().pool(db.pool(2)).build();
    let other = Generator::new();
    let spec = spec(&db, "pooled");
    let (mut caller, mut other_conn) = (db.connect(), db.connect());
    C::short_lock_wait(&mut other_conn);
    let mut issued = Vec::new();

    let rolled_back = caller.transaction(|conn| {
        issued.extend(generator.next_ids(conn, &spec, 3).unwrap());
        if C::NAME != "sqlite" {
            // The counter row is free: another instance reserves without waiting.
            issued.extend(other.next_ids(&mut other_conn, &spec, 1).unwrap());
        }
        Err::<(), _>(DieselError::RollbackTransaction)
    });
    assert!(rolled_back.is_err());
    if C::NAME != "sqlite" {
        // The block came from a committed reservation: it stays cached after the rollback.
        assert_eq!(issued[..3], ["X00000001", "X00000002", "X00000003"]);
        assert_eq!(issued[3], "X00000011");
    }
    let mut after = generator.next_ids(&mut caller, &spec, 30).unwrap();
    after.extend(other.next_ids(&mut other_conn, &spec, 30).unwrap());
    if C::NAME != "sqlite" {
        // Numbers handed out inside the rolled-back transaction are not reused in batched
        // mode (holes are allowed, duplicates are not).
        after.extend(issued);
    }
    assert_distinct(&after);
}

/// Without a pool the numbers are taken in the caller's transaction, exactly as many as
/// asked and uncached: a rollback returns them, a commit keeps them.
fn without_a_pool_numbers_are_taken_in_the_transaction<C: TestConnection>(db: TestDb<C>) {
    let generator = Generator::new();
    let spec = spec(&db, "in_transaction");
    let mut conn = db.connect();
    for attempt in 0..3 {
        let result = conn.transaction(|conn| {
            let ids = generator.next_ids(conn, &spec, 2)?;
            assert_eq!(ids, ["X00000001", "X00000002"], "attempt {attempt}");
            Err::<(), _>(diesel_seqgen::Error::Database(
                DieselError::RollbackTransaction,
            ))
        });
        assert!(result.is_err());
    }
    let kept = conn
        .transaction(|conn| generator.next_ids(conn, &spec, 2))
        .unwrap();
    assert_eq!(kept, ["X00000001", "X00000002"]);
    // Outside a transaction the next block starts after the committed numbers.
    assert_eq!(generator.next_id(&mut conn, &spec).unwrap(), "X00000003");
    assert_eq!(generator.reservations(), 5);
}

/// Every connection SERIALIZABLE, 8 instances on one key at batch 1: PostgreSQL raises
/// serialization failures (40001) and MySQL deadlocks (1213) on the counter row; seqgen retries
/// its own autocommit reservations, so every call succeeds and no ID repeats. Inside a
/// caller's transaction, with a pool, the reservation happens beside it and the caller's
/// transaction never conflicts on `db_key`.
fn serializable_sessions_retry_and_never_duplicate<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool_with(16, true);
    let spec = Spec::builder(db.key("serializable"))
        .prefix("S")
        .date("")
        .pad(8)
        .batch(1)
        .build()
        .unwrap();
    let spec = std::sync::Arc::new(spec);
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (pool, spec) = (pool.clone(), spec.clone());
            // One generator per thread: 8 app instances contending for the counter row.
            let generator = Generator::builder().pool(pool.clone()).build();
            std::thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                let mut ids = Vec::new();
                for i in 0..40 {
                    if C::NAME != "sqlite" && (t + i) % 4 == 0 {
                        let id = conn
                            .transaction(|conn| generator.next_id(conn, &spec))
                            .unwrap();
                        ids.push(id);
                    } else {
                        ids.push(generator.next_id(&mut *conn, &spec).unwrap());
                    }
                }
                ids
            })
        })
        .collect();
    let ids: Vec<String> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(ids.len(), 320);
    assert_distinct(&ids);
}

/// `diesel_seqgen::global::use_pool` gives the process-wide default generator (behind `next_id` and the
/// derive) a pool: inside a transaction its blocks are reserved beside it, and the counter row
/// stays free for other instances.
fn the_default_generator_uses_a_pool_given_to_it<C: TestConnection>(db: TestDb<C>) {
    if C::NAME == "sqlite" {
        return; // inside a SQLite transaction numbers are always taken in it
    }
    diesel_seqgen::global::use_pool(db.pool(2)).unwrap();
    let spec = spec(&db, "default_pool");
    let (mut caller, mut other_conn) = (db.connect(), db.connect());
    C::short_lock_wait(&mut other_conn);
    let other = Generator::new();
    let (mine, theirs) = caller
        .transaction(|conn| {
            let mine = diesel_seqgen::global::next_ids(conn, &spec, 2)?;
            // Would time out if this transaction held the counter row.
            let theirs = other.next_id(&mut other_conn, &spec)?;
            Ok::<_, diesel_seqgen::Error>((mine, theirs))
        })
        .unwrap();
    assert_eq!(mine, ["X00000001", "X00000002"]);
    assert_eq!(theirs, "X00000011");
}
