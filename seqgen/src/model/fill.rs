//! Filling the ID fields of records: planned first (every scope checked, nothing filled when
//! one is wrong), then one call per field (per scope), and set back to unset when the insert
//! they were for fails.

use std::collections::BTreeMap;

use super::{DistributedId, IdField, IdSlot};
use crate::backend::IdConnection;
use crate::driver::{drive, in_transaction, Blocking, Driver};
use crate::engine::{check_scope, formatted, numeric, Engine};
use crate::error::{Error, Result};
use diesel_seqgen_core::{DocumentDate, Mode, Scoped};

/// Fills the unset ID fields of `rows`, and every gapless one ([`takes_a_number`]), from the
/// generator `generator` gives (asked only when there is something to fill: the process-wide
/// default tells databases apart with a query), noting each (row, field) it fills in
/// `filled`, so that a failed insert can undo them.
pub(crate) fn fill<T, C>(
    rows: &mut [T],
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
    generator: impl FnOnce(&mut C) -> Result<Engine>,
) -> Result<()>
where
    T: DistributedId,
    C: IdConnection,
{
    let Some(scopes) = plan_fill(rows, in_transaction(conn))? else {
        return Ok(());
    };
    let generator = generator(conn)?;
    drive(fill_on(
        rows,
        &generator,
        &mut Blocking(conn),
        scopes,
        filled,
    ))
}

/// Records of one field that take their numbers in one call: one scope, one document
/// period, with a date of that period to take them for (`None`: the clock's).
pub(crate) struct Group {
    date: Option<DocumentDate>,
    rows: Vec<usize>,
}

/// Per ID field, the records to fill by scope and document period (an empty map for a field
/// of neither; no entry at all when no field has either).
pub(crate) type FillPlan = Vec<BTreeMap<(String, String), Group>>;

/// The records of each scoped or document-dated field of `rows` by scope and period (an empty
/// map for a field of neither), with every scope checked, so that nothing is filled when one
/// is wrong; `None` when there is nothing to fill.
pub(crate) fn plan_fill<T: DistributedId>(
    rows: &mut [T],
    in_transaction: bool,
) -> Result<Option<FillPlan>> {
    if rows.is_empty() {
        return Ok(None);
    }
    if let Some(e) = T::__id_fields().iter().find_map(|f| f.unbuilt.as_ref()) {
        return Err(Error::InvalidSpec(e.clone()));
    }
    // Refuse before filling anything: a record must not end up half filled.
    if let Some(gapless) = gapless_field::<T>() {
        if !in_transaction {
            return Err(Error::OutsideTransaction {
                key: gapless.spec.key().to_owned(),
            });
        }
    }
    // One reservation per scope and period, not per record, in order so that gapless writers
    // lock their counters in the same order.
    let fields = T::__id_fields();
    // Nothing to plan (and nothing allocated, on every insert) without a scoped or dated
    // field: `fill_on` looks a field's groups up only when it has them.
    if !fields.iter().any(IdField::grouped) {
        return Ok(Some(Vec::new()));
    }
    let mut plan: FillPlan = Vec::with_capacity(fields.len());
    for (index, field) in fields.iter().enumerate() {
        let mut groups: BTreeMap<(String, String), Group> = BTreeMap::new();
        if field.grouped() {
            for (row, record) in rows.iter_mut().enumerate() {
                if !takes_a_number(record, index, field) {
                    continue;
                }
                let scope = if field.spec.is_scoped() {
                    record.__id_scope(index)
                } else {
                    String::new()
                };
                let date = record.__id_date(index);
                let period = date.map_or_else(String::new, |d| field.spec.period_on(d));
                let group = groups.entry((scope, period)).or_insert(Group {
                    date,
                    rows: Vec::new(),
                });
                group.rows.push(row);
            }
        }
        for (scope, _) in groups.keys() {
            if !field.spec.is_scoped() {
                break;
            }
            if scope.is_empty() {
                return Err(Error::InvalidScope {
                    key: field.spec.key().to_owned(),
                    scope: scope.clone(),
                });
            }
            check_scope(&field.spec, scope)?;
        }
        plan.push(groups);
    }
    Ok(Some(plan))
}

/// Fills the fields [`plan_fill`] planned, from `generator`, on `db`.
pub(crate) async fn fill_on<T: DistributedId, D: Driver>(
    rows: &mut [T],
    generator: &Engine,
    db: &mut D,
    mut plan: FillPlan,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()> {
    let fields = T::__id_fields();
    // Every document date checked before anything is taken.
    for (field, groups) in fields.iter().zip(&plan) {
        for date in groups.values().filter_map(|group| group.date) {
            generator.check_date(&field.spec, date)?;
        }
    }
    for (index, field) in fields.iter().enumerate() {
        if field.grouped() {
            for ((scope, _), group) in std::mem::take(&mut plan[index]) {
                let mut target = field.spec.scope(&scope);
                if let Some(date) = group.date {
                    target = target.dated(date);
                }
                fill_field(
                    rows, index, field, generator, db, target, group.rows, filled,
                )
                .await?;
            }
            continue;
        }
        let unset: Vec<usize> = (0..rows.len())
            .filter(|&row| takes_a_number(&mut rows[row], index, field))
            .collect();
        if !unset.is_empty() {
            let target = (&field.spec).into();
            fill_field(rows, index, field, generator, db, target, unset, filled).await?;
        }
    }
    Ok(())
}

/// Fills field number `index` of the records `unset` with IDs of `target`, in one call.
#[allow(clippy::too_many_arguments)] // the state of `fill`'s loop
async fn fill_field<T: DistributedId, D: Driver>(
    rows: &mut [T],
    index: usize,
    field: &IdField,
    generator: &Engine,
    db: &mut D,
    target: Scoped<'_>,
    unset: Vec<usize>,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()> {
    let (spec, n) = (&field.spec, unset.len() as u64);
    if rows[unset[0]].__id_slot(index).is_numeric() {
        let mut ids = Vec::with_capacity(unset.len());
        let emit = numeric(spec, |id| ids.push(id))?;
        generator.take_on(db, target, n, emit).await?;
        put_numbers(rows, index, field, unset.iter().copied(), ids);
    } else {
        let mut ids = Vec::with_capacity(unset.len());
        generator
            .take_on(db, target, n, formatted(target, &mut ids))
            .await?;
        put_text(rows, index, field, unset.iter().copied(), ids);
    }
    filled.extend(unset.into_iter().map(|row| (row, index)));
    Ok(())
}

/// Whether this insert gives field `index` of `record` a number: when it is unset, and always
/// when it is gapless. A gapless number is good only in the transaction that took it: one
/// already there was set by hand or, far likelier, left by an attempt whose transaction the
/// database aborted after the insert (a Galera certification failure at the commit, a deadlock
/// on a later statement) and which `retry_transaction` runs again with the same records; its
/// number went back with the rollback and may be another transaction's by now.
/// Inside [`retry_transaction`](crate::retry_transaction), a field an earlier attempt filled
/// takes a number again too, batched ones included (`retried.rs`).
fn takes_a_number<T: DistributedId>(record: &mut T, index: usize, field: &IdField) -> bool {
    let slot = record.__id_slot(index);
    matches!(field.spec.mode(), Mode::Gapless { .. })
        || slot.is_unset()
        || super::retried::filled_before(&slot)
}

/// Sets field number `index` (an `i64` form) of the records `unset` to `ids`, in order.
pub(crate) fn put_numbers<T: DistributedId>(
    rows: &mut [T],
    index: usize,
    field: &IdField,
    unset: impl IntoIterator<Item = usize>,
    ids: Vec<i64>,
) {
    for (row, id) in unset.into_iter().zip(ids) {
        match rows[row].__id_slot(index) {
            IdSlot::Number(n) => *n = id,
            IdSlot::OptionalNumber(n) => *n = Some(id),
            IdSlot::Text(_) | IdSlot::OptionalText(_) => unreachable_slot(field),
        }
        super::retried::note(&rows[row].__id_slot(index));
    }
}

/// Sets field number `index` (a text form) of the records `unset` to `ids`, in order.
pub(crate) fn put_text<T: DistributedId>(
    rows: &mut [T],
    index: usize,
    field: &IdField,
    unset: impl IntoIterator<Item = usize>,
    ids: Vec<String>,
) {
    for (row, id) in unset.into_iter().zip(ids) {
        match rows[row].__id_slot(index) {
            IdSlot::Text(s) => *s = id,
            IdSlot::OptionalText(s) => *s = Some(id),
            IdSlot::Number(_) | IdSlot::OptionalNumber(_) => unreachable_slot(field),
        }
        super::retried::note(&rows[row].__id_slot(index));
    }
}

/// Sets the noted fields back to unset.
pub(crate) fn unfill<T: DistributedId>(rows: &mut [T], filled: &[(usize, usize)]) {
    for &(row, index) in filled {
        match rows[row].__id_slot(index) {
            IdSlot::Text(s) => s.clear(),
            IdSlot::OptionalText(s) => *s = None,
            IdSlot::Number(n) => *n = 0,
            IdSlot::OptionalNumber(n) => *n = None,
        }
    }
}

/// The first gapless field of `T`, if it has one.
pub(crate) fn gapless_field<T: DistributedId>() -> Option<&'static IdField> {
    T::__id_fields()
        .iter()
        .find(|field| matches!(field.spec.mode(), Mode::Gapless { .. }))
}

fn unreachable_slot(field: &IdField) -> ! {
    panic!(
        "field `{}` changed type between two calls of the derived __id_slot",
        field.name
    )
}
