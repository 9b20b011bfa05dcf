//! MySQL and MariaDB: no RETURNING, so the new value travels through `LAST_INSERT_ID(expr)`,
//! which is per connection: `UPDATE … SET current_value = LAST_INSERT_ID(current_value + n)`
//! then `SELECT LAST_INSERT_ID()`.
//!
//! The row is updated by primary key first, which takes a record lock only. A missing row is
//! created ([`CreateRowAt`]) and the update repeated. Inside a transaction the generator
//! creates a row it does not know before updating it: under REPEATABLE READ, an `UPDATE` or
//! a locking read of a missing row takes a gap lock, and two transactions that then insert
//! rows into the same gap (two new keys, two tenants' first invoices) deadlock.
//!
//! A reservation of a known undated, unscoped key is two statements ([`BumpKnownKey`], then
//! [`ReadBack`]): the database's identity is read back with the new value instead of before
//! it. Diesel sends every statement prepared, one per round trip, so two is the least without
//! a stored routine.
//!
//! What MySQL writes differently (`dialect.rs`) is in `fragments.rs`; its statements, with its
//! checking insert (`asserted.rs`), in `statements.rs`.

mod fragments;
mod migrate;
mod statements;

use diesel::connection::LoadConnection;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use crate::backend::schema::db_key;
use statements::{Bump, BumpHeld, BumpKnownKey, CreateRowAt, ReadBack, StartOfRow};

diesel::define_sql_function! {
    /// The value this connection last remembered.
    #[sql_name = "LAST_INSERT_ID"]
    fn last_insert_id() -> diesel::sql_types::Unsigned<BigInt>;
}

impl super::sealed::Sealed for Mysql {}

impl super::Backend for Mysql {
    const NAME: &'static str = "mysql";
    const CREATES_ROWS_FIRST: bool = true;
    const READS_FIRST_IN_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    // InnoDB writes and flushes its log at every commit only with the value 1.
    const DURABILITY_SETTING: &'static str = "innodb_flush_log_at_trx_commit";
    const DURABLE: &'static str = "1";
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/mysql");

    fn run_pending_migrations<C>(conn: &mut C) -> diesel::migration::Result<()>
    where
        C: LoadConnection<Backend = Self> + diesel::migration::MigrationConnection + 'static,
    {
        use super::server_version::{refuse_older, MARIADB, MYSQL};
        let found: String =
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>("VERSION()"))
                .get_result(conn)?;
        refuse_older(
            &found,
            if found.contains("MariaDB") {
                MARIADB
            } else {
                MYSQL
            },
        )?;
        migrate::run_pending(conn)
    }

    // Read back with a lock: a snapshot read under REPEATABLE READ would miss a shape
    // another transaction recorded after this one's snapshot.
    super::core_queries!(sync, for_update);

    super::admin_queries!(for_update);
    super::pending_queries!(sync);

    fn waiting_rows<C>(
        conn: &mut C,
        rows: &super::PendingRows<'_>,
    ) -> QueryResult<super::WaitingRows>
    where
        C: LoadConnection<Backend = Self>,
    {
        super::pending_rows::waiting(conn, rows)
    }

    mysql_queries!(sync);
}

/// MySQL's own statements, for both drivers (see `core_queries!`):
///
/// - `reserve` (the same inside a transaction: MySQL has no timelines) and `create_row`;
/// - `reserve_identified`: a known undated, unscoped key in two statements ([`BumpKnownKey`],
///   [`ReadBack`]); `Ok(None)` after the first when the key is not as expected, and at once
///   for any other counter: the caller reads and reserves in three. `Found::batch` is read
///   after the reservation, not before: `reserve_block` uses it only to tell the generator
///   what to ask for next time;
/// - `read_committed_next`, `mark_session` (a user variable) and `lock_nowait`.
macro_rules! mysql_queries {
    (sync) => {
        $crate::backend::mysql::mysql_queries!(@ [] [] [diesel::connection::LoadConnection] [$crate::backend::Backend]);
    };
    (async) => {
        $crate::backend::mysql::mysql_queries!(@ [async] [await] [diesel_async::AsyncConnection] [$crate::backend::AsyncBackend]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*]) => {
        $($kw)* fn reserve<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            count: i64,
            limit: i64,
            in_transaction: bool,
        ) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::mysql::{last_insert_id, Bump, BumpHeld};
            use $crate::backend::statement::Statement;
            for created in [false, true] {
                let bumped = match in_transaction {
                    true => Statement::<BumpHeld>::new(counter, count).limited(limit).execute(conn) $(.$aw)* ?,
                    false => Statement::<Bump>::new(counter, count).limited(limit).execute(conn) $(.$aw)* ?,
                };
                if bumped > 0 {
                    break;
                }
                // MariaDB's `@@in_transaction` (MySQL's `SELECT 1`): see `BumpHeld`.
                if in_transaction
                    && !diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
                        "1 /*M! = @@in_transaction */",
                    ))
                    .get_result::<bool>(conn) $(.$aw)* ?
                {
                    return Err($crate::backend::rolled_back_underneath());
                }
                if created {
                    // The row exists now: its counter is past the limit.
                    return Ok(None);
                }
                <Self as $($this)*>::create_row(conn, counter) $(.$aw)* ?;
            }
            let value: u64 = diesel::select(last_insert_id()).get_result(conn) $(.$aw)* ?;
            i64::try_from(value)
                .map(Some)
                .map_err(|e| diesel::result::Error::DeserializationError(e.into()))
        }

        $($kw)* fn create_row<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::mysql::{CreateRowAt, StartOfRow};
            use $crate::backend::statement::Statement;
            let key_row = $crate::backend::Counter {
                start: counter.start,
                ..$crate::backend::Counter::key_row(counter.key)
            };
            // The key row first, if missing: its own `start_value` is read by every reservation.
            Statement::<CreateRowAt>::new(key_row, 0)
                .execute(conn) $(.$aw)* ?;
            if counter.scope.is_empty() && counter.period.is_empty() {
                return Ok(());
            }
            // In a transaction the key row stays locked until it ends: new scopes' and periods'
            // rows of one key are created one transaction at a time, never deadlocking.
            let start: i64 = Statement::<StartOfRow>::new(counter, 0)
                .get_result(conn) $(.$aw)* ?;
            Statement::<CreateRowAt>::new(counter, start)
                .execute(conn) $(.$aw)*
                .map(drop)
        }

        $($kw)* fn reserve_identified<C>(
            conn: &mut C,
            request: &$crate::backend::Request<'_>,
        ) -> QueryResult<Option<$crate::backend::Identified>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::mysql::{BumpKnownKey, ReadBack};
            use $crate::backend::statement::Statement;
            if !request.counter.scope.is_empty() || !request.counter.period.is_empty() {
                return Ok(None); // its settings are on another row (see `BumpKnownKey`)
            }
            // The block's size if the key row's `batch_size` is what the caller last saw,
            // which the statement makes sure of.
            let count = request.need.max(request.expected_batch).min(request.largest);
            let bump = BumpKnownKey {
                request,
                count,
                limit: request.largest - count,
            };
            if bump.execute(conn) $(.$aw)* ? == 0 {
                return Ok(None);
            }
            let (last, fingerprint, durability, token, batch): (
                u64,
                String,
                String,
                Option<i64>,
                Option<i64>,
            ) = Statement::<ReadBack>::new(request.counter, 0)
                .get_result(conn) $(.$aw)* ?;
            let last = i64::try_from(last)
                .map_err(|e| diesel::result::Error::DeserializationError(e.into()))?;
            Ok(Some($crate::backend::Identified {
                found: $crate::backend::Found {
                    fingerprint: <Self as $crate::backend::Backend>::complete_fingerprint(
                        fingerprint,
                    ),
                    durability,
                    timeline: None,
                    token,
                    batch,
                    shape: Some(request.shape.to_owned()),
                },
                count,
                last: Some(last),
            }))
        }

        $($kw)* fn read_committed_next<C>(conn: &mut C) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            diesel::sql_query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
                .execute(conn) $(.$aw)*
                .map(drop)
        }

        $($kw)* fn mark_session<C>(conn: &mut C, marker: &str) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            diesel::sql_query("SET @seqgen_identity = ?")
                .bind::<diesel::sql_types::Text, _>(marker)
                .execute(conn) $(.$aw)*
                .map(drop)
        }

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
use mysql_queries;

/// The statements of the allocator core on diesel-async's `AsyncMysqlConnection`.
#[cfg(feature = "async-mysql")]
mod nonblocking {
    use diesel::mysql::Mysql;
    use diesel::prelude::{ExpressionMethods, OptionalExtension, QueryDsl, QueryResult};
    use diesel_async::RunQueryDsl;

    impl super::super::AsyncBackend for Mysql {
        super::super::core_queries!(async, for_update);
        super::super::pending_queries!(async);
        super::mysql_queries!(async);
    }
}
