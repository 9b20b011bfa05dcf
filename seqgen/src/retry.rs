//! The one retry policy: bounded, with growing jittered backoff, for seqgen's own autocommit
//! statements (serialization failures, deadlocks) and for `retry_transaction`.

use std::time::Duration;

use crate::driver::Driver;
use crate::error::Result;
use crate::identity::random_token;

/// How often a reservation in its own transaction is tried when the database aborts it to
/// keep transactions serializable (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE) or
/// to break a deadlock (MySQL 1213).
const RESERVE_ATTEMPTS: u32 = 20;

/// Runs autocommit statements on `db`, retrying serialization failures (which also hit the
/// writes around a reservation: the token, the key's shape). Safe because a failed statement
/// was rolled back whole: it took no number.
pub(crate) async fn retrying<D: Driver, T>(
    db: &mut D,
    mut statement: impl AsyncFnMut(&mut D) -> diesel::QueryResult<T>,
) -> Result<T> {
    use diesel::result::{DatabaseErrorKind, Error as DieselError};
    let conflict = |e: &DieselError| {
        matches!(
            e,
            DieselError::DatabaseError(DatabaseErrorKind::SerializationFailure, _)
        )
    };
    Ok(with_retries(async || statement(db).await, conflict, D::pause).await?)
}

thread_local! {
    /// Attempts this thread repeated, for the statistics: a reservation reads it before and
    /// after (see [`crate::cache::Reserving`]).
    static RETRIES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many attempts this thread has repeated so far.
pub(crate) fn retries_so_far() -> u64 {
    RETRIES.get()
}

/// Runs `attempt` until it succeeds, fails with an error `retryable` does not accept, or has
/// failed [`RESERVE_ATTEMPTS`] times, with a [pause](backoff) between attempts (a thread's
/// sleep, or a task's: see [`Driver::pause`]).
pub(crate) async fn with_retries<T, E>(
    mut attempt: impl AsyncFnMut() -> std::result::Result<T, E>,
    retryable: impl Fn(&E) -> bool,
    pause: impl AsyncFn(Duration),
) -> std::result::Result<T, E> {
    let mut attempts = 1;
    loop {
        match attempt().await {
            Err(e) if retryable(&e) && attempts < RESERVE_ATTEMPTS => {
                RETRIES.set(RETRIES.get() + 1);
                crate::trace::event!(
                    debug,
                    attempt = attempts,
                    "a serialization failure: trying again"
                );
                pause(backoff(attempts)).await;
                attempts += 1;
            }
            result => return result,
        }
    }
}

/// A little longer after each failed attempt (200 µs × attempt, plus up to as much again at
/// random), so contending instances and threads do not retry in lockstep.
fn backoff(attempt: u32) -> Duration {
    let step = 200 * u64::from(attempt);
    let jitter = (random_token() as u64) % step;
    Duration::from_micros(step + jitter)
}
