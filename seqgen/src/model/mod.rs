//! The model side: the `DistributedId` trait the derive implements, the ID fields it exposes,
//! the records an insert takes, filling them (`fill`), and gapless inserts that number their
//! own rows (`one_statement`).

mod fill;
mod id;
pub(crate) mod numbering;
pub(crate) mod retried;

pub(crate) use fill::{fill, gapless_field, unfill};
#[cfg(seqgen_async)]
pub(crate) use fill::{fill_on, plan_fill};
pub use id::{Id, NotFilled, NumericId};

use diesel_seqgen_core::Spec;

/// A Diesel model whose ID fields seqgen fills. Implement it with
/// `#[derive(DistributedId)]` (see [the derive](derive@crate::DistributedId)).
///
/// Only unset fields get an ID: an empty `String`, `None`, or `0` for a plain `i64`. A value the
/// caller set is kept, but in a gapless field, which always takes its number in the
/// transaction at hand (a number from another transaction may have gone back with its
/// rollback), and, inside [`retry_transaction`](crate::retry_transaction), in a field an
/// earlier attempt filled.
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

    /// The fields numbered after the commit (`gapless = "deferred"`): left out of
    /// [`__id_fields`](DistributedId::__id_fields), inserted as NULL, numbered by
    /// [`pending`](crate::pending).
    #[doc(hidden)]
    fn __deferred_fields() -> &'static [IdField] {
        &[]
    }

    /// The document's date of this record for field number `index`, when its attribute names
    /// one (`period_from`): its numbers are taken in that date's period.
    #[doc(hidden)]
    fn __id_date(&self, _index: usize) -> Option<diesel_seqgen_core::DocumentDate> {
        None
    }
}

/// Records of a [`DistributedId`] model: one record, a slice, an array or a `Vec` of them, as
/// [`insert_into`](crate::insert_into)'s `values` and [`assign_ids`](crate::assign_ids) take them.
pub trait Records {
    /// The record type.
    type Row: DistributedId;
    /// The records as a slice.
    fn as_rows(&mut self) -> &mut [Self::Row];
    /// The records as a shared slice.
    #[doc(hidden)]
    fn __rows(&self) -> &[Self::Row];
}

impl<T: DistributedId> Records for T {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        std::slice::from_mut(self)
    }
    fn __rows(&self) -> &[T] {
        std::slice::from_ref(self)
    }
}

impl<T: DistributedId> Records for [T] {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        self
    }
    fn __rows(&self) -> &[T] {
        self
    }
}

impl<T: DistributedId, const N: usize> Records for [T; N] {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        self
    }
    fn __rows(&self) -> &[T] {
        self
    }
}

impl<T: DistributedId> Records for Vec<T> {
    type Row = T;
    fn as_rows(&mut self) -> &mut [T] {
        self
    }
    fn __rows(&self) -> &[T] {
        self
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
    /// Why the spec the attribute asks for could not be built at run time (the obfuscation
    /// key missing from the environment): `spec` is then that spec without the key, and
    /// every fill of the model fails with this instead of handing out other IDs.
    pub unbuilt: Option<diesel_seqgen_core::SpecError>,
    /// Whether its numbers are taken in the period of a field of the record (`period_from`)
    /// rather than the clock's ([`DistributedId::__id_date`]).
    pub dated: bool,
    /// A deferred field's scope column (its one scope field's name).
    pub scope_column: Option<&'static str>,
    /// A deferred field's document date column (its `period_from` field's name).
    pub date_column: Option<&'static str>,
}

impl IdField {
    /// Whether the records' numbers of this field are taken in groups, by scope or by
    /// document period.
    pub(crate) fn grouped(&self) -> bool {
        self.spec.is_scoped() || self.dated
    }
}

/// The spec of a derived field and why it is unbuilt (see [`IdField::unbuilt`]): `builder`,
/// with the obfuscation key of environment variable `obfuscate_from` if one is named.
#[doc(hidden)]
pub fn build_field_spec(
    builder: diesel_seqgen_core::SpecBuilder,
    obfuscate_from: Option<&str>,
) -> (Spec, Option<diesel_seqgen_core::SpecError>) {
    const CHECKED: &str = "checked by #[derive(DistributedId)]";
    let Some(var) = obfuscate_from else {
        return (builder.build().expect(CHECKED), None);
    };
    match builder.clone().obfuscate_from_env(var).build() {
        Ok(spec) => (spec, None),
        Err(e) => (builder.build().expect(CHECKED), Some(e)),
    }
}

/// A field type `#[derive(DistributedId)]` can fill: `String`, `Option<String>`, `i64`,
/// `Option<i64>`, and your own types (newtypes, wrappers) that implement it by handing out
/// the slot of the value they wrap.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::{DistributedId, IdSlot, IdValue};
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
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY)").execute(&mut conn)?;
/// let mut order = NewOrder { order_no: OrderNo::default() };
/// diesel_seqgen::insert_into(orders::table).values(&mut order).execute(&mut conn)?;
/// assert_eq!(order.order_no.0, "ORD0001");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an ID field type seqgen can fill",
    label = "not `String`, `Option<String>`, `i64` or `Option<i64>`",
    note = "a type of your own can implement `diesel_seqgen::IdValue` by handing out the slot of the value it wraps"
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

/// The scope a derived record names with `scope = "a, b"`: the fields' values as `Display`
/// prints them. One field's value is the scope as it is (what `spec.scope(value)` takes for it);
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
