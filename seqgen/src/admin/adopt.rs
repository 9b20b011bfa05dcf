//! Taking over a table that already has IDs: reading its highest number per period and scope,
//! checking the key's counters against it, and raising every counter that is behind.

use std::collections::BTreeMap;

use super::{number_of, refused, IdColumn};
use crate::backend::{Backend, Counter as Row, IdConnection, SharedStatements};
use crate::driver::{drive, Blocking};
use crate::engine::check_scope;
use crate::error::{Error, Result};
use diesel_seqgen_core::{Overflow, Spec};

/// How many IDs that do not parse a [`TableCheck`] shows.
const EXAMPLES: usize = 5;

/// What [`check`] (and [`adopt`], before it raised anything) found: the highest number a
/// business table holds of each counter of a key, beside the counter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableCheck {
    /// The key.
    pub key: String,
    /// How many IDs the table holds (empty ones left out).
    pub ids: u64,
    /// How many rows have no ID: NULL, empty text or 0, what a record seqgen never filled
    /// inserts with plain `diesel::insert_into` (use [`insert_into`](crate::insert_into), call
    /// [`assign_ids`](crate::assign_ids) first, or declare the field an [`Id`](crate::Id)).
    /// Not counted anywhere else.
    pub empty: u64,
    /// How many of them are no ID of the key: not parsed with its spec, or (scoped key)
    /// in a row whose scope column is NULL or no valid scope. Not counted anywhere else.
    pub unparsed: u64,
    /// The first few of them, for a person to look at.
    pub unparsed_examples: Vec<String>,
    /// Each counter the table holds IDs of, by scope and period.
    pub counters: Vec<CounterCheck>,
}

impl TableCheck {
    /// Whether any counter is behind the table: its next reservation would hand out a number
    /// the table already holds.
    pub fn is_behind(&self) -> bool {
        self.counters.iter().any(CounterCheck::is_behind)
    }
}

/// One counter of a key beside the highest number a table holds of it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CounterCheck {
    /// The scope (`""` for an unscoped key).
    pub scope: String,
    /// The counter's period, as `db_key.period` holds it (`""` without a date part or with
    /// `reset = "never"`).
    pub period: String,
    /// The highest number of this counter in the table.
    pub highest: u64,
    /// The counter: the last number it handed out; without a row, where a new row starts
    /// (the key's `start_value - 1`, or 0).
    pub counter: u64,
    /// Whether seqgen reserved numbers from this counter already: running instances may hold
    /// blocks of it, at or below [`counter`](Self::counter).
    pub in_use: bool,
}

impl CounterCheck {
    /// Whether the counter is below the highest number the table holds.
    pub fn is_behind(&self) -> bool {
        self.counter < self.highest
    }
}

/// Reads every ID of `spec`'s key in `ids` and compares the highest number of each period
/// (and, for a scoped key, each scope: name the column with [`IdColumn::scoped_by`]) with its
/// counter. Changes nothing. A counter [behind](CounterCheck::is_behind) its table is what a
/// restore, a hand edit or an import leaves: [`adopt`] raises it.
///
/// ```
/// use diesel::connection::SimpleConnection;
/// use diesel::prelude::*;
/// use diesel_seqgen::admin::{self, IdColumn};
///
/// diesel::table! { invoices (id) { id -> Text } }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// conn.batch_execute("CREATE TABLE invoices (id TEXT PRIMARY KEY);
///     INSERT INTO invoices VALUES ('INV2026000041'), ('INV2025004180'), ('draft-7');")?;
/// let spec = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("%Y").build()?;
///
/// let found = admin::check(&mut conn, &spec, IdColumn::of(invoices::id))?;
/// assert!(found.is_behind());
/// assert_eq!((found.unparsed, &*found.unparsed_examples), (1, &["draft-7".to_owned()][..]));
///
/// admin::adopt(&mut conn, &spec, IdColumn::of(invoices::id))?;
/// assert!(!admin::check(&mut conn, &spec, IdColumn::of(invoices::id))?.is_behind());
/// let next = diesel_seqgen::global::next_id(&mut conn, &spec)?;
/// assert!(next > "INV2026000041".to_owned(), "{next}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn check<C>(conn: &mut C, spec: &Spec, ids: IdColumn<'_>) -> Result<TableCheck>
where
    C: IdConnection,
{
    let mut found = read_table(conn, spec, ids)?;
    let start = C::Backend::read_start(conn, spec.key())?
        .unwrap_or(1)
        .max(1);
    for counter in &mut found.counters {
        let row = Row::new(spec.key(), &counter.scope, &counter.period);
        let value = drive(C::Backend::read(&mut Blocking(conn), row))?;
        let value = value.unwrap_or(start - 1).max(0);
        counter.counter = value.unsigned_abs();
        counter.in_use = value >= start;
    }
    Ok(found)
}

/// Raises every counter of `spec`'s key that is behind the IDs `ids` holds to the highest
/// number found, in one transaction, and returns what [`check`] found before. Never lowers a
/// counter; records the spec's shape on the key's row as the first reservation would (a key
/// that recorded another shape is refused). Safe while instances run: each sees the raised
/// counter at its next reservation.
///
/// Numbers an instance already holds (a block reserved before `adopt`, at or below the old
/// counter) are still served: if the table holds IDs in that range that seqgen did not hand
/// out (written by the old code, imported, restored), they can come out again until those
/// blocks run out. Such counters are the ones both [`is_behind`](CounterCheck::is_behind) and
/// [`in_use`](CounterCheck::in_use): restart (or [`release`](crate::Generator::release)) the
/// instances after adopting. The usual case, adopting before seqgen takes its first number
/// from the table's key, has none.
pub fn adopt<C>(conn: &mut C, spec: &Spec, ids: IdColumn<'_>) -> Result<TableCheck>
where
    C: IdConnection,
{
    let key = spec.key();
    conn.transaction(|conn| {
        C::Backend::lock_for_writing(conn)?;
        let recorded = drive(C::Backend::claim_shape(
            &mut Blocking(conn),
            Row::key_row(key),
            spec.shape(),
        ))?;
        if let Some(recorded) = recorded.filter(|r| r != spec.shape()) {
            return Err(Error::ShapeChanged {
                key: key.to_owned(),
                recorded,
                requested: spec.shape().to_owned(),
            });
        }
        let found = check(conn, spec, ids)?;
        for counter in found.counters.iter().filter(|c| c.is_behind()) {
            let row = Row::new(key, &counter.scope, &counter.period);
            let to = i64::try_from(counter.highest)
                .map_err(|_| refused(key, "its highest number does not fit a counter"))?;
            drive(C::Backend::create_row(&mut Blocking(conn), row))?;
            C::Backend::raise(conn, row, to)?;
        }
        Ok(found)
    })
}

/// The IDs of `spec` in `ids`: the highest number per scope and period, counters not read yet.
fn read_table<C>(conn: &mut C, spec: &Spec, ids: IdColumn<'_>) -> Result<TableCheck>
where
    C: IdConnection,
{
    let key = spec.key();
    if let Overflow::Cycle { .. } = spec.overflow() {
        return Err(refused(
            key,
            "its IDs repeat (`cycle`): the highest number in a table is not where its counter is",
        ));
    }
    if spec.is_scoped() && ids.scope_column.is_none() {
        return Err(refused(
            key,
            "it counts per scope: name the table's column holding the scope (`IdColumn::scoped_by`, `--scope-column`)",
        ));
    }
    let scope_column = ids.scope_column.filter(|_| spec.is_scoped());
    let table: Vec<&str> = ids.table.split('.').collect();
    let mut highest: BTreeMap<(String, String), u64> = BTreeMap::new();
    let (mut count, mut unparsed, mut empty, mut examples) = (0u64, 0u64, 0u64, Vec::new());
    C::Backend::each_id(
        conn,
        &table,
        ids.column,
        scope_column,
        None,
        &mut |id, scope| {
            let Some(id) = id.filter(|id| !id.is_empty() && id != "0") else {
                empty += 1;
                return;
            };
            count += 1;
            let scope = scope.unwrap_or_default();
            let valid_scope = !spec.is_scoped() || check_scope(spec, &scope).is_ok();
            match number_of(spec, &id).filter(|_| valid_scope) {
                Some((number, period)) => {
                    let top = highest.entry((scope, period)).or_default();
                    *top = (*top).max(number);
                }
                None => {
                    unparsed += 1;
                    if examples.len() < EXAMPLES {
                        examples.push(id);
                    }
                }
            }
        },
    )
    .map_err(|e| match e {
        // Most likely a mistyped table or column name.
        diesel::result::Error::DatabaseError(..) => refused(
            key,
            format!(
                "could not read the IDs in {}.{}: {e}",
                ids.table, ids.column
            ),
        ),
        e => e.into(),
    })?;
    Ok(TableCheck {
        key: key.to_owned(),
        ids: count,
        empty,
        unparsed,
        unparsed_examples: examples,
        counters: highest
            .into_iter()
            .map(|((scope, period), highest)| CounterCheck {
                scope,
                period,
                highest,
                counter: 0,
                in_use: false,
            })
            .collect(),
    })
}
