//! PostgreSQL: one `INSERT … SELECT … ON CONFLICT DO UPDATE … RETURNING` per reservation. The
//! conflicting row is locked and re-read at its latest committed value, so under READ
//! COMMITTED concurrent reservations queue on the row and never overlap. What PostgreSQL
//! writes differently (`dialect.rs`) and its checking insert (`asserted.rs`) are at the end of
//! this file; its reservation that also identifies the database is in `reserve_identified.rs`,
//! its gapless insert that numbers its own rows in `numbered_insert.rs`.

mod numbered_insert;
mod reserve_identified;

use diesel::connection::LoadConnection;
use diesel::dsl::sql;
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sql_types::{Bool, Text};
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::dialect::{
    Durability, DurableCommit, Fingerprint, Greatest, IgnoringEnd, InsertIgnoring, LockingRead,
    NowText, OnCheckedSession, TextType, Timeline,
};
use super::statement::{LockNowait, Statement};
use super::{Counter, Found, Identified, Replication, Request};
use crate::backend::one_statement::OneStatement;
use crate::backend::schema::db_key;
use crate::backend::Runner;
use reserve_identified::{ReserveIdentified, ReserveIdentifiedRow};

impl super::sealed::Sealed for Pg {}

impl super::Backend for Pg {
    const NAME: &'static str = "postgres";
    const CREATES_ROWS_FIRST: bool = false;
    const READS_FIRST_IN_TRANSACTION: bool = true;
    const RESERVE_BESIDE_TRANSACTION: bool = true;
    const ONE_STATEMENT_GAPLESS_INSERT: bool = true;
    const TIMELINES: bool = true;
    // Every reservation sets `synchronous_commit = on` for its own transaction (see
    // `DurableCommit`); with `fsync = off` no commit survives a crash of the machine or an
    // immediate shutdown, whatever the session says.
    const DURABILITY_SETTING: &'static str = "fsync";
    const DURABLE: &'static str = "on";
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/postgres");

    // Diesel's harness, whose bounds hold for a migrating connection of one named backend (not
    // of any backend: each backend states them). MySQL takes Galera's lease first.
    fn run_pending_migrations<C>(conn: &mut C) -> diesel::migration::Result<()>
    where
        C: LoadConnection<Backend = Self> + diesel::migration::MigrationConnection + 'static,
    {
        let found: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
            "current_setting('server_version')",
        ))
        .get_result(conn)?;
        super::server_version::refuse_older(&found, super::server_version::POSTGRES)?;
        diesel_migrations::MigrationHarness::run_pending_migrations(conn, Self::MIGRATIONS)
            .map(drop)
    }

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

    async fn reserve<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        in_transaction: bool,
    ) -> QueryResult<Option<i64>> {
        super::upsert::reserve(db, counter, count, limit, in_transaction).await
    }

    async fn create_row<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        super::upsert::create_row(db, counter).await
    }

    async fn reserve_identified<D: Runner<Backend = Self>>(
        db: &mut D,
        request: &Request<'_>,
    ) -> QueryResult<Option<Identified>> {
        let row: ReserveIdentifiedRow = db.get_named(ReserveIdentified(request)).await?;
        Ok(Some(Identified {
            found: Found {
                fingerprint: Self::complete_fingerprint(row.fingerprint),
                durability: row.durability,
                timeline: super::timeline(row.timeline.as_deref()),
                token: row.token,
                batch: row.batch_size,
                shape: row.shape,
            },
            count: row.count,
            last: row.last,
        }))
    }

    async fn mark_session<D: Runner<Backend = Self>>(db: &mut D, marker: &str) -> QueryResult<()> {
        let mark = diesel::sql_query("SELECT set_config('seqgen.identity', $1, false)")
            .bind::<Text, _>(marker);
        db.execute(mark).await.map(drop)
    }

    async fn mark_timeline<D: Runner<Backend = Self>>(
        db: &mut D,
        timeline: &str,
    ) -> QueryResult<()> {
        let mark = diesel::sql_query("SELECT set_config('seqgen.timeline', $1, false)")
            .bind::<Text, _>(timeline);
        db.execute(mark).await.map(drop)
    }

    async fn lock_row_nowait<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        let lock = || Statement::<LockNowait>::new(counter, 0);
        if db.get_result::<_, i64>(lock()).await.optional()?.is_some() {
            return Ok(());
        }
        // The row is missing, or another transaction is creating it (invisible to us until it
        // commits, and our insert would wait for it): create it without waiting long.
        let previous: String = db
            .get_result(diesel::select(sql::<Text>(
                "current_setting('lock_timeout')",
            )))
            .await?;
        db.batch_execute("SET LOCAL lock_timeout = '1ms'").await?;
        Self::create_row(db, counter).await?;
        let reset = diesel::sql_query("SELECT set_config('lock_timeout', $1, true)")
            .bind::<Text, _>(previous);
        db.execute(reset).await?;
        db.get_result::<_, i64>(lock()).await.optional().map(drop)
    }

    // Every role sees `pg_stat_replication`'s rows and the setting; their `backend_start` needs
    // `pg_read_all_stats` (else it reads NULL, taken as settling). `clock_timestamp()`, not
    // `now()`: inside the caller's transaction `now()` is when it began.
    async fn replication<D: Runner<Backend = Self>>(db: &mut D) -> QueryResult<Replication> {
        #[derive(QueryableByName)]
        struct Standbys {
            #[diesel(sql_type = Bool)]
            asynchronous: bool,
            #[diesel(sql_type = Bool)]
            settling: bool,
        }
        let standbys: Standbys = db
            .get_named(diesel::sql_query(format!(
                "SELECT EXISTS (SELECT 1 FROM pg_stat_replication) \
                 AND current_setting('synchronous_standby_names') = '' AS asynchronous, \
                 COALESCE((SELECT bool_and(backend_start IS NULL OR backend_start > \
                 clock_timestamp() - interval '{} seconds') FROM pg_stat_replication), \
                 false) AS settling",
                super::SETTLING_SECONDS
            )))
            .await?;
        Ok(match standbys.asynchronous {
            true => Replication::Asynchronous {
                settling: standbys.settling,
            },
            false => Replication::Waited,
        })
    }

    super::admin_queries!();
}

impl QueryFragment<Pg> for Greatest {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("GREATEST");
        Ok(())
    }
}

impl QueryFragment<Pg> for InsertIgnoring {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("INSERT INTO");
        Ok(())
    }
}

impl QueryFragment<Pg> for IgnoringEnd {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(" ON CONFLICT DO NOTHING");
        Ok(())
    }
}

// The cluster (its system identifier, new for every initdb) and the database in it (its oid,
// new for a `CREATE DATABASE … TEMPLATE` copy or a restore into a new database).
impl QueryFragment<Pg> for Fingerprint {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "'pg:' || (SELECT system_identifier::text FROM pg_control_system()) \
             || '/' || (SELECT oid::text FROM pg_database WHERE datname = current_database())",
        );
        Ok(())
    }
}

impl QueryFragment<Pg> for Durability {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("current_setting('fsync')");
        Ok(())
    }
}

// The timeline of the WAL being written: 1 after initdb, one more at each promotion. A standby
// (read-only, no WAL of its own) has none. `pg_control_checkpoint()` would lag until the
// promoted server's first checkpoint.
impl QueryFragment<Pg> for Timeline {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(
            "CASE WHEN pg_is_in_recovery() THEN NULL \
             ELSE substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8) END",
        );
        Ok(())
    }
}

// What `mark_timeline` set on the session is the server's timeline now.
impl QueryFragment<Pg> for OnCheckedSession {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql(" AND current_setting('seqgen.timeline', true) = ");
        Timeline.walk_ast(out)
    }
}

// `set_config(…, true)` lasts until the end of the transaction, and the commit reads it: the
// reservation (and a caller's transaction holding a gapless number) waits for its WAL to
// reach disk even when the server or session says `synchronous_commit = off`.
impl QueryFragment<Pg> for DurableCommit {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("(SELECT set_config('synchronous_commit', 'on', true)) AS durable");
        Ok(())
    }
}

// READ COMMITTED: each statement reads what is committed when it starts.
impl QueryFragment<Pg> for LockingRead {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("");
        Ok(())
    }
}

impl QueryFragment<Pg> for TextType {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("TEXT");
        Ok(())
    }
}

// `updated_at` has no time zone: it holds the session's local time.
impl QueryFragment<Pg> for NowText {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        out.push_sql("CAST(LOCALTIMESTAMP AS TEXT)");
        Ok(())
    }
}

// The checking insert (`asserted.rs`): one row, or a derived table of them.
impl<F, V> QueryFragment<Pg> for crate::backend::asserted::Asserted<F, V>
where
    F: QueryFragment<Pg>,
    V: crate::backend::row_values::RowValues<Pg>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use diesel::sql_types::Text;
        self.walk(out, |rows, mark, out| {
            let Some(mark) = mark else {
                // Diesel's insert, as Diesel writes it.
                out.push_sql("VALUES ");
                for (index, row) in rows.iter().enumerate() {
                    out.push_sql(if index == 0 { "(" } else { ", (" });
                    row.walk_values(out.reborrow())?;
                    out.push_sql(")");
                }
                return Ok(());
            };
            if let [row] = rows {
                out.push_sql("SELECT ");
                row.walk_values(out.reborrow())?;
            } else {
                out.push_sql("SELECT * FROM (VALUES ");
                for (index, row) in rows.iter().enumerate() {
                    out.push_sql(if index == 0 { "(" } else { ", (" });
                    row.walk_values(out.reborrow())?;
                    out.push_sql(")");
                }
                out.push_sql(") AS seqgen_v");
            }
            out.push_sql(" WHERE current_setting('seqgen.identity', true) = ");
            out.push_bind_param::<Text, str>(mark)
        })
    }
}
