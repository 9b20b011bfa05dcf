//! The engine behind a [`Generator`](crate::Generator) handle: one database's blocks of
//! numbers, one file per concern. Serving lives in `take` (batched) and `take_gapless`,
//! refilling in `refill`, giving back in `release`, previews in `preview`, the key states in
//! `keys`; below them, `cache` holds the blocks and `reserve` talks to the database.

mod emit;
mod keys;
#[cfg(all(test, seqgen_loom))]
mod model_check;
#[cfg(all(test, seqgen_loom))]
mod model_db;
mod pressure;
mod preview;
mod refill;
mod release;
mod take;
mod take_gapless;
mod watch;

pub(crate) use emit::{check_scope, formatted, formatted_one, numeric};
pub(crate) use preview::{last_value_at, peek_next_at, peek_of};
pub(crate) use take_gapless::InInsert;

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use crate::batch::BatchPolicy;
use crate::cache::{Key, KeyState};
use crate::clock::{Clock, SystemClock};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::reserve::identity::Identity;
use crate::reserve::pool::PoolReserve;
use crate::reserve::risks::Acceptance;
use crate::stats::KeyStats;
use crate::sync::RwLock;
use diesel_seqgen_core::__private::{CacheKey, PrehashedHasher};

/// The next generator's [`Inner::uid`].
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

/// Hands out IDs for one database: the state behind a [`Generator`](crate::Generator) handle
/// (`generator/`), which delegates every call here. Cheap to clone (clones share their blocks):
/// a reservation ahead runs on a clone.
#[derive(Clone)]
pub(crate) struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    /// Unique in the process (never reused): owns the state this generator keeps in specs'
    /// [memo slots](diesel_seqgen_core::__private::Memo).
    uid: u64,
    clock: Arc<dyn Clock>,
    keys: RwLock<HashMap<CacheKey, Arc<KeyState>, BuildHasherDefault<PrehashedHasher>>>,
    /// The states of scoped specs, by spec and then scope value; at most `scopes.max` per
    /// spec.
    scoped: RwLock<ScopedKeys>,
    /// How many scope states it keeps, and for how long one nobody uses.
    scopes: ScopeLimits,
    /// When (a Unix second, on the generator's clock) scope states are next looked at for
    /// ones nobody used for `scopes.idle`.
    next_sweep: AtomicU64,
    /// Scope states dropped (idle, or for room) whose blocks are still to be given back.
    evicted: Mutex<Vec<Arc<KeyState>>>,
    /// What the scope states dropped served from memory, by key.
    retired: Mutex<Vec<KeyStats>>,
    /// Every key it made a state for, by name: shared by the key's states, with the key's
    /// statistics (kept when they are dropped).
    named: Mutex<HashMap<Box<str>, Arc<Key>>>,
    /// How much of its time reservations take (sizes blocks: `pressure.rs`).
    pressure: pressure::Pressure,
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

/// How many scope states a generator keeps per spec, and how long it keeps one nobody uses
/// (`GeneratorBuilder::max_scopes`, `GeneratorBuilder::scope_idle`). A state holds the
/// scope's block: a dropped one's unused numbers go back to their counter at the generator's
/// next reservations (holes if another instance reserved after them, or if the process stops
/// first), and a dropped scope used again reserves a new block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ScopeLimits {
    /// The most scopes of one spec; a new one past it drops the least recently used eighth
    /// of those no thread is using.
    pub(crate) max: usize,
    /// A scope nobody used for this long (in seconds) is dropped.
    pub(crate) idle: u64,
}

impl Default for ScopeLimits {
    /// 65,536 scopes a spec (a SaaS's tenants, with room: a few megabytes), each dropped after
    /// five minutes unused.
    fn default() -> Self {
        ScopeLimits {
            max: 65_536,
            idle: 300,
        }
    }
}

type ScopedKeys = HashMap<CacheKey, keys::Scopes, BuildHasherDefault<PrehashedHasher>>;

/// What a [`GeneratorBuilder`](crate::GeneratorBuilder) configures.
pub(crate) struct Settings {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) pool: Option<Arc<dyn PoolReserve>>,
    pub(crate) non_durable: Acceptance,
    pub(crate) async_replication: Acceptance,
    pub(crate) batch: BatchPolicy,
    pub(crate) scopes: ScopeLimits,
}

impl Default for Settings {
    /// The system clock, no pool, no risk accepted, blocks sized to last a second.
    fn default() -> Self {
        Settings {
            clock: Arc::new(SystemClock),
            pool: None,
            non_durable: Acceptance::Refuse,
            async_replication: Acceptance::Refuse,
            batch: BatchPolicy::default(),
            scopes: ScopeLimits::default(),
        }
    }
}

impl Engine {
    pub(crate) fn new(settings: Settings) -> Self {
        Engine {
            inner: Arc::new(Inner {
                uid: NEXT_UID.fetch_add(1, Ordering::Relaxed),
                clock: settings.clock,
                keys: RwLock::default(),
                scoped: RwLock::default(),
                scopes: settings.scopes,
                next_sweep: AtomicU64::new(0),
                evicted: Mutex::default(),
                retired: Mutex::default(),
                named: Mutex::default(),
                pressure: pressure::Pressure::default(),
                database: OnceLock::new(),
                pool: RwLock::new(settings.pool),
                non_durable: settings.non_durable,
                async_replication: settings.async_replication,
                batch: settings.batch,
                reservations: AtomicU64::new(0),
                timeline: AtomicU32::new(0),
                replication_checked: AtomicU64::new(0),
            }),
        }
    }

    /// A process-wide default generator's engine for the database `identity`: it accepts what
    /// the process accepts (`global::accept_*`).
    pub(crate) fn default_for(identity: Identity) -> Self {
        let engine = Engine::new(Settings {
            non_durable: Acceptance::AsProcess,
            async_replication: Acceptance::AsProcess,
            ..Settings::default()
        });
        let _ = engine.inner.database.set(identity);
        engine
    }

    /// The database this engine serves, once it reserved there.
    pub(crate) fn database(&self) -> Option<&Identity> {
        self.inner.database.get()
    }

    /// Whether it has a pool (see `GeneratorBuilder::pool`).
    pub(crate) fn has_pool(&self) -> bool {
        self.pool().is_some()
    }

    /// [`Generator::reservations`](crate::Generator::reservations).
    pub(crate) fn reservations(&self) -> u64 {
        self.inner.reservations.load(Ordering::Relaxed)
    }

    /// [`Generator::stats`](crate::Generator::stats): the states it keeps, those dropped for
    /// room, and what retired ones counted.
    pub(crate) fn stats(&self) -> Vec<KeyStats> {
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
        let keys: Vec<KeyStats> = self
            .inner
            .named
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .map(|key| key.stats())
            .collect();
        crate::stats::per_key(
            self.states()
                .iter()
                .chain(&evicted)
                .map(|state| state.stats())
                .chain(retired)
                .chain(keys),
        )
    }

    /// The pool reservations may use (see `GeneratorBuilder::pool`).
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
    pub(crate) fn is(&self, other: &Engine) -> bool {
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
