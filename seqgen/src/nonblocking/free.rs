//! The process-wide default generators on diesel-async connections (one per database,
//! shared with [`crate::global`]'s), and plain gapless counters.

use diesel_async::AsyncConnection;

use super::Generator;
use crate::backend::AsyncBackend;
use crate::driver::{begin, end, Driver, NonBlocking};
use crate::error::Result;
use crate::model::{fill_on, plan_fill, DistributedId, Records};
#[cfg(seqgen_async_pool)]
#[cfg_attr(docsrs, doc(cfg(any(feature = "deadpool", feature = "bb8"))))]
pub use crate::reserve::pool::async_pools::AsyncPool;
use crate::sequence::{ScopedSequence, Sequence};
use diesel_seqgen_core::Scoped;

/// Gives the process-wide default generator of the pool's database (the one behind this
/// module's free functions, [`assign_ids`] and [`insert_into`](super::insert_into)) a pool of diesel-async
/// connections (diesel-async's deadpool or bb8 pool, the `deadpool` and `bb8` features), as
/// [`crate::global::use_pool`] does for r2d2: blocks needed inside your transactions are then reserved
/// beside them (PostgreSQL, MySQL), and the next block of a key is reserved on a task before
/// the current one runs dry. Call it once at start-up, per database, inside the runtime.
#[cfg(seqgen_async_pool)]
#[cfg_attr(docsrs, doc(cfg(any(feature = "deadpool", feature = "bb8"))))]
pub async fn use_pool(pool: impl AsyncPool) -> Result<()> {
    let identity = crate::reserve::pool::PoolReserve::identify(&pool).await?;
    crate::global::install_pool(identity, std::sync::Arc::new(pool));
    Ok(())
}

/// The process-wide default generator of the database `conn` reaches (one query tells it),
/// or a throwaway one where numbers are taken in the caller's transaction anyway.
pub(super) async fn default_generator<C>(conn: &mut C) -> Result<Generator>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    crate::global::say_identified_per_call::<C::Backend>(
        "hold a `Generator` per database and pass it (`.with_generator(&generator)`)",
    );
    let found = crate::global::default_on(&mut NonBlocking(conn)).await?;
    Ok(Generator::from(found.unwrap_or_default()))
}

/// Free functions on the process-wide default generators (one per database, shared with the
/// blocking API's), each telling the database apart with one query per call (only
/// [`insert_into`](super::insert_into) checks it in the insert instead): hold a [`Generator`] per
/// database to save it.
macro_rules! from_default {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        $(#[$doc])*
        pub async fn $name<C>(conn: &mut C, $($arg: $ty),*) -> Result<$out>
        where
            C: AsyncConnection,
            C::Backend: AsyncBackend,
        {
            default_generator(conn).await?.$name(conn, $($arg),*).await
        }
    )*};
}

from_default! {
    /// The next ID of `spec` (`&spec`, or `spec.scope("acme")`) from the process-wide default
    /// generator: [`crate::global::next_id`].
    next_id(spec: impl Into<Scoped<'_>> + Send) -> String;
    /// The next `n` IDs of `spec` from the process-wide default generator.
    next_ids(spec: impl Into<Scoped<'_>> + Send, n: usize) -> Vec<String>;
    /// The next `i64` ID of `spec` from the process-wide default generator.
    next_number(spec: impl Into<Scoped<'_>> + Send) -> i64;
    /// The next `n` `i64` IDs of `spec` from the process-wide default generator.
    next_numbers(spec: impl Into<Scoped<'_>> + Send, n: usize) -> Vec<i64>;
    /// Gives the numbers the default generator of `conn`'s database holds back:
    /// [`crate::global::release`].
    release() -> u64;
}

/// The next value of the gapless counter `key`, inside the caller's async transaction:
/// [`crate::sequence::next_value`].
pub async fn next_value<C>(conn: &mut C, key: &str) -> Result<i64>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let mut values = next_values_of(conn, &Sequence::new(key)?, 1).await?;
    Ok(values.pop().unwrap_or_default())
}

/// The next `n` values of the gapless counter `key`, inside the caller's async transaction.
pub async fn next_values<C>(conn: &mut C, key: &str, n: usize) -> Result<Vec<i64>>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    next_values_of(conn, &Sequence::new(key)?, n).await
}

/// The next `n` values of `sequence` (`&sequence`, or `sequence.scope("north")`), as
/// [`ScopedSequence::next_values`](crate::sequence::ScopedSequence::next_values) takes them:
/// for a sequence configured with [`nowait`](Sequence::nowait),
/// [`scoped`](Sequence::scoped) or
/// [`allow_outside_transaction`](Sequence::allow_outside_transaction).
pub async fn next_values_of<'s, C>(
    conn: &mut C,
    sequence: impl Into<ScopedSequence<'s>>,
    n: usize,
) -> Result<Vec<i64>>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    // Gapless numbers are never cached: any generator takes them the same way.
    let generator = Generator::new();
    let target = sequence.into();
    let (sequence, scope) = (target.sequence(), target.scope());
    let spec = sequence.counter_spec().scope(scope);
    if sequence.outside_transaction() && !NonBlocking(&mut *conn).in_transaction() {
        begin(conn).await?;
        let taken = generator.next_numbers(conn, spec, n).await;
        end(conn, taken).await
    } else {
        generator.next_numbers(conn, spec, n).await
    }
}

/// Fills the unset ID fields of `records` (one record, a slice or a `Vec`) from the
/// process-wide default generator: [`crate::assign_ids`].
pub async fn assign_ids<R, C>(conn: &mut C, records: &mut R) -> Result<()>
where
    R: Records + ?Sized,
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    fill(records.as_rows(), None, conn, &mut Vec::new()).await
}

/// [`crate::model::fill`] on an async connection.
pub(super) async fn fill<T, C>(
    rows: &mut [T],
    generator: Option<&Generator>,
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()>
where
    T: DistributedId,
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let mut db = NonBlocking(conn);
    let Some(scopes) = plan_fill(rows, db.in_transaction())? else {
        return Ok(());
    };
    let default;
    let generator = match generator {
        Some(generator) => generator,
        None => {
            default = default_generator(db.0).await?;
            &default
        }
    };
    fill_on(rows, generator.inner.engine(), &mut db, scopes, filled).await
}
