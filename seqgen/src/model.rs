//! The model side: the `DistributedId` trait the derive implements, the ID fields it exposes,
//! and filling them (or setting them back to unset when an insert fails).

use std::collections::BTreeMap;

use diesel::connection::LoadConnection;

use crate::backend::Backend;
use crate::driver::{drive, in_transaction, Blocking, Driver};
use crate::error::{Error, Result};
use crate::generator::{check_scope, formatted, numeric, Generator};
use crate::global::default_generator;
use seqgen_core::{Mode, Spec};

/// A Diesel model whose ID fields seqgen fills. Implement it with
/// `#[derive(DistributedId)]` (see [the derive](derive@crate::DistributedId)).
///
/// Only unset fields get an ID: an empty `String`, `None`, or `0` for a plain `i64`. A value the
/// caller set is kept.
pub trait DistributedId {
    /// The annotated fields, in the order their IDs are taken (sorted by key).
    #[doc(hidden)]
    fn __id_fields() -> &'static [IdField];

    /// The slot of field number `index` of [`__id_fields`](DistributedId::__id_fields).
    #[doc(hidden)]
    fn __id_slot(&mut self, index: usize) -> IdSlot<'_>;

    /// The scope of this record for field number `index`, when its spec is scoped: the values
    /// of the fields its `scope` names ([`scope_text`](crate::__private::scope_text)).
    #[doc(hidden)]
    fn __id_scope(&self, _index: usize) -> String {
        String::new()
    }

    /// Fills this record's unset ID fields from the process-wide default generator, on
    /// `conn`. Then insert it with plain Diesel.
    fn assign_ids<C>(&mut self, conn: &mut C) -> Result<()>
    where
        Self: Sized,
        C: LoadConnection + 'static,
        C::Backend: Backend,
    {
        assign_ids(std::slice::from_mut(self), conn)
    }

    /// Fills this record's unset ID fields from `generator`, on `conn`.
    fn assign_ids_with<C>(&mut self, generator: &Generator, conn: &mut C) -> Result<()>
    where
        Self: Sized,
        C: LoadConnection + 'static,
        C::Backend: Backend,
    {
        assign_ids_with(std::slice::from_mut(self), generator, conn)
    }
}

/// One annotated field: its name and its spec.
#[doc(hidden)]
#[derive(Debug)]
pub struct IdField {
    /// The field's name, for messages.
    pub name: &'static str,
    /// The column Diesel's `Insertable` writes it to (`#[diesel(column_name)]`, else `name`).
    pub column: &'static str,
    /// Where the field stands among the struct's `struct_fields` fields.
    pub index: usize,
    /// How many fields the struct has.
    pub struct_fields: usize,
    /// The spec its IDs follow.
    pub spec: Spec,
}

/// A field type `#[derive(DistributedId)]` can fill: `String`, `Option<String>`, `i64`,
/// `Option<i64>`, and your own types (newtypes, wrappers) that implement it by handing out
/// the slot of the value they wrap.
///
/// ```
/// use diesel::prelude::*;
/// use seqgen::{DistributedId, IdSlot, IdValue};
///
/// /// An order number, a type of its own.
/// #[derive(Debug, Default, diesel::expression::AsExpression)]
/// #[diesel(sql_type = diesel::sql_types::Text)]
/// struct OrderNo(String);
///
/// impl IdValue for OrderNo {
///     const NUMERIC: bool = false;
///     fn id_slot(&mut self) -> IdSlot<'_> {
///         self.0.id_slot()
///     }
/// }
/// # impl diesel::serialize::ToSql<diesel::sql_types::Text, diesel::sqlite::Sqlite> for OrderNo {
/// #     fn to_sql<'b>(&'b self, out: &mut diesel::serialize::Output<'b, '_, diesel::sqlite::Sqlite>) -> diesel::serialize::Result {
/// #         <String as diesel::serialize::ToSql<diesel::sql_types::Text, diesel::sqlite::Sqlite>>::to_sql(&self.0, out)
/// #     }
/// # }
///
/// diesel::table! { orders (order_no) { order_no -> Text } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = orders)]
/// struct NewOrder {
///     #[distributed_id(prefix = "ORD", date = "", pad = 4)]
///     order_no: OrderNo,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY)").execute(&mut conn)?;
/// let mut order = NewOrder { order_no: OrderNo::default() };
/// seqgen::insert_into(orders::table).values(&mut order).execute(&mut conn)?;
/// assert_eq!(order.order_no.0, "ORD0001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an ID field type seqgen can fill",
    label = "not `String`, `Option<String>`, `i64` or `Option<i64>`",
    note = "a type of your own can implement `seqgen::IdValue` by handing out the slot of the value it wraps"
)]
pub trait IdValue {
    /// Whether the field holds the `i64` form of an ID: its spec must then be
    /// [numeric](Spec::is_numeric).
    const NUMERIC: bool;

    /// The field as seqgen reads (is it unset?) and fills it. Must be the same kind of slot
    /// every time.
    fn id_slot(&mut self) -> IdSlot<'_>;
}

impl IdValue for String {
    const NUMERIC: bool = false;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::Text(self)
    }
}

impl IdValue for Option<String> {
    const NUMERIC: bool = false;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::OptionalText(self)
    }
}

impl IdValue for i64 {
    const NUMERIC: bool = true;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::Number(self)
    }
}

impl IdValue for Option<i64> {
    const NUMERIC: bool = true;
    fn id_slot(&mut self) -> IdSlot<'_> {
        IdSlot::OptionalNumber(self)
    }
}

/// A mutable view of an ID field, as seqgen fills it: see [`IdValue`].
#[derive(Debug)]
#[non_exhaustive]
pub enum IdSlot<'a> {
    /// `String`: unset when empty.
    Text(&'a mut String),
    /// `Option<String>`: unset when `None`.
    OptionalText(&'a mut Option<String>),
    /// `i64`: unset when `0`.
    Number(&'a mut i64),
    /// `Option<i64>`: unset when `None`.
    OptionalNumber(&'a mut Option<i64>),
}

impl IdSlot<'_> {
    pub(crate) fn is_unset(&self) -> bool {
        match self {
            IdSlot::Text(s) => s.is_empty(),
            IdSlot::OptionalText(s) => s.is_none(),
            IdSlot::Number(n) => **n == 0,
            IdSlot::OptionalNumber(n) => n.is_none(),
        }
    }

    pub(crate) fn is_numeric(&self) -> bool {
        matches!(self, IdSlot::Number(_) | IdSlot::OptionalNumber(_))
    }
}

/// Fills the unset ID fields of `rows` from the process-wide default generator: one call per
/// annotated field for the whole slice, so at most one reservation per field.
///
/// ```
/// use diesel::prelude::*;
/// use seqgen::DistributedId;
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
/// seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE menus (id TEXT PRIMARY KEY, title TEXT NOT NULL)").execute(&mut conn)?;
///
/// let mut rows: Vec<NewMenu> = ["Tea", "Cake"]
///     .map(|title| NewMenu { id: String::new(), title: title.into() })
///     .into();
/// seqgen::assign_ids(&mut rows, &mut conn)?;
/// diesel::insert_into(menus::table).values(&rows).execute(&mut conn)?;
/// assert_eq!(rows[1].id, "MENU000002");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn assign_ids<T, C>(rows: &mut [T], conn: &mut C) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    fill(rows, None, conn, &mut Vec::new())
}

/// [`assign_ids`] with your own [`Generator`].
pub fn assign_ids_with<T, C>(rows: &mut [T], generator: &Generator, conn: &mut C) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    fill(rows, Some(generator), conn, &mut Vec::new())
}

/// Fills the unset ID fields of `rows` (from the default generator without `generator`),
/// noting each (row, field) it fills in `filled`, so that a failed insert can undo them.
pub(crate) fn fill<T, C>(
    rows: &mut [T],
    generator: Option<&Generator>,
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()>
where
    T: DistributedId,
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    let Some(scopes) = plan_fill(rows, in_transaction(conn))? else {
        return Ok(());
    };
    let default;
    let generator = match generator {
        Some(generator) => generator,
        None => {
            default = default_generator(conn)?;
            &default
        }
    };
    drive(fill_on(
        rows,
        generator,
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

/// The scope a derived record names with `scope = "a, b"`: the fields' values as `Display`
/// prints them. One field's value is the scope as it is (what `next_id_in` takes for it);
/// several are joined with `/`, each `/` and `\` in them escaped with a `\`, so that no two
/// lists of values give the same scope.
#[doc(hidden)]
pub fn scope_text(parts: &[&dyn std::fmt::Display]) -> String {
    if let [only] = parts {
        return only.to_string();
    }
    let mut scope = String::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            scope.push('/');
        }
        for c in part.to_string().chars() {
            if c == '/' || c == '\\' {
                scope.push('\\');
            }
            scope.push(c);
        }
    }
    scope
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
