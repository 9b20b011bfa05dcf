//! Running a transaction again when the database aborts it.

use diesel::Connection;

use crate::driver::drive;
use crate::error::{Error, Result};
use crate::reserve::retry::retry_loop;

/// Runs `work` in a transaction (`conn.transaction(work)`) and runs it again, from the start,
/// when the database aborts it with a serialization failure or a deadlock
/// ([`Error::TransactionConflict`]): up to 30 attempts, each after a pause twice as long as
/// the last (200 µs up to 50 ms, jittered). Any other error, and the last conflict, is
/// returned as it is.
///
/// Gapless numbering needs it on a multi-writer Galera cluster (a transaction whose counter
/// another node changed first fails certification), and under REPEATABLE READ or
/// SERIALIZABLE.
/// Records inserted with [`insert_into`](crate::insert_into) in `work` may be built outside
/// it: each attempt numbers again the ID fields an earlier one filled (its numbers may have
/// gone back with its rollback and been taken by another transaction since), and every
/// gapless field. Anything else `work` keeps between attempts must be safe to use again.
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
/// let number = diesel_seqgen::retry_transaction(&mut conn, |conn| diesel_seqgen::global::next_id(conn, &invoices))?;
/// assert_eq!(number, "INV000001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn retry_transaction<C, T, F>(conn: &mut C, mut work: F) -> Result<T>
where
    C: Connection,
    F: FnMut(&mut C) -> Result<T>,
{
    let conflict = |e: &Error| matches!(e, Error::TransactionConflict(_));
    crate::model::retried::noting(|| {
        drive(async { retry_loop!(sleep, conflict, conn.transaction(&mut work)) })
    })
}

/// The pause between two attempts of a blocking transaction.
async fn sleep(time: std::time::Duration) {
    std::thread::sleep(time);
}
