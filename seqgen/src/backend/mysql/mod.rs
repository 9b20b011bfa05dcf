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
use diesel::dsl::sql;
use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Bool, Text, Unsigned};
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::statement::{LockNowait, Statement};
use super::{Counter, Found, Identified, Request};
use crate::backend::schema::db_key;
use crate::backend::Runner;
use statements::{
    Bump, BumpHeld, BumpKnownKey, CarriesMark, CreateRowAt, ReadBack, ReadBackRow, StartOfRow,
};

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
    const CHECKS_A_BULK: bool = false;
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

    async fn reserve<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        in_transaction: bool,
    ) -> QueryResult<Option<i64>> {
        for created in [false, true] {
            let bumped = match in_transaction {
                true => {
                    db.execute(Statement::<BumpHeld>::new(counter, count).limited(limit))
                        .await?
                }
                false => {
                    db.execute(Statement::<Bump>::new(counter, count).limited(limit))
                        .await?
                }
            };
            if bumped > 0 {
                break;
            }
            // MariaDB's `@@in_transaction` (MySQL's `SELECT 1`): see `BumpHeld`.
            if in_transaction
                && !db
                    .get_result(diesel::select(sql::<Bool>("1 /*M! = @@in_transaction */")))
                    .await?
            {
                return Err(super::rolled_back_underneath());
            }
            if created {
                // The row exists now: its counter is past the limit.
                return Ok(None);
            }
            Self::create_row(db, counter).await?;
        }
        let value: u64 = db.get_result(diesel::select(last_insert_id())).await?;
        i64::try_from(value)
            .map(Some)
            .map_err(|e| diesel::result::Error::DeserializationError(e.into()))
    }

    async fn create_row<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        let key_row = Counter {
            start: counter.start,
            ..Counter::key_row(counter.key)
        };
        // The key row first, if missing: its own `start_value` is read by every reservation.
        db.execute(Statement::<CreateRowAt>::new(key_row, 0))
            .await?;
        if counter.scope.is_empty() && counter.period.is_empty() {
            return Ok(());
        }
        // In a transaction the key row stays locked until it ends: new scopes' and periods' rows
        // of one key are created one transaction at a time, never deadlocking.
        let start: i64 = db
            .get_result(Statement::<StartOfRow>::new(counter, 0))
            .await?;
        db.execute(Statement::<CreateRowAt>::new(counter, start))
            .await
            .map(drop)
    }

    // A known undated, unscoped key in two statements ([`BumpKnownKey`], [`ReadBack`]);
    // `Ok(None)` after the first when the key is not as expected, and at once for any other
    // counter: the caller reads and reserves in three. `Found::batch` is read after the
    // reservation, not before: `reserve_block` uses it only to tell the generator what to ask
    // for next time.
    async fn reserve_identified<D: Runner<Backend = Self>>(
        db: &mut D,
        request: &Request<'_>,
    ) -> QueryResult<Option<Identified>> {
        if !request.counter.scope.is_empty() || !request.counter.period.is_empty() {
            return Ok(None); // its settings are on another row (see `BumpKnownKey`)
        }
        // The block's size if the key row's `batch_size` is what the caller last saw, which the
        // statement makes sure of.
        let count = request.expected_count();
        let bump = BumpKnownKey {
            request,
            count,
            limit: request.largest - count,
        };
        if db.execute(bump).await? == 0 {
            return Ok(None);
        }
        let row: ReadBackRow = db
            .get_named(Statement::<ReadBack>::new(request.counter, 0))
            .await?;
        let last = i64::try_from(row.last)
            .map_err(|e| diesel::result::Error::DeserializationError(e.into()))?;
        Ok(Some(Identified {
            found: Found {
                fingerprint: Self::complete_fingerprint(row.fingerprint),
                durability: row.durability,
                timeline: None,
                token: row.token,
                batch: row.batch_size,
                shape: Some(request.shape.to_owned()),
            },
            count,
            last: Some(last),
        }))
    }

    // Before a bulk on a guess, on the session that then inserts (`insert/bounds.rs`).
    async fn carries_mark<D: Runner<Backend = Self>>(
        db: &mut D,
        marker: &str,
    ) -> QueryResult<bool> {
        db.get_result(CarriesMark(marker)).await
    }

    // A user variable, read by the checking insert (`asserted.rs`).
    async fn mark_session<D: Runner<Backend = Self>>(db: &mut D, marker: &str) -> QueryResult<()> {
        let mark = diesel::sql_query("SET @seqgen_identity = ?").bind::<Text, _>(marker);
        db.execute(mark).await.map(drop)
    }

    async fn lock_row_nowait<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        let lock = || Statement::<LockNowait>::new(counter, 0);
        // A locking read sees rows other transactions are inserting and fails on them too.
        if db.get_result::<_, i64>(lock()).await.optional()?.is_some() {
            return Ok(());
        }
        // Missing: create it, waiting at most a second (InnoDB's smallest lock wait) should
        // another transaction be creating it at the same moment.
        let previous: u64 = db
            .get_result(diesel::select(sql::<Unsigned<BigInt>>(
                "@@SESSION.innodb_lock_wait_timeout",
            )))
            .await?;
        db.batch_execute("SET SESSION innodb_lock_wait_timeout = 1")
            .await?;
        let created = Self::create_row(db, counter).await;
        db.batch_execute(&format!(
            "SET SESSION innodb_lock_wait_timeout = {previous}"
        ))
        .await?;
        created?;
        db.get_result::<_, i64>(lock()).await.optional().map(drop)
    }

    async fn read_committed_next<D: Runner<Backend = Self>>(db: &mut D) -> QueryResult<()> {
        db.batch_execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
            .await
    }

    super::admin_queries!(for_update);
}
