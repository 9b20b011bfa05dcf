//! `guess.rs` on diesel-async: the default generator's `insert_into(..).execute` on a
//! plain async connection and on deadpool's and bb8's connections serves cached IDs with one
//! statement per insert, and a connection to another database in the same memory is never
//! served the first one's numbers.
#![cfg(any(feature = "async-postgres", feature = "async-mysql"))]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;

use common::{TestConnection, TestDb};
use diesel::connection::{Instrumentation, InstrumentationEvent};
use diesel::prelude::*;
use diesel::query_dsl::methods::LoadQuery;
use diesel_async::AsyncConnection;
use diesel_seqgen::nonblocking as sq;
use diesel_seqgen::DistributedId;

diesel::table! {
    seqgen_async_guess (id) {
        id -> Text,
        name -> Text,
    }
}

#[derive(Insertable, DistributedId, Debug)]
#[diesel(table_name = seqgen_async_guess)]
struct Row {
    #[distributed_id(key = "seqgen_async_guess", prefix = "G", date = "", pad = 7)]
    id: String,
    name: String,
}

const FAR: u64 = 1_000_000;

fn rows(n: usize) -> Vec<Row> {
    (0..n)
        .map(|i| Row {
            id: String::new(),
            name: format!("r{i}"),
        })
        .collect()
}

/// A database of its own with the table; with `far`, its counter starts at [`FAR`], so that
/// its numbers and another's can be told apart.
fn database<'a, C: TestConnection>(
    db: &'a TestDb<C>,
    name: &str,
    far: bool,
) -> common::Scratch<'a, C> {
    let table = "CREATE TABLE seqgen_async_guess (id VARCHAR(20) PRIMARY KEY, name VARCHAR(20))";
    common::scratch_with_table(
        db,
        name,
        table,
        far.then_some(("seqgen_async_guess", FAR as i64)),
    )
}

/// The numbers in the table, sorted.
fn numbers<C: TestConnection>(scratch: &common::Scratch<'_, C>) -> Vec<u64>
where
    for<'a> diesel::query_builder::SqlQuery: LoadQuery<'a, C, IdRow>,
{
    let mut conn = scratch.connect();
    let ids: Vec<String> = diesel::sql_query("SELECT id AS id, '' AS name FROM seqgen_async_guess")
        .load::<IdRow>(&mut conn)
        .map(|rows| rows.into_iter().map(|r| r.id).collect())
        .unwrap_or_else(|e| panic!("{e}"));
    let mut numbers: Vec<u64> = ids.iter().map(|id| id[1..].parse().unwrap()).collect();
    numbers.sort_unstable();
    numbers
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
}

/// Counts the statements an async connection sends from now on.
fn count_queries(conn: &mut impl AsyncConnection) -> Arc<AtomicUsize> {
    let count = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&count);
    let counter: Box<dyn Instrumentation> = Box::new(move |event: InstrumentationEvent<'_>| {
        if let InstrumentationEvent::StartQuery { .. } = event {
            seen.fetch_add(1, Relaxed);
        }
    });
    conn.set_instrumentation(counter);
    count
}

/// Two single-row inserts on a connection checked out of `$pool` (each pool's connection type
/// passed as it comes): one statement each after the first round.
macro_rules! two_inserts {
    ($pool:expr, $name:literal, $round:expr) => {{
        let mut pooled = $pool.get().await.unwrap();
        let queries = count_queries(&mut *pooled);
        for _ in 0..2 {
            sq::insert_into(seqgen_async_guess::table)
                .values(&mut rows(1))
                .execute(&mut pooled)
                .await
                .unwrap();
        }
        if $round > 0 {
            assert_eq!(queries.load(Relaxed), 2, "{}, round {}", $name, $round);
        }
    }};
}

macro_rules! async_guess_tests {
    ($feature:literal, $name:ident, $sync:ty, $async:ty) => {
        #[cfg(feature = $feature)]
        mod $name {
            use super::*;

            fn runtime() -> tokio::runtime::Runtime {
                tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .unwrap()
            }

            /// One statement per cached insert on a plain connection, and on deadpool's and
            /// bb8's connections passed as they come (`&mut conn`), checked out again in turn.
            #[test]
            #[cfg(all(feature = "deadpool", feature = "bb8"))]
            fn cached_ids_cost_no_query() {
                let Some(db) = TestDb::<$sync>::open("async_guess_cost") else {
                    return;
                };
                let scratch = database(&db, "aguess_cost", false);
                runtime().block_on(async {
                    use diesel_async::pooled_connection::{
                        bb8, deadpool, AsyncDieselConnectionManager,
                    };
                    let mut conn = <$async>::establish(&scratch.url).await.unwrap();
                    let table = seqgen_async_guess::table;
                    sq::insert_into(table)
                        .values(&mut rows(1))
                        .execute(&mut conn)
                        .await
                        .unwrap();
                    let queries = count_queries(&mut conn);
                    for n in [1, 1, 1, 5] {
                        sq::insert_into(table)
                            .values(&mut rows(n))
                            .execute(&mut conn)
                            .await
                            .unwrap();
                    }
                    // A bulk checks the guess itself too (see guess.rs).
                    let bulk = crate::common::statements_per_bulk(stringify!($name));
                    assert_eq!(queries.load(Relaxed), 3 + bulk, "one statement per insert");

                    let manager =
                        || AsyncDieselConnectionManager::<$async>::new(scratch.url.clone());
                    let deadpool = deadpool::Pool::builder(manager())
                        .max_size(2)
                        .build()
                        .unwrap();
                    let bb8 = bb8::Pool::builder()
                        .max_size(2)
                        .build(manager())
                        .await
                        .unwrap();
                    for round in 0..3 {
                        two_inserts!(deadpool, "deadpool", round);
                        two_inserts!(bb8, "bb8", round);
                    }
                });
                let n = numbers(&scratch);
                assert_eq!(n.len(), 21);
                common::assert_distinct(&n);
            }

            /// One memory slot, a connection to one database and then to another, in turn:
            /// each gets its own database's numbers.
            #[test]
            fn a_connection_to_another_database_gets_its_own_numbers() {
                each_its_own_numbers("aguess", None);
            }

            /// The same with MySQL's lenient `sql_mode` on every session, where many errors
            /// become warnings: the check must still fail the statement.
            #[test]
            fn a_wrong_guess_inserts_nothing_in_a_lenient_sql_mode() {
                if stringify!($name) == "mysql" {
                    each_its_own_numbers("aguess_mode", Some("SET SESSION sql_mode = ''"));
                }
            }

            /// See the tests above: databases named from `name`, each session set up by
            /// `session` first.
            fn each_its_own_numbers(name: &str, session: Option<&str>) {
                use diesel_async::SimpleAsyncConnection;
                let Some(db) = TestDb::<$sync>::open("async_guess_other") else {
                    return;
                };
                let near = database(&db, &format!("{name}_near"), false);
                let far = database(&db, &format!("{name}_far"), true);
                runtime().block_on(async {
                    let connect = |url: String| async move {
                        let mut conn = <$async>::establish(&url).await.unwrap();
                        if let Some(session) = session {
                            conn.batch_execute(session).await.unwrap();
                        }
                        conn
                    };
                    let mut slot = Box::new(connect(near.url.clone()).await);
                    for round in 0..6 {
                        let url = if round % 2 == 0 { &near.url } else { &far.url };
                        *slot = connect(url.clone()).await;
                        // A bulk first, on the last database's guess (see guess.rs).
                        for n in [3, 1, 3] {
                            sq::insert_into(seqgen_async_guess::table)
                                .values(&mut rows(n))
                                .execute(&mut *slot)
                                .await
                                .unwrap();
                        }
                    }
                });
                let (near_numbers, far_numbers) = (numbers(&near), numbers(&far));
                assert_eq!((near_numbers.len(), far_numbers.len()), (21, 21));
                assert!(near_numbers.iter().all(|&n| n < FAR), "{near_numbers:?}");
                assert!(far_numbers.iter().all(|&n| n >= FAR), "{far_numbers:?}");
            }
        }
    };
}

async_guess_tests!(
    "async-postgres",
    postgres,
    diesel::PgConnection,
    diesel_async::AsyncPgConnection
);
async_guess_tests!(
    "async-mysql",
    mysql,
    diesel::MysqlConnection,
    diesel_async::AsyncMysqlConnection
);
