//! PostgreSQL: a gapless `insert_into(..).values(..).execute(conn)` takes its numbers in the
//! insert statement itself (`src/one_statement.rs`). The numbers, the rows and the records
//! agree, the counter is never advanced without the rows, and whatever the rewrite does not
//! cover takes the usual path.
#![cfg(feature = "postgres")]

use crate::common;

use std::sync::{Arc, Mutex};
use std::thread;

use chrono::TimeZone;
use common::TestDb;
use diesel::connection::{InstrumentationEvent, SimpleConnection};
use diesel::prelude::*;
use diesel::result::Error as DieselError;
use diesel_seqgen::clock::FixedClock;
use diesel_seqgen::{DistributedId, Error, Generator};

diesel::table! {
    /// Temporary per connection, except in the test with several workers.
    seqgen_one_rows (number) {
        number -> Text,
        code -> Text,
    }
}

diesel::table! {
    seqgen_one_numeric (number) {
        number -> BigInt,
        note -> Nullable<Text>,
    }
}

/// An invoice numbered by the insert: prefix, year, four digits.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_rows)]
struct Invoice {
    #[distributed_id(
        key = "seqgen_one_invoice",
        prefix = "INV",
        date = "%Y",
        pad = 4,
        gapless
    )]
    number: String,
    code: String,
}

/// The same columns and types as [`Invoice`], but the other column is the gapless one: the
/// same Diesel insert type, another statement.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_rows)]
struct Coded {
    number: String,
    #[distributed_id(key = "seqgen_one_coded", prefix = "C-", date = "", pad = 2, gapless)]
    code: String,
}

/// The `i64` form, and a nullable column that Diesel writes as `DEFAULT` when `None`.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_numeric)]
struct Numbered {
    #[distributed_id(key = "seqgen_one_numbered", date = "%Y", pad = 4, gapless)]
    number: i64,
    note: Option<String>,
}

diesel::table! {
    /// Each column's SQL name is the other one's Rust name.
    seqgen_one_swapped (a) {
        #[sql_name = "kind"]
        a -> Text,
        #[sql_name = "a"]
        kind -> Text,
    }
}

/// Field `kind` goes to SQL column `a`, and a column named `kind` exists: it is `a`'s.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_swapped)]
struct Swapped {
    #[distributed_id(key = "seqgen_one_swapped", prefix = "S", date = "", pad = 3, gapless)]
    kind: String,
    a: String,
}

/// One digit, no widening: nine numbers a period.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_rows)]
struct Small {
    #[distributed_id(key = "seqgen_one_small", prefix = "S", date = "", pad = 1, gapless)]
    number: String,
    code: String,
}

/// One digit, widened past it.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_one_rows)]
struct Wide {
    #[distributed_id(
        key = "seqgen_one_wide",
        prefix = "W",
        date = "",
        pad = 1,
        overflow = "widen",
        gapless
    )]
    number: String,
    code: String,
}

fn invoice(code: &str) -> Invoice {
    Invoice {
        number: String::new(),
        code: code.to_owned(),
    }
}

fn small(code: &str) -> Small {
    Small {
        number: String::new(),
        code: code.to_owned(),
    }
}

/// A connection with its own `seqgen_one_rows` and `seqgen_one_numeric` (temporary tables)
/// and a generator on a clock in 2026; the keys start over.
fn setup(db: &TestDb<PgConnection>, keys: &[&str]) -> (PgConnection, Generator) {
    let mut conn = db.connect();
    conn.batch_execute(
        "CREATE TEMPORARY TABLE seqgen_one_rows (number VARCHAR(32) PRIMARY KEY, \
         code VARCHAR(32) NOT NULL UNIQUE); \
         CREATE TEMPORARY TABLE seqgen_one_numeric (number BIGINT PRIMARY KEY, note TEXT)",
    )
    .unwrap();
    for key in keys {
        diesel::sql_query("DELETE FROM db_key WHERE key_name = $1")
            .bind::<diesel::sql_types::Text, _>(*key)
            .execute(&mut conn)
            .unwrap();
    }
    let clock = FixedClock::new(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 23, 10, 0, 0)
            .unwrap(),
    );
    (conn, Generator::builder().clock(clock).build())
}

/// Records the text of every statement `conn` sends from now on.
fn record_statements(conn: &mut PgConnection) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
        if let InstrumentationEvent::StartQuery { query, .. } = event {
            sink.lock().unwrap().push(query.to_string());
        }
    });
    seen
}

fn rows(conn: &mut PgConnection) -> Vec<(String, String)> {
    seqgen_one_rows::table
        .select((seqgen_one_rows::number, seqgen_one_rows::code))
        .order(seqgen_one_rows::code)
        .load(conn)
        .unwrap()
}

static SERIAL: Mutex<()> = Mutex::new(());

/// `backend_tests!` for PostgreSQL alone, one test at a time: the tests share keys (a derive's
/// key is fixed) and start them over.
macro_rules! backend_tests_postgres {
    ($($test:ident),* $(,)?) => {
        mod postgres {
            use diesel::PgConnection;
            $(#[test]
            fn $test() {
                let _serial = super::SERIAL.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(db) = $crate::common::TestDb::<PgConnection>::open(stringify!($test)) {
                    super::$test(db);
                }
            })*
        }
    };
}

backend_tests_postgres!(
    one_row_and_a_bulk_are_each_one_statement,
    the_i64_form_and_a_default_column,
    a_widened_number_prints_in_full,
    a_full_period_refuses_and_writes_nothing,
    a_failed_insert_aborts_the_transaction_and_its_number_comes_back,
    two_models_of_one_insert_type_number_their_own_column,
    eight_workers_with_rollbacks_commit_one_to_n,
    a_column_found_by_name_at_another_fields_place_is_not_taken,
    one_row_is_prepared_once_per_connection,
    alone_it_is_one_statement_and_its_own_transaction,
);

/// Outside any transaction of the caller's, the insert is its own transaction: one statement
/// in autocommit (no `BEGIN`, no `COMMIT`), which commits the number and the row together or
/// neither (the fast form in `BENCHMARKS.md`).
fn alone_it_is_one_statement_and_its_own_transaction(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_invoice"]);
    let insert = |conn: &mut PgConnection, record: &mut Invoice| {
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(record)
            .with_generator(&generator)
            .execute(conn)
    };
    // The key's first insert learns its shape, in a transaction seqgen opens.
    let mut first = invoice("a");
    insert(&mut conn, &mut first).unwrap();
    assert_eq!(first.number, "INV20260001");

    let sent = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&sent);
    conn.set_instrumentation(move |event: InstrumentationEvent<'_>| match event {
        InstrumentationEvent::StartQuery { query, .. } => {
            sink.lock().unwrap().push(query.to_string())
        }
        InstrumentationEvent::BeginTransaction { .. } => sink.lock().unwrap().push("BEGIN".into()),
        _ => {}
    });
    let mut second = invoice("b");
    insert(&mut conn, &mut second).unwrap();
    assert_eq!(second.number, "INV20260002");
    let statements = sent.lock().unwrap().clone();
    assert!(
        statements.len() == 1 && statements[0].contains("WITH seqgen_n AS"),
        "{statements:#?}"
    );
    // A failed insert alone (its code is taken) commits nothing: its number goes to the next.
    let mut taken = invoice("b");
    assert!(insert(&mut conn, &mut taken).is_err());
    assert_eq!(taken.number, "");
    let mut third = invoice("c");
    insert(&mut conn, &mut third).unwrap();
    assert_eq!(third.number, "INV20260003");
    let expected: Vec<(String, String)> = ["a", "b", "c"]
        .iter()
        .enumerate()
        .map(|(i, code)| (format!("INV2026{:04}", i + 1), (*code).to_owned()))
        .collect();
    assert_eq!(rows(&mut conn), expected);
}

/// The single-row statement is prepared once for the connection (Diesel parses and plans its
/// own derived insert at every call), whether the records are one struct or a `Vec` of one; a
/// bulk is not prepared.
fn one_row_is_prepared_once_per_connection(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_invoice"]);
    conn.transaction(|conn| {
        let mut first = invoice("a");
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut first)
            .with_generator(&generator)
            .execute(conn)?;
        let prepared = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&prepared);
        conn.set_instrumentation(move |event: InstrumentationEvent<'_>| {
            if let InstrumentationEvent::CacheQuery { sql, .. } = event {
                sink.lock().unwrap().push(sql.to_owned());
            }
        });
        for code in ["b", "c", "d"] {
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(&mut invoice(code))
                .with_generator(&generator)
                .execute(conn)?;
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(&mut vec![invoice(&code.to_uppercase())])
                .with_generator(&generator)
                .execute(conn)?;
        }
        let mut bulk: Vec<Invoice> = ["x", "y"].map(invoice).into();
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut bulk)
            .with_generator(&generator)
            .execute(conn)?;
        let prepared = prepared.lock().unwrap().clone();
        assert_eq!(prepared.len(), 1, "{prepared:#?}");
        assert!(prepared[0].contains("WITH seqgen_n AS"), "{prepared:#?}");
        Ok::<_, Error>(())
    })
    .unwrap();
    assert_eq!(rows(&mut conn).len(), 9);
}

/// After the key's first insert (the usual path, which records the key's shape), one row and
/// a bulk of three each take one statement; the records hold what the table holds.
fn one_row_and_a_bulk_are_each_one_statement(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_invoice"]);
    conn.transaction(|conn| {
        let mut first = invoice("a");
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut first)
            .with_generator(&generator)
            .execute(conn)?;
        assert_eq!(first.number, "INV20260001");

        let statements = record_statements(conn);
        let mut one = invoice("b");
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut one)
            .with_generator(&generator)
            .execute(conn)?;
        let mut bulk: Vec<Invoice> = ["c", "d", "e"].map(invoice).into();
        let inserted = diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut bulk)
            .with_generator(&generator)
            .execute(conn)?;
        assert_eq!(inserted, 3);
        let sent = statements.lock().unwrap().clone();
        assert_eq!(sent.len(), 2, "{sent:#?}");
        assert!(
            sent.iter().all(|s| s.contains("WITH seqgen_n AS")),
            "{sent:#?}"
        );

        // Counted as any reservation: one per statement.
        assert_eq!(generator.reservations(), 3);
        let stats = generator.stats();
        assert_eq!(stats.len(), 1);
        assert_eq!((stats[0].reservations, stats[0].numbers_reserved), (3, 5));
        assert_eq!(one.number, "INV20260002");
        let numbers: Vec<_> = bulk.iter().map(|r| r.number.as_str()).collect();
        assert_eq!(numbers, ["INV20260003", "INV20260004", "INV20260005"]);
        Ok::<_, Error>(())
    })
    .unwrap();
    let expected: Vec<(String, String)> = ["a", "b", "c", "d", "e"]
        .iter()
        .enumerate()
        .map(|(i, code)| (format!("INV2026{:04}", i + 1), (*code).to_owned()))
        .collect();
    assert_eq!(rows(&mut conn), expected);
}

/// An `i64` ID is computed as the number the spec's `i64` form gives; a record with a `None`
/// (Diesel writes `DEFAULT`) takes the usual path, and numbering goes on without a gap.
fn the_i64_form_and_a_default_column(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_numbered"]);
    let mut records: Vec<Numbered> = (0..4)
        .map(|i| Numbered {
            number: 0,
            note: (i != 2).then(|| format!("n{i}")),
        })
        .collect();
    conn.transaction(|conn| {
        let statements = record_statements(conn);
        for record in &mut records {
            diesel_seqgen::insert_into(seqgen_one_numeric::table)
                .values(record)
                .with_generator(&generator)
                .execute(conn)?;
        }
        let sent = statements.lock().unwrap().clone();
        let one_statement = sent.iter().filter(|s| s.contains("WITH seqgen_n AS"));
        // The first (the shape is recorded) and the one with DEFAULT take the usual path.
        assert_eq!(one_statement.count(), 2, "{sent:#?}");
        Ok::<_, Error>(())
    })
    .unwrap();
    let numbers: Vec<i64> = records.iter().map(|r| r.number).collect();
    assert_eq!(numbers, [20260001, 20260002, 20260003, 20260004]);
    let stored: Vec<(i64, Option<String>)> = seqgen_one_numeric::table
        .select((seqgen_one_numeric::number, seqgen_one_numeric::note))
        .order(seqgen_one_numeric::number)
        .load(&mut conn)
        .unwrap();
    let expected: Vec<_> = records.iter().map(|r| (r.number, r.note.clone())).collect();
    assert_eq!(stored, expected);
}

/// Past its pad, a widened counter prints in full (`lpad` would cut it to the pad).
fn a_widened_number_prints_in_full(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_wide"]);
    let mut records: Vec<Wide> = (0..12)
        .map(|i| Wide {
            number: String::new(),
            code: format!("w{i:02}"),
        })
        .collect();
    conn.transaction(|conn| {
        for record in &mut records {
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(record)
                .with_generator(&generator)
                .execute(conn)?;
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    let expected: Vec<(String, String)> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            assert_eq!(r.number, format!("W{}", i + 1));
            (r.number.clone(), r.code.clone())
        })
        .collect();
    assert_eq!(rows(&mut conn), expected);
}

/// The tenth number of a one-digit spec does not exist: the statement advances nothing and
/// inserts nothing, nor does the usual path after it, the caller gets `Error::Overflow`, and
/// its transaction goes on.
fn a_full_period_refuses_and_writes_nothing(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_small"]);
    conn.transaction(|conn| {
        for i in 1..=9 {
            let mut record = small(&format!("s{i}"));
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(&mut record)
                .with_generator(&generator)
                .execute(conn)?;
            assert_eq!(record.number, format!("S{i}"));
        }
        let statements = record_statements(conn);
        let mut tenth = small("s10");
        let refused = diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(&mut tenth)
            .with_generator(&generator)
            .execute(conn);
        assert!(
            matches!(refused, Err(Error::Overflow { .. })),
            "{refused:?}"
        );
        assert_eq!(tenth.number, "");
        // The one statement first; then the usual path, whose reservation is refused too
        // (after checking the session's timeline: it cannot tell a full period from an
        // unchecked session).
        let sent = statements.lock().unwrap().clone();
        assert!(sent[0].contains("WITH seqgen_n AS"), "{sent:#?}");
        assert!(
            sent[1..].iter().all(|s| !s.contains("seqgen_one_rows")),
            "{sent:#?}"
        );
        // The transaction is usable: nothing failed on the server.
        assert_eq!(rows(conn).len(), 9);
        Ok::<_, Error>(())
    })
    .unwrap();
    assert_eq!(rows(&mut conn).len(), 9);
}

/// A unique violation in the one statement aborts the caller's transaction, as any failed
/// statement on PostgreSQL does (wrap the insert in a nested transaction to go on): the
/// record keeps no number, and after the rollback the next insert gets the same number.
fn a_failed_insert_aborts_the_transaction_and_its_number_comes_back(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_invoice"]);
    let insert = |conn: &mut PgConnection, record: &mut Invoice| {
        diesel_seqgen::insert_into(seqgen_one_rows::table)
            .values(record)
            .with_generator(&generator)
            .execute(conn)
    };
    conn.transaction(|conn| insert(conn, &mut invoice("taken")))
        .unwrap();
    let failed = conn.transaction(|conn| {
        let mut again = invoice("taken");
        let result = insert(conn, &mut again);
        assert!(result.is_err(), "the unique code must fail");
        assert_eq!(again.number, "", "the failed record keeps no number");
        // Nothing more can run in this transaction.
        assert!(insert(conn, &mut invoice("other")).is_err());
        result
    });
    assert!(failed.is_err());
    // Going on after a failure: a nested transaction (a savepoint) of the caller's.
    conn.transaction(|conn| {
        let nested = conn.transaction(|conn| insert(conn, &mut invoice("taken")));
        assert!(nested.is_err());
        insert(conn, &mut invoice("next"))
    })
    .unwrap();
    assert_eq!(
        rows(&mut conn),
        [("INV20260002", "next"), ("INV20260001", "taken")]
            .map(|(n, c)| (n.to_owned(), c.to_owned()))
    );
}

/// `Invoice` and `Coded` make the same Diesel insert type and differ in their ID column: the
/// statement finds the column by name in what Diesel wrote, and is prepared and cached by its
/// text (the insert's type does not tell the column), so each model numbers its own column and
/// keeps the value given for the other.
fn two_models_of_one_insert_type_number_their_own_column(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_invoice", "seqgen_one_coded"]);
    conn.transaction(|conn| {
        for i in 1..=3 {
            let mut a = invoice(&format!("given{i}"));
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(&mut a)
                .with_generator(&generator)
                .execute(conn)?;
            let mut b = Coded {
                number: format!("GIVEN{i}"),
                code: String::new(),
            };
            diesel_seqgen::insert_into(seqgen_one_rows::table)
                .values(&mut b)
                .with_generator(&generator)
                .execute(conn)?;
            assert_eq!(a.number, format!("INV2026000{i}"));
            assert_eq!(b.code, format!("C-0{i}"));
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    let stored = rows(&mut conn);
    let expected: Vec<(String, String)> = (1..=3)
        .map(|i| (format!("GIVEN{i}"), format!("C-0{i}")))
        .chain((1..=3).map(|i| (format!("INV2026000{i}"), format!("given{i}"))))
        .collect();
    assert_eq!(stored, expected);
}

/// Eight workers, one transaction in ten rolled back: the committed rows hold exactly
/// 1..=N, each record the number its row holds.
fn eight_workers_with_rollbacks_commit_one_to_n(db: TestDb<PgConnection>) {
    let (mut conn, _) = setup(&db, &["seqgen_one_workers"]);
    // A table of its own, shared by the workers' connections (and by no other test).
    diesel::table! {
        seqgen_one_workers (number) {
            number -> Text,
            code -> Text,
        }
    }
    #[derive(Insertable, DistributedId)]
    #[diesel(table_name = seqgen_one_workers)]
    struct Row {
        #[distributed_id(key = "seqgen_one_workers", prefix = "R", date = "", pad = 6, gapless)]
        number: String,
        code: String,
    }
    conn.batch_execute(
        "DROP TABLE IF EXISTS seqgen_one_workers; \
         CREATE TABLE seqgen_one_workers (number VARCHAR(32) PRIMARY KEY, code VARCHAR(32) NOT NULL)",
    )
    .unwrap();
    let pool = db.pool(8);
    let generator = Generator::new();
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let (pool, generator) = (pool.clone(), generator.clone());
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                let mut kept = Vec::new();
                for i in 0..25 {
                    let mut row = Row {
                        number: String::new(),
                        code: format!("t{t}i{i}"),
                    };
                    let result = conn.transaction(|conn| {
                        diesel_seqgen::insert_into(seqgen_one_workers::table)
                            .values(&mut row)
                            .with_generator(&generator)
                            .execute(conn)?;
                        if (t * 25 + i) % 10 == 0 {
                            return Err(Error::Database(DieselError::RollbackTransaction));
                        }
                        Ok(())
                    });
                    match result {
                        Ok(()) => kept.push((row.number, row.code)),
                        Err(Error::Database(DieselError::RollbackTransaction)) => {}
                        Err(e) => panic!("worker {t}: {e}"),
                    }
                }
                kept
            })
        })
        .collect();
    let mut kept: Vec<(String, String)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    kept.sort();
    let mut stored: Vec<(String, String)> = seqgen_one_workers::table
        .select((seqgen_one_workers::number, seqgen_one_workers::code))
        .order(seqgen_one_workers::number)
        .load(&mut conn)
        .unwrap();
    conn.batch_execute("DROP TABLE seqgen_one_workers").unwrap();
    let expected: Vec<String> = (1..=180).map(|n| format!("R{n:06}")).collect();
    stored.sort();
    assert_eq!(
        stored.iter().map(|r| r.0.clone()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(stored, kept, "each record holds the number its row holds");
}

/// The statement finds the ID column by its name in what Diesel wrote; with `#[sql_name]`
/// that name can be another field's column. It must stand where the ID field stands among
/// the struct's fields, or the usual path inserts the record (here: field `kind`, the ID,
/// goes to SQL column `a`, and SQL column `kind` is field `a`'s).
fn a_column_found_by_name_at_another_fields_place_is_not_taken(db: TestDb<PgConnection>) {
    let (mut conn, generator) = setup(&db, &["seqgen_one_swapped"]);
    conn.batch_execute(
        "CREATE TEMPORARY TABLE seqgen_one_swapped (a VARCHAR(32) PRIMARY KEY, kind VARCHAR(32))",
    )
    .unwrap();
    conn.transaction(|conn| {
        for i in 1..=3 {
            let statements = record_statements(conn);
            let mut record = Swapped {
                kind: String::new(),
                a: format!("given{i}"),
            };
            diesel_seqgen::insert_into(seqgen_one_swapped::table)
                .values(&mut record)
                .with_generator(&generator)
                .execute(conn)?;
            assert_eq!(record.kind, format!("S00{i}"));
            let sent = statements.lock().unwrap().clone();
            assert!(
                !sent.iter().any(|s| s.contains("WITH seqgen_n AS")),
                "{sent:#?}"
            );
        }
        Ok::<_, Error>(())
    })
    .unwrap();
    let stored: Vec<(String, String)> = seqgen_one_swapped::table
        .select((seqgen_one_swapped::kind, seqgen_one_swapped::a))
        .order(seqgen_one_swapped::kind)
        .load(&mut conn)
        .unwrap();
    let expected: Vec<(String, String)> = (1..=3)
        .map(|i| (format!("S00{i}"), format!("given{i}")))
        .collect();
    assert_eq!(stored, expected);
}
