//! The default generator on a connection that cannot remember its database (a plain one, or
//! `&mut *pooled`): `insert_into(..).execute` serves cached IDs with one statement, the insert
//! itself checking the guessed database (`src/global/guess.rs`, `src/backend/asserted.rs`),
//! and a wrong guess never serves one database's numbers to another. PostgreSQL and MySQL:
//! on SQLite telling the database apart costs no round trip, and nothing is guessed (the
//! tests of another database's numbers run there too).

use crate::common;

use std::sync::atomic::Ordering::Relaxed;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel::query_dsl::methods::LoadQuery;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::DistributedId;

/// The ID column of every row.
pub(crate) type IdColumn = diesel::dsl::Select<seqgen_guess_rows::table, seqgen_guess_rows::id>;

diesel::table! {
    seqgen_guess_rows (id) {
        id -> Text,
        name -> Text,
    }
}

/// The plain shape: every value a bind parameter.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_guess_rows)]
pub(crate) struct Row {
    #[distributed_id(key = "seqgen_guess", prefix = "G", date = "", pad = 7)]
    pub(crate) id: String,
    pub(crate) name: String,
}

/// The same key; a `None` prints `DEFAULT`, which the checking insert does not rewrite.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_guess_rows)]
pub(crate) struct MaybeNamed {
    #[distributed_id(key = "seqgen_guess", prefix = "G", date = "", pad = 7)]
    pub(crate) id: String,
    pub(crate) name: Option<String>,
}

const FAR: u64 = 1_000_000;

/// A database of its own with the table; with `far`, its counter starts at [`FAR`], so that
/// its numbers and another's can be told apart.
fn database<'a, C: TestConnection>(
    db: &'a TestDb<C>,
    name: &str,
    far: bool,
) -> common::Scratch<'a, C> {
    let table =
        "CREATE TABLE seqgen_guess_rows (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) DEFAULT 'x')";
    common::scratch_with_table(db, name, table, far.then_some(("seqgen_guess", FAR as i64)))
}

fn rows(n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: String::new(),
            name: format!("r{i}"),
        })
        .collect()
}

fn numbers<C: TestConnection>(conn: &mut C) -> Vec<u64>
where
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    let ids: Vec<String> = seqgen_guess_rows::table
        .select(seqgen_guess_rows::id)
        .load(conn)
        .unwrap();
    let mut numbers: Vec<u64> = ids.iter().map(|id| id[1..].parse().unwrap()).collect();
    numbers.sort_unstable();
    numbers
}

/// After its first insert, a plain connection inserts cached IDs with one statement per
/// insert (it was two: a query to tell the database apart, then the insert), single rows and
/// bulks, and so does a pooled connection passed dereferenced.
fn cached_ids_cost_no_query<C: TestConnection>(db: TestDb<C>)
where
    Vec<Row>: Insert<seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    if C::NAME == "sqlite" {
        return; // a local read tells a SQLite database apart: nothing is guessed there
    }
    let scratch = database(&db, "guess_cost", false);
    let mut conn = scratch.connect();
    // Counted from the first insert: its guess (from other tests' connections of this type,
    // running beside this one) may have prepared the checking insert already.
    let (queries, prepared) = common::count_statements(&mut conn, "seqgen_guess_rows");
    diesel_seqgen::insert_into(seqgen_guess_rows::table)
        .values(&mut rows(1))
        .execute(&mut conn)
        .unwrap();
    let first = queries.load(Relaxed);
    for _ in 0..10 {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut rows(1))
            .execute(&mut conn)
            .unwrap();
    }
    // Prepared once each for the connection: the first insert's (after telling the database
    // apart, seqgen's writing of Diesel's insert) and the checking insert of the ten after
    // it. Both are cheaper for the server than Diesel's own, which it parses and plans at
    // every call.
    assert_eq!(
        prepared.load(Relaxed),
        2,
        "each single-row insert is prepared once"
    );
    diesel_seqgen::insert_into(seqgen_guess_rows::table)
        .values(&mut rows(5))
        .execute(&mut conn)
        .unwrap();
    // A bulk checks the guess itself too (but on MySQL: `statements_per_bulk`).
    assert_eq!(
        queries.load(Relaxed) - first,
        10 + common::statements_per_bulk(C::NAME),
        "one statement per insert"
    );

    let pool = scratch.pool(1);
    let mut pooled = pool.get().unwrap();
    let plain: &mut C = &mut pooled;
    diesel_seqgen::insert_into(seqgen_guess_rows::table)
        .values(&mut rows(1))
        .execute(plain)
        .unwrap();
    let queries = common::count_queries(plain);
    for _ in 0..5 {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut rows(1))
            .execute(plain)
            .unwrap();
    }
    assert_eq!(
        queries.load(Relaxed),
        5,
        "one statement per insert, dereferenced"
    );
    drop(pooled);
    let n = numbers(&mut conn);
    assert_eq!(
        n,
        (1..=n.len() as u64).collect::<Vec<_>>(),
        "no hole, no repeat"
    );
}

/// One memory slot holds a connection to one database, then to another, and back, many times
/// (a guess by address is then always wrong once): every row gets its own database's numbers.
/// Without the insert's own check, the second database would be served the first one's cached
/// numbers (below [`FAR`]).
fn a_connection_to_another_database_gets_its_own_numbers<C: TestConnection>(db: TestDb<C>)
where
    Vec<Row>: Insert<seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    each_database_its_own_numbers(&db, "guess", None);
}

/// [`a_connection_to_another_database_gets_its_own_numbers`], each new connection's session
/// set up by `session` first (`crate::guess_values`); databases named from `name`.
pub(crate) fn each_database_its_own_numbers<C: TestConnection>(
    db: &TestDb<C>,
    name: &str,
    session: Option<&str>,
) where
    Vec<Row>: Insert<seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    let near = database(db, &format!("{name}_near"), false);
    let far = database(db, &format!("{name}_far"), true);
    let connect = |scratch: &common::Scratch<'_, C>| {
        let mut conn = scratch.connect();
        if let Some(session) = session {
            conn.batch_execute(session).unwrap();
        }
        conn
    };
    let mut slot = Box::new(connect(&near));
    for round in 0..6 {
        *slot = if round % 2 == 0 {
            connect(&near)
        } else {
            connect(&far)
        };
        // A bulk first, on the last database's guess: it must insert nothing there.
        for n in [3, 1, 3] {
            diesel_seqgen::insert_into(seqgen_guess_rows::table)
                .values(&mut rows(n))
                .execute(&mut *slot)
                .unwrap();
        }
        let mut maybe = vec![
            MaybeNamed {
                id: String::new(),
                name: None,
            },
            MaybeNamed {
                id: String::new(),
                name: Some("n".into()),
            },
        ];
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut maybe)
            .execute(&mut *slot)
            .unwrap();
    }
    let (near_numbers, far_numbers) = (numbers(&mut near.connect()), numbers(&mut far.connect()));
    assert_eq!((near_numbers.len(), far_numbers.len()), (27, 27));
    assert!(near_numbers.iter().all(|&n| n < FAR), "{near_numbers:?}");
    assert!(far_numbers.iter().all(|&n| n >= FAR), "{far_numbers:?}");
}

/// A session whose mark was undone (PostgreSQL: by the rollback of the transaction that set
/// it) fails the check; the insert then tells the database apart again and goes on.
fn a_session_that_lost_its_mark_is_told_apart_again<C: TestConnection>(db: TestDb<C>)
where
    Vec<Row>: Insert<seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    let near = database(&db, "guess_lost", false);
    let mut conn = near.connect();
    let _ = conn.transaction(|conn| {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut rows(1))
            .execute(conn)
            .unwrap();
        Err::<(), _>(diesel::result::Error::RollbackTransaction)
    });
    // Single rows and bulks, each statement kept prepared across the loss.
    for n in [1, 3, 1, 3] {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut rows(n))
            .execute(&mut conn)
            .unwrap();
    }
    assert_eq!(numbers(&mut conn).len(), 8);
}

diesel::table! {
    seqgen_guess_kinds (id) {
        id -> Text,
        small -> Integer,
        big -> BigInt,
        ratio -> Double,
        bytes -> Binary,
        flag -> Bool,
        same -> Text,
        again -> Text,
    }
}

/// A value of every kind (a `None` would print `DEFAULT`, which is not rewritten: see
/// [`MaybeNamed`]). The batch holds every row of the test, so that only inserts are counted.
#[derive(Insertable, Queryable, DistributedId, Debug, Clone, PartialEq)]
#[diesel(table_name = seqgen_guess_kinds)]
struct Kinds {
    #[distributed_id(
        key = "seqgen_guess_kinds",
        prefix = "K",
        date = "",
        pad = 7,
        batch = 1000
    )]
    id: String,
    small: i32,
    big: i64,
    ratio: f64,
    bytes: Vec<u8>,
    flag: bool,
    same: String,
    again: String,
}

/// A bulk that checks the guess itself writes every value as Diesel's own insert would: on
/// MariaDB its rows are a derived table whose columns take the first row's types and names
/// (two columns of equal values would be two columns of one name without seqgen's).
fn a_checked_bulk_keeps_every_value<C: TestConnection>(db: TestDb<C>)
where
    Vec<Kinds>: Insert<seqgen_guess_kinds::table, C>,
    for<'a> seqgen_guess_kinds::table: LoadQuery<'a, C, Kinds>,
{
    if C::NAME == "sqlite" {
        return; // nothing is guessed there
    }
    let (binary, boolean) = match C::NAME {
        "postgres" => ("BYTEA", "BOOLEAN"),
        _ => ("BLOB", "BOOL"),
    };
    let table = format!(
        "CREATE TABLE seqgen_guess_kinds (id VARCHAR(20) PRIMARY KEY, small INT NOT NULL, \
         big BIGINT NOT NULL, ratio DOUBLE PRECISION NOT NULL, bytes {binary} NOT NULL, \
         flag {boolean} NOT NULL, same VARCHAR(20) NOT NULL, again VARCHAR(20) NOT NULL)"
    );
    let scratch = common::scratch_with_table(&db, "guess_kinds", &table, None);
    let mut conn = scratch.connect();
    let kinds = |n: i64| -> Vec<Kinds> {
        (0..n)
            .map(|i| Kinds {
                id: String::new(),
                small: i as i32 - 7,
                big: i64::MAX - i,
                ratio: 0.1 + i as f64,
                bytes: vec![0, 255, i as u8],
                flag: i % 2 == 0,
                same: "1".into(),
                again: "1".into(),
            })
            .collect()
    };
    let mut written = kinds(1); // marks the session
    diesel_seqgen::insert_into(seqgen_guess_kinds::table)
        .values(&mut written)
        .execute(&mut conn)
        .unwrap();
    let queries = common::count_queries(&mut conn);
    for n in [2, 5, 100] {
        let mut bulk = kinds(n);
        diesel_seqgen::insert_into(seqgen_guess_kinds::table)
            .values(&mut bulk)
            .execute(&mut conn)
            .unwrap();
        written.extend(bulk);
    }
    assert_eq!(
        queries.load(Relaxed),
        3 * common::statements_per_bulk(C::NAME),
        "one statement per bulk"
    );
    let mut read: Vec<Kinds> = seqgen_guess_kinds::table.load(&mut conn).unwrap();
    read.sort_by(|a, b| a.id.cmp(&b.id));
    written.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(read, written);
}

backend_tests!(
    cached_ids_cost_no_query,
    a_checked_bulk_keeps_every_value,
    a_connection_to_another_database_gets_its_own_numbers,
    a_session_that_lost_its_mark_is_told_apart_again,
);
