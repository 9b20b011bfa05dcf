//! A second connection for reservations beside the caller's transaction: an r2d2 pool, behind
//! the `r2d2` feature. The generator sees it through [`PoolReserve`] only.

use crate::backend::{Counter, Found};
use crate::error::Result;
use crate::identity::{Identity, NonDurable};
use seqgen_core::__private::Period;
use seqgen_core::Spec;

/// A type-erased r2d2 pool that can reserve a block on one of its connections.
pub(crate) trait PoolReserve: Send + Sync {
    /// Reserves a block on the pool's database, which must be the one `expected` describes;
    /// returns its identity, the last number of the block and its size.
    #[allow(clippy::too_many_arguments)] // each is one fact about the reservation
    fn reserve(
        &self,
        spec: &Spec,
        scope: &str,
        period: &Period,
        need: u64,
        batch: u64,
        non_durable: NonDurable,
        expected: &Found,
    ) -> Result<(Identity, i64, u64)>;

    /// Reserves a block of `batch` numbers on the pool's database, if a connection is idle
    /// right now (`None` otherwise: the threads that hold them may be waiting for this very
    /// block); returns its identity, the last number of the block and its size.
    fn reserve_ahead(
        &self,
        spec: &Spec,
        scope: &str,
        period: &Period,
        batch: u64,
        non_durable: NonDurable,
    ) -> Result<Option<(Identity, i64, u64)>>;

    /// Creates the row of `counter` unless it exists, in autocommit.
    fn create_row(&self, counter: Counter<'_>) -> Result<()>;

    /// The backend's name, for traces.
    fn backend(&self) -> &'static str;

    /// Checks (and records, if none is) the shape of `spec`'s key, in autocommit.
    fn check_shape(&self, spec: &Spec) -> Result<()>;
}

/// The r2d2 extensions of `conn` when it is a connection checked out of an r2d2 pool (passed
/// as the `PooledConnection` itself, not dereferenced): a place that lives as long as the
/// physical connection, and so can remember which database it reaches.
#[cfg(feature = "r2d2")]
pub(crate) fn extensions<C>(conn: &mut C) -> Option<&mut diesel::r2d2::Extensions>
where
    C: diesel::connection::LoadConnection + 'static,
    C::Backend: crate::backend::Backend,
{
    use diesel::r2d2::{ConnectionManager, PooledConnection};
    type Pooled<B> =
        PooledConnection<ConnectionManager<<B as crate::backend::Backend>::Connection>>;
    let any: &mut dyn std::any::Any = conn;
    let pooled = any.downcast_mut::<Pooled<C::Backend>>()?;
    Some(PooledConnection::extensions_mut(pooled))
}

#[cfg(feature = "r2d2")]
mod r2d2_pool {
    use diesel::connection::LoadConnection;
    use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};

    use super::PoolReserve;
    use crate::backend::{Backend, Counter, Found};
    use crate::driver::{drive, Blocking};
    use crate::error::{Error, Result};
    use crate::identity::{Identity, NonDurable};
    use crate::reserve::{check_shape, reserve_block, Retry};
    use crate::retry::retrying;
    use seqgen_core::__private::Period;
    use seqgen_core::Spec;

    impl<C> PoolReserve for Pool<ConnectionManager<C>>
    where
        C: R2D2Connection + LoadConnection + 'static,
        C::Backend: Backend,
    {
        fn backend(&self) -> &'static str {
            C::Backend::NAME
        }

        fn reserve(
            &self,
            spec: &Spec,
            scope: &str,
            period: &Period,
            need: u64,
            batch: u64,
            non_durable: NonDurable,
            expected: &Found,
        ) -> Result<(Identity, i64, u64)> {
            let mut pooled = self.get().map_err(Error::Pool)?;
            drive(reserve_block(
                &mut Blocking(&mut *pooled),
                spec,
                scope,
                period,
                need,
                batch,
                non_durable,
                Some(expected),
            ))
        }

        fn reserve_ahead(
            &self,
            spec: &Spec,
            scope: &str,
            period: &Period,
            batch: u64,
            non_durable: NonDurable,
        ) -> Result<Option<(Identity, i64, u64)>> {
            let Some(mut pooled) = self.try_get() else {
                return Ok(None);
            };
            drive(reserve_block(
                &mut Blocking(&mut *pooled),
                spec,
                scope,
                period,
                1,
                batch,
                non_durable,
                None,
            ))
            .map(Some)
        }

        fn create_row(&self, counter: Counter<'_>) -> Result<()> {
            let mut pooled = self.get().map_err(Error::Pool)?;
            let conn: &mut C = &mut pooled;
            if C::Backend::read(conn, counter)?.is_some() {
                return Ok(());
            }
            drive(async { retrying!(Blocking<C>, C::Backend::create_row(conn, counter)) })
        }

        fn check_shape(&self, spec: &Spec) -> Result<()> {
            let mut pooled = self.get().map_err(Error::Pool)?;
            let conn: &mut C = &mut pooled;
            let recorded = C::Backend::identify(conn, spec.key())?.shape;
            drive(check_shape(&mut Blocking(conn), spec, recorded, Retry::Yes))
        }
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
            self.pool = Some(Box::new(pool));
            self
        }
    }
}
