//! What an operator does to `db_key` without writing SQL: list the counters, change a key's
//! settings, delete the rows of old periods, and check a gapless key's numbers against the
//! business table. The `seqgen` command line (crate `diesel-seqgen-cli`) is these functions; an app's
//! own admin screen can call them too.
//!
//! Every change runs in one transaction and is checked first: a refused change (an
//! [`Error::Refused`] that says why) changes nothing.
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::admin::{self, Setting};
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! let orders = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").build()?;
//! diesel_seqgen::global::next_id(&mut conn, &orders)?;
//!
//! let change = admin::set(&mut conn, "orders", Setting::BatchSize, Some(1000))?;
//! assert_eq!((change.before, change.after), (None, Some(1000)));
//! let rows = admin::counters(&mut conn, Some("orders"))?;
//! assert_eq!((rows[0].current_value, rows[0].batch_size), (100, Some(1000)));
//! assert!(admin::set(&mut conn, "orders", Setting::BatchSize, Some(0)).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod adopt;
mod capacity;
mod gaps;
mod prune;
mod renumber;

pub use adopt::{adopt, check, CounterCheck, TableCheck};
pub use capacity::{capacity, CounterCapacity, Limit, RunsOut};
pub use gaps::{gaps, GapReport, IdColumn, Missing};
pub use prune::prune;
pub use renumber::renumber;

pub use crate::backend::Setting;
use crate::backend::{Backend, IdConnection, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::engine::peek_of;
use crate::error::{Error, Result};
use diesel_seqgen_core::{Scoped, Spec};

/// A row of `db_key`: one counter (a key in one scope and period), or a key's row (scope and
/// period `""`), which holds the key's settings and, for an unscoped key without a date part,
/// is its counter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Counter {
    /// The key.
    pub key: String,
    /// The scope value, for a scoped key's counter; `""` otherwise.
    pub scope: String,
    /// The period (the date part as IDs show it); `""` on the key's row.
    pub period: String,
    /// The last number handed out (0 = none yet).
    pub current_value: i64,
    /// Numbers per reservation, set by an operator (key's row only).
    pub batch_size: Option<i64>,
    /// The first number of a new period, set by an operator (key's row only).
    pub start_value: Option<i64>,
    /// How the key's IDs look, recorded at first use (key's row only): see [`Spec::shape`].
    pub shape: Option<String>,
    /// When a number was last reserved, as the database prints it (its own time zone).
    pub updated_at: String,
    /// When the row was created (its first reservation), as the database prints it.
    pub created_at: String,
}

/// Every counter in `db_key` (of `key` alone, with one), by key and period; the row that names
/// the database to seqgen is left out.
pub fn counters<C>(conn: &mut C, key: Option<&str>) -> Result<Vec<Counter>>
where
    C: IdConnection,
{
    let rows = C::Backend::counters(conn, key)?;
    Ok(rows
        .into_iter()
        .map(
            |(
                key,
                scope,
                period,
                current_value,
                batch_size,
                start_value,
                shape,
                updated,
                created,
            )| {
                Counter {
                    key,
                    scope,
                    period,
                    current_value,
                    batch_size,
                    start_value,
                    shape,
                    // Whole seconds: the backends print fractions differently, or not at all.
                    updated_at: updated.chars().take(19).collect(),
                    created_at: created.chars().take(19).collect(),
                }
            },
        )
        .collect())
}

/// The spec whose IDs `key` hands out, as its key's row recorded them ([`Spec::from_shape`]):
/// what a tool without the application's code needs to format and parse them. Periods are
/// in UTC (the shape does not record a time zone).
///
/// Fails with [`Error::UnknownKey`], or [`Error::Refused`] when no instance has recorded a
/// shape yet (none took a number since seqgen started recording them).
pub fn recorded_spec<C>(conn: &mut C, key: &str) -> Result<Spec>
where
    C: IdConnection,
{
    match shape_spec(conn, key)? {
        Some(spec) => Ok(spec),
        None if C::Backend::counters(conn, Some(key))?.is_empty() => Err(Error::UnknownKey {
            key: key.to_owned(),
        }),
        None => Err(refused(
            key,
            "no shape is recorded on its row yet: let an instance take a number first",
        )),
    }
}

/// The spec the shape recorded on `key`'s row stands for, if one is recorded.
fn shape_spec<C>(conn: &mut C, key: &str) -> Result<Option<Spec>>
where
    C: IdConnection,
{
    drive(C::Backend::read_shape(&mut Blocking(conn), key))?
        .map(|shape| Spec::from_shape(key, &shape).map_err(|e| refused(key, e.to_string())))
        .transpose()
}

/// A setting before and after [`set`] changed it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Change {
    /// The key.
    pub key: String,
    /// The setting.
    pub setting: Setting,
    /// Its value before; `None`: unset (the spec's own).
    pub before: Option<i64>,
    /// Its value after, as the row holds it (for a start value on a step, the counter that
    /// prints the number given).
    pub after: Option<i64>,
    /// Whether the key had no row in `db_key` yet: a start value set before the key's first
    /// use (numbering from 1000 at go-live) creates the key's row.
    pub created: bool,
}

/// Sets `setting` on `key`'s row to `value` (`None` clears it: the spec's own again), in one
/// transaction; it applies at the next reservation. Creates the key's row when the key has
/// counters but no key's row yet (a dated key before its first setting), and for a start value
/// of a key not used yet (numbering from 1000 at go-live: [`Change::created`]). A batch size for
/// a key `db_key` has no row of at all fails with [`Error::UnknownKey`], so that a mistyped key
/// is not created by it.
///
/// Refused ([`Error::Refused`]), as the table's own checks would: a value below 1, and a
/// start value the key's recorded shape cannot print. A start value is the number IDs start
/// from: with a [step](diesel_seqgen_core::SpecBuilder::step) (`1000` on a step of 10), the
/// row stores the counter that prints it (100), which [`Change::after`] reports.
pub fn set<C>(conn: &mut C, key: &str, setting: Setting, value: Option<i64>) -> Result<Change>
where
    C: IdConnection,
{
    let refuse = |reason: String| refused(key, reason);
    if let Some(value) = value.filter(|&v| v < 1) {
        return Err(refuse(format!(
            "{} must be at least 1, not {value}",
            setting.column()
        )));
    }
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        // The key's row first, locked (MySQL): see `Backend::lock_settings`.
        let settings = C::Backend::lock_settings(conn, key)?;
        let created = settings.is_none() && C::Backend::counters(conn, Some(key))?.is_empty();
        if created && !matches!((setting, value), (Setting::StartValue, Some(_))) {
            return Err(Error::UnknownKey { key: key.to_owned() });
        }
        let mut value = value;
        if let (Setting::StartValue, Some(number)) = (setting, value) {
            if let Some(spec) = shape_spec(conn, key)? {
                let largest = spec.stepped(spec.capacity());
                if u64::try_from(number).is_ok_and(|v| v > largest) {
                    return Err(refuse(format!(
                        "start_value {number} is past the largest number its IDs can show ({largest}, shape {})",
                        spec.shape()
                    )));
                }
                // With a step the row counts IDs: the number given is stored as the counter
                // that prints it.
                let counter = u64::try_from(number).ok().and_then(|n| spec.unstepped(n));
                let Some(counter) = counter else {
                    return Err(refuse(format!(
                        "start_value {number} is not on the key's step: its numbers go {} by {} (shape {})",
                        spec.stepped(1),
                        spec.step(),
                        spec.shape()
                    )));
                };
                value = Some(i64::try_from(counter).unwrap_or(i64::MAX));
            }
        }
        let before = settings.and_then(|(batch_size, start_value)| match setting {
            Setting::BatchSize => batch_size,
            Setting::StartValue => start_value,
        });
        C::Backend::set_setting(conn, key, setting, value)?;
        Ok(Change {
            key: key.to_owned(),
            setting,
            before,
            after: value,
            created,
        })
    })
}

/// The last number the database handed out in a period, and the one it hands out next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Peek {
    /// The last number (`None`: none yet); see [`Generator::last_value`](crate::Generator::last_value).
    pub last: Option<u64>,
    /// The next number; see [`Generator::peek_next`](crate::Generator::peek_next).
    pub next: u64,
}

/// [`Generator::last_value`](crate::Generator::last_value) and
/// [`peek_next`](crate::Generator::peek_next) of `spec` (`&spec`, or `spec.scope("acme")`) in
/// a given `period` rather than the current one. Nothing is reserved or locked. A `period` the
/// spec's date pattern cannot print is refused ([`Error::Refused`]), rather than shown as
/// empty.
pub fn peek<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>, period: &str) -> Result<Peek>
where
    C: IdConnection,
{
    let target = spec.into();
    let (spec, scope) = (target.spec(), target.scope());
    check_period(spec, period)?;
    let (last, next) = peek_of(conn, spec, scope, period)?;
    Ok(Peek { last, next })
}

/// Refuses a `period` `spec` could not have printed: `2026` for an undated key, `2026-11` for
/// `%Y%m`. A mistyped period would otherwise read as one that has handed out nothing.
pub(super) fn check_period(spec: &Spec, period: &str) -> Result<()> {
    // Any scope: a template may print one, and what is checked is the period.
    let printed = spec
        .parse(&spec.format_in_scope("s", period, 1))
        .is_ok_and(|parts| parts.period == period);
    if printed {
        Ok(())
    } else if spec.date().is_empty() {
        Err(refused(
            spec.key(),
            format!("it has no date part, so no period {period:?}"),
        ))
    } else {
        Err(refused(
            spec.key(),
            format!("{period:?} is not a period of `{}`", spec.date()),
        ))
    }
}

/// The counter and the period of the `db_key` row it came from of `value`, an ID of `spec` as
/// a table holds it (text, or the integer of a numeric spec); `None` when it is no ID of
/// `spec`. The row's period is the printed one, unless a reset says otherwise.
pub(super) fn number_of(spec: &Spec, value: &str) -> Option<(u64, String)> {
    let parts = match value.parse::<i64>() {
        Ok(number) if spec.is_numeric() => spec.parse_number(number),
        _ => spec.parse(value),
    };
    let parts = parts.ok()?;
    let number = spec.counter_of(&parts)?;
    let period = match spec.reset() {
        None => parts.period,
        Some(_) => spec.counter_period(&parts.period),
    };
    Some((number, period))
}

/// [`Error::Refused`] for `key`.
pub(super) fn refused(key: &str, reason: impl Into<String>) -> Error {
    Error::Refused {
        key: key.to_owned(),
        reason: reason.into(),
    }
}
