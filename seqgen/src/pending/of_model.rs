//! The rows of a model's field numbered after the commit, found from its derive: its spec,
//! column, and scope and date columns.

use diesel_seqgen_core::Spec;

use super::PendingRows;
use crate::backend::NamedTable;
use crate::error::{Error, Result};
use crate::model::{DistributedId, IdField};

/// The spec and rows of `T`'s field numbered after the commit (`#[distributed_id(gapless =
/// "deferred")]`), in the table of `order_by` (a column of `T`'s Diesel table, `invoices::id`),
/// ordered by it: its column, and its scope and date columns as the attribute names them
/// (`scope`, `period_from`: the fields' names). [`Error::Refused`] without one, or with
/// several: name the one with [`rows_of_column`].
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::{pending, DistributedId};
///
/// diesel::table! { invoices (id) { id -> Integer, number -> Nullable<Text>, total -> Integer } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = invoices)]
/// struct NewInvoice {
///     #[distributed_id(prefix = "INV", date = "", pad = 4, gapless = "deferred")]
///     number: Option<String>,
///     total: i32,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE invoices (id INTEGER PRIMARY KEY, number TEXT UNIQUE, total INTEGER NOT NULL)")
///     .execute(&mut conn)?;
/// let mut invoice = NewInvoice { number: None, total: 10 };
/// // The insert takes no number and no lock of seqgen's: the row commits with NULL.
/// diesel_seqgen::insert_into(invoices::table).values(&mut invoice).execute(&mut conn)?;
/// assert_eq!(invoice.number, None);
///
/// let (spec, rows) = pending::rows_of::<NewInvoice>(invoices::id)?;
/// pending::number_pending(&mut conn, spec, rows)?;
/// let number: Option<String> = invoices::table.select(invoices::number).first(&mut conn)?;
/// assert_eq!(number.as_deref(), Some("INV0001"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rows_of<T: DistributedId>(
    order_by: impl diesel::Column<Table: NamedTable>,
) -> Result<(&'static Spec, PendingRows<'static>)> {
    let fields = T::__deferred_fields();
    match fields {
        [field] => of_field(field, order_by),
        _ => Err(Error::Refused {
            key: std::any::type_name::<T>().to_owned(),
            reason: match fields.len() {
                0 => "it has no field numbered after the commit (`gapless = \"deferred\"`)".into(),
                n => format!(
                    "it has {n} fields numbered after the commit ({}): name one with \
                     `pending::rows_of_column`",
                    fields
                        .iter()
                        .map(|f| f.column)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        }),
    }
}

/// [`rows_of`] for the field of `T` written to `column` (a column of `T`'s Diesel table,
/// `invoices::public_no`), for a model with several fields numbered after the commit (each
/// has a follower of its own). [`Error::Refused`] if no such field is written there.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::{pending, DistributedId};
///
/// diesel::table! { docs (id) { id -> Integer, invoice_no -> Nullable<Text>, reference -> Nullable<Text> } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = docs)]
/// struct NewDoc {
///     #[distributed_id(key = "invoices", prefix = "INV", date = "", pad = 4, gapless = "deferred")]
///     invoice_no: Option<String>,
///     #[distributed_id(key = "references", prefix = "R", date = "", pad = 4, gapless = "deferred")]
///     reference: Option<String>,
/// }
///
/// assert!(pending::rows_of::<NewDoc>(docs::id).is_err(), "which of the two?");
/// let (spec, _rows) = pending::rows_of_column::<NewDoc>(docs::reference, docs::id)?;
/// assert_eq!(spec.key(), "references");
/// # Ok::<(), diesel_seqgen::Error>(())
/// ```
pub fn rows_of_column<T: DistributedId>(
    column: impl diesel::Column,
    order_by: impl diesel::Column<Table: NamedTable>,
) -> Result<(&'static Spec, PendingRows<'static>)> {
    let name = name_of(&column);
    let field = T::__deferred_fields()
        .iter()
        .find(|f| f.column == name)
        .ok_or_else(|| Error::Refused {
            key: std::any::type_name::<T>().to_owned(),
            reason: format!("it has no field numbered after the commit in column `{name}`"),
        })?;
    of_field(field, order_by)
}

/// The name of `column` (an `impl Column` argument has no type to name it by).
fn name_of<N: diesel::Column>(_: &N) -> &'static str {
    N::NAME
}

/// The spec and rows of `field`.
fn of_field(
    field: &'static IdField,
    order_by: impl diesel::Column<Table: NamedTable>,
) -> Result<(&'static Spec, PendingRows<'static>)> {
    if let Some(e) = &field.unbuilt {
        return Err(Error::InvalidSpec(e.clone()));
    }
    let mut rows = PendingRows::with_column(order_by, field.column);
    if let Some(column) = field.scope_column {
        rows = rows.scoped_by(column);
    }
    if let Some(column) = field.date_column {
        rows = rows.dated_by(column);
    }
    Ok((&field.spec, rows))
}
