//! The handle users hold: one database's blocks of numbers and how they are configured.
//! Serving and refilling live in `take` (batched) and `gapless`; below them, `cache` holds
//! the blocks and `reserve` talks to the database.

mod builder;
pub use builder::GeneratorBuilder;
mod gapless;
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
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use diesel::connection::LoadConnection;

use crate::backend::Backend;
use crate::batch::BatchPolicy;
use crate::cache::KeyState;
use crate::clock::Clock;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::reserve::identity::{Identity, NonDurable};
use crate::reserve::pool::PoolReserve;
use crate::stats::KeyStats;
use crate::sync::RwLock;
use seqgen_core::__private::{CacheKey, Period, PrehashedHasher};
use seqgen_core::Spec;

/// The next generator's [`Inner::uid`].
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// Hands out IDs for one database, reserving a block of numbers per round trip and serving
/// the rest from memory.
///
/// Cheap to clone (clones share their blocks), `Send + Sync`. Use one `Generator` per
/// database; it checks at every reservation that it is still talking to the same one and
/// fails with [`Error::DifferentDatabase`] otherwise. The free functions
/// ([`next_id`](crate::next_id), ...) use a process-wide default that tells databases apart:
/// once per connection for connections checked out of an r2d2 pool, with one query per call
/// for any other.
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
/// A [scoped](seqgen_core::SpecBuilder::scoped) spec has a block per scope value
/// ([`next_id_in`](Generator::next_id_in)), reserved and refilled as above. A generator keeps
/// blocks for at most 4096 scopes of a spec: a new scope past that drops the least recently
/// used half of those no call is using, whose unused numbers become holes.
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
/// seqgen::run_migrations(&mut conn)?;
///
/// let spec = seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
/// let generator = seqgen::Generator::new();
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
    /// [memo slots](seqgen_core::__private::Memo).
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
    non_durable: NonDurable,
    batch: BatchPolicy,
    reservations: AtomicU64,
}

/// The most scopes of one spec a generator keeps a state (a block, in batched mode) for. A new
/// scope past it drops the least recently used half of those no thread is using: their unused
/// numbers go back to their counters at the generator's next reservation (holes if another
/// instance reserved after them), and a dropped scope used again reserves a new block.
const MAX_SCOPES: usize = 4096;

type ScopedKeys =
    HashMap<CacheKey, HashMap<Box<str>, Arc<KeyState>>, BuildHasherDefault<PrehashedHasher>>;

/// What hands counters out as formatted IDs, appended to `ids`.
pub(crate) fn formatted<'a>(
    spec: &'a Spec,
    ids: &'a mut Vec<String>,
) -> impl FnMut(&Period, Range<u64>) -> Result<()> + 'a {
    |period, counters| {
        ids.extend(counters.map(|c| spec.format(&period.text, c)));
        Ok(())
    }
}

/// What hands one counter out as a formatted ID, into `id` (the hot path of `next_id`: no
/// `Vec` for one ID).
pub(crate) fn formatted_one<'a>(
    spec: &'a Spec,
    id: &'a mut String,
) -> impl FnMut(&Period, Range<u64>) -> Result<()> + 'a {
    |period, counters| {
        *id = spec.format(&period.text, counters.start);
        Ok(())
    }
}

/// What hands counters out as `i64` IDs to `push`; refuses a spec that is not
/// [numeric](Spec::is_numeric).
pub(crate) fn numeric<'a>(
    spec: &'a Spec,
    mut push: impl FnMut(i64) + 'a,
) -> Result<impl FnMut(&Period, Range<u64>) -> Result<()> + 'a> {
    if !spec.is_numeric() {
        return Err(Error::NotNumeric {
            key: spec.key().to_owned(),
        });
    }
    Ok(move |period: &Period, counters: Range<u64>| {
        for c in counters {
            match spec.numeric_in(period, c) {
                Some(id) => push(id),
                None => return Err(too_wide(spec, period, c)),
            }
        }
        Ok(())
    })
}

/// `take` refused counters past the capacity; a widened counter can still outgrow the 18
/// digits of an `i64`. Out of line, so that the closure of [`numeric`] stays small.
#[cold]
#[inline(never)]
fn too_wide(spec: &Spec, period: &Period, counter: u64) -> Error {
    Error::Overflow {
        key: spec.key().to_owned(),
        period: period.text.clone(),
        max: counter - 1,
    }
}

/// Refuses a scope `spec` cannot count in: any for an unscoped spec, none (`""`) for a scoped
/// one, and text `db_key.scope` cannot hold exactly.
pub(crate) fn check_scope(spec: &Spec, scope: &str) -> Result<()> {
    if spec.is_scoped() == scope.is_empty() {
        return Err(Error::ScopeMismatch {
            key: spec.key().to_owned(),
            scoped: spec.is_scoped(),
        });
    }
    // As for keys: MariaDB's PAD SPACE collations compare `"a "` equal to `"a"`.
    if scope.chars().count() > seqgen_core::MAX_KEY_LEN
        || scope.starts_with(char::is_whitespace)
        || scope.ends_with(char::is_whitespace)
        || scope.chars().any(char::is_control)
    {
        return Err(Error::InvalidScope {
            key: spec.key().to_owned(),
            scope: scope.to_owned(),
        });
    }
    Ok(())
}

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
    /// The next ID of `spec`, formatted.
    pub fn next_id<C>(&self, conn: &mut C, spec: &Spec) -> Result<String>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        self.next_id_in(conn, spec, "")
    }

    /// The next `n` IDs of `spec`, formatted, with at most one reservation.
    pub fn next_ids<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        self.next_ids_in(conn, spec, "", n)
    }

    /// The next ID of `spec` in its `i64` form; the spec must be
    /// [numeric](Spec::is_numeric).
    pub fn next_number<C>(&self, conn: &mut C, spec: &Spec) -> Result<i64>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        self.next_number_in(conn, spec, "")
    }

    /// The next `n` IDs of `spec` in their `i64` form, with at most one reservation.
    pub fn next_numbers<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        self.next_numbers_in(conn, spec, "", n)
    }

    /// The next ID of a [scoped](seqgen_core::SpecBuilder::scoped) `spec` in `scope` (a company, an
    /// order, a tenant: 1 to 191 characters, without control characters or white space at either
    /// end, else [`Error::InvalidScope`]), from that scope's own counter. Each scope counts from 1
    /// in every period, with its own block in batched mode and its own row lock in gapless mode, so
    /// gapless transactions of different scopes never wait for each other. The scope is not
    /// printed: IDs repeat across scopes, and are unique together with the scope (make that pair
    /// the table's unique key).
    ///
    /// `scope` is `""` for an unscoped spec (what [`next_id`](Self::next_id) does): a scoped
    /// spec without a scope, or an unscoped one with a scope, fails with
    /// [`Error::ScopeMismatch`].
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// seqgen::run_migrations(&mut conn)?;
    /// let invoices = seqgen::Spec::builder("invoices").prefix("INV").date("").pad(4).scoped().build()?;
    ///
    /// let generator = seqgen::Generator::new();
    /// assert_eq!(generator.next_id_in(&mut conn, &invoices, "acme")?, "INV0001");
    /// assert_eq!(generator.next_id_in(&mut conn, &invoices, "acme")?, "INV0002");
    /// assert_eq!(generator.next_id_in(&mut conn, &invoices, "globex")?, "INV0001");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_id_in<C>(&self, conn: &mut C, spec: &Spec, scope: &str) -> Result<String>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut id = String::new();
        self.take(conn, spec, scope, 1, formatted_one(spec, &mut id))?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` in `scope` ([`next_id_in`](Self::next_id_in)), with at most
    /// one reservation.
    pub fn next_ids_in<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: usize,
    ) -> Result<Vec<String>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut ids = Vec::with_capacity(n);
        self.take(conn, spec, scope, n as u64, formatted(spec, &mut ids))?;
        Ok(ids)
    }

    /// The next ID of `spec` in `scope` ([`next_id_in`](Self::next_id_in)) in its `i64` form.
    pub fn next_number_in<C>(&self, conn: &mut C, spec: &Spec, scope: &str) -> Result<i64>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut id = 0;
        self.take(conn, spec, scope, 1, numeric(spec, |n| id = n)?)?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` in `scope` ([`next_id_in`](Self::next_id_in)) in their
    /// `i64` form, with at most one reservation.
    pub fn next_numbers_in<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: usize,
    ) -> Result<Vec<i64>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut ids = Vec::with_capacity(n);
        self.take(
            conn,
            spec,
            scope,
            n as u64,
            numeric(spec, |id| ids.push(id))?,
        )?;
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
    /// seqgen::run_migrations(&mut conn)?;
    /// let spec = seqgen::Spec::builder("orders").date("").pad(4).batch(10).build()?;
    ///
    /// let generator = seqgen::Generator::new();
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

    /// Remembers the database this generator serves, or refuses a different one.
    fn bind(&self, identity: Identity) -> Result<()> {
        if *self.inner.database.get_or_init(|| identity.clone()) == identity {
            Ok(())
        } else {
            Err(Error::DifferentDatabase)
        }
    }

    /// Every key's state, taken out of the maps so that no lock is held while they are used.
    fn states(&self) -> Vec<Arc<KeyState>> {
        let mut states: Vec<Arc<KeyState>> = self
            .inner
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        let scoped = self
            .inner
            .scoped
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        states.extend(scoped.values().flat_map(|scopes| scopes.values().cloned()));
        states
    }

    /// The state of `spec`'s key in this generator, from the spec's memo slot when this
    /// generator owns it, else from the map of keys.
    #[inline]
    fn memoized<'s>(&self, spec: &'s Spec) -> Option<&'s Arc<KeyState>> {
        spec.memo().get(self.inner.uid)?.downcast_ref()
    }

    /// The state of `spec`'s key in `scope` (`""` unscoped), if this generator has one.
    fn find_key(&self, spec: &Spec, scope: &str) -> Option<Arc<KeyState>> {
        if scope.is_empty() {
            if let Some(state) = self.memoized(spec) {
                return Some(Arc::clone(state));
            }
            let keys = self
                .inner
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            keys.get(spec.cache_key()).cloned()
        } else {
            let scoped = self
                .inner
                .scoped
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            self.scope_state(&scoped, spec, scope).cloned()
        }
    }

    /// The state of `spec`'s key in `scope`, from the map of scopes (read-locked by the
    /// caller), noted as used now.
    fn scope_state<'m>(
        &self,
        scoped: &'m ScopedKeys,
        spec: &Spec,
        scope: &str,
    ) -> Option<&'m Arc<KeyState>> {
        let state = scoped.get(spec.cache_key())?.get(scope)?;
        state.touch(self.inner.scope_tick.load(Ordering::Relaxed));
        Some(state)
    }

    fn key_state(&self, spec: &Spec, scope: &str) -> Arc<KeyState> {
        self.find_key(spec, scope)
            .unwrap_or_else(|| self.insert_key(spec, scope))
    }

    fn insert_key(&self, spec: &Spec, scope: &str) -> Arc<KeyState> {
        let new = || Arc::new(KeyState::new(spec.key(), scope));
        if !scope.is_empty() {
            let mut scoped = self
                .inner
                .scoped
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            let scopes = scoped.entry(spec.cache_key().clone()).or_default();
            if let Some(state) = scopes.get(scope) {
                return Arc::clone(state); // another thread came first
            }
            if scopes.len() >= MAX_SCOPES {
                self.drop_least_recent(scopes);
            }
            let state = new();
            state.touch(self.inner.scope_tick.fetch_add(1, Ordering::Relaxed) + 1);
            scopes.insert(scope.into(), Arc::clone(&state));
            return state;
        }
        let mut keys = self
            .inner
            .keys
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let state = Arc::clone(keys.entry(spec.cache_key().clone()).or_insert_with(new));
        self.memoize(spec, &state);
        state
    }

    /// Drops the least recently used half of `scopes` among those no thread holds (only the
    /// map does: no call is serving or reserving from them); their blocks go back to their
    /// counters at the next reservation.
    fn drop_least_recent(&self, scopes: &mut HashMap<Box<str>, Arc<KeyState>>) {
        let mut idle: Vec<(u64, Box<str>)> = scopes
            .iter()
            .filter(|(_, state)| Arc::strong_count(state) == 1)
            .map(|(scope, state)| (state.last_used(), scope.clone()))
            .collect();
        idle.sort_unstable();
        let dropped: Vec<Arc<KeyState>> = idle
            .into_iter()
            .take(MAX_SCOPES / 2)
            .filter_map(|(_, scope)| scopes.remove(&scope))
            .collect();
        self.evict(dropped);
    }

    /// Keeps `state` (the unscoped map's entry for `spec`: keys are never removed, so the two
    /// stay the same) in the spec's memo slot, if no generator keeps something there yet.
    fn memoize(&self, spec: &Spec, state: &Arc<KeyState>) {
        // The slot publishes the state through a `OnceLock`, which loom cannot see: under the
        // model check, states travel through the map's lock only.
        if cfg!(seqgen_loom) {
            return;
        }
        if spec.memo().is_empty() {
            spec.memo()
                .keep(self.inner.uid, Box::new(Arc::clone(state)));
        }
    }
}
