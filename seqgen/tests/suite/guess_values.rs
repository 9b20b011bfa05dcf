//! The insert that checks a guessed database itself (`src/backend/asserted.rs`), on what its
//! check wraps and on the server's settings: on MySQL and MariaDB the check wraps the first
//! row's first value, which is any column of the user's, not only the ID; and a wrong guess
//! must fail the statement in every `sql_mode`, where a lenient mode turns many errors into
//! warnings (a `NULL` into a `NOT NULL` column of a bulk becomes `''`). PostgreSQL runs the
//! first too; SQLite guesses nothing.

use crate::common;
use crate::guess::{each_database_its_own_numbers, IdColumn, MaybeNamed, Row};

use std::sync::atomic::Ordering::Relaxed;

use common::{TestConnection, TestDb};
use diesel::prelude::*;
use diesel::query_dsl::methods::LoadQuery;
use diesel_seqgen::insert::Insert;
use diesel_seqgen::DistributedId;

/// A wrong guess inserts nothing, with the server's defaults (`guess.rs`) and in MySQL's
/// lenient modes, where the check must still fail the statement rather than warn.
fn a_wrong_guess_inserts_nothing_in_any_sql_mode<C: TestConnection>(db: TestDb<C>)
where
    Vec<Row>: Insert<crate::guess::seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<crate::guess::seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    if C::NAME != "mysql" {
        return; // sql_mode is MySQL's; the defaults' case runs on every backend in guess.rs
    }
    for (i, mode) in ["", "ANSI", "TRADITIONAL"].iter().enumerate() {
        let session = format!("SET SESSION sql_mode = '{mode}'");
        each_database_its_own_numbers(&db, &format!("guess_mode{i}"), Some(&session));
    }
}

/// A table whose first column, the one MySQL's check wraps, is `$column`, with the ID (key
/// `$key`) after it.
macro_rules! first_column {
    ($table:ident, $key:tt, $row:ident, $column:ident: $rust:ty => $diesel:ident) => {
        diesel::table! {
            $table (id) {
                $column -> $diesel,
                id -> Text,
            }
        }

        #[derive(Insertable, Queryable, DistributedId, Debug, Clone, PartialEq)]
        #[diesel(table_name = $table)]
        struct $row {
            $column: $rust,
            #[distributed_id(key = $key, prefix = "V", date = "", pad = 7, batch = 1000)]
            id: String,
        }

        impl Keyed for $row {
            fn id(&self) -> &str {
                &self.id
            }
        }
    };
}

/// A row's ID, to sort rows by.
trait Keyed {
    fn id(&self) -> &str;
}

first_column!(seqgen_first_ratio, "seqgen_first_ratio", RatioFirst, ratio: f64 => Double);
first_column!(seqgen_first_big, "seqgen_first_big", BigFirst, big: i64 => BigInt);
first_column!(seqgen_first_word, "seqgen_first_word", WordFirst, word: String => Text);

/// Inserts a bulk of two rows per value on a plain connection, each value the first row's
/// first value, after one insert that marks the session; checks that each bulk was one
/// statement (the check ran, not the query that replaces it) and that every value reads back
/// as written. (A macro: the bounds of a generic function over the three row types would
/// be Diesel's whole insert machinery.)
macro_rules! round_trip {
    ($conn:expr, $table:path, $values:expr) => {{
        let conn = $conn;
        let values = $values;
        let mut written = vec![values[0].clone()];
        diesel_seqgen::insert_into($table)
            .values(&mut written)
            .execute(conn)
            .unwrap();
        let queries = common::count_queries(conn);
        for value in &values {
            let mut bulk = vec![value.clone(), values[0].clone()];
            diesel_seqgen::insert_into($table)
                .values(&mut bulk)
                .execute(conn)
                .unwrap();
            written.extend(bulk);
        }
        assert_eq!(
            queries.load(Relaxed),
            values.len() * common::statements_per_bulk(C::NAME),
            "one statement per bulk"
        );
        let mut read: Vec<_> = $table.load(conn).unwrap();
        read.sort_by(|a: &_, b: &_| Keyed::id(a).cmp(Keyed::id(b)));
        written.sort_by(|a, b| a.id().cmp(b.id()));
        assert_eq!(read, written);
    }};
}

/// The checked first value is written as Diesel writes it, whatever its column: a double at
/// the ends of its range and one that needs all 17 digits, a `BIGINT` at both ends, text with
/// quotes, a backslash and characters of four bytes.
fn the_checked_first_value_keeps_its_type<C: TestConnection>(db: TestDb<C>)
where
    Vec<RatioFirst>: Insert<seqgen_first_ratio::table, C>,
    Vec<BigFirst>: Insert<seqgen_first_big::table, C>,
    Vec<WordFirst>: Insert<seqgen_first_word::table, C>,
    for<'a> seqgen_first_ratio::table: LoadQuery<'a, C, RatioFirst>,
    for<'a> seqgen_first_big::table: LoadQuery<'a, C, BigFirst>,
    for<'a> seqgen_first_word::table: LoadQuery<'a, C, WordFirst>,
{
    if C::NAME == "sqlite" {
        return; // nothing is guessed there
    }
    let tables = "CREATE TABLE seqgen_first_ratio (ratio DOUBLE PRECISION NOT NULL, \
                  id VARCHAR(20) PRIMARY KEY); \
                  CREATE TABLE seqgen_first_big (big BIGINT NOT NULL, id VARCHAR(20) PRIMARY KEY); \
                  CREATE TABLE seqgen_first_word (word VARCHAR(40) NOT NULL, \
                  id VARCHAR(20) PRIMARY KEY)";
    let scratch = common::scratch_with_table(&db, "guess_first", tables, None);
    let mut conn = scratch.connect();
    let ratio = |ratio| RatioFirst {
        ratio,
        id: String::new(),
    };
    round_trip!(
        &mut conn,
        seqgen_first_ratio::table,
        [f64::MAX, f64::MIN, 1e-300, 0.1 + 0.2, -1.5].map(ratio)
    );
    let big = |big| BigFirst {
        big,
        id: String::new(),
    };
    round_trip!(
        &mut conn,
        seqgen_first_big::table,
        [i64::MIN, i64::MAX, -1].map(big)
    );
    let word = |word: &str| WordFirst {
        word: word.to_owned(),
        id: String::new(),
    };
    round_trip!(
        &mut conn,
        seqgen_first_word::table,
        ["ü€😀", "it's \\ \"", "", "12345678901234567890"].map(word)
    );
}

diesel::table! {
    seqgen_kept_bulks (id) {
        id -> Text,
        n -> BigInt,
    }
}

/// A row type of this test's alone: which bulk sizes are kept prepared is decided per table
/// and row type, process-wide.
#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_kept_bulks)]
struct Kept {
    #[distributed_id(
        key = "seqgen_kept_bulks",
        prefix = "B",
        date = "",
        pad = 7,
        batch = 1000
    )]
    id: String,
    n: i64,
}

/// A checked bulk of one of the first four sizes of its table and row type is prepared once
/// per connection (one round trip per bulk, where Diesel's bulk takes two); any other size is
/// prepared at every call, as Diesel's, so that a connection keeps a bounded number of
/// statements on the server (MySQL refuses more than `max_prepared_stmt_count`).
fn a_steady_bulk_is_prepared_once_per_connection<C: TestConnection>(db: TestDb<C>)
where
    Vec<Kept>: Insert<seqgen_kept_bulks::table, C>,
    for<'a> diesel::dsl::Select<seqgen_kept_bulks::table, seqgen_kept_bulks::id>:
        LoadQuery<'a, C, String>,
{
    if C::NAME == "sqlite" {
        return; // nothing is guessed there
    }
    let table = "CREATE TABLE seqgen_kept_bulks (id VARCHAR(20) PRIMARY KEY, n BIGINT NOT NULL)";
    let scratch = common::scratch_with_table(&db, "guess_kept", table, None);
    let rows = |count: i64| -> Vec<Kept> {
        (0..count)
            .map(|n| Kept {
                id: String::new(),
                n,
            })
            .collect()
    };
    let mut total = 0;
    for _connection in 0..2 {
        let mut conn = scratch.connect();
        let mut insert = |conn: &mut C, count: i64| {
            let inserted = diesel_seqgen::insert_into(seqgen_kept_bulks::table)
                .values(&mut rows(count))
                .execute(conn)
                .unwrap();
            assert_eq!(inserted as i64, count);
            total += count;
        };
        insert(&mut conn, 1); // marks the session
        let (sent, prepared) = common::count_statements(&mut conn, "seqgen_kept_bulks");
        for _ in 0..3 {
            for count in [2, 3, 4, 5, 6, 7] {
                insert(&mut conn, count);
            }
        }
        let per_bulk = common::statements_per_bulk(C::NAME);
        assert_eq!(sent.load(Relaxed), 18 * per_bulk, "one statement per bulk");
        assert_eq!(
            prepared.load(Relaxed),
            4,
            "the first four sizes prepared once each on each connection, the others never kept"
        );
    }
    let mut conn = scratch.connect();
    let ids: Vec<String> = seqgen_kept_bulks::table
        .select(seqgen_kept_bulks::id)
        .load(&mut conn)
        .unwrap();
    common::assert_distinct(&ids);
    assert_eq!(ids.len() as i64, total);
}

/// On a connection that remembers its database (`&mut pooled`) the insert needs no check,
/// and seqgen writes Diesel's insert from the rows' values: kept prepared like the checked one
/// (one row, and the first bulk sizes), where Diesel's own is parsed at every call. Rows with
/// a `None`, which Diesel writes as `DEFAULT`, take Diesel's own insert.
fn a_remembering_connections_insert_is_prepared_once<C: TestConnection>(db: TestDb<C>)
where
    Vec<Row>: Insert<crate::guess::seqgen_guess_rows::table, C>,
    Vec<MaybeNamed>: Insert<crate::guess::seqgen_guess_rows::table, C>,
    for<'a> IdColumn: LoadQuery<'a, C, String>,
{
    use crate::guess::seqgen_guess_rows;
    let table =
        "CREATE TABLE seqgen_guess_rows (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20) DEFAULT 'x')";
    let scratch = common::scratch_with_table(&db, "guess_pooled", table, None);
    let pool = scratch.pool(1);
    let mut pooled = pool.get().unwrap();
    let row = |n: usize| -> Vec<Row> {
        (0..n)
            .map(|i| Row {
                id: String::new(),
                name: format!("p{i}"),
            })
            .collect()
    };
    let insert = |pooled: &mut _, n: usize| {
        diesel_seqgen::insert_into(seqgen_guess_rows::table)
            .values(&mut row(n))
            .execute(pooled)
            .unwrap()
    };
    insert(&mut pooled, 1); // tells the database apart
    let (sent, prepared) = common::count_statements(&mut *pooled, "seqgen_guess_rows");
    for n in [1, 1, 3, 3, 1] {
        assert_eq!(insert(&mut pooled, n), n);
    }
    if C::NAME != "sqlite" {
        // (SQLite reads its database's identity at every call: a local read, and Diesel's own
        // insert, planned in microseconds.)
        let bulks = 2 * common::statements_per_bulk(C::NAME);
        assert_eq!(sent.load(Relaxed), 3 + bulks, "one statement per insert");
        assert_eq!(
            prepared.load(Relaxed),
            2,
            "one row and the bulk of 3, once each"
        );
    }
    let mut maybe = vec![MaybeNamed {
        id: String::new(),
        name: None,
    }];
    diesel_seqgen::insert_into(seqgen_guess_rows::table)
        .values(&mut maybe)
        .execute(&mut pooled)
        .unwrap();
    let ids: Vec<String> = seqgen_guess_rows::table
        .select(seqgen_guess_rows::id)
        .load(&mut *pooled)
        .unwrap();
    assert_eq!(ids.len(), 11);
    common::assert_distinct(&ids);
}

backend_tests!(
    a_wrong_guess_inserts_nothing_in_any_sql_mode,
    the_checked_first_value_keeps_its_type,
    a_steady_bulk_is_prepared_once_per_connection,
    a_remembering_connections_insert_is_prepared_once,
);
