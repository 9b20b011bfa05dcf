//! A second connection for reservations beside the caller's transaction: an r2d2 pool (the
//! `r2d2` feature) for blocking connections, a deadpool or bb8 pool (the `deadpool` and `bb8`
//! features) for diesel-async's. The generator sees it through [`PoolReserve`] only.

use std::future::Future;
use std::pin::Pin;

use crate::backend::{Counter, Found};
use crate::batch::Batch;
use crate::error::Result;
use crate::reserve::identity::Identity;
use crate::reserve::risks::Acceptance;
use crate::reserve::Reserved;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// What a pool's work returns: a future, ready at once for a blocking (r2d2) pool.
pub type PoolFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T>> + Send + 'a>>;

/// A type-erased pool that can reserve a block on one of its connections: an r2d2 pool for
/// the blocking driver, a deadpool or bb8 pool of diesel-async connections for the async one.
// `pub` in a private module: nameable nowhere outside, usable as the bound of `AsyncPool`.
pub trait PoolReserve: Send + Sync {
    /// Whether its connections block (r2d2): the blocking driver uses it and reserves ahead
    /// on a thread. Otherwise the async driver uses it and reserves ahead on a task.
    fn blocking(&self) -> bool;

    /// Whether the next block of a key is reserved ahead on it, in the background (not on
    /// SQLite, whose one writer the app's own transactions need).
    fn reserves_ahead(&self) -> bool;

    /// Reserves a block on the pool's database, which must be the one `expected` describes;
    /// returns the block.
    #[allow(clippy::too_many_arguments)] // each is one fact about the reservation
    fn reserve<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        need: u64,
        batch: Batch,
        non_durable: Acceptance,
        expected: &'a Found,
    ) -> PoolFuture<'a, Reserved>;

    /// Reserves a block of `batch` numbers on the pool's database, if a connection is idle
    /// right now (`None` otherwise: the callers that hold them may be waiting for this very
    /// block); returns the block.
    fn reserve_ahead<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        batch: Batch,
        non_durable: Acceptance,
    ) -> PoolFuture<'a, Option<Reserved>>;

    /// Creates the row of `counter` unless it exists, in autocommit.
    fn create_row<'a>(&'a self, counter: Counter<'a>) -> PoolFuture<'a, ()>;

    /// The backend's name, for traces.
    fn backend(&self) -> &'static str;

    /// Checks (and records, if none is) the shape of `spec`'s key, in autocommit.
    fn check_shape<'a>(&'a self, spec: &'a Spec) -> PoolFuture<'a, ()>;

    /// The identity of the pool's database, its token created if it has none yet.
    #[cfg_attr(not(seqgen_pool), allow(dead_code))]
    fn identify(&self) -> PoolFuture<'_, Identity>;
}

/// The pool work of the core, on one pooled connection whatever the pool: written once for
/// the blocking and the async pools.
#[cfg(seqgen_pool)]
mod work {
    use super::*;
    use crate::driver::Driver;
    use crate::reserve::retry::retrying;
    use crate::reserve::{check_shape, Retry};

    /// Creates the row of `counter` unless it exists, in autocommit.
    pub(super) async fn create_row<D: Driver>(db: &mut D, counter: Counter<'_>) -> Result<()> {
        if db.read(counter).await?.is_some() {
            return Ok(());
        }
        retrying!(D, db.create_row(counter).await)
    }

    /// The identity of `db`'s database, its token created if it has none yet.
    pub(super) async fn identity<D: Driver>(db: &mut D) -> Result<Identity> {
        crate::reserve::identity::identify(db, "", true)
            .await?
            .1
            .ok_or(crate::Error::DifferentDatabase)
    }

    /// Checks (and records, if none is) the shape of `spec`'s key, in autocommit.
    pub(super) async fn shape<D: Driver>(db: &mut D, spec: &Spec) -> Result<()> {
        let recorded = db.identify(spec.key()).await?.shape;
        check_shape(db, spec, recorded, Retry::Yes).await
    }
}

/// The r2d2 extensions of `conn` when it is a connection checked out of an r2d2 pool (passed
/// as the `PooledConnection` itself, not dereferenced): a place that lives as long as the
/// physical connection, and so can remember which database it reaches.
#[cfg(feature = "r2d2")]
pub(crate) fn extensions<C: 'static>(conn: &mut C) -> Option<&mut diesel::r2d2::Extensions> {
    use diesel::r2d2::{ConnectionManager, PooledConnection};
    type Pooled<C> = PooledConnection<ConnectionManager<C>>;
    let any: &mut dyn std::any::Any = conn;
    // Each blocking connection type of the enabled backends (the async features bring
    // diesel's backends without their C clients, so without these types).
    #[cfg(feature = "sqlite")]
    if any.is::<Pooled<diesel::SqliteConnection>>() {
        return any
            .downcast_mut::<Pooled<diesel::SqliteConnection>>()
            .map(PooledConnection::extensions_mut);
    }
    #[cfg(feature = "postgres")]
    if any.is::<Pooled<diesel::PgConnection>>() {
        return any
            .downcast_mut::<Pooled<diesel::PgConnection>>()
            .map(PooledConnection::extensions_mut);
    }
    #[cfg(feature = "mysql")]
    if any.is::<Pooled<diesel::MysqlConnection>>() {
        return any
            .downcast_mut::<Pooled<diesel::MysqlConnection>>()
            .map(PooledConnection::extensions_mut);
    }
    let _ = any;
    None
}

#[cfg(seqgen_async_pool)]
pub(crate) mod async_pools;
#[cfg(feature = "r2d2")]
mod r2d2;
