//! The connections loadgen runs on.

use diesel::r2d2::{ConnectionManager, PooledConnection, R2D2Connection};
use diesel::result::Error as DieselError;
use diesel::{ExpressionMethods, RunQueryDsl};
use diesel_seqgen::Generator;

use super::rows::{loadgen_pending, loadgen_rows, Rows};

/// A connection checked out of loadgen's r2d2 pool, as r2d2 hands it out.
pub type Pooled<C> = PooledConnection<ConnectionManager<C>>;

/// A connection type loadgen runs on.
pub trait LoadgenConnection:
    R2D2Connection
    + diesel_seqgen::MigrateConnection<Backend = Self::B>
    + diesel_seqgen::pending::FollowConnection
{
    /// The backend, restated so that `diesel_seqgen::Backend` is known to hold for it.
    type B: diesel_seqgen::Backend;
    /// What makes a transaction's commit durable whatever the server's setting (PostgreSQL's
    /// `synchronous_commit`), for the app's own table: the crash tests' server loses every
    /// commit that does not ask.
    const DURABLE: Option<&'static str>;
    /// An integer primary key its database numbers itself, as `CREATE TABLE` declares it.
    const AUTO_ID: &'static str;
    /// Per-connection setup.
    fn setup(_conn: &mut Self) -> Result<(), DieselError> {
        Ok(())
    }
    /// Inserts one row into `loadgen_rows` (Diesel's insert is concrete per backend).
    fn insert_row(conn: &mut Self, key: &str, id: &str) -> Result<usize, DieselError>;
    /// Inserts `rows` with `diesel_seqgen::insert_into` on `conn`, their IDs from `generator`
    /// or, without one, from the default generator.
    fn insert_into(
        conn: &mut Self,
        rows: &mut Rows,
        generator: Option<&Generator>,
    ) -> diesel_seqgen::Result<usize>;
    /// The same on the pooled connection itself (`&mut pooled`), which remembers the database
    /// it reaches, from the default generator.
    fn insert_into_pooled(conn: &mut Pooled<Self>, rows: &mut Rows)
        -> diesel_seqgen::Result<usize>;
}

macro_rules! loadgen_connection {
    ($($feature:literal: $conn:ty, $backend:ty, $durable:expr, $setup:expr, $auto_id:literal;)*) => {$(
        #[cfg(feature = $feature)]
        impl LoadgenConnection for $conn {
            type B = $backend;
            const DURABLE: Option<&'static str> = $durable;
            const AUTO_ID: &'static str = $auto_id;
            fn setup(conn: &mut Self) -> Result<(), DieselError> {
                let setup: fn(&mut Self) -> Result<(), DieselError> = $setup;
                setup(conn)
            }
            fn insert_row(conn: &mut Self, key: &str, id: &str) -> Result<usize, DieselError> {
                diesel::insert_into(loadgen_rows::table)
                    .values((loadgen_rows::key_name.eq(key), loadgen_rows::id.eq(id)))
                    .execute(conn)
            }
            fn insert_into(
                conn: &mut Self,
                rows: &mut Rows,
                generator: Option<&Generator>,
            ) -> diesel_seqgen::Result<usize> {
                match (rows, generator) {
                    (Rows::Batched(rows), None) => {
                        diesel_seqgen::insert_into(loadgen_rows::table).values(rows).execute(conn)
                    }
                    (Rows::Batched(rows), Some(generator)) => diesel_seqgen::insert_into(loadgen_rows::table)
                        .values(rows)
                        .with_generator(generator)
                        .execute(conn),
                    (Rows::Gapless(rows), None) => {
                        diesel_seqgen::insert_into(loadgen_rows::table).values(rows).execute(conn)
                    }
                    (Rows::Gapless(rows), Some(generator)) => diesel_seqgen::insert_into(loadgen_rows::table)
                        .values(rows)
                        .with_generator(generator)
                        .execute(conn),
                    (Rows::Deferred(rows), None) => {
                        diesel_seqgen::insert_into(loadgen_pending::table).values(rows).execute(conn)
                    }
                    (Rows::Deferred(rows), Some(generator)) => diesel_seqgen::insert_into(loadgen_pending::table)
                        .values(rows)
                        .with_generator(generator)
                        .execute(conn),
                }
            }
            fn insert_into_pooled(
                conn: &mut Pooled<Self>,
                rows: &mut Rows,
            ) -> diesel_seqgen::Result<usize> {
                match rows {
                    Rows::Batched(rows) => {
                        diesel_seqgen::insert_into(loadgen_rows::table).values(rows).execute(conn)
                    }
                    Rows::Gapless(rows) => {
                        diesel_seqgen::insert_into(loadgen_rows::table).values(rows).execute(conn)
                    }
                    Rows::Deferred(rows) => {
                        diesel_seqgen::insert_into(loadgen_pending::table).values(rows).execute(conn)
                    }
                }
            }
        }
    )*};
}

loadgen_connection! {
    "sqlite": diesel::SqliteConnection, diesel::sqlite::Sqlite, None, diesel_seqgen::sqlite::configure,
        "INTEGER PRIMARY KEY AUTOINCREMENT";
    "postgres": diesel::PgConnection, diesel::pg::Pg, Some("SET LOCAL synchronous_commit = on"), |_| Ok(()),
        "BIGSERIAL PRIMARY KEY";
    "mysql": diesel::MysqlConnection, diesel::mysql::Mysql, None, |_| Ok(()),
        "BIGINT AUTO_INCREMENT PRIMARY KEY";
}

/// Sets up each connection the pool opens.
#[derive(Debug)]
pub(super) struct Setup;

impl<C: LoadgenConnection> diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for Setup {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        <C as LoadgenConnection>::setup(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}
