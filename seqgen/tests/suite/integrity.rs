//! The ways real deployments break "never the same number twice", each on every backend:
//! copied databases, operator edits of `db_key`, counters at the end of `i64`, two shapes on
//! one key, keys a collation folds, requests that cannot fit, failed gapless inserts.

use crate::common;

use chrono::TimeDelta;
use common::{assert_distinct, TestConnection, TestDb};
use diesel::prelude::*;
use diesel_seqgen::clock::Clock;
use diesel_seqgen::{DistributedId, Error, Generator, Overflow, Spec, SpecError};

backend_tests!(
    a_copied_database_is_another_database,
    a_pooled_connection_remembers_its_database,
    a_spec_serves_each_generator_from_its_own_block,
    a_counter_that_went_back_is_refused,
    one_key_one_shape,
    counters_never_wrap_or_clamp,
    operator_edits_out_of_range_fail_at_the_update,
    a_request_that_cannot_fit_touches_nothing,
    a_failed_gapless_insert_gives_its_number_back,
    many_gapless_inserts_in_one_transaction_number_consecutively,
    the_upgrade_keeps_every_counter,
    the_scope_upgrade_keeps_every_counter_and_voided_number,
    the_migrations_revert_and_run_again,
);

fn batched(key: &str, pad: u32, batch: u32) -> Spec {
    Spec::builder(key)
        .prefix("N")
        .date("")
        .pad(pad)
        .batch(batch)
        .build()
        .unwrap()
}

/// A migrated database copied (a template SQLite file copied per test, `CREATE DATABASE …
/// TEMPLATE`, a dump restored elsewhere) carries the original's token row. The process-wide
/// default generator must still take the copy for another database: serving the copy from the
/// original's cache hands out numbers the copy's own counter gives again later.
fn a_copied_database_is_another_database<C: TestConnection>(db: TestDb<C>) {
    let original = db.scratch("orig");
    let spec = batched("copied", 6, 100);
    {
        let mut conn = original.connect();
        diesel_seqgen::run_migrations(&mut conn).unwrap();
        // The token row exists before the copy, as in a template that was used once.
        diesel_seqgen::global::next_id(&mut conn, &batched("warm_up", 6, 1)).unwrap();
    } // PostgreSQL copies only a database nobody is connected to.
    let copy = db.copy(&original, "copy");
    let (mut on_original, mut on_copy) = (original.connect(), copy.connect());

    // The default generator, on the original and on the copy; then other instances (fresh
    // generators) on each, which only know what the database's own counter says.
    let mut original_ids = diesel_seqgen::global::next_ids(&mut on_original, &spec, 5).unwrap();
    let mut copy_ids = diesel_seqgen::global::next_ids(&mut on_copy, &spec, 5).unwrap();
    original_ids.extend(
        Generator::new()
            .next_ids(&mut on_original, &spec, 20)
            .unwrap(),
    );
    copy_ids.extend(Generator::new().next_ids(&mut on_copy, &spec, 20).unwrap());
    original_ids.extend(diesel_seqgen::global::next_ids(&mut on_original, &spec, 5).unwrap());
    copy_ids.extend(diesel_seqgen::global::next_ids(&mut on_copy, &spec, 5).unwrap());
    assert_distinct(&original_ids);
    assert_distinct(&copy_ids);
    // Each database started at 1: the copy was not served from the original's block.
    assert_eq!(copy_ids[0], "N000001");
}

/// A spec keeps the state of the first generator that served it (its memo slot), so that
/// serving it again skips that generator's map of keys. Only that generator may use it:
/// another generator, here on another database, serves the same spec from its own block, or
/// it would hand out the first database's numbers in the second.
fn a_spec_serves_each_generator_from_its_own_block<C: TestConnection>(db: TestDb<C>) {
    let (first, second) = (db.scratch("memo_a"), db.scratch("memo_b"));
    let (mut on_first, mut on_second) = (first.connect(), second.connect());
    diesel_seqgen::run_migrations(&mut on_first).unwrap();
    diesel_seqgen::run_migrations(&mut on_second).unwrap();
    let spec = batched("memo", 6, 100);
    let (a, b) = (Generator::new(), Generator::new());
    assert_eq!(a.next_id(&mut on_first, &spec).unwrap(), "N000001");
    assert_eq!(b.next_id(&mut on_second, &spec).unwrap(), "N000001");
    assert_eq!(a.next_id(&mut on_first, &spec).unwrap(), "N000002");
    assert_eq!(b.next_id(&mut on_second, &spec).unwrap(), "N000002");
    // A clone (its slot starts empty) and a spec built again draw from the same blocks.
    assert_eq!(a.next_id(&mut on_first, &spec.clone()).unwrap(), "N000003");
    let again = batched("memo", 6, 100);
    assert_eq!(b.next_id(&mut on_second, &again).unwrap(), "N000003");
    assert_eq!(a.next_id(&mut on_first, &again).unwrap(), "N000004");
    assert_eq!((a.reservations(), b.reservations()), (1, 1));
}

/// A connection checked out of a pool is identified once and then remembers its database, so
/// the default generator serves cached IDs without a query; a copy behind another pool, with
/// the original's token row, is still told apart. A plain (dereferenced) connection is
/// identified at every call instead.
fn a_pooled_connection_remembers_its_database<C: TestConnection>(db: TestDb<C>) {
    use std::sync::atomic::Ordering::Relaxed;
    let original = db.scratch("pool_orig");
    {
        let mut conn = original.connect();
        diesel_seqgen::run_migrations(&mut conn).unwrap();
        diesel_seqgen::global::next_id(&mut conn, &batched("warm_up", 6, 1)).unwrap();
    }
    let copy = db.copy(&original, "pool_copy");
    let spec = batched("pooled", 6, 100);
    let (original_pool, copy_pool) = (original.pool(1), copy.pool(1));
    let mut ids = (Vec::new(), Vec::new());
    for round in 0..3 {
        // Back to its pool and out again between rounds: the same physical connection.
        let (mut on_original, mut on_copy) =
            (original_pool.get().unwrap(), copy_pool.get().unwrap());
        let (original_queries, copy_queries) = (
            common::count_queries(&mut on_original),
            common::count_queries(&mut on_copy),
        );
        for _ in 0..5 {
            ids.0
                .push(diesel_seqgen::global::next_id(&mut on_original, &spec).unwrap());
            ids.1
                .push(diesel_seqgen::global::next_id(&mut on_copy, &spec).unwrap());
        }
        let queries = (original_queries.load(Relaxed), copy_queries.load(Relaxed));
        if round == 0 {
            // Identified, then one reservation (its statements vary by backend).
            assert!(queries.0 > 0 && queries.1 > 0, "{queries:?}");
        } else {
            assert_eq!(
                queries,
                (0, 0),
                "cached IDs on a pooled connection made queries"
            );
        }
    }
    // Each database counts from its own 1: neither was served from the other's block.
    let expected: Vec<String> = (1..=15).map(|n| format!("N{n:06}")).collect();
    assert_eq!((&ids.0, &ids.1), (&expected, &expected));

    // Dereferenced, the pooled connection is a plain one: identified at every call.
    let mut pooled = original_pool.get().unwrap();
    let plain: &mut C = &mut pooled;
    let queries = common::count_queries(plain);
    diesel_seqgen::global::next_id(plain, &spec).unwrap();
    assert!(queries.load(Relaxed) >= 1);
}

/// An operator restores an old `db_key` (here: lowers `current_value` the one way the database
/// lets a statement do it, naming the value it lowers from) while a generator runs: the
/// generator knows it held higher numbers and refuses to serve the block.
fn a_counter_that_went_back_is_refused<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("went_back");
    let spec = batched(&key, 6, 10);
    // Blocks of 10 each time, so that the second refusal below still falls under 25.
    let generator = Generator::builder().fixed_batch().build();
    let ids = generator.next_ids(&mut conn, &spec, 25).unwrap(); // one block of 25
    assert_eq!(ids.last().unwrap(), "N000025");
    conn.batch_execute(&format!(
        // `lowered_from` first: MySQL assigns left to right, with the values already set.
        "UPDATE db_key SET lowered_from = current_value, current_value = 5 \
         WHERE key_name = '{key}' AND period = ''"
    ))
    .unwrap();
    let err = generator.next_id(&mut conn, &spec).unwrap_err();
    assert!(
        matches!(
            err,
            Error::CounterWentBack {
                held: 25,
                got: 6,
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains(&key), "{err}");
    // Refused every time, not served on the second try.
    assert!(matches!(
        generator.next_id(&mut conn, &spec),
        Err(Error::CounterWentBack { .. })
    ));
}

/// Two specs on one key whose printed forms differ (here `%Y%m%d` + pad 8 and `%Y%m%d%H` +
/// pad 6 would print the same strings from different period rows): the second is refused,
/// on every path (batched, in a transaction, gapless, another generator).
fn one_key_one_shape<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("shape");
    let daily = Spec::builder(&key).date("%Y%m%d").pad(8).build().unwrap();
    let hourly = Spec::builder(&key).date("%Y%m%d%H").pad(6).build().unwrap();
    Generator::new().next_id(&mut conn, &daily).unwrap();
    let err = Generator::new().next_id(&mut conn, &hourly).unwrap_err();
    match &err {
        Error::ShapeChanged {
            recorded,
            requested,
            ..
        } => {
            assert_eq!(recorded, daily.shape());
            assert_eq!(requested, hourly.shape());
        }
        other => panic!("{other:?}"),
    }
    assert!(err.to_string().contains("new key"), "{err}");
    let in_transaction = conn.transaction(|conn| Generator::new().next_id(conn, &hourly));
    assert!(matches!(in_transaction, Err(Error::ShapeChanged { .. })));
    let gapless = Spec::builder(&key)
        .date("%Y%m%d%H")
        .pad(6)
        .gapless()
        .build()
        .unwrap();
    let in_transaction = conn.transaction(|conn| Generator::new().next_id(conn, &gapless));
    assert!(matches!(in_transaction, Err(Error::ShapeChanged { .. })));
    // Same period row, other width: refused too, though the row exists.
    let narrow = Spec::builder(&key).date("%Y%m%d").pad(6).build().unwrap();
    let err = Generator::new().next_id(&mut conn, &narrow).unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
    // An undated key, whose row is its counter: MySQL's reservation of a known key checks the
    // shape in the statement that reserves.
    let undated = db.key("shape_undated");
    let wide = Spec::builder(&undated).date("").pad(8).build().unwrap();
    let narrow = Spec::builder(&undated).date("").pad(6).build().unwrap();
    Generator::new().next_id(&mut conn, &wide).unwrap();
    let err = Generator::new().next_id(&mut conn, &narrow).unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
    // The recorded shape still works, from any generator.
    diesel_seqgen::global::next_id(&mut conn, &daily).unwrap();
}

/// Counters at the end of `i64`: an operator's `batch_size` of `i64::MAX`, or a `start_value`
/// just below it with `widen`. SQLite would turn the sum into a REAL read back clamped; every
/// backend refuses instead, with an error that names the key, and nothing is issued twice.
fn counters_never_wrap_or_clamp<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let widen = |key: &str| {
        Spec::builder(key)
            .prefix("N")
            .date("")
            .pad(6)
            .batch(100)
            .overflow(Overflow::Widen)
            .build()
            .unwrap()
    };
    // A start near the end: the batch no longer fits, single numbers do, then none.
    let near_end = db.key("near_end");
    conn.batch_execute(&format!(
        "INSERT INTO db_key (key_name, period, current_value, start_value) \
         VALUES ('{near_end}', '', 0, {})",
        i64::MAX - 9
    ))
    .unwrap();
    let spec = widen(&near_end);
    let mut ids = Vec::new();
    let err = loop {
        // A new instance each time, as many processes would.
        match Generator::new().next_id(&mut conn, &spec) {
            Ok(id) => ids.push(id[1..].parse::<i64>().unwrap()),
            Err(e) => break e,
        }
        assert!(ids.len() <= 10, "more numbers than fit: {ids:?}");
    };
    assert_eq!(ids.len(), 10, "{ids:?} then {err:?}");
    assert_eq!(*ids.last().unwrap(), i64::MAX);
    assert_distinct(&ids);
    assert!(
        matches!(err, Error::CounterOutOfRange { ref key, .. } if *key == near_end),
        "{err:?}"
    );
    assert!(err.to_string().contains(&near_end), "{err}");

    // A batch of i64::MAX: it cannot fit, so each reservation takes only what is needed,
    // and the counter stays an exact integer (SQLite would have turned it into a REAL).
    let huge_batch = db.key("huge_batch");
    let spec = widen(&huge_batch);
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "N000001"
    );
    conn.batch_execute(&format!(
        "UPDATE db_key SET batch_size = {} WHERE key_name = '{huge_batch}'",
        i64::MAX
    ))
    .unwrap();
    for expected in ["N000101", "N000102"] {
        assert_eq!(
            Generator::new().next_id(&mut conn, &spec).unwrap(),
            expected
        );
    }
    let counter = C::texts(
        &mut conn,
        &format!("SELECT CAST(current_value AS CHAR(20)) AS text FROM db_key WHERE key_name = '{huge_batch}'"),
    );
    assert_eq!(counter[0].trim(), "102");
}

/// The CHECK constraints: a bad operator edit fails at the UPDATE, not at the next reservation.
fn operator_edits_out_of_range_fail_at_the_update<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("checked");
    Generator::new()
        .next_id(&mut conn, &batched(&key, 6, 10))
        .unwrap();
    let mut edits = vec![
        "batch_size = 0",
        "batch_size = -5",
        "start_value = 0",
        "current_value = -1",
    ];
    if C::NAME == "sqlite" {
        edits.push("current_value = 1.5"); // SQLite would store a REAL
        edits.push("current_value = 'ten'");
    }
    for edit in edits {
        let result = conn.batch_execute(&format!(
            "UPDATE db_key SET {edit} WHERE key_name = '{key}'"
        ));
        assert!(result.is_err(), "`{edit}` was accepted");
    }
    // Good edits still go through.
    conn.batch_execute(&format!(
        "UPDATE db_key SET batch_size = 50, start_value = 100 WHERE key_name = '{key}'"
    ))
    .unwrap();
}

/// `next_ids(5000)` on a pad-3 key: refused before anything is reserved, so the key keeps
/// working for everyone (it used to be dead for the rest of the period).
fn a_request_that_cannot_fit_touches_nothing<C: TestConnection>(db: TestDb<C>) {
    let mut conn = db.connect();
    let key = db.key("small");
    let spec = batched(&key, 3, 10);
    let err = Generator::new()
        .next_ids(&mut conn, &spec, 5000)
        .unwrap_err();
    assert!(matches!(err, Error::Overflow { .. }), "{err:?}");
    let in_transaction = conn.transaction(|conn| Generator::new().next_ids(conn, &spec, 1000));
    assert!(in_transaction.is_err());
    assert_eq!(Generator::new().next_id(&mut conn, &spec).unwrap(), "N001");
    // Near the end, a request larger than what is left is refused too, and the rest stays.
    // The first call reserved a block of 10: 980 more end at 990.
    Generator::new().next_ids(&mut conn, &spec, 980).unwrap();
    assert!(Generator::new().next_ids(&mut conn, &spec, 20).is_err());
    let rest = Generator::new().next_ids(&mut conn, &spec, 9).unwrap();
    assert_eq!(rest.last().unwrap(), "N999");
}

diesel::table! {
    /// A temporary table per connection (the derive's key is fixed, the table is not shared).
    seqgen_titled (number) {
        number -> Text,
        title -> Text,
    }
}

#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_titled)]
struct Titled {
    #[distributed_id(prefix = "T", date = "", pad = 8, gapless)]
    number: String,
    title: String,
}

/// `diesel_seqgen::insert_into` of a `Titled`, per backend (Diesel's insert bounds are concrete).
trait InsertTitled {
    fn insert_titled(&mut self, record: &mut Titled) -> diesel_seqgen::Result<usize>;
}

macro_rules! insert_titled {
    ($($feature:literal => $conn:ty),*) => {$(
        #[cfg(feature = $feature)]
        impl InsertTitled for $conn {
            fn insert_titled(&mut self, record: &mut Titled) -> diesel_seqgen::Result<usize> {
                diesel_seqgen::insert_into(seqgen_titled::table).values(record).execute(self)
            }
        }
    )*};
}
insert_titled!(
    "sqlite" => diesel::SqliteConnection,
    "postgres" => diesel::PgConnection,
    "mysql" => diesel::MysqlConnection
);

fn titled(title: &str) -> Titled {
    Titled {
        number: String::new(),
        title: title.to_owned(),
    }
}

/// A gapless insert that fails inside the caller's transaction (a unique violation the
/// caller catches) gives its number back: the committed numbers are consecutive. SQLite and
/// MySQL roll back only the failed statement: without a savepoint around fill + insert, the
/// increment would stay. On PostgreSQL a failed statement aborts the whole transaction, as it
/// does for any Diesel insert there; a caller that goes on after a failure wraps the insert in
/// a nested transaction (a savepoint), as here on PostgreSQL.
fn a_failed_gapless_insert_gives_its_number_back<C: TestConnection + InsertTitled>(db: TestDb<C>) {
    let mut conn = db.connect();
    conn.batch_execute(
        "CREATE TEMPORARY TABLE seqgen_titled (number VARCHAR(32) PRIMARY KEY, title VARCHAR(32) UNIQUE)",
    )
    .unwrap();
    // Run again on a deadlock: without a pool, MySQL may deadlock creating a new key's rows
    // beside another test (gap locks).
    diesel_seqgen::retry_transaction(&mut conn, |conn| {
        conn.insert_titled(&mut titled("first"))?;
        let mut again = titled("first");
        let failed = if C::NAME == "postgres" {
            conn.transaction(|conn| conn.insert_titled(&mut again))
        } else {
            conn.insert_titled(&mut again)
        };
        assert!(failed.is_err(), "the unique title must fail");
        assert_eq!(again.number, "", "the failed record keeps no number");
        conn.insert_titled(&mut titled("second"))?;
        Ok::<_, Error>(())
    })
    .unwrap();
    let numbers = C::texts(
        &mut conn,
        "SELECT number AS text FROM seqgen_titled ORDER BY number",
    );
    let counters: Vec<u64> = numbers.iter().map(|n| n[1..].parse().unwrap()).collect();
    assert_eq!(counters.len(), 2);
    assert_eq!(counters[1], counters[0] + 1, "{numbers:?}");
}

/// Many gapless inserts in one transaction (on PostgreSQL each numbered by its own insert
/// statement, see one_statement.rs), then a nested transaction of the caller's that
/// rolls back, then one more insert: the nested one's number comes back, the commit keeps the
/// rest, and the numbers are consecutive.
fn many_gapless_inserts_in_one_transaction_number_consecutively<
    C: TestConnection + InsertTitled,
>(
    db: TestDb<C>,
) {
    let mut conn = db.connect();
    conn.batch_execute(
        "CREATE TEMPORARY TABLE seqgen_titled (number VARCHAR(32) PRIMARY KEY, title VARCHAR(32) UNIQUE)",
    )
    .unwrap();
    diesel_seqgen::retry_transaction(&mut conn, |conn| {
        for i in 0..50 {
            conn.insert_titled(&mut titled(&format!("t{i}")))?;
        }
        let nested = conn.transaction(|conn| {
            conn.insert_titled(&mut titled("nested"))?;
            Err::<(), _>(Error::Database(diesel::result::Error::RollbackTransaction))
        });
        assert!(nested.is_err());
        conn.insert_titled(&mut titled("after"))?;
        Ok::<_, Error>(())
    })
    .unwrap();
    let rows = C::texts(
        &mut conn,
        "SELECT CONCAT(number, ' ', title) AS text FROM seqgen_titled ORDER BY number",
    );
    let counters: Vec<u64> = rows.iter().map(|r| r[1..9].parse().unwrap()).collect();
    assert_eq!(counters.len(), 51, "{rows:?}");
    assert!(counters.windows(2).all(|w| w[1] == w[0] + 1), "{rows:?}");
    assert!(rows.last().unwrap().ends_with(" after"), "{rows:?}");
}

/// Upgrading a `db_key` in use (counters, settings, values the new CHECKs refuse) to the
/// latest migration keeps every counter, and numbering continues where it was.
fn the_upgrade_keeps_every_counter<C: TestConnection>(db: TestDb<C>) {
    let fresh = db.scratch("upgrade");
    let mut conn = fresh.connect();
    // Everything before the integrity migration (300).
    migrate_before(&mut conn, "00000000000300");
    conn.batch_execute(
        "INSERT INTO db_key (key_name, period, current_value, batch_size, start_value) VALUES \
         ('kept', '', 41, NULL, NULL), \
         ('kept_dated', '2025', 7, 20, 5), \
         ('bad_settings', '', 3, 0, 0)",
    )
    .unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = batched("kept", 6, 10);
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "N000042"
    );
    let bad = batched("bad_settings", 6, 10);
    assert_eq!(
        Generator::new().next_id(&mut conn, &bad).unwrap(),
        "N000004"
    );
    let rows = C::texts(
        &mut conn,
        "SELECT CAST(current_value AS CHAR(20)) AS text FROM db_key WHERE key_name = 'kept_dated'",
    );
    assert_eq!(rows.iter().map(|r| r.trim()).collect::<Vec<_>>(), ["7"]);
}

/// Runs the migrations before `version` only.
fn migrate_before<C: TestConnection>(conn: &mut C, version: &str) {
    while conn
        .pending_migrations(diesel_seqgen::migrations::backend_migrations::<C::B>())
        .unwrap()
        .first()
        .is_some_and(|m| m.name().version().to_string().as_str() < version)
    {
        conn.run_next_migration(diesel_seqgen::migrations::backend_migrations::<C::B>())
            .unwrap();
    }
}

/// Upgrading a `db_key` in use to scoped counters (migration 500, a new primary key) keeps
/// every counter, setting, shape and voided number: numbering continues where it was, the
/// shape still refuses another spec, the ledger still refuses a second void; scoped keys then
/// work beside the old ones.
fn the_scope_upgrade_keeps_every_counter_and_voided_number<C: TestConnection>(db: TestDb<C>) {
    let fresh = db.scratch("scope_upgrade");
    let mut conn = fresh.connect();
    migrate_before(&mut conn, "00000000000500");
    let kept = batched("kept", 6, 10);
    let dated = Spec::builder("kept_dated")
        .prefix("D")
        .date("%Y")
        .pad(4)
        .gapless()
        .build()
        .unwrap();
    conn.batch_execute(&format!(
        "INSERT INTO db_key (key_name, period, current_value, batch_size, start_value, shape) VALUES \
         ('kept', '', 41, NULL, NULL, '{}'), \
         ('kept_dated', '', 0, 20, 5, '{}'), \
         ('kept_dated', '2025', 7, NULL, NULL, NULL); \
         INSERT INTO db_key_void (key_name, period, number, reason) VALUES ('kept_dated', '2025', 6, 'cancelled')",
        kept.shape(),
        dated.shape()
    ))
    .unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();

    assert_eq!(
        Generator::new().next_id(&mut conn, &kept).unwrap(),
        "N000042"
    );
    let err = Generator::new()
        .next_id(&mut conn, &batched("kept", 7, 10))
        .unwrap_err();
    assert!(matches!(err, Error::ShapeChanged { .. }), "{err:?}");
    let err = diesel_seqgen::ledger::void(&mut conn, &dated, "D20250006", "again").unwrap_err();
    assert!(matches!(err, Error::AlreadyVoided { .. }), "{err:?}");
    assert_eq!(
        diesel_seqgen::ledger::voided(&mut conn, &dated, "2025")
            .unwrap()
            .len(),
        1
    );
    let admin_rows = diesel_seqgen::admin::counters(&mut conn, Some("kept_dated")).unwrap();
    let rows: Vec<_> = admin_rows
        .iter()
        .map(|r| {
            (
                r.scope.as_str(),
                r.period.as_str(),
                r.current_value,
                r.batch_size,
            )
        })
        .collect();
    assert_eq!(rows, [("", "", 0, Some(20)), ("", "2025", 7, None)]);

    let per_scope = Spec::builder("new_scoped")
        .date("")
        .scoped()
        .build()
        .unwrap();
    let generator = Generator::new();
    assert_eq!(
        generator
            .next_number(&mut conn, per_scope.scope("1"))
            .unwrap(),
        1
    );
    assert_eq!(
        generator
            .next_number(&mut conn, per_scope.scope("2"))
            .unwrap(),
        1
    );
}

/// Every migration's `down.sql` undoes its `up.sql`: all of them revert, then run again.
fn the_migrations_revert_and_run_again<C: TestConnection>(db: TestDb<C>) {
    let fresh = db.scratch("revert");
    let mut conn = fresh.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = batched("reverted", 6, 10);
    Generator::new().next_id(&mut conn, &spec).unwrap();
    conn.revert_all_migrations(diesel_seqgen::migrations::backend_migrations::<C::B>())
        .unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    assert_eq!(
        Generator::new().next_id(&mut conn, &spec).unwrap(),
        "N000001"
    );
}

/// An offset clock far past chrono's range stops at its ends instead of panicking.
#[test]
fn a_huge_clock_offset_saturates() {
    for offset in [TimeDelta::MAX, TimeDelta::MIN] {
        let clock = diesel_seqgen::clock::OffsetClock(offset);
        let now = clock.now();
        for zone in ["utc", "local", "+14:00", "-12:00"] {
            let spec = Spec::builder("far")
                .date("%Y%m%d%H")
                .time_zone(diesel_seqgen::TimeZone::parse(zone).unwrap())
                .build()
                .unwrap();
            let _ = spec.format(&spec.period_at(now), 1);
        }
        let fixed = diesel_seqgen::clock::FixedClock::new(chrono::Utc::now());
        fixed.advance(offset);
        fixed.advance(offset);
        let _ = fixed.now();
    }
}

/// Keys a collation could fold onto another (MariaDB pads spaces: `"pk "` is `"pk"`, `" "` is
/// the token row `''`) are refused when the spec is built.
#[test]
fn keys_are_exact() {
    for key in [" ", "pk ", " pk", "pk\n", "p\0k", "\t"] {
        let err = Spec::builder(key).build().unwrap_err();
        assert!(matches!(err, SpecError::KeyNotExact(_)), "{key:?}: {err:?}");
    }
    assert!(Spec::builder("").build().is_err());
    assert!(Spec::builder("p k").build().is_ok());
}
