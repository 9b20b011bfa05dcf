//! An r2d2 pool (the `r2d2` feature) for the blocking driver: the pool work of `super::work`,
//! driven at once on one of its connections.

use diesel::connection::LoadConnection;
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

use super::{work, PoolFuture, PoolReserve};
use crate::backend::{Backend, Counter, Found};
use crate::batch::Batch;
use crate::driver::{drive, Blocking};
use crate::error::{Error, Result};
use crate::reserve::identity::Identity;
use crate::reserve::risks::Acceptance;
use crate::reserve::{reserve_block, Reserved};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

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
        non_durable: Acceptance,
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
        non_durable: Acceptance,
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
        ready(
            self.get().map_err(Error::Pool).and_then(|mut pooled| {
                drive(work::create_row(&mut Blocking(&mut *pooled), counter))
            }),
        )
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
