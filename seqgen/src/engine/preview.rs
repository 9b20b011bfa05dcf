//! Looking at a counter without moving it: the last number the database handed out in the
//! current period, and the one it will hand out next.

use chrono::{DateTime, Utc};

use super::{check_scope, Generator};
use crate::backend::{Backend, Counter, IdConnection};
use crate::capacity::capacity_error;
use crate::error::Result;
use crate::reserve::same_shape;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::{Scoped, Spec};

impl Generator {
    /// The last counter the database handed out for `spec`'s current period (on this
    /// generator's clock), or `None` when it handed out none yet. Nothing is reserved or
    /// locked.
    ///
    /// This is the database's view. In batched mode it counts whole blocks: numbers an
    /// instance still holds in memory are included, whether or not they were served. In
    /// gapless mode it is the last number a committed transaction took (a transaction that
    /// holds the counter but has not committed is not seen).
    pub fn last_value<'s, C>(
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

    /// The counter the database will hand out next for `spec`'s current period, if nothing
    /// else takes one first: after the last one, or at the key's `start_value` when an
    /// operator set one ahead. Nothing is reserved or locked. Format it with
    /// [`Spec::format`] and [`Spec::period_at`].
    ///
    /// In gapless mode it is the number the next committing transaction gets, if no other
    /// commits first. In batched mode it is where the next *reservation* starts: an instance
    /// may still serve numbers below it from memory. Fails with the error `next_id` would
    /// give when the period is full ([`Error::Overflow`](crate::Error::Overflow) or
    /// [`Error::SeriesExhausted`](crate::Error::SeriesExhausted)), and with
    /// [`Error::ShapeChanged`](crate::Error::ShapeChanged) when the key records another shape.
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// assert_eq!(generator.last_value(&mut conn, &invoices)?, None);
    /// assert_eq!(generator.peek_next(&mut conn, &invoices)?, 1);
    /// conn.transaction(|conn| generator.next_id(conn, &invoices))?;
    /// assert_eq!(generator.last_value(&mut conn, &invoices)?, Some(1));
    /// let next = generator.peek_next(&mut conn, &invoices)?;
    /// assert_eq!(invoices.format("", next), "INV000002");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek_next<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<u64>
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

/// [`Generator::last_value`] at `now`.
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

/// [`Generator::last_value`] in `period`.
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
    let current = C::Backend::read(conn, Counter::new(spec.key(), scope, period))?;
    Ok(current
        .and_then(|c| u64::try_from(c).ok())
        .filter(|&c| c > 0))
}

/// [`Generator::peek_next`] at `now`.
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

/// [`Generator::peek_next`] in `period`.
pub(crate) fn peek_next_of<C>(conn: &mut C, spec: &Spec, scope: &str, period: &str) -> Result<u64>
where
    C: IdConnection,
{
    peek_of(conn, spec, scope, period).map(|(_, next)| next)
}

/// [`Generator::last_value`] and [`Generator::peek_next`] in `period`, from one read of
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
    let counter = Counter::of(spec, scope, period);
    let current = C::Backend::read(conn, counter)?;
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
        return Err(capacity_error(spec, &Period::new(period.to_owned())));
    }
    Ok((last, next))
}
