//! The one deliberate way to move a counter back, for a key nobody uses any more.

use super::{counters, prune::age, refused};
use crate::backend::{Backend, Counter as Row, IdConnection, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::error::{Error, Result};

/// Sets the counter of `key` in `scope` and `period` (`""` for none) back to `to`, so that
/// its next number is `to + 1`: every number above `to` it handed out will be handed out
/// again. For a key whose IDs were all deleted (a test run, a reset demo database), never
/// for one in use. The database refuses any other lowering of a counter (migration 600);
/// this one names the value it lowers from, as seqgen's `release` does.
///
/// Refused ([`Error::Refused`]): a `to` that is not below the counter, and a counter that
/// took a number less than `min_idle` ago on the database's clock, or takes one meanwhile
/// (an instance still uses the key, and holds numbers above `to`). Fails with
/// [`Error::UnknownKey`] without such a counter.
///
/// ```
/// use diesel::prelude::*;
/// use std::time::Duration;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// let spec = diesel_seqgen::Spec::builder("demo").prefix("D").date("").pad(4).build()?;
/// diesel_seqgen::Generator::new().next_id(&mut conn, &spec)?; // reserves 1..=100
///
/// // An instance may still hold 2..=100: refused unless it has been idle long enough.
/// assert!(diesel_seqgen::admin::renumber(&mut conn, "demo", "", "", 0, Duration::from_secs(60)).is_err());
/// let (before, after) = diesel_seqgen::admin::renumber(&mut conn, "demo", "", "", 0, Duration::ZERO)?;
/// assert_eq!((before, after), (100, 0));
/// assert_eq!(diesel_seqgen::Generator::new().next_id(&mut conn, &spec)?, "D0001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn renumber<C>(
    conn: &mut C,
    key: &str,
    scope: &str,
    period: &str,
    to: u64,
    min_idle: std::time::Duration,
) -> Result<(u64, u64)>
where
    C: IdConnection,
{
    let refuse = |reason: String| refused(key, reason);
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        let row = counters(conn, Some(key))?
            .into_iter()
            .find(|row| row.scope == scope && row.period == period)
            .ok_or_else(|| Error::UnknownKey {
                key: format!("{key} (scope {scope:?}, period {period:?})"),
            })?;
        let current = row.current_value.unsigned_abs();
        if to >= current {
            return Err(refuse(format!(
                "its counter is at {current}: renumbering only lowers it (below {current}, not to {to})"
            )));
        }
        if !min_idle.is_zero() {
            let now = C::Backend::database_now(conn)?;
            let idle = age(&now, &row.updated_at).ok_or_else(|| {
                refuse(format!(
                    "cannot tell how long ago it took a number ({:?}, database time {now:?})",
                    row.updated_at
                ))
            })?;
            if idle < min_idle {
                return Err(refuse(format!(
                    "it took a number {}s ago, less than {}s: an instance may still use it and hold numbers above {to}",
                    idle.as_secs(),
                    min_idle.as_secs()
                )));
            }
        }
        // `to` is below a counter that fits an i64.
        let lowered = drive(C::Backend::give_back(&mut Blocking(conn), Row::new(key, scope, period), row.current_value, to as i64))?;
        if !lowered {
            return Err(refuse(
                "it took a number while being renumbered: an instance still uses it".to_owned(),
            ));
        }
        Ok((current, to))
    })
}
