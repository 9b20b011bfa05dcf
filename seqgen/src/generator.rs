//! The handle users hold: the blocks of numbers cached for one database, and the rules for
//! refilling them without ever handing out a number twice.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use diesel::connection::{LoadConnection, TransactionManager};
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::Connection;

use crate::backend::{is_busy, Backend, Found};
use crate::block::{Cursor, KeyState};
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::identity::{identify, random_token, Identity, NonDurable};
use seqgen_core::__private::{CacheKey, Period, PrehashedHasher};
use seqgen_core::{Mode, Spec};

/// Hands out IDs for one database, reserving `batch` numbers per round trip and serving the
/// rest from memory.
///
/// Cheap to clone (clones share their blocks), `Send + Sync`. Use one `Generator` per
/// database; it checks at every reservation that it is still talking to the same one and
/// fails with [`Error::DifferentDatabase`] otherwise. The free functions
/// ([`next_id`](crate::next_id), ...) use a process-wide default that tells databases apart on
/// every call, at the cost of one query.
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
    clock: Arc<dyn Clock>,
    keys: RwLock<HashMap<CacheKey, Arc<KeyState>, BuildHasherDefault<PrehashedHasher>>>,
    /// The database this generator serves, set at its first reservation.
    database: OnceLock<Identity>,
    pool: Option<Box<dyn PoolReserve>>,
    non_durable: NonDurable,
    reservations: AtomicU64,
}

/// Configures a [`Generator`]; see [`Generator::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct GeneratorBuilder {
    clock: Arc<dyn Clock>,
    pool: Option<Box<dyn PoolReserve>>,
    non_durable: NonDurable,
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
            .field("pool", &self.inner.pool.is_some())
            .field("reservations", &self.reservations())
            .finish_non_exhaustive()
    }
}

impl GeneratorBuilder {
    /// Where time comes from (default: [`SystemClock`]).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// A pool of connections to the same database, used to reserve blocks in their own
    /// transaction while the caller's connection is inside one (PostgreSQL, MySQL). Without
    /// it, numbers taken inside a transaction are taken in that transaction, uncached.
    pub fn pool<C>(mut self, pool: Pool<ConnectionManager<C>>) -> Self
    where
        C: R2D2Connection + LoadConnection + 'static,
        C::Backend: Backend,
    {
        self.pool = Some(Box::new(pool));
        self
    }

    /// Reserve blocks even on a server that does not commit durably (MySQL/MariaDB with
    /// `innodb_flush_log_at_trx_commit` other than 1, PostgreSQL with `fsync = off`), which a
    /// generator refuses otherwise ([`Error::NotDurable`]). Only for development databases: a
    /// server crash can then lose reservations whose numbers this generator still holds, and
    /// hand them out again.
    pub fn accept_non_durable_server(mut self) -> Self {
        self.non_durable = NonDurable::Accept;
        self
    }

    /// Builds the generator.
    pub fn build(self) -> Generator {
        Generator {
            inner: Arc::new(Inner {
                clock: self.clock,
                keys: RwLock::default(),
                database: OnceLock::new(),
                pool: self.pool,
                non_durable: self.non_durable,
                reservations: AtomicU64::new(0),
            }),
        }
    }
}

impl Generator {
    /// A generator on the system clock, without a pool.
    pub fn new() -> Self {
        Generator::builder().build()
    }

    /// Configures a generator.
    pub fn builder() -> GeneratorBuilder {
        GeneratorBuilder {
            clock: Arc::new(SystemClock),
            pool: None,
            non_durable: NonDurable::Refuse,
        }
    }

    /// A process-wide default generator for the database `identity`.
    fn default_for(identity: Identity, pool: Option<Box<dyn PoolReserve>>) -> Self {
        let mut builder = Generator::builder();
        builder.pool = pool;
        builder.non_durable = NonDurable::AsProcess;
        let generator = builder.build();
        let _ = generator.inner.database.set(identity);
        generator
    }

    /// The next ID of `spec`, formatted.
    pub fn next_id<C>(&self, conn: &mut C, spec: &Spec) -> Result<String>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut id = String::new();
        self.take(conn, spec, 1, |period, counters| {
            id = spec.format(&period.text, counters.start);
            Ok(())
        })?;
        Ok(id)
    }

    /// The next `n` IDs of `spec`, formatted, with at most one reservation.
    pub fn next_ids<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut ids = Vec::with_capacity(n);
        self.take(conn, spec, n as u64, |period, counters| {
            ids.extend(counters.map(|c| spec.format(&period.text, c)));
            Ok(())
        })?;
        Ok(ids)
    }

    /// The next ID of `spec` in its `i64` form; the spec must be
    /// [numeric](Spec::is_numeric).
    pub fn next_number<C>(&self, conn: &mut C, spec: &Spec) -> Result<i64>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut id = 0;
        self.take_numeric(conn, spec, 1, |n| id = n)?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` in their `i64` form, with at most one reservation.
    pub fn next_numbers<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let mut ids = Vec::with_capacity(n);
        self.take_numeric(conn, spec, n as u64, |id| ids.push(id))?;
        Ok(ids)
    }

    /// How many reservations (database round trips that took numbers) this generator made.
    pub fn reservations(&self) -> u64 {
        self.inner.reservations.load(Ordering::Relaxed)
    }

    fn take_numeric<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        n: u64,
        mut push: impl FnMut(i64),
    ) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let not_numeric = || Error::NotNumeric {
            key: spec.key().to_owned(),
        };
        if !spec.is_numeric() {
            return Err(not_numeric());
        }
        self.take(conn, spec, n, |period, counters| {
            for c in counters {
                // `take` refused counters past the capacity; a widened counter can still
                // outgrow the 18 digits of an i64.
                push(spec.numeric_in(period, c).ok_or_else(|| Error::Overflow {
                    key: spec.key().to_owned(),
                    period: period.text.clone(),
                    max: c - 1,
                })?);
            }
            Ok(())
        })
    }

    /// Takes `n` counters of `spec`'s current period and hands them to `emit` as at most two
    /// ranges: first from the cached block, then from a new reservation.
    fn take<C, F>(&self, conn: &mut C, spec: &Spec, n: u64, mut emit: F) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if n == 0 {
            return Ok(());
        }
        if let Mode::Gapless { nowait } = spec.mode() {
            return self.take_gapless(conn, spec, n, nowait, emit);
        }
        let clock = &*self.inner.clock;
        let mut need = n;

        // 1. Numbers from the committed block, if it belongs to the current period. This is
        // the hot path: one read lock, one mutex, no allocation but the caller's.
        let known = {
            let keys = self
                .inner
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            match keys.get(spec.cache_key()) {
                Some(state) => {
                    let mut cursor = state.cursor();
                    cursor.roll_to(spec, clock);
                    serve(&mut cursor, spec, &mut need, &mut emit)?;
                    if need == 0 {
                        return Ok(());
                    }
                    Some((Arc::clone(state), cursor.period.clone()))
                }
                None => None,
            }
        };
        let (state, period) = match known {
            Some(known) => known,
            None => {
                let state = self.insert_key(spec);
                let mut cursor = state.cursor();
                cursor.roll_to(spec, clock);
                let period = cursor.period.clone();
                drop(cursor);
                (state, period)
            }
        };
        // A request that can never fit is refused before anything is reserved.
        if need > largest(spec) {
            return Err(refused(spec, &period, need));
        }

        // 2. Inside the caller's transaction without a second connection: take exactly what is
        // needed in that transaction and cache nothing, since a rollback takes it back.
        let in_transaction = in_transaction(conn);
        let through_pool =
            in_transaction && C::Backend::RESERVE_BESIDE_TRANSACTION && self.inner.pool.is_some();
        if in_transaction && !through_pool {
            let claim = self.shape_before_reserving(conn, spec, &state)?;
            let (last, _) = reserve_fitting(conn, spec, &period, need, need, Retry::No)?;
            self.claim_shape(conn, spec, &state, claim)?;
            self.inner.reservations.fetch_add(1, Ordering::Relaxed);
            let mine = block_ending_at(last, need)?;
            return emit(&period, checked(spec, &period, mine)?);
        }

        // 3. Refill: one thread reserves, the others wait here and then find the new block.
        let _refill = state.refill();
        {
            let mut cursor = state.cursor();
            if cursor.period == period {
                serve(&mut cursor, spec, &mut need, &mut emit)?;
            }
        }
        if need == 0 {
            return Ok(());
        }
        let (last, count) = if through_pool {
            self.reserve_through_pool(conn, spec, &period, need)?
        } else {
            self.reserve_committed(conn, spec, &period, need)?
        };
        let block = block_ending_at(last, count)?;
        // A block at or below numbers this generator held: serving it would repeat them.
        state
            .note_block(&period.text, &block)
            .map_err(|held| Error::CounterWentBack {
                key: spec.key().to_owned(),
                period: period.text.clone(),
                held,
                got: block.start,
            })?;
        let mine = block.start..block.start + need;
        state.cursor().refill(&period, mine.end..block.end);
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Gapless mode: the numbers are taken in the caller's transaction, which holds the
    /// counter row locked until it ends; nothing is cached, so a rollback gives them back.
    fn take_gapless<C, F>(
        &self,
        conn: &mut C,
        spec: &Spec,
        n: u64,
        nowait: bool,
        mut emit: F,
    ) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if !in_transaction(conn) {
            return Err(Error::OutsideTransaction {
                key: spec.key().to_owned(),
            });
        }
        let period = Period::new(spec.period_at(self.inner.clock.now()));
        if n > largest(spec) {
            return Err(refused(spec, &period, n));
        }
        let state = self.key_state(spec);
        let claim = self.shape_before_reserving(conn, spec, &state)?;
        // MySQL with a pool: a missing row is created beside the caller's transaction, in
        // autocommit, so the transaction only ever locks an existing row. Looked for on the
        // pool's connection too: in the caller's transaction, under SERIALIZABLE, the read
        // would take a lock that the creation then waits for.
        let beside = match self.inner.pool.as_deref() {
            Some(pool) if C::Backend::CREATE_ROWS_BESIDE_TRANSACTION => Some(pool),
            _ => None,
        };
        if let Some(pool) = beside {
            if !state.row_known(&period.text) {
                pool.create_row(spec.key(), &period.text)?;
            }
        }
        if nowait {
            lock_nowait(conn, spec.key(), &period.text)?;
        }
        // Not retried: a serialization failure aborts the caller's whole transaction, which
        // only the caller can run again (`Error::TransactionConflict`).
        let (last, _) = reserve_fitting(conn, spec, &period, n, n, Retry::No)?;
        self.claim_shape(conn, spec, &state, claim)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        if beside.is_some() {
            state.remember_row(&period.text);
        }
        let mine = block_ending_at(last, n)?;
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Reserves a block of at least `need` numbers on the caller's connection, outside any
    /// transaction: the statement commits before it returns, so the block may be cached.
    /// Returns the last number of the block and its size.
    fn reserve_committed<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        period: &Period,
        need: u64,
    ) -> Result<(i64, u64)>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let (identity, last, count) =
            reserve_block(conn, spec, period, need, self.inner.non_durable, None)?;
        self.bind(identity)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        Ok((last, count))
    }

    /// Reserves a block of at least `need` numbers through the pool while the caller's
    /// connection is inside a transaction (which is never handed a lock on the `db_key` row).
    fn reserve_through_pool<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        period: &Period,
        need: u64,
    ) -> Result<(i64, u64)>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let Some(pool) = self.inner.pool.as_deref() else {
            return self.reserve_committed(conn, spec, period, need);
        };
        // The caller's database (its token only if it has one yet): the pool must point at
        // the same one. Only the token row is read, which no reservation ever locks.
        let (expected, _) = identify(conn, "", false)?;
        let (identity, last, count) =
            pool.reserve(spec, period, need, self.inner.non_durable, &expected)?;
        self.bind(identity)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        Ok((last, count))
    }

    /// Refuses a spec whose shape differs from the one recorded on its key, before a
    /// reservation inside the caller's transaction; once per generator and key. Returns
    /// whether no shape is recorded yet, so that [`claim_shape`](Self::claim_shape) records it
    /// after the reservation: recording it first would lock the key's row before the counter
    /// row, and a `nowait` transaction would then wait on that lock instead of saying busy.
    fn shape_before_reserving<C>(&self, conn: &mut C, spec: &Spec, state: &KeyState) -> Result<bool>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        if state.shape_known(spec.shape()) {
            return Ok(false);
        }
        match self.inner.pool.as_deref() {
            // Claimed beside the transaction, in autocommit: no lock is held for the caller.
            Some(pool) if C::Backend::CREATE_ROWS_BESIDE_TRANSACTION => pool.check_shape(spec)?,
            _ if !C::Backend::READS_FIRST_IN_TRANSACTION => return Ok(true),
            _ => match C::Backend::identify(conn, spec.key())?.shape {
                Some(recorded) => same_shape(spec, recorded)?,
                None => return Ok(true),
            },
        }
        state.remember_shape(spec.shape());
        Ok(false)
    }

    /// Records the spec's shape on its key inside the caller's transaction, when
    /// [`shape_before_reserving`](Self::shape_before_reserving) found none, or refuses the
    /// spec if another shape was recorded meanwhile (the caller then rolls back, which gives
    /// the number back).
    fn claim_shape<C>(&self, conn: &mut C, spec: &Spec, state: &KeyState, claim: bool) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        if claim {
            check_shape(conn, spec, None, Retry::No)?;
            state.remember_shape(spec.shape());
        }
        Ok(())
    }

    /// Remembers the database this generator serves, or refuses a different one.
    fn bind(&self, identity: Identity) -> Result<()> {
        if *self.inner.database.get_or_init(|| identity.clone()) == identity {
            Ok(())
        } else {
            Err(Error::DifferentDatabase)
        }
    }

    fn key_state(&self, spec: &Spec) -> Arc<KeyState> {
        let keys = self
            .inner
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        match keys.get(spec.cache_key()) {
            Some(state) => Arc::clone(state),
            None => {
                drop(keys);
                self.insert_key(spec)
            }
        }
    }

    fn insert_key(&self, spec: &Spec) -> Arc<KeyState> {
        let mut keys = self
            .inner
            .keys
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        Arc::clone(keys.entry(spec.cache_key().clone()).or_default())
    }
}

/// A type-erased r2d2 pool that can reserve a block on one of its connections.
trait PoolReserve: Send + Sync {
    /// Reserves a block on the pool's database, which must be the one `expected` describes;
    /// returns its identity, the last number of the block and its size.
    fn reserve(
        &self,
        spec: &Spec,
        period: &Period,
        need: u64,
        non_durable: NonDurable,
        expected: &Found,
    ) -> Result<(Identity, i64, u64)>;

    /// Creates the counter row (`key`, `period`) unless it exists, in autocommit.
    fn create_row(&self, key: &str, period: &str) -> Result<()>;

    /// Checks (and records, if none is) the shape of `spec`'s key, in autocommit.
    fn check_shape(&self, spec: &Spec) -> Result<()>;
}

impl<C> PoolReserve for Pool<ConnectionManager<C>>
where
    C: R2D2Connection + LoadConnection + 'static,
    C::Backend: Backend,
{
    fn reserve(
        &self,
        spec: &Spec,
        period: &Period,
        need: u64,
        non_durable: NonDurable,
        expected: &Found,
    ) -> Result<(Identity, i64, u64)> {
        let mut pooled = self.get().map_err(Error::Pool)?;
        reserve_block(
            &mut *pooled,
            spec,
            period,
            need,
            non_durable,
            Some(expected),
        )
    }

    fn create_row(&self, key: &str, period: &str) -> Result<()> {
        let mut pooled = self.get().map_err(Error::Pool)?;
        let conn: &mut C = &mut pooled;
        if C::Backend::read(conn, key, period)?.is_some() {
            return Ok(());
        }
        retrying(|| C::Backend::create_row(conn, key, period))
    }

    fn check_shape(&self, spec: &Spec) -> Result<()> {
        let mut pooled = self.get().map_err(Error::Pool)?;
        let conn: &mut C = &mut pooled;
        let recorded = C::Backend::identify(conn, spec.key())?.shape;
        check_shape(conn, spec, recorded, Retry::Yes)
    }
}

/// Reserves a committed block of at least `need` numbers on `conn`, outside any transaction,
/// after checking which database it is (it must match `expected`, if given), that the server
/// commits durably and that the key has `spec`'s shape: one query for all three, then the
/// reservation. Returns the database's identity, the last number and the block's size:
/// `need`, or the batch (the key row's `batch_size` if an operator set one, else the spec's)
/// if that is more and still fits.
fn reserve_block<C>(
    conn: &mut C,
    spec: &Spec,
    period: &Period,
    need: u64,
    non_durable: NonDurable,
    expected: Option<&Found>,
) -> Result<(Identity, i64, u64)>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let (found, identity) = identify(conn, spec.key(), true)?;
    // `identify` created the token if it was missing.
    let identity = identity.ok_or(Error::DifferentDatabase)?;
    if expected.is_some_and(|e| !identity.matches(e)) {
        return Err(Error::DifferentDatabase);
    }
    non_durable.check::<C::Backend>(&found)?;
    check_shape(conn, spec, found.shape, Retry::Yes)?;
    let count = block_size(found.batch, spec, need);
    let (last, count) = reserve_fitting(conn, spec, period, count, need, Retry::Yes)?;
    Ok((identity, last, count))
}

/// Refuses `spec` if its key's row records another shape; records it if none is recorded.
fn check_shape<C>(conn: &mut C, spec: &Spec, recorded: Option<String>, retry: Retry) -> Result<()>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let recorded = match recorded {
        Some(recorded) => recorded,
        None => {
            let mut claim = || C::Backend::claim_shape(conn, spec.key(), spec.shape());
            match retry {
                Retry::Yes => retrying(claim)?,
                Retry::No => claim()?,
            }
            .unwrap_or_default()
        }
    };
    same_shape(spec, recorded)
}

/// Refuses `spec` unless `recorded` is its shape.
fn same_shape(spec: &Spec, recorded: String) -> Result<()> {
    if recorded == spec.shape() {
        Ok(())
    } else {
        Err(Error::ShapeChanged {
            key: spec.key().to_owned(),
            recorded,
            requested: spec.shape().to_owned(),
        })
    }
}

/// Whether a reservation runs in its own transaction, where a serialization failure or a
/// deadlock may simply be tried again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    Yes,
    No,
}

/// Reserves `count` numbers, or only `need` when `count` would pass the spec's capacity (or
/// `i64::MAX`); refuses with nothing written when even `need` does not fit. Returns the last
/// number and how many were reserved.
fn reserve_fitting<C>(
    conn: &mut C,
    spec: &Spec,
    period: &Period,
    count: u64,
    need: u64,
    retry: Retry,
) -> Result<(i64, u64)>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let largest = largest(spec);
    let mut attempt = |count: u64| -> Result<Option<i64>> {
        // Both fit in an i64: `need <= largest` was checked, and `count` is capped below.
        let (count_sql, limit) = ((count as i64), (largest - count) as i64);
        let mut reserve = || C::Backend::reserve(conn, spec.key(), &period.text, count_sql, limit);
        match retry {
            Retry::Yes => retrying(reserve),
            Retry::No => Ok(reserve()?),
        }
    };
    let count = count.min(largest);
    if let Some(last) = attempt(count)? {
        return Ok((last, count));
    }
    if count > need {
        if let Some(last) = attempt(need)? {
            return Ok((last, need));
        }
    }
    Err(refused(spec, period, need))
}

/// The largest counter a spec can take: its capacity, within an `i64`.
fn largest(spec: &Spec) -> u64 {
    spec.capacity().min(i64::MAX as u64)
}

/// The error for `count` numbers that do not fit: past the spec's capacity, or past `i64`.
fn refused(spec: &Spec, period: &Period, count: u64) -> Error {
    if spec.capacity() <= i64::MAX as u64 {
        capacity_error(spec, period)
    } else {
        Error::CounterOutOfRange {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            count,
        }
    }
}

/// How often a reservation in its own transaction is tried when the database aborts it to
/// keep transactions serializable (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE) or
/// to break a deadlock (MySQL 1213).
const RESERVE_ATTEMPTS: u32 = 20;

/// Runs autocommit statements, retrying serialization failures (which also hit the writes
/// around a reservation: the token, the key's shape). Safe because a failed statement was
/// rolled back whole: it took no number.
pub(crate) fn retrying<T>(mut reserve: impl FnMut() -> diesel::QueryResult<T>) -> Result<T> {
    let mut attempt = 1;
    loop {
        match reserve() {
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::SerializationFailure,
                _,
            )) if attempt < RESERVE_ATTEMPTS => {
                // Back off a little more each time, with jitter, so contending instances and
                // threads do not retry in lockstep.
                let step = 200 * u64::from(attempt);
                let jitter = (random_token() as u64) % step;
                std::thread::sleep(std::time::Duration::from_micros(step + jitter));
                attempt += 1;
            }
            result => return Ok(result?),
        }
    }
}

/// Locks the counter row for the rest of the caller's transaction, or fails with
/// [`Error::Busy`] at once. The attempt runs in a savepoint, so a busy row leaves the caller's
/// transaction usable (PostgreSQL would otherwise abort it).
fn lock_nowait<C>(conn: &mut C, key: &str, period: &str) -> Result<()>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    match conn.transaction(|conn| C::Backend::lock_nowait(conn, key, period)) {
        Ok(()) => Ok(()),
        Err(e) if is_busy(&e) => Err(Error::Busy {
            key: key.to_owned(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// Whether the connection is inside a transaction Diesel knows of. A connection whose
/// transaction state is broken counts as inside one: nothing reserved on it is cached.
pub(crate) fn in_transaction<C: Connection>(conn: &mut C) -> bool {
    C::TransactionManager::transaction_manager_status_mut(conn)
        .transaction_depth()
        .map_or(true, |depth| depth.is_some())
}

/// The counters `last - count + 1 ..= last`.
fn block_ending_at(last: i64, count: u64) -> Result<Range<u64>> {
    let end = u64::try_from(last)
        .ok()
        .and_then(|last| last.checked_add(1))
        .filter(|&end| end > count)
        .ok_or_else(|| {
            Error::Database(diesel::result::Error::DeserializationError(
                format!("db_key returned {last} after adding {count}: the row was changed by hand")
                    .into(),
            ))
        })?;
    Ok(end - count..end)
}

/// Hands out what the cursor's block still holds, up to `need`.
fn serve<F>(cursor: &mut Cursor, spec: &Spec, need: &mut u64, emit: &mut F) -> Result<()>
where
    F: FnMut(&Period, Range<u64>) -> Result<()>,
{
    let got = cursor.take(*need);
    if got.is_empty() {
        return Ok(());
    }
    *need -= got.end - got.start;
    let got = checked(spec, &cursor.period, got)?;
    emit(&cursor.period, got)
}

/// Refuses counters past the spec's capacity: an overflow, or the last series full.
fn checked(spec: &Spec, period: &Period, counters: Range<u64>) -> Result<Range<u64>> {
    if counters.end - 1 <= spec.capacity() {
        return Ok(counters);
    }
    Err(capacity_error(spec, period))
}

/// The spec's capacity is used up in `period`: an overflow, or the last series full.
fn capacity_error(spec: &Spec, period: &Period) -> Error {
    match spec.series() {
        Some(series) => Error::SeriesExhausted {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            last: series.codes().last().cloned().unwrap_or_default(),
        },
        None => Error::Overflow {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            max: spec.capacity(),
        },
    }
}

/// How many numbers a reservation takes: what is needed, or a batch if that is more. The
/// batch is the key row's `batch_size` when an operator set one (a positive value), else the
/// spec's.
fn block_size(batch_override: Option<i64>, spec: &Spec, need: u64) -> u64 {
    let batch = batch_override
        .and_then(|b| u64::try_from(b).ok())
        .filter(|&b| b > 0)
        .unwrap_or(u64::from(spec.batch()));
    need.max(batch)
}

/// The process-wide default generators, one per database.
fn defaults() -> std::sync::MutexGuard<'static, HashMap<Identity, Generator>> {
    static DEFAULTS: OnceLock<Mutex<HashMap<Identity, Generator>>> = OnceLock::new();
    DEFAULTS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Gives the process-wide default generator (the one behind [`next_id`], `assign_ids` and
/// [`insert_into`](crate::insert_into)) a pool for the database the pool connects to: blocks
/// needed inside your transactions are then reserved beside them (PostgreSQL, MySQL), and
/// your transactions never hold the counter row. Call it once at start-up, per database.
///
/// ```
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::SqliteConnection;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.db");
/// let pool = Pool::builder()
///     .connection_customizer(Box::new(seqgen::sqlite::SqliteSetup))
///     .build(ConnectionManager::<SqliteConnection>::new(path.to_str().unwrap()))?;
/// seqgen::run_migrations(&mut *pool.get()?)?;
/// seqgen::use_pool(pool)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn use_pool<C>(pool: Pool<ConnectionManager<C>>) -> Result<()>
where
    C: R2D2Connection + LoadConnection + 'static,
    C::Backend: Backend,
{
    let identity = {
        let mut conn = pool.get().map_err(Error::Pool)?;
        identify(&mut *conn, "", true)?
            .1
            .ok_or(Error::DifferentDatabase)?
    };
    let generator = Generator::default_for(identity.clone(), Some(Box::new(pool)));
    // A generator this replaces keeps serving the block it holds: both are disjoint.
    defaults().insert(identity, generator);
    Ok(())
}

/// The process-wide default: one generator per database, told apart by the database's token.
pub(crate) fn default_generator<C>(conn: &mut C) -> Result<Generator>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let in_transaction = in_transaction(conn);
    // On SQLite, inside a transaction, numbers are taken in that transaction anyway; reading
    // the token first would make it a reader that must upgrade to a writer, which SQLite
    // refuses with "database is locked" under contention instead of waiting.
    if in_transaction && !C::Backend::RESERVE_BESIDE_TRANSACTION {
        return Ok(Generator::new());
    }
    // Inside a transaction the token is not created: a rollback would take it back. Without
    // one, a throwaway generator takes the numbers in that transaction, uncached.
    let Some(identity) = identify(conn, "", !in_transaction)?.1 else {
        return Ok(Generator::new());
    };
    Ok(defaults()
        .entry(identity.clone())
        .or_insert_with(|| Generator::default_for(identity, None))
        .clone())
}

/// The next ID of `spec` from the process-wide default generator, which keeps one cache per
/// database (one query per call tells them apart: see `identity.rs`). See
/// [`Generator::next_id`].
pub fn next_id<C>(conn: &mut C, spec: &Spec) -> Result<String>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_id(conn, spec)
}

/// The next `n` IDs of `spec` from the process-wide default generator.
pub fn next_ids<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_ids(conn, spec, n)
}

/// The next `i64` ID of `spec` from the process-wide default generator.
pub fn next_number<C>(conn: &mut C, spec: &Spec) -> Result<i64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_number(conn, spec)
}

/// The next `n` `i64` IDs of `spec` from the process-wide default generator.
pub fn next_numbers<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_numbers(conn, spec, n)
}
