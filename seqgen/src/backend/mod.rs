//! The databases seqgen runs on. Each backend module holds its reservation statement and
//! nothing else; everything above them is one generic code path.

#[cfg(seqgen_async)]
use std::future::Future;

use diesel::connection::LoadConnection;
use diesel::QueryResult;
#[cfg(seqgen_async)]
use diesel_async::AsyncConnection;
use diesel_migrations::EmbeddedMigrations;

#[cfg(seqgen_mysql)]
mod mysql;
#[cfg(seqgen_pg)]
mod pg;
#[cfg(feature = "sqlite")]
pub mod sqlite;
pub(crate) mod statement;

/// Which `db_key` row: a counter's key, scope and period.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter<'a> {
    /// The key name.
    pub key: &'a str,
    /// The scope value of a scoped key's counter; empty for an unscoped key.
    pub scope: &'a str,
    /// The formatted date part; empty without a date part.
    pub period: &'a str,
}

impl<'a> Counter<'a> {
    /// The reserved row whose value names the database.
    pub(crate) const TOKEN: Counter<'static> = Counter::key_row("");

    /// The key's row (scope and period ''): its settings and shape, for all its scopes, and
    /// the counter of an unscoped key without a date part.
    pub(crate) const fn key_row(key: &'a str) -> Self {
        Counter {
            key,
            scope: "",
            period: "",
        }
    }

    /// The counter of `key` in `scope` and `period`.
    pub(crate) const fn new(key: &'a str, scope: &'a str, period: &'a str) -> Self {
        Counter { key, scope, period }
    }
}

/// A Diesel backend seqgen can reserve numbers on: SQLite, PostgreSQL or MySQL/MariaDB,
/// each behind the cargo feature of the same name as Diesel's.
///
/// Sealed; its items are seqgen's internals.
pub trait Backend: diesel::backend::Backend + Default + sealed::Sealed {
    /// Whether a block may be reserved on a second connection while the caller's connection
    /// is inside a transaction. SQLite has one writer per database: a second connection
    /// would wait for the caller's own write lock, so there the number is taken inside the
    /// caller's transaction instead.
    #[doc(hidden)]
    const RESERVE_BESIDE_TRANSACTION: bool;

    /// Whether a gapless insert can take its numbers in the insert statement itself
    /// (`one_statement.rs`): PostgreSQL, whose data-modifying CTEs let one statement advance
    /// the counter and insert rows that read it.
    #[doc(hidden)]
    const ONE_STATEMENT_GAPLESS_INSERT: bool = false;

    /// Whether creating a counter row inside a transaction can deadlock with other
    /// transactions creating it (InnoDB's gap locks under REPEATABLE READ). Gapless mode then
    /// creates a missing row through the generator's pool, in autocommit, when it has one.
    #[doc(hidden)]
    const CREATE_ROWS_BESIDE_TRANSACTION: bool;

    /// Whether a transaction may read `db_key` before its first write to it. A deferred SQLite
    /// transaction that has read cannot write once another connection has written
    /// (`SQLITE_BUSY_SNAPSHOT`, no busy wait), so there the reservation comes first.
    #[doc(hidden)]
    const READS_FIRST_IN_TRANSACTION: bool;

    /// The backend's name in traces: `sqlite`, `postgres` or `mysql`, as the features say.
    #[doc(hidden)]
    const NAME: &'static str;

    /// The SQL function giving the larger of two values.
    #[doc(hidden)]
    const GREATEST: &'static str;

    /// The type a value is cast to for reading it as text: `TEXT`, or `CHAR` on MySQL.
    #[doc(hidden)]
    const TEXT_TYPE: &'static str = "TEXT";

    /// The database's time now, as text, as `updated_at` shows a row written now (the session's
    /// time zone where the column has none).
    #[doc(hidden)]
    const NOW_TEXT: &'static str = "CAST(CURRENT_TIMESTAMP AS TEXT)";

    /// How an insert skips rows already there: the words before `db_key`, and after the rest.
    #[doc(hidden)]
    const INSERT_IGNORING: (&'static str, &'static str);

    /// An SQL expression (text) naming the database a connection talks to, the same on every
    /// connection to it and different for a copy of it (see `identity.rs`).
    #[doc(hidden)]
    const FINGERPRINT: &'static str;

    /// An SQL expression (text) giving the server setting that decides whether a committed
    /// reservation survives a crash of the server.
    #[doc(hidden)]
    const DURABILITY: &'static str;

    /// The server setting [`DURABILITY`](Backend::DURABILITY) reads, for error messages.
    #[doc(hidden)]
    const DURABILITY_SETTING: &'static str;

    /// The value of [`DURABILITY`](Backend::DURABILITY) on a server that commits durably.
    #[doc(hidden)]
    const DURABLE: &'static str;

    /// A one-row derived table whose evaluation makes the reservation's transaction commit
    /// durably whatever the session's setting (PostgreSQL's `synchronous_commit`); a plain
    /// one-row table where commits are durable anyway.
    #[doc(hidden)]
    const DURABLE_COMMIT: &'static str = "(SELECT 1) AS durable";

    /// The embedded `db_key` migrations of this backend.
    #[doc(hidden)]
    const MIGRATIONS: EmbeddedMigrations;

    /// Adds `count` to `counter`, creating its row if it is missing, in one atomic step, and
    /// returns the new value: the numbers `new - count + 1 ..= new` are the caller's. A new row
    /// starts at its key row's `start_value` (see [`Counter::key_row`]); a counter behind its own
    /// `start_value` jumps to it. Numbers only ever move forward. When the counter is past `limit`
    /// (the largest value it may have for `count` more to fit), nothing changes and `None` comes
    /// back.
    #[doc(hidden)]
    fn reserve<C>(
        conn: &mut C,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
    ) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>;

    /// [`identify`](Backend::identify) and [`reserve`](Backend::reserve) in fewer round trips
    /// than the two: one statement on PostgreSQL; two on MySQL for an undated, unscoped key
    /// whose row records the request's shape and gives the batch it expects. `Ok(None)`
    /// with nothing reserved otherwise (nothing sent on SQLite): the caller then runs the two.
    /// See [`Identified`].
    #[doc(hidden)]
    fn reserve_identified<C>(
        _conn: &mut C,
        _request: &Request<'_>,
    ) -> QueryResult<Option<Identified>>
    where
        C: LoadConnection<Backend = Self>,
    {
        Ok(None)
    }

    /// Reads `counter` without locking it; `None` if the row is missing.
    #[doc(hidden)]
    fn read<C>(conn: &mut C, counter: Counter<'_>) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>;

    /// Reads the `start_value` an operator set on the key's row (scope and period ''), if any.
    #[doc(hidden)]
    fn read_start<C>(conn: &mut C, key: &str) -> QueryResult<Option<i64>>
    where
        C: LoadConnection<Backend = Self>;

    /// Creates the row of `counter` unless it exists, at the key row's `start_value - 1` (0
    /// without one).
    #[doc(hidden)]
    fn create_row<C>(conn: &mut C, counter: Counter<'_>) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;

    /// In one query, what a reservation needs to know first: see [`Found`].
    #[doc(hidden)]
    fn identify<C>(conn: &mut C, key: &str) -> QueryResult<Found>
    where
        C: LoadConnection<Backend = Self>;

    /// Completes the [`FINGERPRINT`](Backend::FINGERPRINT) the server gave with what only the
    /// client can see (SQLite: the database file's device and inode).
    #[doc(hidden)]
    fn complete_fingerprint(fingerprint: String) -> String {
        fingerprint
    }

    /// Records `shape` on the key's row (scope and period ''), creating the row if it is missing,
    /// unless a shape is recorded there already; returns the shape recorded afterwards.
    #[doc(hidden)]
    fn claim_shape<C>(conn: &mut C, key: &str, shape: &str) -> QueryResult<Option<String>>
    where
        C: LoadConnection<Backend = Self>;

    /// The shape recorded on the key's row, as last committed (not as a transaction's
    /// snapshot saw it: MySQL reads it with a lock); `None` without a row or a shape.
    #[doc(hidden)]
    fn read_shape<C>(conn: &mut C, key: &str) -> QueryResult<Option<String>>
    where
        C: LoadConnection<Backend = Self>;

    /// Sets `counter` back to `value` if it is still `held_end`, the end of a block this
    /// instance reserved last: whether it was.
    #[doc(hidden)]
    fn give_back<C>(
        conn: &mut C,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> QueryResult<bool>
    where
        C: LoadConnection<Backend = Self>;

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

    /// The database's time now, as [`NOW_TEXT`](Backend::NOW_TEXT) prints it.
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
        setting: crate::admin::Setting,
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

    /// Every value of `column` in `table` (`[schema, ]table`), as text; with `only`
    /// (`(column, value)`), of the rows whose column holds that value (compared as text). The
    /// names are quoted as identifiers, never spliced in as SQL; the value is bound.
    #[doc(hidden)]
    fn column_text<C>(
        conn: &mut C,
        table: &[&str],
        column: &str,
        only: Option<(&str, &str)>,
    ) -> QueryResult<Vec<Option<String>>>
    where
        C: LoadConnection<Backend = Self>;

    /// Stores `token` as this database's token, unless it has one.
    #[doc(hidden)]
    fn create_token<C>(conn: &mut C, token: i64) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;

    /// Locks the row of `counter` for the rest of the caller's transaction without waiting,
    /// creating it first if it is missing (also without waiting for another transaction creating
    /// it). Fails with an error [`is_busy`] recognises when another transaction holds it. Runs
    /// inside a savepoint, so it may leave statements failed.
    #[doc(hidden)]
    fn lock_nowait<C>(conn: &mut C, counter: Counter<'_>) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>;
}

/// The statements of [`Backend`] that the allocator core runs, on diesel-async's connections
/// (the `async-*` features). Written once with the blocking ones (see `core_queries!`).
///
/// Sealed; its items are seqgen's internals.
#[cfg(seqgen_async)]
#[doc(hidden)]
pub trait AsyncBackend: Backend {
    /// [`Backend::reserve`].
    fn reserve<C>(
        conn: &mut C,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
    ) -> impl Future<Output = QueryResult<Option<i64>>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::reserve_identified`].
    fn reserve_identified<C>(
        _conn: &mut C,
        _request: &Request<'_>,
    ) -> impl Future<Output = QueryResult<Option<Identified>>> + Send
    where
        C: AsyncConnection<Backend = Self>,
    {
        async { Ok(None) }
    }

    /// [`Backend::read`].
    fn read<C>(
        conn: &mut C,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<Option<i64>>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::create_row`].
    fn create_row<C>(
        conn: &mut C,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<()>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::identify`].
    fn identify<C>(conn: &mut C, key: &str) -> impl Future<Output = QueryResult<Found>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::claim_shape`].
    fn claim_shape<C>(
        conn: &mut C,
        key: &str,
        shape: &str,
    ) -> impl Future<Output = QueryResult<Option<String>>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::read_shape`].
    fn read_shape<C>(
        conn: &mut C,
        key: &str,
    ) -> impl Future<Output = QueryResult<Option<String>>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::give_back`].
    fn give_back<C>(
        conn: &mut C,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> impl Future<Output = QueryResult<bool>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::create_token`].
    fn create_token<C>(conn: &mut C, token: i64) -> impl Future<Output = QueryResult<()>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::lock_nowait`].
    fn lock_nowait<C>(
        conn: &mut C,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<()>> + Send
    where
        C: AsyncConnection<Backend = Self>;
}

mod sealed {
    pub trait Sealed {}
}

/// A `db_key` row as [`Backend::counters`] reads it: key, scope, period, current value, batch
/// size, start value, shape, and `updated_at` as text.
#[doc(hidden)]
pub type CounterRow = (
    String,
    String,
    String,
    i64,
    Option<i64>,
    Option<i64>,
    Option<String>,
    String,
);

/// What [`Backend::identify`] read: which database this is, how durably it commits, and the
/// key's row.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The database's fingerprint ([`Backend::FINGERPRINT`], completed).
    pub fingerprint: String,
    /// The server's durability setting, as the server shows it.
    pub durability: String,
    /// The token row's value, if the database has one yet.
    pub token: Option<i64>,
    /// The key row's `batch_size`, if an operator set one.
    pub batch: Option<i64>,
    /// The key row's recorded shape, if any.
    pub shape: Option<String>,
}

/// A reservation as [`Backend::reserve_identified`] takes it.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The counter.
    pub counter: Counter<'a>,
    /// The numbers the caller needs at least.
    pub need: i64,
    /// The block the generator asks for, unless the key row's `batch_size` says otherwise.
    pub batch: i64,
    /// The batch the caller expects: the key row's `batch_size` as last read, else `batch`.
    pub expected_batch: i64,
    /// The largest counter value the block may end at.
    pub largest: i64,
    /// The spec's shape: a key row that records another one is left alone.
    pub shape: &'a str,
}

/// What [`Backend::reserve_identified`] read and did, in one statement.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// What [`Backend::identify`] would have read, as of the statement's start.
    pub found: Found,
    /// The block's size: `need`, or the batch (`batch_size`, else the request's) if more.
    pub count: i64,
    /// The block's last number; `None` when nothing was reserved: the key row records another
    /// shape, or the block would pass `largest`.
    pub last: Option<i64>,
}

/// Whether `err` says a lock could not be taken without waiting: PostgreSQL 55P03 "could not
/// obtain lock on row", MySQL 3572 "…NOWAIT is set", MariaDB 1205 "Lock wait timeout
/// exceeded", SQLite "database is locked".
pub(crate) fn is_busy(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            msg.contains("could not obtain lock")
                || msg.contains("lock timeout")
                || msg.contains("NOWAIT")
                || msg.contains("Lock wait timeout")
                || msg.contains("database is locked")
        }
        _ => false,
    }
}

/// Whether the database aborted a statement (or the transaction around it) to keep
/// transactions serializable or to break a deadlock, so that running it again may succeed:
/// Diesel's `SerializationFailure` kind, and MySQL's deadlock (1213), which diesel-async's
/// MySQL connection reports without a kind.
pub(crate) fn is_conflict(err: &diesel::result::Error) -> bool {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};
    match err {
        DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _) => true,
        DieselError::DatabaseError(_, info) => info
            .message()
            .starts_with("Deadlock found when trying to get lock"),
        _ => false,
    }
}

/// Whether `err` says the `db_key` table (or a column a later migration adds) is missing.
/// The three backends word it differently: "no such table: db_key",
/// `relation "db_key" does not exist`, "Table 'test.db_key' doesn't exist".
pub(crate) fn is_missing_table(err: &diesel::result::Error) -> bool {
    match err {
        diesel::result::Error::DatabaseError(_, info) => {
            let msg = info.message();
            let table_missing = msg.contains("db_key")
                && (msg.contains("no such table")
                    || msg.contains("does not exist")
                    || msg.contains("doesn't exist"));
            // A db_key from before the settings migration.
            let column_missing = (msg.contains("start_value")
                || msg.contains("batch_size")
                || msg.contains("shape"))
                && (msg.contains("no such column")
                    || msg.contains("does not exist")
                    || msg.contains("Unknown column"));
            table_missing || column_missing
        }
        _ => false,
    }
}

/// The statements of the allocator core, written once and stamped into each backend's
/// [`Backend`] impl (`sync`: Diesel's `RunQueryDsl` in scope) and, with an `async-*` feature,
/// its [`AsyncBackend`] impl (`async`: diesel-async's). A statement's run is written
/// `query.run(conn) $(.$aw)*`: `.await` in the async stamp, nothing in the sync one. Diesel's
/// queries are concrete per backend, so they are stamped per `impl` rather than written once
/// generically.
macro_rules! core_queries {
    (sync $(, $lock:ident)?) => {
        $crate::backend::core_queries!(@ [] [] [diesel::connection::LoadConnection]
            [$crate::backend::Backend] $(, $lock)?);
    };
    (async $(, $lock:ident)?) => {
        $crate::backend::core_queries!(@ [async] [await] [diesel_async::AsyncConnection]
            [$crate::backend::AsyncBackend] $(, $lock)?);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*] [$($this:tt)*] $(, $lock:ident)?) => {
        $($kw)* fn create_row<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{CreateRow, Statement};
            Statement::<CreateRow>::new(counter, 0)
                .execute(conn) $(.$aw)*
                .map(drop)
        }

        $($kw)* fn give_back<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            held_end: i64,
            value: i64,
        ) -> QueryResult<bool>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::schema::db_key;
            diesel::update(db_key::table.find((counter.key, counter.scope, counter.period)))
                .filter(db_key::current_value.eq(held_end))
                .set(db_key::current_value.eq(value))
                .execute(conn) $(.$aw)*
                .map(|changed| changed == 1)
        }

        $($kw)* fn create_token<C>(conn: &mut C, token: i64) -> QueryResult<()>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{CreateToken, Statement};
            Statement::<CreateToken>::new($crate::backend::Counter::TOKEN, token)
                .execute(conn) $(.$aw)*
                .map(drop)
        }

        $($kw)* fn read<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::schema::db_key;
            db_key::table
                .find((counter.key, counter.scope, counter.period))
                .select(db_key::current_value)
                .first(conn) $(.$aw)*
                .optional()
        }

        $($kw)* fn identify<C>(conn: &mut C, key: &str) -> QueryResult<$crate::backend::Found>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{Identify, Statement};
            type Row = (
                String,
                String,
                Option<String>,
                Option<i64>,
                Option<i64>,
                Option<String>,
            );
            let rows: Vec<Row> =
                Statement::<Identify>::new($crate::backend::Counter::key_row(key), 0)
                    .load(conn) $(.$aw)* ?;
            // `iter().next()`: diesel-async's `RunQueryDsl::first` would shadow the slice's.
            let first = rows.iter().next().ok_or(diesel::result::Error::NotFound)?;
            let row = |name: &str| rows.iter().find(|r| r.2.as_deref() == Some(name));
            Ok($crate::backend::Found {
                fingerprint: <Self as $crate::backend::Backend>::complete_fingerprint(
                    first.0.clone(),
                ),
                durability: first.1.clone(),
                token: row("").and_then(|r| r.3),
                batch: row(key).and_then(|r| r.4),
                shape: row(key).and_then(|r| r.5.clone()),
            })
        }

        $($kw)* fn claim_shape<C>(conn: &mut C, key: &str, shape: &str) -> QueryResult<Option<String>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::schema::db_key;
            <Self as $($this)*>::create_row(conn, $crate::backend::Counter::key_row(key))
                $(.$aw)* ?;
            diesel::update(db_key::table.find((key, "", "")))
                .filter(db_key::shape.is_null())
                .set(db_key::shape.eq(shape))
                .execute(conn) $(.$aw)* ?;
            <Self as $($this)*>::read_shape(conn, key) $(.$aw)*
        }

        $($kw)* fn read_shape<C>(conn: &mut C, key: &str) -> QueryResult<Option<String>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::schema::db_key;
            db_key::table
                .find((key, "", ""))
                .select(db_key::shape)
                $(.$lock())?
                .first::<Option<String>>(conn) $(.$aw)*
                .optional()
                .map(Option::flatten)
        }
    };
}

/// The queries of the admin side (`seqgen::admin`, the CLI, voids, previews), which only the
/// blocking [`Backend`] runs, the same way on every backend.
macro_rules! admin_queries {
    ($($lock:ident)?) => {
        fn void<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            number: i64,
            reason: &str,
        ) -> QueryResult<bool>
        where
            C: LoadConnection<Backend = Self>,
        {
            use crate::schema::db_key_void;
            let there: Option<i64> = db_key_void::table
                .find((counter.key, counter.scope, counter.period, number))
                .select(db_key_void::number)
                .first(conn)
                .optional()?;
            if there.is_some() {
                return Ok(false);
            }
            diesel::insert_into(db_key_void::table)
                .values((
                    db_key_void::key_name.eq(counter.key),
                    db_key_void::scope.eq(counter.scope),
                    db_key_void::period.eq(counter.period),
                    db_key_void::number.eq(number),
                    db_key_void::reason.eq(reason),
                ))
                .execute(conn)
                .map(|_| true)
        }

        fn voided<C>(conn: &mut C, counter: $crate::backend::Counter<'_>) -> QueryResult<Vec<(i64, String)>>
        where
            C: LoadConnection<Backend = Self>,
        {
            use crate::schema::db_key_void;
            db_key_void::table
                .filter(db_key_void::key_name.eq(counter.key))
                .filter(db_key_void::scope.eq(counter.scope))
                .filter(db_key_void::period.eq(counter.period))
                .order(db_key_void::number)
                .select((db_key_void::number, db_key_void::reason))
                .load(conn)
        }

        fn read_start<C>(conn: &mut C, key: &str) -> QueryResult<Option<i64>>
        where
            C: LoadConnection<Backend = Self>,
        {
            db_key::table
                .find((key, "", ""))
                .select(db_key::start_value)
                .first::<Option<i64>>(conn)
                .optional()
                .map(Option::flatten)
        }

        fn counters<C>(conn: &mut C, key: Option<&str>) -> QueryResult<Vec<$crate::backend::CounterRow>>
        where
            C: LoadConnection<Backend = Self>,
        {
            let updated_at = diesel::dsl::sql::<diesel::sql_types::Text>(&format!(
                "CAST(updated_at AS {})",
                Self::TEXT_TYPE
            ));
            let mut query = db_key::table
                .filter(db_key::key_name.ne($crate::backend::Counter::TOKEN.key))
                .select((
                    db_key::key_name,
                    db_key::scope,
                    db_key::period,
                    db_key::current_value,
                    db_key::batch_size,
                    db_key::start_value,
                    db_key::shape,
                    updated_at,
                ))
                .order((db_key::key_name, db_key::scope, db_key::period))
                .into_boxed();
            if let Some(key) = key {
                query = query.filter(db_key::key_name.eq(key));
            }
            query.load(conn)
        }

        fn database_now<C>(conn: &mut C) -> QueryResult<String>
        where
            C: LoadConnection<Backend = Self>,
        {
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(Self::NOW_TEXT))
                .get_result(conn)
        }

        fn set_setting<C>(
            conn: &mut C,
            key: &str,
            setting: crate::admin::Setting,
            value: Option<i64>,
        ) -> QueryResult<()>
        where
            C: LoadConnection<Backend = Self>,
        {
            let update = |conn: &mut C| {
                let row = db_key::table.find((key, "", ""));
                match setting {
                    crate::admin::Setting::BatchSize => diesel::update(row)
                        .set(db_key::batch_size.eq(value))
                        .execute(conn),
                    crate::admin::Setting::StartValue => diesel::update(row)
                        .set(db_key::start_value.eq(value))
                        .execute(conn),
                }
            };
            if update(conn)? == 0 {
                <Self as $crate::backend::Backend>::create_row(
                    conn,
                    $crate::backend::Counter::key_row(key),
                )?;
                update(conn)?;
            }
            Ok(())
        }

        fn lock_settings<C>(
            conn: &mut C,
            key: &str,
        ) -> QueryResult<Option<(Option<i64>, Option<i64>)>>
        where
            C: LoadConnection<Backend = Self>,
        {
            db_key::table
                .find((key, "", ""))
                .select((db_key::batch_size, db_key::start_value))
                $(.$lock())?
                .first(conn)
                .optional()
        }

        fn delete_row<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            current_value: i64,
        ) -> QueryResult<usize>
        where
            C: LoadConnection<Backend = Self>,
        {
            diesel::delete(db_key::table.find((counter.key, counter.scope, counter.period)))
                .filter(db_key::period.ne(""))
                .filter(db_key::current_value.eq(current_value))
                .execute(conn)
        }

        fn column_text<C>(
            conn: &mut C,
            table: &[&str],
            column: &str,
            only: Option<(&str, &str)>,
        ) -> QueryResult<Vec<Option<String>>>
        where
            C: LoadConnection<Backend = Self>,
        {
            use diesel::query_builder::QueryBuilder as _;

            #[derive(QueryableByName)]
            struct Value {
                #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
                value: Option<String>,
            }
            let quote = |name: &str| -> QueryResult<String> {
                let mut builder = <Self as diesel::backend::Backend>::QueryBuilder::default();
                builder.push_identifier(name)?;
                Ok(builder.finish())
            };
            let table = table.iter().map(|name| quote(name)).collect::<QueryResult<Vec<_>>>()?;
            let mut sql = format!(
                "SELECT CAST({} AS {}) AS value FROM {}",
                quote(column)?,
                Self::TEXT_TYPE,
                table.join(".")
            );
            let Some((only, value)) = only else {
                let values: Vec<Value> = diesel::sql_query(sql).load(conn)?;
                return Ok(values.into_iter().map(|v| v.value).collect());
            };
            let mut placeholder = <Self as diesel::backend::Backend>::QueryBuilder::default();
            placeholder.push_bind_param();
            sql.push_str(&format!(
                " WHERE CAST({} AS {}) = {}",
                quote(only)?,
                Self::TEXT_TYPE,
                placeholder.finish()
            ));
            let values: Vec<Value> = diesel::sql_query(sql)
                .bind::<diesel::sql_types::Text, _>(value)
                .load(conn)?;
            Ok(values.into_iter().map(|v| v.value).collect())
        }
    };
}

/// The reservation of the backends with `RETURNING` (SQLite, PostgreSQL): one
/// [`UpsertReturning`](statement::UpsertReturning), refused (no row) past the limit.
#[cfg(any(feature = "sqlite", seqgen_pg))]
macro_rules! upsert_reserve {
    (sync) => {
        $crate::backend::upsert_reserve!(@ [] [] [diesel::connection::LoadConnection]);
    };
    (async) => {
        $crate::backend::upsert_reserve!(@ [async] [await] [diesel_async::AsyncConnection]);
    };
    (@ [$($kw:tt)*] [$($aw:tt)*] [$($conn:tt)*]) => {
        $($kw)* fn reserve<C>(
            conn: &mut C,
            counter: $crate::backend::Counter<'_>,
            count: i64,
            limit: i64,
        ) -> QueryResult<Option<i64>>
        where
            C: $($conn)*<Backend = Self>,
        {
            use $crate::backend::statement::{Statement, UpsertReturning};
            Statement::<UpsertReturning>::new(counter, count)
                .limited(limit)
                .get_result(conn) $(.$aw)*
                .optional()
        }
    };
}
pub(crate) use admin_queries;
pub(crate) use core_queries;
#[cfg(any(feature = "sqlite", seqgen_pg))]
pub(crate) use upsert_reserve;
