//! The connections the report runs on: what differs per backend.

use diesel::r2d2::{ConnectionManager, PooledConnection, R2D2Connection};
use diesel::result::Error as DieselError;
use diesel::RunQueryDsl;
use diesel_seqgen::Generator;

use super::{
    bench_orders_conn, bench_orders_default, bench_orders_deref, bench_orders_explicit,
    bench_orders_plain, bench_orders_seq, ConnOrder, DefaultOrder, DerefOrder, ExplicitOrder,
    NewSeqOrder, PlainOrder,
};

/// A connection type the report runs on: what differs per backend.
pub trait BenchConnection:
    R2D2Connection + diesel_seqgen::MigrateConnection<Backend = Self::B> + Send
{
    /// The backend, restated so that `diesel_seqgen::Backend` is known to hold for it.
    type B: diesel_seqgen::Backend;
    /// The type of the ID columns.
    const ID_TYPE: &'static str;
    /// Creates the sequence table (and its sequence) empty.
    const CREATE_SEQ: &'static str;
    /// Per-connection setup.
    fn setup(conn: &mut Self) -> Result<(), DieselError>;
    /// A plain Diesel insert of rows whose IDs are already set.
    fn insert_plain(conn: &mut Self, rows: &[PlainOrder]) -> Result<usize, DieselError>;
    /// `diesel_seqgen::insert_into` with the default generator on a pooled connection.
    fn insert_default(
        conn: &mut PooledConnection<ConnectionManager<Self>>,
        rows: &mut Vec<DefaultOrder>,
    ) -> diesel_seqgen::Result<usize>;
    /// `diesel_seqgen::insert_into` with the default generator on a pooled connection passed
    /// dereferenced (`&mut *pooled`).
    fn insert_deref(conn: &mut Self, rows: &mut Vec<DerefOrder>) -> diesel_seqgen::Result<usize>;
    /// `diesel_seqgen::insert_into` with the default generator on a connection of no pool.
    fn insert_conn(conn: &mut Self, rows: &mut Vec<ConnOrder>) -> diesel_seqgen::Result<usize>;
    /// `diesel_seqgen::insert_into(..).with_generator(generator)`.
    fn insert_explicit(
        conn: &mut Self,
        rows: &mut Vec<ExplicitOrder>,
        generator: &Generator,
    ) -> diesel_seqgen::Result<usize>;
    /// An insert whose IDs come from the database's sequence.
    fn insert_sequence(conn: &mut Self, rows: &[NewSeqOrder]) -> Result<usize, DieselError>;
    /// The one integer `sql` selects.
    fn integer(conn: &mut Self, sql: &str) -> Result<i64, DieselError>;
    /// The one text (or NULL) `sql` selects.
    fn text(conn: &mut Self, sql: &str) -> Result<Option<String>, DieselError>;
    /// The (integer, double) rows `sql` selects.
    fn pairs(conn: &mut Self, sql: &str) -> Result<Vec<(i64, f64)>, DieselError>;
}

macro_rules! inserts {
    () => {
        fn insert_plain(conn: &mut Self, rows: &[PlainOrder]) -> Result<usize, DieselError> {
            diesel::insert_into(bench_orders_plain::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_default(
            conn: &mut PooledConnection<ConnectionManager<Self>>,
            rows: &mut Vec<DefaultOrder>,
        ) -> diesel_seqgen::Result<usize> {
            diesel_seqgen::insert_into(bench_orders_default::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_deref(
            conn: &mut Self,
            rows: &mut Vec<DerefOrder>,
        ) -> diesel_seqgen::Result<usize> {
            diesel_seqgen::insert_into(bench_orders_deref::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_conn(conn: &mut Self, rows: &mut Vec<ConnOrder>) -> diesel_seqgen::Result<usize> {
            diesel_seqgen::insert_into(bench_orders_conn::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_explicit(
            conn: &mut Self,
            rows: &mut Vec<ExplicitOrder>,
            generator: &Generator,
        ) -> diesel_seqgen::Result<usize> {
            diesel_seqgen::insert_into(bench_orders_explicit::table)
                .values(rows)
                .with_generator(generator)
                .execute(conn)
        }
        fn insert_sequence(conn: &mut Self, rows: &[NewSeqOrder]) -> Result<usize, DieselError> {
            diesel::insert_into(bench_orders_seq::table)
                .values(rows)
                .execute(conn)
        }
        fn integer(conn: &mut Self, sql: &str) -> Result<i64, DieselError> {
            diesel::dsl::sql::<diesel::sql_types::BigInt>(sql).get_result(conn)
        }
        fn text(conn: &mut Self, sql: &str) -> Result<Option<String>, DieselError> {
            diesel::dsl::sql::<diesel::sql_types::Nullable<diesel::sql_types::Text>>(sql)
                .get_result(conn)
        }
        fn pairs(conn: &mut Self, sql: &str) -> Result<Vec<(i64, f64)>, DieselError> {
            use diesel::sql_types::{BigInt, Double};
            diesel::dsl::sql::<(BigInt, Double)>(sql).load(conn)
        }
    };
}

#[cfg(feature = "postgres")]
impl BenchConnection for diesel::PgConnection {
    type B = diesel::pg::Pg;
    const ID_TYPE: &'static str = "VARCHAR(40)";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        DROP SEQUENCE IF EXISTS bench_seq; \
        CREATE SEQUENCE bench_seq; \
        CREATE TABLE bench_orders_seq (id BIGINT PRIMARY KEY DEFAULT nextval('bench_seq'), \
            amount BIGINT NOT NULL);";
    fn setup(conn: &mut Self) -> Result<(), DieselError> {
        diesel::connection::SimpleConnection::batch_execute(conn, "SET synchronous_commit = off")
    }
    inserts!();
}

#[cfg(feature = "mysql")]
impl BenchConnection for diesel::MysqlConnection {
    type B = diesel::mysql::Mysql;
    // AUTO_INCREMENT: MariaDB 10.11 crashed (signal 11) here under concurrent prepared inserts
    // into a column `DEFAULT (NEXT VALUE FOR seq)`.
    const ID_TYPE: &'static str = "VARCHAR(40)";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        CREATE TABLE bench_orders_seq (id BIGINT PRIMARY KEY AUTO_INCREMENT, \
            amount BIGINT NOT NULL);";
    fn setup(_: &mut Self) -> Result<(), DieselError> {
        Ok(())
    }
    inserts!();
}

#[cfg(feature = "sqlite")]
impl BenchConnection for diesel::SqliteConnection {
    type B = diesel::sqlite::Sqlite;
    const ID_TYPE: &'static str = "TEXT";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        CREATE TABLE bench_orders_seq (id INTEGER PRIMARY KEY AUTOINCREMENT, \
            amount BIGINT NOT NULL);";
    fn setup(conn: &mut Self) -> Result<(), DieselError> {
        diesel_seqgen::sqlite::configure(conn)
    }
    inserts!();
}

#[derive(Debug)]
pub(super) struct Setup;

impl<C: BenchConnection> diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for Setup {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        <C as BenchConnection>::setup(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}
