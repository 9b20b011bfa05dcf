//! What an operator does to `db_key` without writing SQL: list the counters, change a key's
//! settings, delete the rows of old periods, and check a gapless key's numbers against the
//! business table. The `seqgen` command line (crate `seqgen-cli`) is these functions; an app's
//! own admin screen can call them too.
//!
//! Every change runs in one transaction and is checked first: a refused change (an
//! [`Error::Refused`] that says why) changes nothing.
//!
//! ```
//! use diesel::prelude::*;
//! use seqgen::admin::{self, Setting};
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! seqgen::run_migrations(&mut conn)?;
//! let orders = seqgen::Spec::builder("orders").prefix("ORD").date("").build()?;
//! seqgen::global::next_id(&mut conn, &orders)?;
//!
//! let change = admin::set(&mut conn, "orders", Setting::BatchSize, Some(1000))?;
//! assert_eq!((change.before, change.after), (None, Some(1000)));
//! let rows = admin::counters(&mut conn, Some("orders"))?;
//! assert_eq!((rows[0].current_value, rows[0].batch_size), (100, Some(1000)));
//! assert!(admin::set(&mut conn, "orders", Setting::BatchSize, Some(0)).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use diesel::connection::LoadConnection;

pub use crate::backend::Setting;
use crate::backend::{Backend, Counter as Row};
use crate::error::{Error, Result};
use crate::generator::{check_scope, peek_of};
use seqgen_core::{Overflow, Scoped, Spec, TimeZone};

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
}

/// Every counter in `db_key` (of `key` alone, with one), by key and period; the row that names
/// the database to seqgen is left out.
pub fn counters<C>(conn: &mut C, key: Option<&str>) -> Result<Vec<Counter>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let rows = C::Backend::counters(conn, key)?;
    Ok(rows
        .into_iter()
        .map(
            |(key, scope, period, current_value, batch_size, start_value, shape, updated_at)| {
                Counter {
                    key,
                    scope,
                    period,
                    current_value,
                    batch_size,
                    start_value,
                    shape,
                    // Whole seconds: the backends print fractions differently, or not at all.
                    updated_at: updated_at.chars().take(19).collect(),
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
    C: LoadConnection,
    C::Backend: Backend,
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
    C: LoadConnection,
    C::Backend: Backend,
{
    C::Backend::read_shape(conn, key)?
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
    /// Its value after.
    pub after: Option<i64>,
}

/// Sets `setting` on `key`'s row to `value` (`None` clears it: the spec's own again), in one
/// transaction; it applies at the next reservation. Creates the key's row when the key has
/// counters but no key's row yet (a dated key before its first setting); a key `db_key` has no
/// row of at all fails with [`Error::UnknownKey`], so that a mistyped key is not created.
///
/// Refused ([`Error::Refused`]), as the table's own checks would: a value below 1, and a
/// start value the key's recorded shape cannot print.
pub fn set<C>(conn: &mut C, key: &str, setting: Setting, value: Option<i64>) -> Result<Change>
where
    C: LoadConnection,
    C::Backend: Backend,
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
        if settings.is_none() && C::Backend::counters(conn, Some(key))?.is_empty() {
            return Err(Error::UnknownKey { key: key.to_owned() });
        }
        if let (Setting::StartValue, Some(value)) = (setting, value) {
            if let Some(spec) = shape_spec(conn, key)? {
                if u64::try_from(value).is_ok_and(|v| v > spec.capacity()) {
                    return Err(refuse(format!(
                        "start_value {value} is past the largest number its IDs can show ({}, shape {})",
                        spec.capacity(),
                        spec.shape()
                    )));
                }
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
    C: LoadConnection,
    C::Backend: Backend,
{
    let target = spec.into();
    let (spec, scope) = (target.spec(), target.scope());
    check_period(spec, period)?;
    let (last, next) = peek_of(conn, spec, scope, period)?;
    Ok(Peek { last, next })
}

/// Deletes `key`'s counter rows of the periods before `before`, in one transaction, and
/// returns the periods deleted. A key's counter row is only needed while its period can still
/// hand out numbers: delete periods long past, on every instance's clock.
///
/// Refused ([`Error::Refused`]): a key without a date part (its one row is its counter), a
/// date pattern whose periods do not sort as dates do (`%d%m%Y`), a `before` that is not a
/// period of the key, and a `before` after the current period at `now` in `tz` or after the
/// key's latest period. The current period is never deleted, nor the newest period in the
/// table (an instance whose clock is ahead, or a little behind, may be using it).
///
/// Also refused: a period whose row took a number less than `min_age` ago (on the database's
/// clock), or takes one while it is being pruned (each row is deleted only if it still holds
/// the value read). An instance whose clock lags could still be taking numbers in it, and
/// after the delete it would create the row again and hand out that period's numbers a second
/// time.
pub fn prune<C>(
    conn: &mut C,
    key: &str,
    before: &str,
    now: DateTime<Utc>,
    tz: TimeZone,
    min_age: std::time::Duration,
) -> Result<Vec<String>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let refuse = |reason: String| refused(key, reason);
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        let spec = recorded_spec(conn, key)?;
        let pattern = spec.date();
        if pattern.is_empty() {
            return Err(refuse(
                "it has no date part: its one row is its counter, and deleting it would hand its numbers out again".to_owned(),
            ));
        }
        if !sorts_as_dates(pattern) {
            return Err(refuse(format!(
                "its periods (`{pattern}`) do not sort as dates, so \"before\" cannot be told by comparing them; delete old rows by hand"
            )));
        }
        let current = tz.format(now, pattern);
        if !same_form(before, &current) {
            return Err(refuse(format!(
                "{before:?} is not a period of `{pattern}` (this period is {current:?})"
            )));
        }
        let rows: Vec<Counter> = counters(conn, Some(key))?
            .into_iter()
            .filter(|row| same_form(&row.period, &current))
            .collect();
        // The newest period of each scope (one, `""`, for an unscoped key).
        let mut newest: BTreeMap<&str, &str> = BTreeMap::new();
        for row in &rows {
            let period = newest.entry(&row.scope).or_default();
            *period = (*period).max(&row.period);
        }
        let latest = newest.values().copied().max().map_or(current.as_str(), |p| p.max(&current));
        if before > latest {
            return Err(refuse(format!(
                "{before:?} is after the current period {latest:?}, which is never deleted"
            )));
        }
        // The newest row of each scope stays too: the last period in use, perhaps still on a
        // late clock.
        let old: Vec<&Counter> = rows
            .iter()
            .filter(|row| {
                row.period.as_str() < before && newest.get(row.scope.as_str()) != Some(&&*row.period)
            })
            .collect();
        if !old.is_empty() && !min_age.is_zero() {
            let db_now = C::Backend::database_now(conn)?;
            for Counter {
                period, updated_at, ..
            } in &old
            {
                let age = age(&db_now, updated_at).ok_or_else(|| {
                    refuse(format!(
                        "cannot tell how long ago period {period:?} took a number \
                         ({updated_at:?}, database time {db_now:?}): prune with no minimum age"
                    ))
                })?;
                if age < min_age {
                    return Err(refuse(format!(
                        "period {period:?} took a number {}s ago, less than the minimum age of \
                         {}s: an instance whose clock lags may still be in it",
                        age.as_secs(),
                        min_age.as_secs()
                    )));
                }
            }
        }
        // Compare-and-delete: a row that took a number after it was read above (its age
        // checked on a value since gone) is kept, and nothing is pruned.
        for row in &old {
            let counter = Row::new(key, &row.scope, &row.period);
            if C::Backend::delete_row(conn, counter, row.current_value)? == 0 {
                return Err(refuse(format!(
                    "period {:?} took a number while it was being pruned: an instance is still in it",
                    row.period
                )));
            }
        }
        let periods: std::collections::BTreeSet<String> =
            old.into_iter().map(|row| row.period.clone()).collect();
        Ok(periods.into_iter().collect())
    })
}

/// How long before `now` the time `then` was, both as the database prints them (whole
/// seconds are read); `None` when either does not read as a time.
fn age(now: &str, then: &str) -> Option<std::time::Duration> {
    let read = |text: &str| {
        chrono::NaiveDateTime::parse_from_str(text.get(..19)?, "%Y-%m-%d %H:%M:%S").ok()
    };
    let seconds = (read(now)? - read(then)?).num_seconds().max(0);
    Some(std::time::Duration::from_secs(seconds.unsigned_abs()))
}

/// Refuses a `period` `spec` could not have printed: `2026` for an undated key, `2026-11` for
/// `%Y%m`. A mistyped period would otherwise read as one that has handed out nothing.
fn check_period(spec: &Spec, period: &str) -> Result<()> {
    let printed = spec
        .parse(&spec.format(period, 1))
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

/// [`Error::Refused`] for `key`.
fn refused(key: &str, reason: impl Into<String>) -> Error {
    Error::Refused {
        key: key.to_owned(),
        reason: reason.into(),
    }
}

/// Whether every period of `pattern` sorts as the dates it shows: numeric fields from the
/// year down with none left out (`%Y%m%d`, `%y-%m`, `%Y%j`), and literal text.
fn sorts_as_dates(pattern: &str) -> bool {
    let mut fields = String::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c == '%' {
            match chars.next() {
                Some('y') => fields.push('Y'),
                Some(c) => fields.push(c),
                None => return false,
            }
        }
    }
    ["YmdHMS", "YjHMS"]
        .iter()
        .any(|order| !fields.is_empty() && order.starts_with(&fields))
}

/// Whether `a` has the form of `b`: digits where `b` has digits, the same text elsewhere.
fn same_form(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes().zip(b.bytes()).all(|(x, y)| {
            if y.is_ascii_digit() {
                x.is_ascii_digit()
            } else {
                x == y
            }
        })
}

/// What [`gaps`] found: the numbers of one period of a key, checked against the IDs in a
/// business table's column.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct GapReport {
    /// The key.
    pub key: String,
    /// The period.
    pub period: String,
    /// The first number the period should have (its start value, or 1).
    pub first: u64,
    /// The last number the counter handed out (0: none).
    pub last: u64,
    /// How many IDs of the period the column holds.
    pub found: usize,
    /// The numbers in `first..=last` the column does not hold, in order.
    pub missing: Vec<Missing>,
    /// Numbers the column holds more than once, with how often: duplicates.
    pub duplicates: Vec<(u64, usize)>,
    /// Numbers the column holds past the counter: not handed out by seqgen.
    pub beyond: Vec<u64>,
    /// Values in the column that are no ID of the key (of any period); not checked.
    pub foreign: usize,
}

impl GapReport {
    /// Whether an auditor has nothing to ask: every missing number is voided, and there are
    /// neither duplicates nor numbers past the counter.
    pub fn is_explained(&self) -> bool {
        self.duplicates.is_empty()
            && self.beyond.is_empty()
            && self
                .missing
                .iter()
                .all(|m| matches!(m, Missing::Voided { .. }))
    }
}

/// A number (or a run of them) a period handed out and the business table does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    /// Voided with [`void`](crate::ledger::void), with its reason.
    Voided {
        /// The number.
        number: u64,
        /// The reason given.
        reason: String,
    },
    /// Nothing explains `from..=to`.
    Unexplained {
        /// The first number of the run.
        from: u64,
        /// The last number of the run.
        to: u64,
    },
}

/// Where a business table keeps a key's IDs: the table (`table` or `schema.table`), the column
/// of the IDs, and, for a [scoped](seqgen_core::SpecBuilder::scoped) key, the column holding
/// each row's scope (one field: a scope made of several fields has no one column to compare
/// with). Names are quoted as identifiers, never run as SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdColumn<'a> {
    /// The table, `table` or `schema.table`.
    pub table: &'a str,
    /// The column of the IDs (text, or integers for a numeric spec).
    pub column: &'a str,
    /// The column holding each row's scope, for a scoped key.
    pub scope_column: Option<&'a str>,
}

impl<'a> IdColumn<'a> {
    /// The IDs in `column` of `table`.
    pub fn new(table: &'a str, column: &'a str) -> Self {
        IdColumn {
            table,
            column,
            scope_column: None,
        }
    }

    /// ... of the rows whose `scope_column` holds the scope asked about.
    pub fn scoped_by(mut self, scope_column: &'a str) -> Self {
        self.scope_column = Some(scope_column);
        self
    }
}

/// Checks the numbers `spec`'s counter (`&spec`, or `spec.scope("acme")`) handed out in
/// `period` against the IDs of a business table, `ids` (for a scope, the rows whose scope
/// column holds it, compared as text, so an integer column matches `"42"`): which are missing,
/// and of those which the void ledger explains. For a gapless key every number up to the
/// counter is committed, so anything missing and not voided deserves a question; a batched
/// key has holes by design.
///
/// Values that are no ID of the spec are counted ([`GapReport::foreign`]), not checked.
pub fn gaps<'s, C>(
    conn: &mut C,
    spec: impl Into<Scoped<'s>>,
    ids: IdColumn<'_>,
    period: &str,
) -> Result<GapReport>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let target = spec.into();
    let (spec, scope) = (target.spec(), target.scope());
    check_scope(spec, scope)?;
    let only = match (scope, ids.scope_column) {
        ("", _) => None,
        (scope, Some(column)) => Some(ScopeColumn {
            column,
            value: scope,
        }),
        (_, None) => {
            return Err(refused(
                spec.key(),
                "it counts per scope: name the table's column holding the scope (`IdColumn::scoped_by`, `seqgen gaps --scope-column`)",
            ))
        }
    };
    gaps_of(conn, spec, only, ids.table, ids.column, period)
}

/// Which rows of a business table belong to one scope of a scoped key: those whose `column`
/// holds `value`.
#[derive(Debug, Clone, Copy)]
struct ScopeColumn<'a> {
    column: &'a str,
    value: &'a str,
}

/// [`gaps`], once the scope is checked.
fn gaps_of<C>(
    conn: &mut C,
    spec: &Spec,
    scope: Option<ScopeColumn<'_>>,
    table: &str,
    column: &str,
    period: &str,
) -> Result<GapReport>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let key = spec.key();
    let counter = Row::new(key, scope.map_or("", |s| s.value), period);
    check_period(spec, period)?;
    if let Overflow::Cycle { .. } = spec.overflow() {
        return Err(refused(
            key,
            "its IDs repeat (`cycle`): a number names no single row",
        ));
    }
    let table_path: Vec<&str> = table.split('.').collect();
    let only = scope.map(|s| (s.column, s.value));
    let values = C::Backend::column_text(conn, &table_path, column, only)?;
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    let mut foreign = 0;
    for value in values.iter().flatten() {
        let parts = match value.parse::<i64>() {
            Ok(number) if spec.is_numeric() => spec.parse_number(number),
            _ => spec.parse(value),
        };
        match parts
            .ok()
            .and_then(|p| Some((spec.counter_of(&p)?, p.period)))
        {
            Some((number, p)) if p == period => *counts.entry(number).or_default() += 1,
            Some(_) => {}
            None => foreign += 1,
        }
    }
    let last = C::Backend::read(conn, counter)?
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(0);
    let start = C::Backend::read_start(conn, key)?
        .and_then(|v| u64::try_from(v).ok())
        .unwrap_or(1);
    let voided: BTreeMap<u64, String> = C::Backend::voided(conn, counter)?
        .into_iter()
        .filter_map(|(n, reason)| Some((u64::try_from(n).ok()?, reason)))
        .collect();
    // A period started at the start value of its day; one changed since may be higher.
    let first = [
        Some(start),
        counts.keys().next().copied(),
        voided.keys().next().copied(),
    ]
    .into_iter()
    .flatten()
    .min()
    .unwrap_or(1)
    .max(1);
    // Number by number around the numbers held or voided; a run of unexplained ones at once.
    let mut missing = Vec::new();
    let mut number = first;
    while number <= last {
        if counts.contains_key(&number) {
            number += 1;
        } else if let Some(reason) = voided.get(&number) {
            missing.push(Missing::Voided {
                number,
                reason: reason.clone(),
            });
            number += 1;
        } else {
            let next_known = [
                counts.range(number..).next().map(|(&n, _)| n),
                voided.range(number..).next().map(|(&n, _)| n),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(u64::MAX);
            let to = next_known.saturating_sub(1).min(last);
            missing.push(Missing::Unexplained { from: number, to });
            number = to + 1;
        }
    }
    Ok(GapReport {
        key: key.to_owned(),
        period: period.to_owned(),
        first,
        last,
        found: counts.values().sum(),
        duplicates: counts
            .iter()
            .filter(|(_, &n)| n > 1)
            .map(|(&number, &n)| (number, n))
            .collect(),
        beyond: counts.range(last + 1..).map(|(&n, _)| n).collect(),
        missing,
        foreign,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_sort_as_dates_only_from_the_year_down() {
        for pattern in ["%Y", "%Y%m", "%y%m%d", "%Y-%m-%d", "%Y%j", "%Y%m%d%H"] {
            assert!(sorts_as_dates(pattern), "{pattern}");
        }
        for pattern in ["%d%m%Y", "%m%Y", "%Y%-m", "%b%Y", "%Y%d", "", "%"] {
            assert!(!sorts_as_dates(pattern), "{pattern}");
        }
    }

    #[test]
    fn ages_read_from_what_the_databases_print() {
        let age = |now, then| age(now, then).map(|d| d.as_secs());
        assert_eq!(
            age("2026-11-23 05:00:00", "2026-11-23 04:00:00"),
            Some(3600)
        );
        assert_eq!(
            age("2026-11-23 05:00:00.123456", "2026-11-22 05:00:00.9"),
            Some(86400)
        );
        assert_eq!(age("2026-11-23 05:00:00", "2026-11-23 05:00:01"), Some(0));
        assert_eq!(age("now", "2026-11-23 05:00:01"), None);
    }

    #[test]
    fn a_period_has_the_form_of_another() {
        assert!(same_form("2025-07", "2026-11"));
        assert!(!same_form("2025/07", "2026-11"));
        assert!(!same_form("202507", "2026-11"));
        assert!(!same_form("2025-0x", "2026-11"));
    }
}
