//! The databases seqgen runs on. Each backend's file holds its SQL: the statements only it
//! runs ([`Backend`]'s, written once as `async` code over any [`Runner`], Diesel's connection or
//! diesel-async's), and its `QueryFragment` impl of each difference `dialect.rs` names (the
//! larger of two values, an insert that skips existing rows, the database's fingerprint, ...).
//! The statements every backend runs alike are written once in `shared.rs`
//! ([`SharedStatements`]), their SQL in `statement.rs`; everything above the backends is one
//! generic code path.

use std::future::Future;

use diesel::connection::LoadConnection;
use diesel::QueryResult;

use diesel_migrations::EmbeddedMigrations;

mod admin_queries;
pub(crate) mod asserted;
#[cfg(seqgen_async)]
mod async_backend;
mod classify;
mod connection;
pub(crate) mod dialect;
#[cfg(seqgen_mysql)]
mod mysql;
pub(crate) mod one_statement;
mod pending_rows;
#[cfg(seqgen_pg)]
mod pg;
pub(crate) mod row_values;
mod rows;
mod runner;
pub(crate) mod schema;
pub(crate) mod server_version;
mod shared;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub(crate) mod statement;
mod table_name;
#[cfg(any(feature = "sqlite", seqgen_pg))]
mod upsert;

pub(crate) use admin_queries::admin_queries;
#[cfg(seqgen_async)]
pub use async_backend::AsyncBackend;
pub(crate) use classify::{
    is_busy, is_conflict, is_missing_object, is_savepoint_gone, rolled_back_underneath,
};
pub use connection::{IdConnection, MigrateConnection};
pub use pending_rows::{PendingRow, PendingRows, WaitingRows};
pub(crate) use rows::timeline;
pub(crate) use rows::SETTLING_SECONDS;
pub use rows::{Counter, CounterRow, Found, Identified, Replication, Request, Setting};
pub use runner::Runner;
pub(crate) use runner::{drive, Blocking};
pub use shared::SharedStatements;
pub use table_name::NamedTable;

/// A Diesel backend seqgen can reserve numbers on: SQLite, PostgreSQL or MySQL/MariaDB,
/// each behind the cargo feature of the same name as Diesel's.
///
/// Sealed; its items are seqgen's internals.
#[allow(private_bounds)] // its statements take seqgen's own driver: only seqgen calls them
#[diagnostic::on_unimplemented(
    message = "diesel-seqgen was built without the Diesel backend `{Self}`",
    label = "`{Self}`: a backend this build of diesel-seqgen does not know",
    note = "turn on diesel-seqgen's feature for it: `sqlite` (or `bundled-sqlite`), `postgres` or `mysql` for Diesel's connections, `async-sqlite`, `async-postgres` or `async-mysql` for diesel-async's"
)]
pub trait Backend:
    diesel::backend::Backend + Default + SharedStatements + sealed::Sealed + 'static
{
    /// Whether a block may be reserved on a second connection while the caller's connection
    /// is inside a transaction. SQLite has one writer per database (a second connection would
    /// wait for the caller's own write lock): there the number is taken in the transaction.
    #[doc(hidden)]
    const RESERVE_BESIDE_TRANSACTION: bool;

    /// Whether a gapless insert can take its numbers in the insert itself (`one_statement.rs`):
    /// PostgreSQL, whose data-modifying CTEs advance the counter and insert rows that read it.
    #[doc(hidden)]
    const ONE_STATEMENT_GAPLESS_INSERT: bool = false;

    /// Whether seqgen writes Diesel's insert itself, so that it stays prepared (`asserted.rs`):
    /// PostgreSQL and MySQL; SQLite plans an insert in microseconds and takes Diesel's.
    #[doc(hidden)]
    const KEEPS_INSERTS_PREPARED: bool = true;

    /// Whether a bulk insert on a guess checks it itself (`asserted.rs`): PostgreSQL's. A bulk
    /// on MySQL first asks whether the session [`carries_mark`](Backend::carries_mark).
    #[doc(hidden)]
    const CHECKS_A_BULK: bool = true;

    /// Whether telling the database apart costs a round trip (not on SQLite): the default
    /// generator then says once (`tracing`) when a connection form makes it do so every call.
    #[doc(hidden)]
    const IDENTIFY_IS_A_ROUND_TRIP: bool = true;

    /// Runs the gapless insert that takes its numbers itself (`one_statement.rs`), where
    /// [`ONE_STATEMENT_GAPLESS_INSERT`](Backend::ONE_STATEMENT_GAPLESS_INSERT): the counter after.
    #[doc(hidden)]
    fn run_one_statement<C, S, V>(
        conn: &mut C,
        statement: one_statement::OneStatement<S, V>,
    ) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>,
        one_statement::OneStatement<S, V>: diesel::query_builder::QueryFragment<Self>,
    {
        let _ = (conn, statement);
        Err(one_statement::not_one_statement())
    }

    /// Whether a counter row must exist before a reservation in a transaction touches it: under
    /// InnoDB's REPEATABLE READ an `UPDATE` of a missing row takes a gap lock, and two such
    /// transactions deadlock. A row not known yet is created first: through the generator's
    /// pool, else in the transaction with [`create_row`](Self::create_row) (no gap lock).
    #[doc(hidden)]
    const CREATES_ROWS_FIRST: bool;

    /// Whether a transaction may read `db_key` before writing it: a deferred SQLite transaction
    /// that read cannot write once another has (`SQLITE_BUSY_SNAPSHOT`): it reserves first.
    #[doc(hidden)]
    const READS_FIRST_IN_TRANSACTION: bool;

    /// Whether the server has timelines (PostgreSQL: one more at each promotion), which a
    /// reservation in the caller's transaction checks ([`OnCheckedSession`](dialect::OnCheckedSession)).
    #[doc(hidden)]
    const TIMELINES: bool = false;

    /// The backend's name in traces (`sqlite`, `postgres`, `mysql`, as the features say).
    #[doc(hidden)]
    const NAME: &'static str;

    /// The server setting [`Durability`](dialect::Durability) reads, for error messages.
    #[doc(hidden)]
    const DURABILITY_SETTING: &'static str;

    /// The value of [`Durability`](dialect::Durability) on a server that commits durably.
    #[doc(hidden)]
    const DURABLE: &'static str;

    /// The embedded `db_key` migrations of this backend.
    #[doc(hidden)]
    const MIGRATIONS: EmbeddedMigrations;

    /// Runs [`MIGRATIONS`](Backend::MIGRATIONS) that are pending, through Diesel's harness:
    /// its bounds hold for any migrating connection of one named backend, not of any backend,
    /// so each backend states them ([`run_pending_migrations!`]).
    #[doc(hidden)]
    fn run_pending_migrations<C>(conn: &mut C) -> diesel::migration::Result<()>
    where
        C: LoadConnection<Backend = Self> + diesel::migration::MigrationConnection + 'static;

    /// Adds `count` to `counter`, creating its row if it is missing, in one atomic step, and
    /// returns the new value: the numbers `new - count + 1 ..= new` are the caller's. A new row
    /// starts at its key row's `start_value` (see [`Counter::key_row`]); a counter behind its own
    /// `start_value` jumps to it. Numbers only ever move forward. When the counter is past
    /// `limit` (the largest value it may have for `count` more to fit), nothing changes and
    /// `None` comes back. Inside the caller's transaction (`in_transaction`), on a backend with
    /// timelines (PostgreSQL), also when seqgen has not checked this session's timeline
    /// ([`mark_timeline`](Backend::mark_timeline)).
    #[doc(hidden)]
    fn reserve<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        in_transaction: bool,
    ) -> impl Future<Output = QueryResult<Option<i64>>> + Send;

    /// `identify` and `reserve` in fewer round trips than the two: one statement on
    /// PostgreSQL; two on MySQL for an undated, unscoped key whose row records the request's
    /// shape and gives the batch it expects. `Ok(None)` with nothing reserved otherwise
    /// (nothing sent on SQLite): the caller then runs the two. See [`Identified`].
    #[doc(hidden)]
    fn reserve_identified<D: Runner<Backend = Self>>(
        db: &mut D,
        request: &Request<'_>,
    ) -> impl Future<Output = QueryResult<Option<Identified>>> + Send {
        let _ = (db, request);
        std::future::ready(Ok(None))
    }

    /// Creates the row of `counter` unless it exists, at the key row's `start_value - 1` (0
    /// without one).
    #[doc(hidden)]
    fn create_row<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<()>> + Send;

    /// Marks the session as reaching the database `marker` names, for the inserts that check
    /// it themselves (`asserted.rs`). Session-wide: PostgreSQL's `set_config(.., false)` (undone
    /// by a rollback, which fails closed), MySQL's user variable. Nothing where telling the
    /// database apart costs no round trip (SQLite).
    #[doc(hidden)]
    fn mark_session<D: Runner<Backend = Self>>(
        db: &mut D,
        marker: &str,
    ) -> impl Future<Output = QueryResult<()>> + Send {
        let _ = (db, marker);
        std::future::ready(Ok(()))
    }

    /// Whether the session carries `marker` (MySQL's check before a bulk on a guess); `false`
    /// (tell the database apart first) where the insert checks itself.
    #[doc(hidden)]
    fn carries_mark<D: Runner<Backend = Self>>(
        db: &mut D,
        marker: &str,
    ) -> impl Future<Output = QueryResult<bool>> + Send {
        let _ = (db, marker);
        std::future::ready(Ok(false))
    }

    /// Records on the session the `timeline` ([`Timeline`](dialect::Timeline)) seqgen checked it
    /// on; a rollback undoes it (the next reservation checks again). Only with timelines.
    #[doc(hidden)]
    fn mark_timeline<D: Runner<Backend = Self>>(
        db: &mut D,
        timeline: &str,
    ) -> impl Future<Output = QueryResult<()>> + Send {
        let _ = (db, timeline);
        std::future::ready(Ok(()))
    }

    /// Whether this server's commits wait for its connected standbys (PostgreSQL's
    /// `synchronous_standby_names`): a failover can lose the last commits of one that does not.
    #[doc(hidden)]
    fn replication<D: Runner<Backend = Self>>(
        db: &mut D,
    ) -> impl Future<Output = QueryResult<Replication>> + Send {
        let _ = db;
        std::future::ready(Ok(Replication::Waited))
    }

    /// In one query, what a reservation needs to know first: see [`Found`].
    #[doc(hidden)]
    fn identify<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
    ) -> impl Future<Output = QueryResult<Found>> + Send {
        async move {
            let found = Self::identify_on_server(db, key).await?;
            Ok(Found {
                fingerprint: Self::complete_fingerprint(found.fingerprint),
                ..found
            })
        }
    }

    /// Records `shape` on the key's row `key_row`, created if missing, unless it records one
    /// already ([`record_shape`](SharedStatements::record_shape)); the shape recorded after.
    #[doc(hidden)]
    fn claim_shape<D: Runner<Backend = Self>>(
        db: &mut D,
        key_row: Counter<'_>,
        shape: &str,
    ) -> impl Future<Output = QueryResult<Option<String>>> + Send {
        async move {
            Self::create_row(db, key_row).await?;
            Self::record_shape(db, key_row, shape).await?;
            Self::read_shape(db, key_row.key).await
        }
    }

    /// Locks the row of `counter` for the rest of the caller's transaction without waiting,
    /// creating it first if it is missing (also without waiting for another transaction creating
    /// it). Fails with an error [`is_busy`] recognises when another transaction holds it. Runs
    /// inside a savepoint (the driver's `lock_nowait`), so it may leave statements failed.
    #[doc(hidden)]
    fn lock_row_nowait<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<()>> + Send;

    /// Makes the connection's next transaction READ COMMITTED (MySQL; the default elsewhere): a
    /// follower under a REPEATABLE READ snapshot would lock every row it scans, and the gaps.
    #[doc(hidden)]
    fn read_committed_next<D: Runner<Backend = Self>>(
        db: &mut D,
    ) -> impl Future<Output = QueryResult<()>> + Send {
        let _ = db;
        std::future::ready(Ok(()))
    }

    /// Reads the `start_value` an operator set on the key's row (scope and period ''), if any.
    #[doc(hidden)]
    fn read_start<C>(conn: &mut C, key: &str) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>;

    /// The shape recorded on the key's row, read without a lock (the previews' check; a
    /// reservation reads it with [`read_shape`](SharedStatements::read_shape)).
    #[doc(hidden)]
    fn look_at_shape<C>(conn: &mut C, key: &str) -> QueryResult<Option<String>>
    where
        C: LoadConnection<Backend = Self>;

    /// Completes the [`Fingerprint`](dialect::Fingerprint) the server gave with what only the
    /// client can see (SQLite: the database file's device and inode).
    #[doc(hidden)]
    fn complete_fingerprint(fingerprint: String) -> String {
        fingerprint
    }

    /// Records `number` of `counter` in the void ledger with `reason`, unless it is there
    /// already: whether it was recorded. Looks first, since on PostgreSQL a failed insert would
    /// abort the caller's transaction.
    #[doc(hidden)]
    fn void<C>(conn: &mut C, counter: Counter<'_>, number: i64, reason: &str) -> QueryResult<bool>
    where
        C: LoadConnection<Backend = Self>;

    /// The void ledger of `counter`, in number order.
    #[doc(hidden)]
    fn voided<C>(conn: &mut C, counter: Counter<'_>) -> QueryResult<Vec<(i64, String)>>
    where
        C: LoadConnection<Backend = Self>;

    /// Starts the caller's transaction with the database's write lock where it has one lock for
    /// the whole database (SQLite): a deferred transaction that reads first cannot write once
    /// another connection has, and fails at once instead of waiting. Nothing elsewhere.
    #[doc(hidden)]
    fn lock_for_writing<C>(_conn: &mut C) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        Ok(())
    }

    /// Every counter row (all but the token row), of `key` alone with one, by key and period;
    /// `updated_at` as the database prints it.
    #[doc(hidden)]
    fn counters<C>(conn: &mut C, key: Option<&str>) -> QueryResult<Vec<CounterRow>>
    where
        C: LoadConnection<Backend = Self>;

    /// The key's row (scope and period '') settings, `batch_size` and `start_value`, locked for the
    /// rest of the transaction where a read can lock (MySQL): a change then holds the row's
    /// exclusive lock from its first statement, rather than a shared one it must upgrade while an
    /// app's transaction waits for the row (a deadlock). `None` without a key's row.
    #[doc(hidden)]
    fn lock_settings<C>(conn: &mut C, key: &str) -> QueryResult<Option<(Option<i64>, Option<i64>)>>
    where
        C: LoadConnection<Backend = Self>;

    /// The database's time now, as [`NowText`](dialect::NowText) prints it.
    #[doc(hidden)]
    fn database_now<C>(conn: &mut C) -> QueryResult<String>
    where
        C: LoadConnection<Backend = Self>;

    /// Sets `setting` on the key's row (scope and period ''), creating the row first if it is
    /// missing (and only then: creating takes a shared lock on an existing row).
    #[doc(hidden)]
    fn set_setting<C>(
        conn: &mut C,
        key: &str,
        setting: Setting,
        value: Option<i64>,
    ) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;

    /// Deletes the row of `counter` if it has a period (never a key's row, nor the counter of
    /// an undated key) and still holds `current_value`, the value the caller read: a row that
    /// took a number since is an instance still in that period, and stays. How many (0 or 1).
    #[doc(hidden)]
    fn delete_row<C>(conn: &mut C, counter: Counter<'_>, current_value: i64) -> QueryResult<usize>
    where
        C: LoadConnection<Backend = Self>;

    /// Calls `each` with every value of `column` in `table` (`[schema, ]table`) as text, and
    /// of `scope_column` with one (else `None`), row by row as the database sends them; with
    /// `only`, of the rows whose `scope_column` holds that value (compared as text, as the
    /// table's collation compares). Names are quoted as identifiers, never spliced in as SQL;
    /// the value is bound.
    #[doc(hidden)]
    fn each_id<C>(
        conn: &mut C,
        table: &[&str],
        column: &str,
        scope_column: Option<&str>,
        only: Option<&str>,
        each: &mut dyn FnMut(Option<String>, Option<String>),
    ) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;

    /// Raises `counter` to `to` if it is lower (never lowers it): how many rows changed.
    #[doc(hidden)]
    fn raise<C>(conn: &mut C, counter: Counter<'_>, to: i64) -> QueryResult<usize>
    where
        C: LoadConnection<Backend = Self>;
}

mod sealed {
    pub trait Sealed {}
}
