//! MySQL and MariaDB: no RETURNING, so the new value travels through `LAST_INSERT_ID(expr)`,
//! which is per connection: `UPDATE … SET current_value = LAST_INSERT_ID(current_value + n)`
//! then `SELECT LAST_INSERT_ID()`.
//!
//! The row is updated by primary key first, which takes a record lock only. A missing row is
//! created with `INSERT IGNORE` and the update repeated, rather than with
//! `INSERT … ON DUPLICATE KEY UPDATE`, whose gap locks deadlock under concurrency.

use diesel::connection::LoadConnection;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Unsigned};
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{LockNowait, Piece, Statement, Text as StatementText};
use crate::schema::db_key;

/// Adds to an existing counter and remembers the new value as `LAST_INSERT_ID()`. A counter
/// behind its own `start_value` jumps forward to it.
struct Bump;

impl StatementText for Bump {
    const PIECES: &'static [Piece] = &[
        Piece::Sql(
            "UPDATE db_key SET current_value = LAST_INSERT_ID(GREATEST(current_value, \
             COALESCE(start_value, 1) - 1) + ",
        ),
        Piece::Count,
        Piece::Sql("), updated_at = CURRENT_TIMESTAMP(6) WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND period = "),
        Piece::Period,
    ];
    type SqlType = BigInt;
}

diesel::define_sql_function! {
    /// The value this connection last remembered.
    #[sql_name = "LAST_INSERT_ID"]
    fn last_insert_id() -> Unsigned<BigInt>;
}

impl super::sealed::Sealed for Mysql {}

impl super::Backend for Mysql {
    const INSERT_IGNORING: (&'static str, &'static str) = ("INSERT IGNORE INTO", "");
    const GREATEST: &'static str = "GREATEST";
    const CREATE_ROWS_BESIDE_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../migrations/mysql");

    fn reserve<C>(conn: &mut C, key: &str, period: &str, count: i64) -> QueryResult<i64>
    where
        C: LoadConnection<Backend = Self>,
    {
        let bump = |conn: &mut C| Statement::<Bump>::new(key, period, count).execute(conn);
        if bump(conn)? == 0 {
            Self::create_row(conn, key, period)?;
            if bump(conn)? == 0 {
                return Err(diesel::result::Error::NotFound);
            }
        }
        let value: u64 = diesel::select(last_insert_id()).get_result(conn)?;
        i64::try_from(value).map_err(|e| diesel::result::Error::DeserializationError(e.into()))
    }

    super::shared_queries!();

    fn lock_nowait<C>(conn: &mut C, key: &str, period: &str) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        // A locking read sees rows other transactions are inserting and fails on them too.
        let lock = |conn: &mut C| {
            Statement::<LockNowait>::new(key, period, 0)
                .get_result::<i64>(conn)
                .optional()
        };
        if lock(conn)?.is_some() {
            return Ok(());
        }
        // Missing: create it, waiting at most a second (InnoDB's smallest lock wait) should
        // another transaction be creating it at the same moment.
        let previous: u64 = diesel::select(diesel::dsl::sql::<Unsigned<BigInt>>(
            "@@SESSION.innodb_lock_wait_timeout",
        ))
        .get_result(conn)?;
        conn.batch_execute("SET SESSION innodb_lock_wait_timeout = 1")?;
        let created = Self::create_row(conn, key, period);
        conn.batch_execute(&format!(
            "SET SESSION innodb_lock_wait_timeout = {previous}"
        ))?;
        created?;
        lock(conn).map(drop)
    }
}
