//! The one retry policy for seqgen's own autocommit statements: serialization failures and
//! deadlocks, bounded, with growing jittered backoff.

use crate::error::Result;
use crate::identity::random_token;

/// How often a reservation in its own transaction is tried when the database aborts it to
/// keep transactions serializable (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE) or
/// to break a deadlock (MySQL 1213).
pub(crate) const RESERVE_ATTEMPTS: u32 = 20;

/// Runs autocommit statements, retrying serialization failures (which also hit the writes
/// around a reservation: the token, the key's shape). Safe because a failed statement was
/// rolled back whole: it took no number.
pub(crate) fn retrying<T>(mut reserve: impl FnMut() -> diesel::QueryResult<T>) -> Result<T> {
    let mut attempt = 1;
    loop {
        match reserve() {
            Err(diesel::result::Error::DatabaseError(
                diesel::result::DatabaseErrorKind::SerializationFailure,
                _,
            )) if attempt < RESERVE_ATTEMPTS => {
                pause(attempt);
                attempt += 1;
            }
            result => return Ok(result?),
        }
    }
}

/// Waits a little longer after each failed attempt (200 µs × attempt, plus up to as much
/// again at random), so contending instances and threads do not retry in lockstep.
pub(crate) fn pause(attempt: u32) {
    let step = 200 * u64::from(attempt);
    let jitter = (random_token() as u64) % step;
    std::thread::sleep(std::time::Duration::from_micros(step + jitter));
}
