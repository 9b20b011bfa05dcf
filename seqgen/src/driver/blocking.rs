//! The [`Driver`] on Diesel's connections ([`Blocking`]), and the transaction state both
//! drivers read.

use std::time::Duration;

use diesel::connection::{LoadConnection, TransactionManager};
use diesel::{Connection, QueryResult};

use super::Driver;
use crate::backend::{is_savepoint_gone, rolled_back_underneath, Backend, Blocking, Counter};
use crate::sync::{EventListener, Listener};

// The core on a Diesel connection: every statement completes before its future is polled, and
// waits block the thread.
impl<C> Driver for Blocking<'_, C>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    const BLOCKING: bool = true;

    fn in_transaction(&mut self) -> bool {
        in_transaction(self.0)
    }

    async fn lock_nowait(&mut self, counter: Counter<'_>) -> QueryResult<()> {
        transaction(self.0, |conn| {
            super::drive(C::Backend::lock_row_nowait(&mut Blocking(conn), counter))
        })
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
pub(super) fn released(error: diesel::result::Error) -> diesel::result::Error {
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
pub(super) fn inside(status: &mut diesel::connection::TransactionManagerStatus) -> bool {
    status
        .transaction_depth()
        .map_or(true, |depth| depth.is_some())
}

/// Whether a savepoint opened at `level` is still open in `status` after its release failed:
/// Diesel (and diesel-async) keep its level then, unless they rolled back by themselves a
/// transaction they knew was aborted.
pub(super) fn savepoint_kept(
    level: Option<u32>,
    status: &mut diesel::connection::TransactionManagerStatus,
) -> bool {
    level > Some(1) && depth(status) == level
}

/// How many transactions and savepoints `status` (Diesel's and diesel-async's alike) says are
/// open: 1 in a transaction, 2 in a savepoint inside it; `None` outside one, or broken.
pub(super) fn depth(status: &mut diesel::connection::TransactionManagerStatus) -> Option<u32> {
    status
        .transaction_depth()
        .ok()
        .flatten()
        .map(|depth| depth.get())
}
