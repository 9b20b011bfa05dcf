//! PostgreSQL: one `INSERT … SELECT … ON CONFLICT DO UPDATE … RETURNING` per reservation. The
//! conflicting row is locked and re-read at its latest committed value, so under READ
//! COMMITTED concurrent reservations queue on the row and never overlap.

use diesel::connection::LoadConnection;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::sql_types::Text;

use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable};

use crate::backend::one_statement::OneStatement;
use crate::backend::schema::db_key;

impl super::sealed::Sealed for Pg {}

impl super::Backend for Pg {
    const NAME: &'static str = "postgres";
    const MARK_SESSION: &'static str = "SELECT set_config('seqgen.identity', $1, false)";
    const INSERT_IGNORING: (&'static str, &'static str) =
        ("INSERT INTO", " ON CONFLICT DO NOTHING");
    const GREATEST: &'static str = "GREATEST";
    // `updated_at` has no time zone: it holds the session's local time.
    const NOW_TEXT: &'static str = "CAST(LOCALTIMESTAMP AS TEXT)";
    const CREATES_ROWS_FIRST: bool = false;
    const READS_FIRST_IN_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    const ONE_STATEMENT_GAPLESS_INSERT: bool = true;

    fn run_one_statement<C, S, V>(
        conn: &mut C,
        statement: OneStatement<S, V>,
    ) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Pg>,
        OneStatement<S, V>: QueryFragment<Pg>,
    {
        statement.get_result::<i64>(conn).optional()
    }
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

    super::run_pending_migrations!();
    // The cluster (its system identifier, new for every initdb) and the database in it (its
    // oid, new for a `CREATE DATABASE … TEMPLATE` copy or a restore into a new database).
    const FINGERPRINT: &'static str =
        "'pg:' || (SELECT system_identifier::text FROM pg_control_system()) \
         || '/' || (SELECT oid::text FROM pg_database WHERE datname = current_database())";
    // Every reservation sets `synchronous_commit = on` for its own transaction (see
    // `DURABLE_COMMIT`); with `fsync = off` no commit survives a crash of the machine or an
    // immediate shutdown, whatever the session says.
    const DURABILITY: &'static str = "current_setting('fsync')";
    const DURABILITY_SETTING: &'static str = "fsync";
    // The timeline of the WAL being written: 1 after initdb, one more at each promotion. A
    // standby (read-only, no WAL of its own) has none. `pg_control_checkpoint()` would lag
    // until the promoted server's first checkpoint.
    const TIMELINE: &'static str = "CASE WHEN pg_is_in_recovery() THEN NULL \
         ELSE substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) END";
    const CHECKED_TIMELINE: &'static str = "current_setting('seqgen.timeline', true)";
    const MARK_TIMELINE: &'static str = "SELECT set_config('seqgen.timeline', $1, false)";
    const DURABLE: &'static str = "on";
    // `set_config(…, true)` lasts until the end of the transaction, and the commit reads it:
    // the reservation (and a caller's transaction holding a gapless number) waits for its WAL
    // to reach disk even when the server or session says `synchronous_commit = off`.
    const DURABLE_COMMIT: &'static str =
        "(SELECT set_config('synchronous_commit', 'on', true)) AS durable";

    super::upsert_reserve!(sync);

    super::core_queries!(sync);

    super::admin_queries!();
    super::pending_queries!(sync);

    reserve_identified!(sync);

    lock_nowait!(sync);

    replication!(sync);
}

/// [`Backend::replication`](super::Backend::replication) for both drivers. Every role sees
/// `pg_stat_replication`'s rows and the setting; their `backend_start` needs
/// `pg_read_all_stats` (else it reads NULL, taken as settling). `clock_timestamp()`, not
/// `now()`: inside the caller's transaction `now()` is when it began.
macro_rules! replication {
    (sync) => {
        $crate::backend::pg::replication!(@ [] [] [diesel::connection::LoadConnection]);
    };
    (async) => {
        $crate::backend::pg::replication!(@ [async] [await] [diesel_async::AsyncConnection]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*]) => {
        $($kw)* fn replication<C>(conn: &mut C) -> QueryResult<$crate::backend::Replication>
        where
            C: $($conn)*<Backend = Self>,
        {
            use diesel::sql_types::Bool;
            let (asynchronous, settling): (bool, bool) =
                diesel::select(diesel::dsl::sql::<(Bool, Bool)>(&format!(
                    "EXISTS (SELECT 1 FROM pg_stat_replication) \
                     AND current_setting('synchronous_standby_names') = '', \
                     COALESCE((SELECT bool_and(backend_start IS NULL OR backend_start > \
                     clock_timestamp() - interval '{} seconds') FROM pg_stat_replication), \
                     false)",
                    $crate::backend::SETTLING_SECONDS
                )))
                .get_result(conn) $(.$aw)* ?;
            Ok(if asynchronous {
                $crate::backend::Replication::Asynchronous { settling }
            } else {
                $crate::backend::Replication::Waited
            })
        }
    };
}
use replication;

/// [`Backend::reserve_identified`](super::Backend::reserve_identified) and
/// [`Backend::lock_nowait`](super::Backend::lock_nowait), for both drivers (see
/// `core_queries!`).
macro_rules! reserve_identified {
    (sync) => {
        $crate::backend::pg::reserve_identified!(@ [] [] [diesel::connection::LoadConnection]);
    };
    (async) => {
        $crate::backend::pg::reserve_identified!(@ [async] [await] [diesel_async::AsyncConnection]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*]) => {
        $($kw)* fn reserve_identified<C>(
            conn: &mut C,
            request: &$crate::backend::Request<'_>,
        ) -> QueryResult<Option<$crate::backend::Identified>>
        where
            C: $($conn)*<Backend = Self>,
        {
            let row: $crate::backend::pg::ReserveIdentifiedRow =
                $crate::backend::pg::ReserveIdentified(request).get_result(conn) $(.$aw)* ?;
            let (fingerprint, durability, timeline, token, batch, shape, count, last) = row;
            Ok(Some($crate::backend::Identified {
                found: $crate::backend::Found {
                    fingerprint: <Self as $crate::backend::Backend>::complete_fingerprint(
                        fingerprint,
                    ),
                    durability,
                    timeline: $crate::backend::timeline(timeline.as_deref()),
                    token,
                    batch,
                    shape,
                },
                count,
                last,
            }))
        }
    };
}
use reserve_identified;

macro_rules! lock_nowait {
    (sync) => {
        $crate::backend::pg::lock_nowait!(@ [] [] [diesel::connection::LoadConnection] [$crate::backend::Backend]);
    };
    (async) => {
        $crate::backend::pg::lock_nowait!(@ [async] [await] [diesel_async::AsyncConnection] [$crate::backend::AsyncBackend]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*]) => {
        $($kw)* fn lock_nowait<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{LockNowait, Statement};
            use diesel::sql_types::Text;
            if Statement::<LockNowait>::new(counter, 0)
                .get_result::<i64>(conn) $(.$aw)*
                .optional()?
                .is_some()
            {
                return Ok(());
            }
            // The row is missing, or another transaction is creating it (invisible to us until
            // it commits, and our insert would wait for it): create it without waiting long.
            let previous: String =
                diesel::select(diesel::dsl::sql::<Text>("current_setting('lock_timeout')"))
                    .get_result(conn) $(.$aw)* ?;
            conn.batch_execute("SET LOCAL lock_timeout = '1ms'") $(.$aw)* ?;
            <Self as $($this)*>::create_row(conn, counter) $(.$aw)* ?;
            diesel::sql_query("SELECT set_config('lock_timeout', $1, true)")
                .bind::<Text, _>(&previous)
                .execute(conn) $(.$aw)* ?;
            Statement::<LockNowait>::new(counter, 0)
                .get_result::<i64>(conn) $(.$aw)*
                .optional()
                .map(drop)
        }
    };
}
use lock_nowait;

/// The statements of the allocator core on diesel-async's `AsyncPgConnection`.
#[cfg(feature = "async-postgres")]
mod nonblocking {
    use diesel::pg::Pg;
    use diesel::prelude::{ExpressionMethods, OptionalExtension, QueryDsl, QueryResult};
    use diesel_async::RunQueryDsl;

    impl super::super::AsyncBackend for Pg {
        super::super::upsert_reserve!(async);

        super::super::core_queries!(async);

        super::reserve_identified!(async);

        super::lock_nowait!(async);

        super::replication!(async);

        super::super::pending_queries!(async);
    }
}

/// A reservation and everything [`identify`](super::Backend::identify) reads, in one
/// statement: a CTE reads the database's fingerprint, durability and token and the key row
/// (its `batch_size`, which sizes the block, and its shape), a data-modifying CTE upserts the
/// counter as [`UpsertReturning`](super::statement::UpsertReturning) does, and the main query
/// returns both. Nothing is written when the key row records another shape or the block
/// would pass the limit.
struct ReserveIdentified<'a, 'r>(&'r super::Request<'a>);

/// What [`ReserveIdentified`] returns: fingerprint, durability, timeline, token, batch size,
/// shape, the block's size and its last number.
type ReserveIdentifiedRow = (
    String,
    String,
    Option<String>,
    Option<i64>,
    Option<i64>,
    Option<String>,
    i64,
    Option<i64>,
);

impl QueryId for ReserveIdentified<'_, '_> {
    type QueryId = ReserveIdentified<'static, 'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ReserveIdentified<'_, '_> {
    type SqlType = (
        Text,
        Text,
        Nullable<Text>,
        Nullable<BigInt>,
        Nullable<BigInt>,
        Nullable<Text>,
        BigInt,
        Nullable<BigInt>,
    );
}

impl<Conn> RunQueryDsl<Conn> for ReserveIdentified<'_, '_> {}

impl QueryFragment<Pg> for ReserveIdentified<'_, '_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use super::statement::walk_block_size;
        use super::Backend;
        let r = self.0;
        // MATERIALIZED: `info` is read once, so the size added is the size returned.
        out.push_sql("WITH info AS MATERIALIZED (SELECT ");
        out.push_sql(Pg::FINGERPRINT);
        out.push_sql(" AS fingerprint, ");
        out.push_sql(Pg::DURABILITY);
        out.push_sql(" AS durability, ");
        out.push_sql(Pg::TIMELINE);
        out.push_sql(
            " AS timeline, (SELECT t.current_value FROM db_key t \
             WHERE t.key_name = '' AND t.scope = '' AND t.period = '') AS token, \
             k.batch_size, k.shape, COALESCE(k.start_value, ",
        );
        out.push_bind_param::<BigInt, i64>(&r.counter.start)?;
        out.push_sql(") - 1 AS base, ");
        walk_block_size(
            "k.batch_size",
            &r.need,
            &r.batch,
            &r.largest,
            out.reborrow(),
        )?;
        out.push_sql(
            " AS count FROM (SELECT 1 AS here) AS h LEFT JOIN db_key k \
             ON k.key_name = ",
        );
        out.push_bind_param::<Text, str>(r.counter.key)?;
        out.push_sql(
            " AND k.scope = '' AND k.period = ''), reserved AS (INSERT INTO db_key \
             (key_name, scope, period, current_value) SELECT ",
        );
        out.push_bind_param::<Text, str>(r.counter.key)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(r.counter.scope)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(r.counter.period)?;
        out.push_sql(", info.base + info.count FROM info, ");
        out.push_sql(Pg::DURABLE_COMMIT);
        out.push_sql(" WHERE info.base <= ");
        out.push_bind_param::<BigInt, i64>(&r.largest)?;
        out.push_sql(" - info.count AND (info.shape IS NULL OR info.shape = ");
        out.push_bind_param::<Text, str>(r.shape)?;
        out.push_sql(
            ") ON CONFLICT (key_name, scope, period) DO UPDATE SET current_value = \
             GREATEST(db_key.current_value, COALESCE(db_key.start_value, ",
        );
        out.push_bind_param::<BigInt, i64>(&r.counter.start)?;
        out.push_sql(
            ") - 1) + (SELECT count FROM info), updated_at = CURRENT_TIMESTAMP \
             WHERE GREATEST(db_key.current_value, COALESCE(db_key.start_value, ",
        );
        out.push_bind_param::<BigInt, i64>(&r.counter.start)?;
        out.push_sql(") - 1) <= ");
        out.push_bind_param::<BigInt, i64>(&r.largest)?;
        out.push_sql(
            " - (SELECT count FROM info) RETURNING current_value) \
             SELECT info.fingerprint, info.durability, info.timeline, info.token, \
             info.batch_size, \
             info.shape, info.count, (SELECT current_value FROM reserved) FROM info",
        );
        Ok(())
    }
}
