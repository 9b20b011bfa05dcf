//! A second connection for reservations beside the caller's transaction: an r2d2 pool (the
//! `r2d2` feature) for blocking connections, a deadpool or bb8 pool (the `deadpool` and `bb8`
//! features) for diesel-async's. The generator sees it through [`PoolReserve`] only.

use std::future::Future;
use std::pin::Pin;

use crate::backend::{Counter, Found};
use crate::batch::Batch;
use crate::error::Result;
use crate::identity::{Identity, NonDurable};
use crate::reserve::Reserved;
use seqgen_core::__private::Period;
use seqgen_core::Spec;

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
        non_durable: NonDurable,
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
        non_durable: NonDurable,
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
    use crate::reserve::{check_shape, Retry};
    use crate::retry::retrying;

    /// Creates the row of `counter` unless it exists, in autocommit.
    pub(super) async fn create_row<D: Driver>(db: &mut D, counter: Counter<'_>) -> Result<()> {
        if db.read(counter).await?.is_some() {
            return Ok(());
        }
        retrying!(D, db.create_row(counter).await)
    }

    /// The identity of `db`'s database, its token created if it has none yet.
    pub(super) async fn identity<D: Driver>(db: &mut D) -> Result<Identity> {
        crate::identity::identify(db, "", true)
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

#[cfg(feature = "r2d2")]
mod r2d2_pool {
    use diesel::connection::LoadConnection;
    use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

    use super::{work, PoolFuture, PoolReserve};
    use crate::backend::{Backend, Counter, Found};
    use crate::batch::Batch;
    use crate::driver::{drive, Blocking};
    use crate::error::{Error, Result};
    use crate::identity::{Identity, NonDurable};
    use crate::reserve::{reserve_block, Reserved};
    use seqgen_core::__private::Period;
    use seqgen_core::Spec;

    impl<C> PoolReserve for Pool<ConnectionManager<C>>
    where
        C: R2D2Connection + LoadConnection + 'static,
        C::Backend: Backend,
    {
        fn blocking(&self) -> bool {
            true
        }

        fn reserves_ahead(&self) -> bool {
            C::Backend::RESERVE_BESIDE_TRANSACTION
        }

        fn backend(&self) -> &'static str {
            C::Backend::NAME
        }

        fn reserve<'a>(
            &'a self,
            spec: &'a Spec,
            scope: &'a str,
            period: &'a Period,
            need: u64,
            batch: Batch,
            non_durable: NonDurable,
            expected: &'a Found,
        ) -> PoolFuture<'a, Reserved> {
            ready(self.get().map_err(Error::Pool).and_then(|mut pooled| {
                let db = &mut Blocking(&mut *pooled);
                let expected = Some(expected);
                drive(reserve_block(
                    db,
                    spec,
                    scope,
                    period,
                    need,
                    batch,
                    non_durable,
                    expected,
                ))
            }))
        }

        fn reserve_ahead<'a>(
            &'a self,
            spec: &'a Spec,
            scope: &'a str,
            period: &'a Period,
            batch: Batch,
            non_durable: NonDurable,
        ) -> PoolFuture<'a, Option<Reserved>> {
            let Some(mut pooled) = self.try_get() else {
                return ready(Ok(None));
            };
            let db = &mut Blocking(&mut *pooled);
            ready(
                drive(reserve_block(
                    db,
                    spec,
                    scope,
                    period,
                    1,
                    batch,
                    non_durable,
                    None,
                ))
                .map(Some),
            )
        }

        fn create_row<'a>(&'a self, counter: Counter<'a>) -> PoolFuture<'a, ()> {
            ready(self.get().map_err(Error::Pool).and_then(|mut pooled| {
                drive(work::create_row(&mut Blocking(&mut *pooled), counter))
            }))
        }

        fn check_shape<'a>(&'a self, spec: &'a Spec) -> PoolFuture<'a, ()> {
            ready(
                self.get()
                    .map_err(Error::Pool)
                    .and_then(|mut pooled| drive(work::shape(&mut Blocking(&mut *pooled), spec))),
            )
        }

        fn identify(&self) -> PoolFuture<'_, Identity> {
            ready(
                self.get()
                    .map_err(Error::Pool)
                    .and_then(|mut pooled| drive(work::identity(&mut Blocking(&mut *pooled)))),
            )
        }
    }

    /// A blocking pool's work, done: a future ready at once.
    fn ready<'a, T: Send + 'a>(result: Result<T>) -> PoolFuture<'a, T> {
        Box::pin(std::future::ready(result))
    }

    impl crate::GeneratorBuilder {
        /// A pool of connections to the same database, used to reserve blocks in their own
        /// transaction while the caller's connection is inside one (PostgreSQL, MySQL). Without
        /// it, numbers taken inside a transaction are taken in that transaction, uncached.
        pub fn pool<C>(mut self, pool: Pool<ConnectionManager<C>>) -> Self
        where
            C: R2D2Connection + LoadConnection + 'static,
            C::Backend: Backend,
        {
            self.pool = Some(std::sync::Arc::new(pool));
            self
        }
    }
}

/// The pools of diesel-async connections (the `deadpool` and `bb8` features), for the async
/// driver: the same work as r2d2's, awaited.
#[cfg(seqgen_async_pool)]
pub(crate) mod async_pools {
    use diesel_async::AsyncConnectionCore;

    use super::{work, PoolFuture, PoolReserve};
    use crate::backend::{Backend, Counter, Found};
    use crate::batch::Batch;
    use crate::driver::NonBlocking;
    use crate::error::Error;
    use crate::identity::{Identity, NonDurable};
    use crate::reserve::{reserve_block, Reserved};
    use seqgen_core::__private::Period;
    use seqgen_core::Spec;

    /// `impl PoolReserve` for one pool type: how it hands out a connection (`$get`) and
    /// whether one is idle now (`$idle`).
    macro_rules! async_pool {
        (
            $pool_feature:literal, $pool:ident,
            |$p:ident| get: $get:expr, idle: $idle:expr,
            $($feature:literal: $conn:ty),*
        ) => {$(
            #[cfg(all(feature = $pool_feature, feature = $feature))]
            impl AsyncPool for diesel_async::pooled_connection::$pool::Pool<$conn> {}

            #[cfg(all(feature = $pool_feature, feature = $feature))]
            impl PoolReserve for diesel_async::pooled_connection::$pool::Pool<$conn> {
                fn blocking(&self) -> bool {
                    false
                }

                fn reserves_ahead(&self) -> bool {
                    <<$conn as AsyncConnectionCore>::Backend as Backend>::RESERVE_BESIDE_TRANSACTION
                }

                fn backend(&self) -> &'static str {
                    <<$conn as AsyncConnectionCore>::Backend as Backend>::NAME
                }

                fn reserve<'a>(
                    &'a self,
                    spec: &'a Spec,
                    scope: &'a str,
                    period: &'a Period,
                    need: u64,
                    batch: Batch,
                    non_durable: NonDurable,
                    expected: &'a Found,
                ) -> PoolFuture<'a, Reserved> {
                    Box::pin(async move {
                        let $p = self;
                        let mut conn = $get.map_err(|e| Error::AsyncPool(e.to_string()))?;
                        let db = &mut NonBlocking(&mut *conn);
                        let expected = Some(expected);
                        reserve_block(db, spec, scope, period, need, batch, non_durable, expected)
                            .await
                    })
                }

                fn reserve_ahead<'a>(
                    &'a self,
                    spec: &'a Spec,
                    scope: &'a str,
                    period: &'a Period,
                    batch: Batch,
                    non_durable: NonDurable,
                ) -> PoolFuture<'a, Option<Reserved>> {
                    Box::pin(async move {
                        let $p = self;
                        if !$idle {
                            return Ok(None);
                        }
                        let mut conn = $get.map_err(|e| Error::AsyncPool(e.to_string()))?;
                        let db = &mut NonBlocking(&mut *conn);
                        reserve_block(db, spec, scope, period, 1, batch, non_durable, None)
                            .await
                            .map(Some)
                    })
                }

                fn create_row<'a>(&'a self, counter: Counter<'a>) -> PoolFuture<'a, ()> {
                    Box::pin(async move {
                        let $p = self;
                        let mut conn = $get.map_err(|e| Error::AsyncPool(e.to_string()))?;
                        work::create_row(&mut NonBlocking(&mut *conn), counter).await
                    })
                }

                fn check_shape<'a>(&'a self, spec: &'a Spec) -> PoolFuture<'a, ()> {
                    Box::pin(async move {
                        let $p = self;
                        let mut conn = $get.map_err(|e| Error::AsyncPool(e.to_string()))?;
                        work::shape(&mut NonBlocking(&mut *conn), spec).await
                    })
                }

                fn identify(&self) -> PoolFuture<'_, Identity> {
                    Box::pin(async move {
                        let $p = self;
                        let mut conn = $get.map_err(|e| Error::AsyncPool(e.to_string()))?;
                        work::identity(&mut NonBlocking(&mut *conn)).await
                    })
                }
            }
        )*};
    }

    async_pool!(
        "deadpool", deadpool,
        |pool| get: pool.get().await, idle: pool.status().available > 0,
        "async-postgres": diesel_async::AsyncPgConnection,
        "async-mysql": diesel_async::AsyncMysqlConnection,
        "async-sqlite": diesel_async::sync_connection_wrapper::SyncConnectionWrapper<
            diesel::SqliteConnection,
        >
    );
    async_pool!(
        "bb8", bb8,
        |pool| get: pool.get().await, idle: pool.state().idle_connections > 0,
        "async-postgres": diesel_async::AsyncPgConnection,
        "async-mysql": diesel_async::AsyncMysqlConnection,
        "async-sqlite": diesel_async::sync_connection_wrapper::SyncConnectionWrapper<
            diesel::SqliteConnection,
        >
    );

    /// A pool of diesel-async connections a [`Generator`](crate::Generator) can reserve
    /// through: diesel-async's deadpool pool (the `deadpool` feature) or bb8 pool (`bb8`).
    /// Sealed.
    pub trait AsyncPool: PoolReserve + 'static {}

    impl crate::GeneratorBuilder {
        /// A pool of diesel-async connections to the same database (diesel-async's deadpool
        /// or bb8 pool), for the async API ([`seqgen::r#async`](crate::async)): blocks needed inside your
        /// transactions are reserved on its connections beside them (PostgreSQL, MySQL), and
        /// the next block of a key is reserved on a task before the current one runs dry.
        /// Without it, numbers taken inside a transaction are taken in that transaction,
        /// uncached, and refills wait for a round trip.
        pub fn async_pool(mut self, pool: impl AsyncPool) -> Self {
            self.pool = Some(std::sync::Arc::new(pool));
            self
        }
    }
}
