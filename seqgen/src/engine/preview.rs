//! Looking at a counter without moving it: the last number the database handed out in the
//! current period, and the one it will hand out next.

use chrono::{DateTime, Utc};

use super::{check_scope, Engine};
use crate::backend::{Backend, Counter, IdConnection, SharedStatements};
use crate::counter_range::capacity_error;
use crate::driver::{drive, Blocking};
use crate::error::Result;
use crate::reserve::same_shape;
use diesel_seqgen_core::{Scoped, Spec};

impl Engine {
    /// [`Generator::last_value`](crate::Generator::last_value), in the period of the document's
    /// date or of this engine's clock.
    pub(crate) fn last_value<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
    ) -> Result<Option<u64>>
    where
        C: IdConnection,
    {
        let target = spec.into();
        last_value_at(conn, target.spec(), target.scope(), self.moment_of(target))
    }

    /// [`Generator::peek_next`](crate::Generator::peek_next), likewise.
    pub(crate) fn peek_next<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<u64>
    where
        C: IdConnection,
    {
        let target = spec.into();
        peek_next_at(conn, target.spec(), target.scope(), self.moment_of(target))
    }

    /// The moment whose period `target`'s numbers belong to: its document's date, or now.
    fn moment_of(&self, target: Scoped<'_>) -> chrono::DateTime<chrono::Utc> {
        match target.date() {
            Some(date) => target.spec().moment_of(date),
            None => self.inner.clock.now(),
        }
    }
}

/// Refuses `spec` if its key's row records another shape: its numbers are printed alike only
/// by a spec of that shape. Nothing is recorded or locked by a look.
fn check_recorded_shape<C: IdConnection>(conn: &mut C, spec: &Spec) -> Result<()> {
    match C::Backend::look_at_shape(conn, spec.key())? {
        Some(recorded) => same_shape(spec, recorded),
        None => Ok(()),
    }
}

/// [`Engine::last_value`] at `now`.
pub(crate) fn last_value_at<C>(
    conn: &mut C,
    spec: &Spec,
    scope: &str,
    now: DateTime<Utc>,
) -> Result<Option<u64>>
where
    C: IdConnection,
{
    last_value_of(conn, spec, scope, &spec.period_at(now))
}

/// [`Engine::last_value`] in `period`.
pub(crate) fn last_value_of<C>(
    conn: &mut C,
    spec: &Spec,
    scope: &str,
    period: &str,
) -> Result<Option<u64>>
where
    C: IdConnection,
{
    check_scope(spec, scope)?;
    check_recorded_shape(conn, spec)?;
    let row = spec.counter_period(period);
    let current = drive(C::Backend::read(
        &mut Blocking(conn),
        Counter::new(spec.key(), scope, &row),
    ))?;
    Ok(current
        .and_then(|c| u64::try_from(c).ok())
        .filter(|&c| c > 0))
}

/// [`Engine::peek_next`] at `now`.
pub(crate) fn peek_next_at<C>(
    conn: &mut C,
    spec: &Spec,
    scope: &str,
    now: DateTime<Utc>,
) -> Result<u64>
where
    C: IdConnection,
{
    peek_next_of(conn, spec, scope, &spec.period_at(now))
}

/// [`Engine::peek_next`] in `period`.
pub(crate) fn peek_next_of<C>(conn: &mut C, spec: &Spec, scope: &str, period: &str) -> Result<u64>
where
    C: IdConnection,
{
    peek_of(conn, spec, scope, period).map(|(_, next)| next)
}

/// [`Engine::last_value`] and [`Engine::peek_next`] in `period`, from one read of
/// the counter.
pub(crate) fn peek_of<C>(
    conn: &mut C,
    spec: &Spec,
    scope: &str,
    period: &str,
) -> Result<(Option<u64>, u64)>
where
    C: IdConnection,
{
    check_scope(spec, scope)?;
    check_recorded_shape(conn, spec)?;
    let row = spec.counter_period(period);
    let counter = Counter::of(spec, scope, &row);
    let current = drive(C::Backend::read(&mut Blocking(conn), counter))?;
    let last = current
        .and_then(|c| u64::try_from(c).ok())
        .filter(|&c| c > 0);
    // As the reservation statements compute it: a new row starts at the key row's start
    // value (else the spec's), and an existing one jumps to its own (else the spec's); seqgen
    // sets one on the key's row alone, which is an unscoped undated key's counter.
    let key_row = counter.same_row(&Counter::key_row(spec.key()));
    let key_start = match (current, key_row) {
        (Some(_), false) => None,
        _ => C::Backend::read_start(conn, spec.key())?,
    };
    let base = key_start.unwrap_or(counter.start).saturating_sub(1);
    let base = current.map_or(base, |current| current.max(base));
    let next = u64::try_from(base.max(0)).unwrap_or(0).saturating_add(1);
    if next > spec.capacity() {
        return Err(capacity_error(spec, &spec.period(period.to_owned())));
    }
    Ok((last, next))
}
