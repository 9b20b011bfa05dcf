//! Whether a connection is inside a transaction Diesel knows of.

use diesel::connection::TransactionManager;
use diesel::Connection;

/// Whether the connection is inside a transaction Diesel knows of. A connection whose
/// transaction state is broken counts as inside one: nothing reserved on it is cached.
pub(crate) fn in_transaction<C: Connection>(conn: &mut C) -> bool {
    C::TransactionManager::transaction_manager_status_mut(conn)
        .transaction_depth()
        .map_or(true, |depth| depth.is_some())
}
