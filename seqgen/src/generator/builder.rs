//! Configuring a [`Generator`]: its clock, pool, block sizes, and what it accepts of a server.

use std::sync::Arc;

use super::Generator;
use crate::batch::BatchPolicy;
use crate::clock::Clock;
use crate::engine::{Engine, Settings};
use crate::reserve::risks::Acceptance;

/// Configures a [`Generator`]; see [`Generator::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct GeneratorBuilder {
    settings: Settings,
}

impl Generator {
    /// A generator on the system clock, without a pool.
    pub fn new() -> Self {
        Generator::builder().build()
    }

    /// Configures a generator.
    pub fn builder() -> GeneratorBuilder {
        GeneratorBuilder {
            settings: Settings::default(),
        }
    }
}

impl GeneratorBuilder {
    /// Where time comes from (default: [`SystemClock`](crate::clock::SystemClock)).
    pub fn clock(mut self, clock: impl Clock) -> Self {
        self.settings.clock = Arc::new(clock);
        self
    }

    /// Reserve blocks even on a server that does not commit durably (MySQL/MariaDB with
    /// `innodb_flush_log_at_trx_commit` other than 1, PostgreSQL with `fsync = off`), which a
    /// generator refuses otherwise ([`Error::NotDurable`](crate::Error::NotDurable)). Only for development databases: a
    /// server crash can then lose reservations whose numbers this generator still holds, and
    /// hand them out again.
    pub fn accept_non_durable_server(mut self) -> Self {
        self.settings.non_durable = Acceptance::Accept;
        self
    }

    /// Take gapless numbers even on a PostgreSQL primary whose commits do not wait for a
    /// standby (standbys connected, `synchronous_standby_names` empty), which a generator
    /// refuses otherwise
    /// ([`Error::AsyncReplication`](crate::Error::AsyncReplication)): a failover can then lose
    /// the last numbers taken, and the promoted standby hands them out again. Batched mode is
    /// not affected (its reservations commit with `synchronous_commit = on`).
    pub fn accept_async_replication(mut self) -> Self {
        self.settings.async_replication = Acceptance::Accept;
        self
    }

    /// How blocks are sized per key (the default: a target of one second, at most 100,000
    /// numbers). A block starts at the spec's `batch`; when one lasted less than `target`, the
    /// next is twice as big, up to `max` and never above a hundredth of what a period can
    /// hold; when one lasted more than twice `target`, the next is half as big, down to the
    /// spec's `batch`. A scope's counter starts at a few numbers and goes down to one: a scope
    /// used once an hour holds one number, not a block. While reservations take more than
    /// 5 % of the generator's time (many scopes served in turn, many instances on one key's
    /// row), `target` grows in proportion, so that blocks last longer and reservations fall
    /// back to their share. A busy key then makes few round trips and a quiet one leaves few
    /// holes. A `batch_size` an operator set in `db_key` still wins, and a request for more
    /// numbers than the block ([`next_ids`](Generator::next_ids)) still makes one reservation.
    pub fn adaptive_batch(mut self, target: std::time::Duration, max: u32) -> Self {
        self.settings.batch = BatchPolicy::Adaptive {
            target,
            max: u64::from(max),
        };
        self
    }

    /// Reserves blocks of exactly the spec's `batch` (or the operator's `batch_size`), however
    /// busy the key is.
    pub fn fixed_batch(mut self) -> Self {
        self.settings.batch = BatchPolicy::Fixed;
        self
    }

    /// The most scopes of one spec this generator keeps a block for (default 65,536): past
    /// it, a new scope drops the least recently used eighth of those no call is using, whose
    /// unused numbers go back to their counters at the generator's next reservations (16
    /// scopes at each) or at [`release`](Generator::release). A state costs a few hundred
    /// bytes.
    pub fn max_scopes(mut self, scopes: usize) -> Self {
        self.settings.scopes.max = scopes.max(1);
        self
    }

    /// How long a scope may go unused before its block is dropped (default five minutes): its
    /// unused numbers go back as above, its memory with them, so that a crash loses numbers
    /// of the scopes used in the last minutes only, not of every scope ever served. Whole
    /// seconds, at least one.
    pub fn scope_idle(mut self, idle: std::time::Duration) -> Self {
        self.settings.scopes.idle = idle.as_secs().max(1);
        self
    }

    /// Builds the generator.
    pub fn build(self) -> Generator {
        Generator::from_engine(Engine::new(self.settings))
    }

    #[cfg(feature = "r2d2")]
    /// A pool of connections to the same database, used to reserve blocks in their own
    /// transaction while the caller's connection is inside one (PostgreSQL, MySQL). Without
    /// it, numbers taken inside a transaction are taken in that transaction, uncached.
    pub fn pool<C>(mut self, pool: diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<C>>) -> Self
    where
        C: diesel::r2d2::R2D2Connection + diesel::connection::LoadConnection + 'static,
        C::Backend: crate::backend::Backend,
    {
        self.settings.pool = Some(Arc::new(pool));
        self
    }

    #[cfg(seqgen_async_pool)]
    #[cfg_attr(docsrs, doc(cfg(any(feature = "deadpool", feature = "bb8"))))]
    /// A pool of diesel-async connections to the same database (diesel-async's deadpool
    /// or bb8 pool), for the async API ([`diesel_seqgen::nonblocking`](crate::nonblocking)): blocks needed inside your
    /// transactions are reserved on its connections beside them (PostgreSQL, MySQL), and
    /// the next block of a key is reserved on a task before the current one runs dry.
    /// Without it, numbers taken inside a transaction are taken in that transaction,
    /// uncached, and refills wait for a round trip.
    pub fn async_pool(mut self, pool: impl crate::reserve::pool::async_pools::AsyncPool) -> Self {
        self.settings.pool = Some(Arc::new(pool));
        self
    }
}
