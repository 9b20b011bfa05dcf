//! Filling the ID fields of records: planned first (every scope checked, nothing filled when
//! one is wrong), then one call per field (per scope), and set back to unset when the insert
//! they were for fails.

use std::collections::BTreeMap;

use super::{DistributedId, IdField, IdSlot, Records};
use crate::backend::IdConnection;
use crate::driver::{drive, in_transaction, Blocking, Driver};
use crate::error::{Error, Result};
use crate::generator::{check_scope, formatted, numeric, Generator};
use diesel_seqgen_core::Mode;

impl Generator {
    /// Fills the unset ID fields of `records` (one record, a slice or a `Vec` of them) from
    /// this generator, on `conn`: one call per annotated field for all the records, so at
    /// most one reservation per field (per scope, for a scoped field). Then insert them with
    /// plain Diesel. ([`crate::assign_ids`] does the same from the process-wide default.)
    ///
    /// ```
    /// use diesel::prelude::*;
    /// use diesel_seqgen::DistributedId;
    ///
    /// diesel::table! { menus (id) { id -> Text, title -> Text } }
    ///
    /// #[derive(Insertable, DistributedId)]
    /// #[diesel(table_name = menus)]
    /// struct NewMenu {
    ///     #[distributed_id(prefix = "MENU", date = "")]
    ///     id: String,
    ///     title: String,
    /// }
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// diesel::sql_query("CREATE TABLE menus (id TEXT PRIMARY KEY, title TEXT NOT NULL)").execute(&mut conn)?;
    ///
    /// let mut rows: Vec<NewMenu> = ["Tea", "Cake"]
    ///     .map(|title| NewMenu { id: String::new(), title: title.into() })
    ///     .into();
    /// diesel_seqgen::Generator::new().assign_ids(&mut rows, &mut conn)?;
    /// diesel::insert_into(menus::table).values(&rows).execute(&mut conn)?;
    /// assert_eq!(rows[1].id, "MENU000002");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn assign_ids<R, C>(&self, records: &mut R, conn: &mut C) -> Result<()>
    where
        R: Records + ?Sized,
        C: IdConnection,
    {
        fill(records.as_rows(), conn, &mut Vec::new(), |_| {
            Ok(self.clone())
        })
    }
}

/// Fills the unset ID fields of `rows` from the generator `generator` gives (asked only when
/// there is something to fill: the process-wide default tells databases apart with a query),
/// noting each (row, field) it fills in `filled`, so that a failed insert can undo them.
pub(crate) fn fill<T, C>(
    rows: &mut [T],
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
    generator: impl FnOnce(&mut C) -> Result<Generator>,
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

/// Per ID field, the records to fill by scope (an empty map for an unscoped field; no entry
/// at all when no field is scoped).
pub(crate) type FillPlan = Vec<BTreeMap<String, Vec<usize>>>;

/// The records of each scoped field of `rows` by scope (an empty map for an unscoped
/// field), with every scope checked, so that nothing is filled when one is wrong; `None`
/// when there is nothing to fill.
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
    // One reservation per scope, not per record, scopes in order so that gapless writers
    // lock their counters in the same order.
    let fields = T::__id_fields();
    // Nothing to plan (and nothing allocated, on every insert) without a scoped field:
    // `fill_on` looks a field's scopes up only when it is scoped.
    if !fields.iter().any(|field| field.spec.is_scoped()) {
        return Ok(Some(Vec::new()));
    }
    let mut scoped: Vec<BTreeMap<String, Vec<usize>>> = Vec::with_capacity(fields.len());
    for (index, field) in fields.iter().enumerate() {
        let mut by_scope: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        if field.spec.is_scoped() {
            for (row, record) in rows.iter_mut().enumerate() {
                if record.__id_slot(index).is_unset() {
                    by_scope
                        .entry(record.__id_scope(index))
                        .or_default()
                        .push(row);
                }
            }
        }
        for scope in by_scope.keys() {
            if scope.is_empty() {
                return Err(Error::InvalidScope {
                    key: field.spec.key().to_owned(),
                    scope: scope.clone(),
                });
            }
            check_scope(&field.spec, scope)?;
        }
        scoped.push(by_scope);
    }
    Ok(Some(scoped))
}

/// Fills the fields [`plan_fill`] planned, from `generator`, on `db`.
pub(crate) async fn fill_on<T: DistributedId, D: Driver>(
    rows: &mut [T],
    generator: &Generator,
    db: &mut D,
    mut scopes: FillPlan,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()> {
    for (index, field) in T::__id_fields().iter().enumerate() {
        if field.spec.is_scoped() {
            for (scope, unset) in std::mem::take(&mut scopes[index]) {
                fill_field(rows, index, field, generator, db, &scope, unset, filled).await?;
            }
            continue;
        }
        let unset: Vec<usize> = (0..rows.len())
            .filter(|&row| rows[row].__id_slot(index).is_unset())
            .collect();
        if !unset.is_empty() {
            fill_field(rows, index, field, generator, db, "", unset, filled).await?;
        }
    }
    Ok(())
}

/// Fills field number `index` of the records `unset` with IDs of `scope`, in one call.
#[allow(clippy::too_many_arguments)] // the state of `fill`'s loop
async fn fill_field<T: DistributedId, D: Driver>(
    rows: &mut [T],
    index: usize,
    field: &IdField,
    generator: &Generator,
    db: &mut D,
    scope: &str,
    unset: Vec<usize>,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()> {
    let (spec, n) = (&field.spec, unset.len() as u64);
    if rows[unset[0]].__id_slot(index).is_numeric() {
        let mut ids = Vec::with_capacity(unset.len());
        let emit = numeric(spec, |id| ids.push(id))?;
        generator.take_on(db, spec, scope, n, emit).await?;
        put_numbers(rows, index, field, unset.iter().copied(), ids);
    } else {
        let mut ids = Vec::with_capacity(unset.len());
        generator
            .take_on(db, spec, scope, n, formatted(spec, &mut ids))
            .await?;
        put_text(rows, index, field, unset.iter().copied(), ids);
    }
    filled.extend(unset.into_iter().map(|row| (row, index)));
    Ok(())
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
