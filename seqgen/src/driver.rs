//! How the allocator reaches the database: one core, two drivers.
//!
//! Everything that decides (which numbers to serve, whether and what to reserve, whether a
//! block may be cached, which database this is) is written once, as `async` code over a
//! [`Driver`]: the statements it runs are its only await points, besides waiting for another
//! caller's reservation of the same key. [`Blocking`] drives it on a Diesel connection, whose
//! futures are ready at once ([`drive`] polls them once); with an `async-*` feature,
//! `NonBlocking` drives it on a diesel-async connection. No lock is held across an await.

use std::future::Future;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use crate::sync::{EventListener, Listener};
use diesel::connection::{LoadConnection, TransactionManager};
use diesel::{Connection, QueryResult};

use crate::backend::{
    is_savepoint_gone, rolled_back_underneath, Backend, Counter, Found, Identified, Request,
};

/// The statements the allocator core runs, on one connection.
pub(crate) trait Driver {
    /// The database's backend.
    type Backend: Backend;

    /// Whether the driver blocks its thread ([`Blocking`]): it may use a blocking (r2d2) pool,
    /// and the async driver an async one (deadpool, bb8). A blocking pool's call would stall an
    /// async runtime; an async pool needs one.
    const BLOCKING: bool;

    /// Whether the connection is inside a transaction Diesel knows of. A connection whose
    /// transaction state is broken counts as inside one: nothing reserved on it is cached.
    fn in_transaction(&mut self) -> bool;

    crate::backend::core_statements!(driver_statements);

    /// [`Backend::lock_nowait`], in a savepoint: a busy row leaves the caller's transaction
    /// usable (PostgreSQL would otherwise abort it).
    async fn lock_nowait(&mut self, counter: Counter<'_>) -> QueryResult<()>;

    /// Waits until `ended` is notified: another caller's reservation of a key ended.
    async fn wait(&mut self, ended: EventListener);

    /// Pauses between two attempts of a statement the database aborted.
    async fn pause(time: Duration);
}

/// Runs the core on a Diesel connection: every statement completes before its future is
/// polled, and waits block the thread.
pub(crate) struct Blocking<'c, C>(pub(crate) &'c mut C);

impl<C> Driver for Blocking<'_, C>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    type Backend = C::Backend;
    const BLOCKING: bool = true;

    fn in_transaction(&mut self) -> bool {
        in_transaction(self.0)
    }

    crate::backend::core_statements!(blocking_driver);

    async fn lock_nowait(&mut self, counter: Counter<'_>) -> QueryResult<()> {
        transaction(self.0, |conn| C::Backend::lock_nowait(conn, counter))
    }

    async fn wait(&mut self, ended: EventListener) {
        ended.wait();
    }

    async fn pause(time: Duration) {
        std::thread::sleep(time);
    }
}

/// `conn.transaction(work)`: a transaction, or a savepoint inside the caller's, as seqgen opens
/// around a gapless insert; except where the database rolled the whole transaction back
/// between two statements under the savepoint, as Galera does when another node's write set
/// aborts a local transaction. Diesel's `RELEASE SAVEPOINT` then fails (with the deadlock, or
/// "SAVEPOINT … does not exist"), and Diesel keeps the savepoint's level: the outer rollback
/// would roll back to that savepoint, fail, and return its "does not exist", which hides the
/// conflict `retry_transaction` runs again. So a failed release ends the level and returns
/// the conflict ([`released`]); a failed `work` returns its own error, not the rollback's.
/// The caller's transaction is left to roll back, as Diesel leaves it.
pub(crate) fn transaction<C, T, E>(
    conn: &mut C,
    work: impl FnOnce(&mut C) -> Result<T, E>,
) -> Result<T, E>
where
    C: Connection,
    E: From<diesel::result::Error>,
{
    C::TransactionManager::begin_transaction(conn)?;
    let level = depth(C::TransactionManager::transaction_manager_status_mut(conn));
    match work(conn) {
        Ok(value) => match C::TransactionManager::commit_transaction(conn) {
            Ok(()) => Ok(value),
            Err(error) => {
                // Rolling the level back fails the same way where the transaction is gone,
                // and ends it.
                if savepoint_kept(
                    level,
                    C::TransactionManager::transaction_manager_status_mut(conn),
                ) {
                    let _ = C::TransactionManager::rollback_transaction(conn);
                }
                Err(released(error).into())
            }
        },
        Err(error) => match C::TransactionManager::rollback_transaction(conn) {
            Ok(()) => Err(error),
            Err(lost) if is_savepoint_gone(&lost) => Err(error),
            Err(lost) => Err(lost.into()),
        },
    }
}

/// The error of a savepoint that could not be released: one the database rolled back with
/// the transaction around it is a conflict ([`rolled_back_underneath`]), as the server's own
/// words ("SAVEPOINT … does not exist") say nothing of what to do. Any other error (a
/// deadlock, a lost connection) stays as it is.
fn released(error: diesel::result::Error) -> diesel::result::Error {
    match is_savepoint_gone(&error) {
        true => rolled_back_underneath(),
        false => error,
    }
}

/// Whether the connection is inside a transaction Diesel knows of. A connection whose
/// transaction state is broken counts as inside one: nothing reserved on it is cached.
pub(crate) fn in_transaction<C: Connection>(conn: &mut C) -> bool {
    inside(C::TransactionManager::transaction_manager_status_mut(conn))
}

/// Whether `status` (Diesel's and diesel-async's alike) says a transaction is open; a broken
/// state counts as open.
fn inside(status: &mut diesel::connection::TransactionManagerStatus) -> bool {
    status
        .transaction_depth()
        .map_or(true, |depth| depth.is_some())
}

/// Whether a savepoint opened at `level` is still open in `status` after its release failed:
/// Diesel (and diesel-async) keep its level then, unless they rolled back by themselves a
/// transaction they knew was aborted.
fn savepoint_kept(
    level: Option<u32>,
    status: &mut diesel::connection::TransactionManagerStatus,
) -> bool {
    level > Some(1) && depth(status) == level
}

/// How many transactions and savepoints `status` (Diesel's and diesel-async's alike) says are
/// open: 1 in a transaction, 2 in a savepoint inside it; `None` outside one, or broken.
fn depth(status: &mut diesel::connection::TransactionManagerStatus) -> Option<u32> {
    status
        .transaction_depth()
        .ok()
        .flatten()
        .map(|depth| depth.get())
}

/// The output of `future`, whose every await point is ready at once: the core on a
/// [`Blocking`] driver.
pub(crate) fn drive<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        // A blocking driver's futures never wait: they block instead.
        Poll::Pending => unreachable!("a blocking driver's future was not ready"),
    }
}

/// Runs the core on a diesel-async connection. Nothing here (nor in the core) holds an async
/// closure across an await: rustc cannot show such a future `Send` for every lifetime
/// (rust-lang/rust#110338, "implementation of `Send` is not general enough"), and an axum
/// handler's future must be.
#[cfg(seqgen_async)]
pub(crate) struct NonBlocking<'c, C>(pub(crate) &'c mut C);

#[cfg(seqgen_async)]
impl<C> Driver for NonBlocking<'_, C>
where
    C: diesel_async::AsyncConnection,
    C::Backend: crate::backend::AsyncBackend,
{
    type Backend = C::Backend;
    const BLOCKING: bool = false;

    fn in_transaction(&mut self) -> bool {
        use diesel_async::TransactionManager as _;
        inside(C::TransactionManager::transaction_manager_status_mut(
            self.0,
        ))
    }

    crate::backend::core_statements!(nonblocking_driver);

    async fn lock_nowait(&mut self, counter: Counter<'_>) -> QueryResult<()> {
        // In a savepoint: rolling it back keeps the caller's transaction usable.
        begin(self.0).await?;
        let locked =
            <C::Backend as crate::backend::AsyncBackend>::lock_nowait(self.0, counter).await;
        end(self.0, locked).await
    }

    async fn wait(&mut self, ended: EventListener) {
        ended.await;
    }

    async fn pause(time: Duration) {
        tokio::time::sleep(time).await;
    }
}

/// Begins a transaction (a savepoint inside the caller's) on a diesel-async connection, by
/// hand: seqgen's futures never hold `conn.transaction(async |conn| …)`, since a future holding
/// an async closure is not `Send` for every lifetime (rust-lang/rust#110338) and an axum
/// handler's must be. See [`end`].
#[cfg(seqgen_async)]
pub(crate) async fn begin<C: diesel_async::AsyncConnection>(conn: &mut C) -> QueryResult<()> {
    use diesel_async::TransactionManager as _;
    C::TransactionManager::begin_transaction(conn).await
}

/// Ends the transaction [`begin`] began: commits after `Ok`, rolls back after `Err`; a
/// savepoint the database rolled back with the transaction around it is a conflict, as in
/// [`transaction`].
#[cfg(seqgen_async)]
pub(crate) async fn end<C, T, E>(conn: &mut C, result: Result<T, E>) -> Result<T, E>
where
    C: diesel_async::AsyncConnection,
    E: From<diesel::result::Error>,
{
    use diesel_async::TransactionManager as _;
    let level = depth(C::TransactionManager::transaction_manager_status_mut(conn));
    match result {
        Ok(output) => match C::TransactionManager::commit_transaction(conn).await {
            Ok(()) => Ok(output),
            Err(error) => {
                if savepoint_kept(
                    level,
                    C::TransactionManager::transaction_manager_status_mut(conn),
                ) {
                    let _ = C::TransactionManager::rollback_transaction(conn).await;
                }
                Err(released(error).into())
            }
        },
        Err(error) => {
            // A failed rollback leaves the connection marked broken by diesel-async; the
            // error that caused it is the one to report.
            let _ = C::TransactionManager::rollback_transaction(conn).await;
            Err(error)
        }
    }
}
