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
/// behind its own `start_value` jumps forward to it; a counter past the limit is left alone.
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
        Piece::Sql(" AND scope = "),
        Piece::Scope,
        Piece::Sql(" AND period = "),
        Piece::Period,
        Piece::Sql(" AND GREATEST(current_value, COALESCE(start_value, 1) - 1) <= "),
        Piece::Limit,
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
    const NAME: &'static str = "mysql";
    const INSERT_IGNORING: (&'static str, &'static str) = ("INSERT IGNORE INTO", "");
    const GREATEST: &'static str = "GREATEST";
    const TEXT_TYPE: &'static str = "CHAR";
    const NOW_TEXT: &'static str = "CAST(CURRENT_TIMESTAMP(6) AS CHAR)";
    const CREATE_ROWS_BESIDE_TRANSACTION: bool = true;
    const READS_FIRST_IN_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    #[cfg(feature = "r2d2")]
    type Connection = diesel::MysqlConnection;
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/mysql");
    // MariaDB has no server UUID: the server (host, port, data directory, server id) and the
    // schema. A `mysqldump | mariadb` clone lives in another schema or on another server.
    const FINGERPRINT: &'static str =
        "CONCAT_WS('/', 'mysql', @@hostname, @@port, @@datadir, @@server_id, DATABASE())";
    // InnoDB writes and flushes its log at every commit only with the value 1.
    const DURABILITY: &'static str = "CAST(@@innodb_flush_log_at_trx_commit AS CHAR)";
    const DURABILITY_SETTING: &'static str = "innodb_flush_log_at_trx_commit";
    const DURABLE: &'static str = "1";

    fn reserve<C>(
        conn: &mut C,
        counter: super::Counter<'_>,
        count: i64,
        limit: i64,
    ) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>,
    {
        let bump = |conn: &mut C| {
            Statement::<Bump>::new(counter, count)
                .limited(limit)
                .execute(conn)
        };
        if bump(conn)? == 0 {
            Self::create_row(conn, counter)?;
            if bump(conn)? == 0 {
                // The row exists now: its counter is past the limit.
                return Ok(None);
            }
        }
        let value: u64 = diesel::select(last_insert_id()).get_result(conn)?;
        i64::try_from(value)
            .map(Some)
            .map_err(|e| diesel::result::Error::DeserializationError(e.into()))
    }

    // Read back with a lock: a snapshot read under REPEATABLE READ would miss a shape
    // another transaction recorded after this one's snapshot.
    super::shared_queries!(for_update);

    fn lock_nowait<C>(conn: &mut C, counter: super::Counter<'_>) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        // A locking read sees rows other transactions are inserting and fails on them too.
        let lock = |conn: &mut C| {
            Statement::<LockNowait>::new(counter, 0)
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
        let created = Self::create_row(conn, counter);
        conn.batch_execute(&format!(
            "SET SESSION innodb_lock_wait_timeout = {previous}"
        ))?;
        created?;
        lock(conn).map(drop)
    }
}
