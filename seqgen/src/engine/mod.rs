//! The handle users hold: one database's blocks of numbers and how they are configured.
//! Serving and refilling live in `take` (batched) and `gapless`; below them, `cache` holds
//! the blocks and `reserve` talks to the database.

mod builder;
mod capacity;
pub use builder::GeneratorBuilder;
mod emit;
pub(crate) use emit::{check_scope, formatted, formatted_one, numeric};
mod gapless;
mod keys;
#[cfg(all(test, seqgen_loom))]
mod model_check;
pub(crate) use gapless::InInsert;
mod preview;
pub(crate) use preview::{last_value_at, peek_next_at, peek_of};
mod refill;
mod release;
mod take;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::backend::IdConnection;
use crate::batch::BatchPolicy;
use crate::cache::KeyState;
use crate::clock::Clock;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::reserve::identity::Identity;
use crate::reserve::pool::PoolReserve;
use crate::reserve::risks::Acceptance;
use crate::stats::KeyStats;
use crate::sync::RwLock;
use diesel_seqgen_core::__private::{CacheKey, PrehashedHasher};
use diesel_seqgen_core::Scoped;

/// The next generator's [`Inner::uid`].
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// Hands out IDs for one database, reserving a block of numbers per round trip and serving
/// the rest from memory.
///
/// Cheap to clone (clones share their blocks), `Send + Sync`. Use one `Generator` per
/// database; it checks at every reservation that it is still talking to the same one and
/// fails with [`Error::DifferentDatabase`] otherwise. The functions of [`crate::global`] use a
/// process-wide default that tells databases apart: once per connection for connections
/// checked out of an r2d2 pool, in the insert itself for `insert_into(..).execute` on any other,
/// and with one query per call for the rest.
///
/// # Blocks
/// A key's first block holds the spec's `batch` numbers; while blocks last less than a second
/// the next is twice as big (up to 100,000, and a hundredth of what a period can hold), and
/// it halves back when they last long: see [`GeneratorBuilder::adaptive_batch`] and
/// [`fixed_batch`](GeneratorBuilder::fixed_batch). With a [pool](GeneratorBuilder::pool), the
/// next block is reserved in the background once 80 % of the current one is served
/// (PostgreSQL, MySQL), so a caller rarely waits for a round trip; one that empties the block
/// first waits for that reservation rather than making its own. Without a pool, the caller
/// that finds the block empty reserves on its own connection while the others wait. The
/// background reservation takes an idle pool connection only, so give the pool one more
/// connection than your threads hold at once.
///
/// # Scopes
/// A [scoped](diesel_seqgen_core::SpecBuilder::scoped) spec has a block per scope value
/// (`spec.scope("acme")`), reserved and refilled as above. A generator keeps blocks for at
/// most 4096 scopes of a spec: a new scope past that drops the least recently used half of
/// those no call is using, whose unused numbers go back to their counters.
///
/// # Transactions
/// Numbers are cached only from reservations that have committed. When the connection is
/// inside a transaction and the cache is empty, the generator either reserves a block through
/// its [pool](GeneratorBuilder::pool) in a separate autocommit statement (PostgreSQL, MySQL),
/// or takes exactly the numbers asked for inside the caller's transaction and caches nothing
/// (no pool, and always on SQLite, where a second connection could not write while the
/// caller holds the write lock). The second way holds the `db_key` row lock until the caller
/// commits, which serialises writers of that key.
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
///
/// let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
/// let generator = diesel_seqgen::Generator::new();
/// assert_eq!(generator.next_id(&mut conn, &spec)?, "ORD0001");
/// assert_eq!(generator.next_ids(&mut conn, &spec, 2)?, ["ORD0002", "ORD0003"]);
/// assert_eq!(generator.reservations(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Generator {
    inner: Arc<Inner>,
}

struct Inner {
    /// Unique in the process (never reused): owns the state this generator keeps in specs'
    /// [memo slots](diesel_seqgen_core::__private::Memo).
    uid: u64,
    clock: Arc<dyn Clock>,
    keys: RwLock<HashMap<CacheKey, Arc<KeyState>, BuildHasherDefault<PrehashedHasher>>>,
    /// The states of scoped specs, by spec and then scope value; at most [`MAX_SCOPES`] per
    /// spec.
    scoped: RwLock<ScopedKeys>,
    /// How many scope states this generator created: the clock of [`KeyState::touch`].
    scope_tick: AtomicU64,
    /// Scope states dropped for [`MAX_SCOPES`] whose blocks are still to be given back.
    evicted: Mutex<Vec<Arc<KeyState>>>,
    /// The statistics of scope states dropped for [`MAX_SCOPES`], by key.
    retired: Mutex<Vec<KeyStats>>,
    /// The database this generator serves, set at its first reservation.
    database: OnceLock<Identity>,
    /// Set when built, or later for the process-wide default (`use_pool`); read once per
    /// reservation, never on the cached path.
    pool: RwLock<Option<Arc<dyn PoolReserve>>>,
    non_durable: Acceptance,
    /// Whether gapless numbers may be taken on a primary that replicates asynchronously.
    async_replication: Acceptance,
    batch: BatchPolicy,
    reservations: AtomicU64,
    /// The PostgreSQL timeline of its last block (0: none yet, or another backend).
    timeline: AtomicU32,
    /// The failovers this process had seen (`reserve::failovers_seen`) when gapless numbers
    /// were last found safe to take here: one more since, and the next are checked again.
    replication_checked: AtomicU64,
}

/// The most scopes of one spec a generator keeps a state (a block, in batched mode) for. A new
/// scope past it drops the least recently used half of those no thread is using: their unused
/// numbers go back to their counters at the generator's next reservation (holes if another
/// instance reserved after them), and a dropped scope used again reserves a new block.
const MAX_SCOPES: usize = 4096;

type ScopedKeys =
    HashMap<CacheKey, HashMap<Box<str>, Arc<KeyState>>, BuildHasherDefault<PrehashedHasher>>;

impl Default for Generator {
    fn default() -> Self {
        Generator::new()
    }
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("database", &self.inner.database.get())
            .field("pool", &self.pool().is_some())
            .field("reservations", &self.reservations())
            .finish_non_exhaustive()
    }
}

impl Generator {
    /// The next ID of `spec` (`&spec`, or `spec.scope("acme")` for a
    /// [scoped](diesel_seqgen_core::SpecBuilder::scoped) spec: see [`Scoped`]), formatted.
    ///
    /// A scope (a company, an order, a tenant: 1 to 191 characters, without control
    /// characters or white space at either end, else [`Error::InvalidScope`]) has its own
    /// counter: each counts from 1 in every period, with its own block in batched mode and its
    /// own row lock in gapless mode, so gapless transactions of different scopes never wait
    /// for each other. The scope is not printed: IDs repeat across scopes, and are unique
    /// together with the scope (make that pair the table's unique key). A scoped spec without
    /// a scope, or an unscoped one with a scope, fails with [`Error::ScopeMismatch`].
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").pad(4).scoped().build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("acme"))?, "INV0001");
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("acme"))?, "INV0002");
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("globex"))?, "INV0001");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_id<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<String>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut id = String::new();
        self.take(conn, target, 1, formatted_one(spec, &mut id))?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` ([`next_id`](Self::next_id)), formatted, with at most one
    /// reservation.
    pub fn next_ids<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<String>>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut ids = Vec::with_capacity(n);
        self.take(conn, target, n as u64, formatted(spec, &mut ids))?;
        Ok(ids)
    }

    /// The next ID of `spec` ([`next_id`](Self::next_id)) in its `i64` form; the spec must be
    /// [numeric](diesel_seqgen_core::Spec::is_numeric).
    pub fn next_number<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<i64>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut id = 0;
        self.take(conn, target, 1, numeric(spec, |n| id = n)?)?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` ([`next_id`](Self::next_id)) in their `i64` form, with at
    /// most one reservation.
    pub fn next_numbers<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<i64>>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut ids = Vec::with_capacity(n);
        let emit = numeric(spec, |id| ids.push(id))?;
        self.take(conn, target, n as u64, emit)?;
        Ok(ids)
    }

    /// How many reservations (database round trips that took numbers) this generator made.
    pub fn reservations(&self) -> u64 {
        self.inner.reservations.load(Ordering::Relaxed)
    }

    /// What this generator did for each key it served, in key order: IDs served from memory,
    /// reservations and the numbers they took, numbers abandoned (holes) and given back,
    /// retries, conflicts and reservation times. See [`KeyStats`].
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let spec = diesel_seqgen::Spec::builder("orders").date("").pad(4).batch(10).build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// generator.next_ids(&mut conn, &spec, 3)?; // reserves 1..=10, serves 1..=3
    /// generator.next_id(&mut conn, &spec)?;     // 4, from memory
    /// let stats = &generator.stats()[0];
    /// assert_eq!((stats.key.as_str(), stats.reservations, stats.numbers_reserved), ("orders", 1, 10));
    /// assert_eq!(stats.served_from_memory, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Vec<KeyStats> {
        let retired = self
            .inner
            .retired
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let evicted: Vec<Arc<KeyState>> = self
            .inner
            .evicted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        crate::stats::per_key(
            self.states()
                .iter()
                .chain(&evicted)
                .map(|state| state.stats())
                .chain(retired),
        )
    }

    /// The pool reservations may use (see [`GeneratorBuilder::pool`]).
    fn pool(&self) -> Option<Arc<dyn PoolReserve>> {
        self.inner
            .pool
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The pool, if calls on driver `D` may use it: a blocking pool for blocking calls, an
    /// async one for async calls.
    fn pool_for<D: Driver>(&self) -> Option<Arc<dyn PoolReserve>> {
        self.pool().filter(|pool| pool.blocking() == D::BLOCKING)
    }

    /// Gives this generator `pool` (the process-wide default's, by `use_pool`): it keeps its
    /// blocks, and reserves through the pool from its next reservation on.
    #[cfg(seqgen_pool)]
    pub(crate) fn set_pool(&self, pool: Arc<dyn PoolReserve>) {
        *self
            .inner
            .pool
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(pool);
    }

    /// Whether `other` is this generator (a clone of it), not merely one like it.
    pub(crate) fn is(&self, other: &Generator) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Unique in the process, never reused.
    pub(crate) fn uid(&self) -> u64 {
        self.inner.uid
    }

    /// Remembers the database this generator serves, or refuses a different one.
    fn bind(&self, identity: Identity) -> Result<()> {
        if *self.inner.database.get_or_init(|| identity.clone()) == identity {
            Ok(())
        } else {
            Err(Error::DifferentDatabase)
        }
    }
}
