//! Checking the numbers a counter handed out against the IDs a business table holds, and the
//! void ledger's reasons for those it does not.

use std::collections::BTreeMap;

use diesel::Column;

use super::{check_period, number_of, refused};
use crate::backend::{Backend, Counter as Row, IdConnection, NamedTable, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::engine::check_scope;
use crate::error::Result;
use diesel_seqgen_core::{Overflow, Scoped, Spec};

/// What [`gaps`] found: the numbers of one period of a key, checked against the IDs in a
/// business table's column. Numbers are the key's counters: with a
/// [step](diesel_seqgen_core::SpecBuilder::step), [`Spec::stepped`](diesel_seqgen_core::Spec::stepped)
/// gives the number each prints (`seqgen gaps` shows those).
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
/// of the IDs, and, for a [scoped](diesel_seqgen_core::SpecBuilder::scoped) key, the column holding
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
    /// The IDs in `column` of `table`, named by strings (as a command line supplies them); in
    /// Rust code, [`IdColumn::of`] names them as Diesel types.
    pub fn new(table: &'a str, column: &'a str) -> Self {
        IdColumn {
            table,
            column,
            scope_column: None,
        }
    }

    /// The IDs in a column of a Diesel table (`users::id`): a misspelt name is a compile
    /// error. [`scoped_by`](Self::scoped_by) takes a column's name as `users::company_id::NAME`
    /// (Diesel's `Column` trait in scope).
    ///
    /// ```
    /// use diesel::Column; // for `NAME`
    /// use diesel_seqgen::admin::IdColumn;
    ///
    /// diesel::table! { users (id) { id -> Text, company_id -> Integer } }
    ///
    /// let ids = IdColumn::of(users::id).scoped_by(users::company_id::NAME);
    /// assert_eq!(ids, IdColumn::new("users", "id").scoped_by("company_id"));
    /// ```
    pub fn of<C>(column: C) -> IdColumn<'static>
    where
        C: Column<Table: NamedTable>,
    {
        let _ = column; // only its type names it
        IdColumn {
            table: C::Table::sql_name(),
            column: C::NAME,
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
/// key has holes by design. With a [reset](diesel_seqgen_core::Reset), the counter is that
/// of `period`'s reset period, and every date drawing from it is checked (`20261127` checks
/// all of 2026 under `reset = "year"`).
///
/// Values that are no ID of the spec are counted ([`GapReport::foreign`]), not checked.
pub fn gaps<'s, C>(
    conn: &mut C,
    spec: impl Into<Scoped<'s>>,
    ids: IdColumn<'_>,
    period: &str,
) -> Result<GapReport>
where
    C: IdConnection,
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
    C: IdConnection,
{
    let key = spec.key();
    check_period(spec, period)?;
    // The numbers of every date drawing from the same counter (all of them with a reset).
    let row = spec.counter_period(period);
    let counter = Row::new(key, scope.map_or("", |s| s.value), &row);
    if let Overflow::Cycle { .. } = spec.overflow() {
        return Err(refused(
            key,
            "its IDs repeat (`cycle`): a number names no single row",
        ));
    }
    let table_path: Vec<&str> = table.split('.').collect();
    let mut values = Vec::new();
    let (scope_column, only) = (scope.map(|s| s.column), scope.map(|s| s.value));
    C::Backend::each_id(
        conn,
        &table_path,
        column,
        scope_column,
        only,
        &mut |id, _| values.push(id),
    )?;
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    let mut foreign = 0;
    for value in values.iter().flatten() {
        match number_of(spec, value) {
            Some((number, p)) if p == row => *counts.entry(number).or_default() += 1,
            Some(_) => {}
            None => foreign += 1,
        }
    }
    let last = drive(C::Backend::read(&mut Blocking(conn), counter))?
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
