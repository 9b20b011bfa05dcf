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
type IdColumn = diesel::dsl::Select<seqgen_guess_rows::table, seqgen_guess_rows::id>;

diesel::table! {
    seqgen_guess_rows (id) {
        id -> Text,
        name -> Text,
    }
}

/// The plain shape: every value a bind parameter.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_guess_rows)]
struct Row {
    #[distributed_id(key = "seqgen_guess", prefix = "G", date = "", pad = 7)]
    id: String,
    name: String,
}

/// The same key; a `None` prints `DEFAULT`, which the checking insert does not rewrite.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_guess_rows)]
struct MaybeNamed {
    #[distributed_id(key = "seqgen_guess", prefix = "G", date = "", pad = 7)]
    id: String,
    name: Option<String>,
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
    // Prepared once for the connection: the checking insert is cheaper for the server than
    // Diesel's own, which it parses and plans at every call.
    assert_eq!(
        prepared.load(Relaxed),
        1,
        "the single-row insert is prepared once"
    );
    diesel_seqgen::insert_into(seqgen_guess_rows::table)
        .values(&mut rows(5))
        .execute(&mut conn)
        .unwrap();
    // MySQL tells the database apart with a query for a bulk: cheaper than its checking insert.
    let bulk = if C::NAME == "mysql" { 2 } else { 1 };
    assert_eq!(
        queries.load(Relaxed) - first,
        10 + bulk,
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
    let near = database(&db, "guess_near", false);
    let far = database(&db, "guess_far", true);
    let mut slot = Box::new(near.connect());
    for round in 0..6 {
        *slot = if round % 2 == 0 {
            near.connect()
        } else {
            far.connect()
        };
        for n in [1, 1, 3] {
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
    assert_eq!((near_numbers.len(), far_numbers.len()), (21, 21));
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
    for _ in 0..3 {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut rows(1))
            .execute(&mut conn)
            .unwrap();
    }
    assert_eq!(numbers(&mut conn).len(), 3);
}

backend_tests!(
    cached_ids_cost_no_query,
    a_connection_to_another_database_gets_its_own_numbers,
    a_session_that_lost_its_mark_is_told_apart_again,
);
