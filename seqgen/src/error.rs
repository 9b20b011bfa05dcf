//! The one error type of seqgen.

use diesel_seqgen_core::SpecError;

/// What went wrong while handing out IDs.
///
/// Every variant says what to do about it. Whatever the error, no number that was handed out
/// before is handed out again: a failed call at worst leaves a hole.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The `db_key` table does not exist in this database, or lacks columns of a later
    /// seqgen migration.
    #[error("the db_key table is missing or out of date: run seqgen's migrations (`diesel_seqgen::run_migrations(conn)`)")]
    MissingTable(#[source] diesel::result::Error),

    /// An ID spec was rejected when it was built.
    #[error(transparent)]
    InvalidSpec(#[from] SpecError),

    /// The counter no longer fits the pad width of the spec.
    #[error("key `{key}` ran out of numbers{}: the counter would pass {max}; raise `pad`, or add a date part so a new period starts a new counter", in_period(period))]
    Overflow {
        /// The `db_key` key name.
        key: String,
        /// The period (formatted date part; empty without a date part).
        period: String,
        /// The largest counter the spec can format.
        max: u64,
    },

    /// Every series of the spec is full in this period.
    #[error(
        "key `{key}` used up its last series `{last}`{}: add series codes or raise their max",
        in_period(period)
    )]
    SeriesExhausted {
        /// The `db_key` key name.
        key: String,
        /// The period.
        period: String,
        /// The last series code.
        last: String,
    },

    /// The spec has no numeric form, but an `i64` ID was asked for.
    #[error("key `{key}` has no numeric form: an i64 ID needs no prefix and a date part of digits only, with date + pad at most 18 digits")]
    NotNumeric {
        /// The `db_key` key name.
        key: String,
    },

    /// A scoped spec was used without a scope, or an unscoped one with a scope.
    #[error("{}", scope_message(key, *scoped))]
    ScopeMismatch {
        /// The `db_key` key name.
        key: String,
        /// Whether the spec is [scoped](diesel_seqgen_core::SpecBuilder::scoped).
        scoped: bool,
    },

    /// A scope value that cannot name a counter exactly: empty, longer than 191 characters,
    /// with a control character, or with white space at either end (which MySQL's collations
    /// ignore).
    #[error("key `{key}`: the scope {scope:?} cannot name a counter; a scope is 1 to 191 characters, without control characters or white space at either end")]
    InvalidScope {
        /// The `db_key` key name.
        key: String,
        /// The scope value.
        scope: String,
    },

    /// A gapless number was asked for outside a transaction: it could be lost before the row
    /// that uses it is written.
    #[error("key `{key}` is gapless: take its numbers inside a transaction (`conn.transaction(|conn| …)`), or insert through `diesel_seqgen::insert_into`, which opens one")]
    OutsideTransaction {
        /// The `db_key` key name.
        key: String,
    },

    /// Another transaction holds the counter, and the spec said not to wait.
    #[error("key `{key}` is busy: another transaction holds its counter; try again after it ends")]
    Busy {
        /// The `db_key` key name.
        key: String,
    },

    /// A reservation returned numbers at or below ones this generator already held for the
    /// same key and period: the counter in `db_key` went back (an operator lowered
    /// `current_value`, a partial restore of `db_key`, a server that lost committed
    /// reservations). None of the returned numbers was handed out.
    #[error("key `{key}`{}: db_key handed out {got} after this generator already held numbers up to {held}, so the counter went back; none was handed out. Set current_value back to at least {held} (or restore db_key) before taking more numbers", in_period(period))]
    CounterWentBack {
        /// The `db_key` key name.
        key: String,
        /// The period.
        period: String,
        /// The highest number this generator held.
        held: u64,
        /// The first number of the block that came back.
        got: u64,
    },

    /// A document dated further ahead of the clock than its spec allows
    /// ([`SpecBuilder::max_days_ahead`](diesel_seqgen_core::SpecBuilder::max_days_ahead)).
    #[error("key `{key}`: the document is dated {date}, more than {days} day(s) ahead of the clock: a typing error would open that period early. Allow documents dated further ahead with `SpecBuilder::max_days_ahead` (`max_days_ahead = N` in the derive)")]
    DateAhead {
        /// The `db_key` key name.
        key: String,
        /// The document's date, as given.
        date: String,
        /// How many days ahead the spec allows.
        days: u32,
    },

    /// The key's IDs were recorded with another shape (prefix, date pattern, pad, overflow,
    /// series or template): two shapes on one key can print the same ID.
    #[error("key `{key}` prints its IDs as {recorded}, but this spec prints them as {requested}: two shapes on one key can print the same ID. Give the new shape a new key; to move the key itself, set db_key.shape of its row with period '' once no instance uses the old shape")]
    ShapeChanged {
        /// The `db_key` key name.
        key: String,
        /// The shape recorded on the key's row.
        recorded: String,
        /// The shape of the spec that was refused.
        requested: String,
    },

    /// The counter cannot grow by the numbers asked for without passing the largest `i64`.
    #[error("key `{key}`{}: the counter cannot grow by {count} more without passing {}; check db_key's batch_size and start_value for this key", in_period(period), i64::MAX)]
    CounterOutOfRange {
        /// The `db_key` key name.
        key: String,
        /// The period.
        period: String,
        /// How many numbers were asked for.
        count: u64,
    },

    /// The server does not commit durably: a crash can lose reservations that were already
    /// acknowledged, and instances still serving those numbers from memory would then meet
    /// them again.
    #[error("the database server does not commit durably ({setting} = {value}): a crash could lose reservations and hand their numbers out twice. Set {setting} to {durable}, or accept the risk with `GeneratorBuilder::accept_non_durable_server` (`diesel_seqgen::global::accept_non_durable_server()` for the default generator)")]
    NotDurable {
        /// The server setting.
        setting: &'static str,
        /// Its value.
        value: String,
        /// The value that makes commits durable.
        durable: &'static str,
    },

    /// An ID given to [`void`](crate::ledger::void) is not one this spec could have produced (or, with
    /// `cycle`, not one that names a single number).
    #[error("{id:?} is not an ID of key `{key}`: {reason}")]
    InvalidId {
        /// The `db_key` key name.
        key: String,
        /// The ID given.
        id: String,
        /// Why.
        reason: String,
    },

    /// [`void`](crate::ledger::void) was asked to void a number the counter has not handed out.
    #[error(
        "key `{key}`{}: number {number} was never handed out, so it cannot be voided",
        in_period(period)
    )]
    NotIssued {
        /// The `db_key` key name.
        key: String,
        /// The period.
        period: String,
        /// The number.
        number: u64,
    },

    /// [`void`](crate::ledger::void) was asked to void a number that is voided already.
    #[error("key `{key}`{}: number {number} is voided already", in_period(period))]
    AlreadyVoided {
        /// The `db_key` key name.
        key: String,
        /// The period.
        period: String,
        /// The number.
        number: u64,
    },

    /// [`admin`](crate::admin) was asked about a key `db_key` has no row of.
    #[error("db_key has no key `{key}`; `seqgen keys` lists the keys there are")]
    UnknownKey {
        /// The key.
        key: String,
    },

    /// [`admin`](crate::admin) refused a change or a question, and changed nothing: the reason
    /// says why and what to do.
    #[error("key `{key}`: {reason}")]
    Refused {
        /// The key.
        key: String,
        /// Why, in words an operator can act on.
        reason: String,
    },

    /// Another writer numbered some rows of a follower's batch while it was under way (a row
    /// numbered by hand, or by code other than seqgen's): the batch wrote nothing, and its
    /// numbers went back with its transaction. Running it again numbers the rest
    /// ([`pending`](crate::pending)).
    #[error("key `{key}`: {numbered} of {taken} rows of {table} were numbered by another writer meanwhile; nothing was written: run again")]
    NumberedMeanwhile {
        /// The key.
        key: String,
        /// The table of the rows.
        table: String,
        /// How many rows the batch took numbers for.
        taken: usize,
        /// How many of them another writer numbered meanwhile.
        numbered: usize,
    },

    /// A new connection could not be made: the server is down or restarting, or refuses it
    /// (a follower's [`connect`](crate::pending::keep_following) tries again).
    #[error("could not connect to the database")]
    Connection(#[from] diesel::ConnectionError),

    /// A [`Generator`](crate::Generator) met a second database.
    #[error("this Generator caches numbers of another database: create one Generator per database, or use the default one (`diesel_seqgen::global::next_id`, `insert_into`), which tells databases apart")]
    DifferentDatabase,

    /// A PostgreSQL server on an older timeline than this process saw for the same database:
    /// a primary left behind by a failover, writable beside the standby promoted in its place
    /// (a split brain). Its counters stop where the failover left them, so its numbers may
    /// already be taken on the promoted server; nothing it reserved is served.
    #[error("this PostgreSQL server is on timeline {timeline}, but this process saw the same database on timeline {highest}: it is an old primary left behind by a failover, and its numbers may already be taken on the promoted server; stop it (or rebuild it as a standby with pg_rewind) and point the app at the promoted server")]
    OldTimeline {
        /// The timeline of the server this connection reaches.
        timeline: u32,
        /// The highest timeline this process saw for the same database.
        highest: u32,
    },

    /// The Galera node this connection reaches is not in the cluster's primary component
    /// (MariaDB 1047, or 1180 at a commit): cut off from the other nodes, or still joining.
    /// Nothing was reserved; the connection is of no use until the node rejoins.
    #[error("this Galera node is not part of the cluster's primary component (cut off, or still joining): nothing was reserved; use a connection to another node, and drop this one (or wait until the node has rejoined)")]
    NodeOutOfCluster(#[source] diesel::result::Error),

    /// A gapless key on a PostgreSQL primary whose commits return before a standby has them
    /// (standbys connected, `synchronous_standby_names` empty): a failover to a standby can
    /// lose the last numbers taken, and the promoted server would hand them out again.
    #[error("key `{key}` is gapless, and this PostgreSQL primary's commits do not wait for a standby (standbys are connected, and synchronous_standby_names is empty): a failover can lose the last numbers taken, and the promoted standby would hand them out again. Set synchronous_standby_names, or accept the risk with `GeneratorBuilder::accept_async_replication` (`diesel_seqgen::global::accept_async_replication()` for the default generator)")]
    AsyncReplication {
        /// The gapless key.
        key: String,
    },

    /// Running the embedded `db_key` migrations failed.
    #[error("running seqgen's migrations failed")]
    Migration(#[source] Box<dyn std::error::Error + Send + Sync>),

    /// The database aborted the transaction to keep it serializable (PostgreSQL 40001) or to
    /// break a deadlock (MySQL 1213). seqgen retries its own reservations; inside your
    /// transaction only you can.
    #[error("the database aborted the transaction (serialization failure or deadlock): roll it back and run it again, e.g. with `diesel_seqgen::retry_transaction`")]
    TransactionConflict(#[source] diesel::result::Error),

    /// The connection pool given to the generator could not hand out a connection.
    #[error("could not get a connection from the generator's pool")]
    #[cfg(feature = "r2d2")]
    Pool(#[source] diesel::r2d2::PoolError),

    /// The async connection pool given to the generator (deadpool, bb8) could not hand out a
    /// connection.
    #[error("could not get a connection from the generator's pool: {0}")]
    #[cfg(seqgen_async_pool)]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "deadpool", feature = "bb8"))))]
    AsyncPool(String),

    /// The database refused or failed a statement.
    #[error(transparent)]
    Database(diesel::result::Error),
}

/// ` in period `P``, or nothing for a key without a date part.
fn in_period(period: &str) -> String {
    if period.is_empty() {
        String::new()
    } else {
        format!(" in period `{period}`")
    }
}

/// Shorthand for `Result` with seqgen's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn scope_message(key: &str, scoped: bool) -> String {
    if scoped {
        format!("key `{key}` counts per scope: take its IDs in one (`next_id(conn, spec.scope(value))`, or `scope = \"field\"` on the derive)")
    } else {
        format!("key `{key}` has one counter, not one per scope: take its IDs without a scope (`&spec`), or build its spec with `.scoped()`")
    }
}
