//! The one retry policy: bounded, with growing jittered backoff, for seqgen's own autocommit
//! statements (serialization failures, deadlocks) and for `retry_transaction`.

use std::time::Duration;

/// How often a reservation in its own transaction is tried when the database aborts it to
/// keep transactions serializable (PostgreSQL 40001 under REPEATABLE READ or SERIALIZABLE),
/// to break a deadlock (MySQL 1213) or because another Galera node's write certified first
/// (1213 too). With [`before_next`]'s pauses that is 1–2 s of trying: six writers on three
/// Galera nodes reserving blocks of 10 ran out of 20 attempts with 200 µs steps
/// (`tests/suite/galera.rs`).
pub(crate) const RESERVE_ATTEMPTS: u32 = 30;

/// Evaluates `$attempt` (an expression that runs the work anew, `.await`s included) until it
/// succeeds, fails with an error `$retryable` does not accept, or has failed
/// [`RESERVE_ATTEMPTS`] times, awaiting `$pause(backoff)` between attempts (a thread's sleep,
/// or a task's: see [`Driver::pause`](crate::driver::Driver::pause)). A macro rather than a
/// function taking an async closure: a future holding one is not provably `Send` for every
/// lifetime (rustc #110338), and the async driver's futures must be `Send`.
macro_rules! retry_loop {
    ($pause:expr, $retryable:expr, $attempt:expr) => {{
        let mut attempts = 1;
        loop {
            match $attempt {
                Err(e) if $retryable(&e) && attempts < $crate::reserve::retry::RESERVE_ATTEMPTS => {
                    $pause($crate::reserve::retry::before_next(attempts)).await;
                    attempts += 1;
                }
                result => break result,
            }
        }
    }};
}
pub(crate) use retry_loop;

/// Runs the autocommit statement `$statement` (re-evaluated at every attempt) on driver
/// `$driver`, retrying serialization failures (which also hit the writes around a
/// reservation: the token, the key's shape): `Result<T>`. Safe because a failed statement was
/// rolled back whole: it took no number.
macro_rules! retrying {
    ($driver:ty, $statement:expr) => {
        $crate::reserve::retry::retry_loop!(
            <$driver as $crate::driver::Driver>::pause,
            $crate::backend::is_conflict,
            $statement
        )
        .map_err($crate::Error::from)
    };
}
pub(crate) use retrying;

/// Counts a failed attempt number `attempt` and returns how long to wait before the next:
/// twice as long after each (200 µs, 400 µs, … at most 50 ms), plus up to as much again at
/// random, so contending instances and threads do not retry in lockstep and a busy cluster
/// gets room to drain.
pub(crate) fn before_next(attempt: u32) -> Duration {
    crate::stats::count_retry();
    crate::trace::event!(debug, attempt, "a serialization failure: trying again");
    let step = (200u64 << attempt.saturating_sub(1).min(8)).min(50_000);
    let jitter = (random_token() as u64) % step;
    Duration::from_micros(step + jitter)
}

/// A random positive token from the standard library's per-process random hash keys.
pub(crate) fn random_token() -> i64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::hash::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    (hasher.finish() >> 1).max(1) as i64
}
