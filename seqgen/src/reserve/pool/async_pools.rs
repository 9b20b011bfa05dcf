//! The pools of diesel-async connections (the `deadpool` and `bb8` features), for the async
//! driver: the same work as r2d2's, awaited.

use diesel_async::AsyncConnectionCore;

use super::{work, PoolFuture, PoolReserve};
use crate::backend::{Backend, Counter, Found};
use crate::batch::Batch;
use crate::driver::NonBlocking;
use crate::error::Error;
use crate::reserve::identity::Identity;
use crate::reserve::risks::Acceptance;
use crate::reserve::{reserve_block, Reserved};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

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
                non_durable: Acceptance,
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
                non_durable: Acceptance,
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
