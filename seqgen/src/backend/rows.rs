//! The rows and values the statements read and write: which counter, what a look-up found,
//! what a reservation asks for and got, an operator's settings.

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
    /// The spec's first number of a period ([`Spec::start`](crate::Spec::start)), for a
    /// row whose key row has no `start_value`: 1 unless the spec says otherwise.
    pub start: i64,
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
            start: 1,
        }
    }

    /// The counter of `key` in `scope` and `period`.
    pub(crate) const fn new(key: &'a str, scope: &'a str, period: &'a str) -> Self {
        Counter {
            key,
            scope,
            period,
            start: 1,
        }
    }

    /// The counter of `spec`'s key in `scope` and `period`, starting at the spec's start.
    pub(crate) fn of(spec: &'a crate::Spec, scope: &'a str, period: &'a str) -> Self {
        Counter {
            // Capped by the spec's capacity, which `largest` keeps within an i64.
            start: i64::try_from(spec.counter_start()).unwrap_or(i64::MAX),
            ..Counter::new(spec.key(), scope, period)
        }
    }

    /// Whether it is the same row as `other` (whatever start each carries).
    pub(crate) fn same_row(&self, other: &Counter<'_>) -> bool {
        (self.key, self.scope, self.period) == (other.key, other.scope, other.period)
    }
}

/// A `db_key` row as [`Backend::counters`](super::Backend::counters) reads it: key, scope, period, current value, batch
/// size, start value, shape, and `updated_at` and `created_at` as text.
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
    String,
);

/// What [`Backend::identify`](super::Backend::identify) read: which database this is, how durably it commits, and the
/// key's row.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The database's fingerprint ([`Fingerprint`](super::dialect::Fingerprint), completed).
    pub fingerprint: String,
    /// The server's durability setting, as the server shows it.
    pub durability: String,
    /// The server's timeline (PostgreSQL, on a primary): one more after each promotion.
    pub timeline: Option<u32>,
    /// The token row's value, if the database has one yet.
    pub token: Option<i64>,
    /// The key row's `batch_size`, if an operator set one.
    pub batch: Option<i64>,
    /// The key row's recorded shape, if any.
    pub shape: Option<String>,
}

/// The timeline [`Timeline`](super::dialect::Timeline) read (hex), if any.
pub(crate) fn timeline(hex: Option<&str>) -> Option<u32> {
    hex.and_then(|hex| u32::from_str_radix(hex, 16).ok())
}

/// A reservation as [`Backend::reserve_identified`](super::Backend::reserve_identified) takes it.
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

impl Request<'_> {
    /// The block's size where the key row's `batch_size` is what the caller expects
    /// (`expected_batch`): [`block_size`](crate::batch::block_size), at most `largest`.
    #[cfg_attr(not(seqgen_mysql), allow(dead_code))] // MySQL's reservation checks it on the row
    pub(crate) fn expected_count(&self) -> i64 {
        let (need, batch) = (self.need.unsigned_abs(), self.batch.unsigned_abs());
        let size = crate::batch::block_size(Some(self.expected_batch), batch, need);
        i64::try_from(size).unwrap_or(i64::MAX).min(self.largest)
    }
}

/// What [`Backend::reserve_identified`](super::Backend::reserve_identified) read and did, in one statement.
#[doc(hidden)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identified {
    /// What [`Backend::identify`](super::Backend::identify) would have read, as of the statement's start.
    pub found: Found,
    /// The block's size: `need`, or the batch (`batch_size`, else the request's) if more.
    pub count: i64,
    /// The block's last number; `None` when nothing was reserved: the key row records another
    /// shape, or the block would pass `largest`.
    pub last: Option<i64>,
}

/// Whether a server's commits wait for a standby, as its standbys say: see
/// [`Backend::replication`](super::Backend::replication).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replication {
    /// Commits wait for a standby, or no standby is connected (nothing to fail over to that
    /// could lack them); every backend but PostgreSQL says so.
    Waited,
    /// Standbys are connected and commits do not wait for any of them. `settling`: every
    /// standby connected in the last [`SETTLING_SECONDS`] (or its start cannot be read), as
    /// right after a failover, when a manager such as Patroni names a synchronous standby
    /// within seconds.
    Asynchronous { settling: bool },
}

/// How long after its standbys connected a server's replication is taken as settling.
pub(crate) const SETTLING_SECONDS: u64 = 15;

/// A setting an operator may change on a key's row: see [`admin::set`](crate::admin::set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// `batch_size`: numbers per reservation in batched mode, over the spec's `batch` and the
    /// generator's growth.
    BatchSize,
    /// `start_value`: the first number of a new period; a counter behind it (an undated key's)
    /// jumps forward to it at the next reservation. It never moves a counter back.
    StartValue,
}

impl Setting {
    /// The `db_key` column.
    pub fn column(self) -> &'static str {
        match self {
            Setting::BatchSize => "batch_size",
            Setting::StartValue => "start_value",
        }
    }
}
