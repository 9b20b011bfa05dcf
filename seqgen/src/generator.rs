//! The handle users hold: the blocks of numbers cached for one database, and the rules for
//! refilling them without ever handing out a number twice.

use std::collections::HashMap;
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};

use diesel::connection::{LoadConnection, TransactionManager};
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::Connection;

use crate::backend::{is_busy, Backend, TOKEN_KEY};
use crate::block::{Cursor, KeyState};
use crate::clock::{Clock, SystemClock};
use crate::error::{Error, Result};
use crate::spec::{CacheKey, Mode, Period, PrehashedHasher, Spec};

/// Hands out IDs for one database, reserving `batch` numbers per round trip and serving the
/// rest from memory.
///
/// Cheap to clone (clones share their blocks), `Send + Sync`. Use one `Generator` per
/// database; it checks at every reservation that it is still talking to the same one and
/// fails with [`Error::DifferentDatabase`] otherwise. The free functions
/// ([`next_id`](crate::next_id), ...) use a process-wide default that tells databases apart on
/// every call, at the cost of one primary-key read.
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
    /// The token of the database this generator serves, set at its first reservation.
    database: OnceLock<i64>,
    pool: Option<Box<dyn PoolReserve>>,
    reservations: AtomicU64,
}

/// Configures a [`Generator`]; see [`Generator::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct GeneratorBuilder {
    clock: Arc<dyn Clock>,
    pool: Option<Box<dyn PoolReserve>>,
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

    /// Builds the generator.
    pub fn build(self) -> Generator {
        Generator {
            inner: Arc::new(Inner {
                clock: self.clock,
                keys: RwLock::default(),
                database: OnceLock::new(),
                pool: self.pool,
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
        }
    }

    /// A generator already bound to the database with `token`.
    pub(crate) fn bound_to(token: i64) -> Self {
        let generator = Generator::new();
        let _ = generator.inner.database.set(token);
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

        // 2. Inside the caller's transaction without a second connection: take exactly what is
        // needed in that transaction and cache nothing, since a rollback takes it back.
        let in_transaction = in_transaction(conn);
        let through_pool =
            in_transaction && C::Backend::RESERVE_BESIDE_TRANSACTION && self.inner.pool.is_some();
        if in_transaction && !through_pool {
            let last = C::Backend::reserve(conn, spec.key(), &period.text, to_i64(need))?;
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
            self.reserve_through_pool(conn, spec, &period.text, need)?
        } else {
            self.reserve_committed(conn, spec, &period.text, need)?
        };
        let block = block_ending_at(last, count)?;
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
        // MySQL with a pool: a missing row is created beside the caller's transaction, in
        // autocommit, so the transaction only ever locks an existing row. Looked for on the
        // pool's connection too: in the caller's transaction, under SERIALIZABLE, the read
        // would take a lock that the creation then waits for.
        let beside = match self.inner.pool.as_deref() {
            Some(pool) if C::Backend::CREATE_ROWS_BESIDE_TRANSACTION => {
                Some((pool, self.key_state(spec)))
            }
            _ => None,
        };
        if let Some((pool, state)) = &beside {
            if !state.row_known(&period.text) {
                pool.create_row(spec.key(), &period.text)?;
            }
        }
        if nowait {
            lock_nowait(conn, spec.key(), &period.text)?;
        }
        // Not retried: a serialization failure aborts the caller's whole transaction, which
        // only the caller can run again (`Error::TransactionConflict`).
        let last = C::Backend::reserve(conn, spec.key(), &period.text, to_i64(n))?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        if let Some((_, state)) = &beside {
            state.remember_row(&period.text);
        }
        let mine = block_ending_at(last, n)?;
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Reserves a block of at least `need` numbers on the caller's connection, outside any
    /// transaction: the statement commits before it returns, so the block may be cached.
    /// Returns the last number of the block and its size: `need`, or the batch (the key
    /// row's `batch_size` if an operator set one, else the spec's), whichever is larger.
    fn reserve_committed<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        period: &str,
        need: u64,
    ) -> Result<(i64, u64)>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let (token, batch) = token_and_batch(conn, spec.key())?;
        self.bind(token)?;
        let count = block_size(batch, spec, need);
        let last = retrying(|| C::Backend::reserve(conn, spec.key(), period, to_i64(count)))?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        Ok((last, count))
    }

    /// Reserves a block of at least `need` numbers through the pool while the caller's
    /// connection is inside a transaction (which is never handed a lock on the `db_key` row).
    fn reserve_through_pool<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        period: &str,
        need: u64,
    ) -> Result<(i64, u64)>
    where
        C: LoadConnection,
        C::Backend: Backend,
    {
        let pool = self.inner.pool.as_deref().expect("checked by the caller");
        // The caller's database, if it has a token yet: the pool must point at the same one.
        let expected = C::Backend::read(conn, TOKEN_KEY.0, TOKEN_KEY.1)?;
        let expected = expected.or(self.inner.database.get().copied());
        let (token, last, count) = pool.reserve(spec, period, need, expected)?;
        self.bind(token)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        Ok((last, count))
    }

    /// Remembers the database this generator serves, or refuses a different one.
    fn bind(&self, token: i64) -> Result<()> {
        if *self.inner.database.get_or_init(|| token) == token {
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
    /// Returns the pool's database token, the last number of the block and its size.
    fn reserve(
        &self,
        spec: &Spec,
        period: &str,
        need: u64,
        expected: Option<i64>,
    ) -> Result<(i64, i64, u64)>;

    /// Creates the counter row (`key`, `period`) unless it exists, in autocommit.
    fn create_row(&self, key: &str, period: &str) -> Result<()>;
}

impl<C> PoolReserve for Pool<ConnectionManager<C>>
where
    C: R2D2Connection + LoadConnection + 'static,
    C::Backend: Backend,
{
    fn reserve(
        &self,
        spec: &Spec,
        period: &str,
        need: u64,
        expected: Option<i64>,
    ) -> Result<(i64, i64, u64)> {
        let mut pooled = self.get().map_err(Error::Pool)?;
        let conn: &mut C = &mut pooled;
        let (token, batch) = token_and_batch(conn, spec.key())?;
        if expected.is_some_and(|e| e != token) {
            return Err(Error::DifferentDatabase);
        }
        let count = block_size(batch, spec, need);
        let last = retrying(|| C::Backend::reserve(conn, spec.key(), period, to_i64(count)))?;
        Ok((token, last, count))
    }

    fn create_row(&self, key: &str, period: &str) -> Result<()> {
        let mut pooled = self.get().map_err(Error::Pool)?;
        let conn: &mut C = &mut pooled;
        if C::Backend::read(conn, key, period)?.is_some() {
            return Ok(());
        }
        retrying(|| C::Backend::create_row(conn, key, period))
    }
}

/// How often a reservation in its own transaction is tried when the database aborts it to
/// keep transactions serializable (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE) or
/// to break a deadlock (MySQL 1213).
const RESERVE_ATTEMPTS: u32 = 20;

/// Runs an autocommit reservation, retrying serialization failures. Safe because the failed
/// statement was rolled back whole: it took no number.
fn retrying<T>(mut reserve: impl FnMut() -> diesel::QueryResult<T>) -> Result<T> {
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

/// Reads the database's token, creating it first when `create` is set and it is missing.
pub(crate) fn database_token<C>(conn: &mut C, create: bool) -> Result<Option<i64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let (key, period) = TOKEN_KEY;
    let token = C::Backend::read(conn, key, period)?;
    if token.is_some() || !create {
        return Ok(token);
    }
    C::Backend::create_token(conn, random_token())?;
    Ok(C::Backend::read(conn, key, period)?)
}

/// The database's token (created if missing) and the key row's batch override: one query in
/// the common case, where the token exists.
fn token_and_batch<C>(conn: &mut C, key: &str) -> Result<(i64, Option<i64>)>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let (token, batch) = C::Backend::token_and_batch(conn, key)?;
    let token = match token {
        Some(token) => token,
        None => database_token(conn, true)?.ok_or(Error::DifferentDatabase)?,
    };
    Ok((token, batch))
}

/// A random positive token from the standard library's per-process random hash keys.
fn random_token() -> i64 {
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    (hasher.finish() >> 1).max(1) as i64
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
    Err(match spec.series() {
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
    })
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

fn to_i64(n: u64) -> i64 {
    i64::try_from(n).expect("fewer than 2^63 numbers asked for")
}

/// The process-wide default generators, one per database token.
fn defaults() -> std::sync::MutexGuard<'static, HashMap<i64, Generator>> {
    static DEFAULTS: OnceLock<Mutex<HashMap<i64, Generator>>> = OnceLock::new();
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
    let token = {
        let mut conn = pool.get().map_err(Error::Pool)?;
        database_token(&mut *conn, true)?.ok_or(Error::DifferentDatabase)?
    };
    let generator = Generator::builder().pool(pool).build();
    generator.bind(token)?;
    // A generator this replaces keeps serving the block it holds: both are disjoint.
    defaults().insert(token, generator);
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
    let Some(token) = database_token(conn, !in_transaction)? else {
        return Ok(Generator::new());
    };
    Ok(defaults()
        .entry(token)
        .or_insert_with(|| Generator::bound_to(token))
        .clone())
}

/// The next ID of `spec` from the process-wide default generator, which keeps one cache per
/// database (one primary-key read per call tells them apart). See [`Generator::next_id`].
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
