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
use diesel::sql_types::BigInt;
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{Piece, Text as StatementText};
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
    fn last_insert_id() -> diesel::sql_types::Unsigned<BigInt>;
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
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/mysql");
    // MariaDB has no server UUID: the server (host, port, data directory, server id) and the
    // schema. A `mysqldump | mariadb` clone lives in another schema or on another server.
    const FINGERPRINT: &'static str =
        "CONCAT_WS('/', 'mysql', @@hostname, @@port, @@datadir, @@server_id, DATABASE())";
    // InnoDB writes and flushes its log at every commit only with the value 1.
    const DURABILITY: &'static str = "CAST(@@innodb_flush_log_at_trx_commit AS CHAR)";
    const DURABILITY_SETTING: &'static str = "innodb_flush_log_at_trx_commit";
    const DURABLE: &'static str = "1";

    reserve!(sync);

    // Read back with a lock: a snapshot read under REPEATABLE READ would miss a shape
    // another transaction recorded after this one's snapshot.
    super::core_queries!(sync, for_update);

    super::admin_queries!(for_update);

    lock_nowait!(sync);
}

/// [`Backend::reserve`](super::Backend::reserve) and
/// [`Backend::lock_nowait`](super::Backend::lock_nowait), for both drivers (see
/// `core_queries!`).
macro_rules! reserve {
    (sync) => {
        $crate::backend::mysql::reserve!(@ [] [] [diesel::connection::LoadConnection] [$crate::backend::Backend]);
    };
    (async) => {
        $crate::backend::mysql::reserve!(@ [async] [await] [diesel_async::AsyncConnection] [$crate::backend::AsyncBackend]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*]) => {
        $($kw)* fn reserve<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            count: i64,
            limit: i64,
        ) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::mysql::{last_insert_id, Bump};
            use $crate::backend::statement::Statement;
            let bump = || Statement::<Bump>::new(counter, count).limited(limit);
            if bump().execute(conn) $(.$aw)* ? == 0 {
                <Self as $($this)*>::create_row(conn, counter) $(.$aw)* ?;
                if bump().execute(conn) $(.$aw)* ? == 0 {
                    // The row exists now: its counter is past the limit.
                    return Ok(None);
                }
            }
            let value: u64 = diesel::select(last_insert_id()).get_result(conn) $(.$aw)* ?;
            i64::try_from(value)
                .map(Some)
                .map_err(|e| diesel::result::Error::DeserializationError(e.into()))
        }
    };
}
use reserve;

macro_rules! lock_nowait {
    (sync) => {
        $crate::backend::mysql::lock_nowait!(@ [] [] [diesel::connection::LoadConnection] [$crate::backend::Backend]);
    };
    (async) => {
        $crate::backend::mysql::lock_nowait!(@ [async] [await] [diesel_async::AsyncConnection] [$crate::backend::AsyncBackend]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*]) => {
        $($kw)* fn lock_nowait<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{LockNowait, Statement};
            use diesel::sql_types::{BigInt, Unsigned};
            // A locking read sees rows other transactions are inserting and fails on them too.
            if Statement::<LockNowait>::new(counter, 0)
                .get_result::<i64>(conn) $(.$aw)*
                .optional()?
                .is_some()
            {
                return Ok(());
            }
            // Missing: create it, waiting at most a second (InnoDB's smallest lock wait) should
            // another transaction be creating it at the same moment.
            let previous: u64 = diesel::select(diesel::dsl::sql::<Unsigned<BigInt>>(
                "@@SESSION.innodb_lock_wait_timeout",
            ))
            .get_result(conn) $(.$aw)* ?;
            conn.batch_execute("SET SESSION innodb_lock_wait_timeout = 1") $(.$aw)* ?;
            let created = <Self as $($this)*>::create_row(conn, counter) $(.$aw)*;
            conn.batch_execute(&format!(
                "SET SESSION innodb_lock_wait_timeout = {previous}"
            )) $(.$aw)* ?;
            created?;
            Statement::<LockNowait>::new(counter, 0)
                .get_result::<i64>(conn) $(.$aw)*
                .optional()
                .map(drop)
        }
    };
}
use lock_nowait;

/// The statements of the allocator core on diesel-async's `AsyncMysqlConnection`.
#[cfg(feature = "async-mysql")]
mod nonblocking {
    use diesel::mysql::Mysql;
    use diesel::prelude::{ExpressionMethods, OptionalExtension, QueryDsl, QueryResult};
    use diesel_async::RunQueryDsl;

    impl super::super::AsyncBackend for Mysql {
        super::reserve!(async);

        super::super::core_queries!(async, for_update);

        super::lock_nowait!(async);
    }
}
