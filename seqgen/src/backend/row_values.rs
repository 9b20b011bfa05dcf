//! One row of Diesel's derived `Insertable`, read as fragments for the statements that write
//! their own insert around it (`asserted.rs`, `one_statement.rs`): its column names and each
//! of its values, so that those statements are built from Diesel's AST, never from its SQL
//! read back.
//!
//! The row is the derive's ([`InsertRow`]): the same values Diesel's derived `Insertable`
//! binds, built from the model's fields through Diesel's public `AsExpression`, so that no
//! item of Diesel's insert machinery (its `ValuesClause`, its hidden column values) is read.

use diesel::query_builder::{AstPass, QueryFragment};
use diesel::QueryResult;

/// Returned, before anything is sent, when an insert is not of the shape a statement rewrites
/// (the text says which statement): the caller then takes the usual path.
#[derive(Debug)]
pub(crate) struct NotRewritten(pub(crate) &'static str);

impl NotRewritten {
    pub(crate) fn error(why: &'static str) -> diesel::result::Error {
        diesel::result::Error::QueryBuilderError(Box::new(NotRewritten(why)))
    }
}

impl std::fmt::Display for NotRewritten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for NotRewritten {}

/// Whether `e` is [`NotRewritten`]: nothing was sent.
pub(crate) fn is_not_rewritten(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::QueryBuilderError(e) if e.is::<NotRewritten>())
}

/// One row's columns and values. A value is written as Diesel's own insert writes it (a bind
/// parameter), without the "unsafe to cache" mark Diesel's walk of a derived `Insertable`
/// sets for every value (for the `DEFAULT` a `None` may print, which is refused here): so a
/// rewritten statement of one row is prepared once per connection, where Diesel parses and
/// plans its own insert at every call.
#[doc(hidden)]
// Written only by the inserts of PostgreSQL and MySQL (`one_statement.rs`, `asserted.rs`).
#[cfg_attr(not(any(seqgen_pg, seqgen_mysql)), allow(dead_code))]
pub trait RowValues<DB: diesel::backend::Backend> {
    /// How many values (columns) the row has.
    fn len(&self) -> usize;

    /// Pushes the row's column names, unquoted, in order.
    fn columns(&self, into: &mut Vec<&'static str>);

    /// Whether every value is one to write (none is a `DEFAULT`, which a statement written
    /// around the values refuses).
    fn is_plain(&self) -> bool;

    /// Writes value number `index`.
    fn walk_value<'b>(&'b self, index: usize, out: AstPass<'_, 'b, DB>) -> QueryResult<()>;

    /// Writes every value, separated by commas.
    fn walk_values<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        for index in 0..self.len() {
            if index > 0 {
                out.push_sql(", ");
            }
            self.walk_value(index, out.reborrow())?;
        }
        Ok(())
    }
}

/// The columns of `rows` (Diesel's derive gives every row the same), unless a row has a
/// `DEFAULT` value or there is no row.
pub(crate) fn columns_of<DB, V>(rows: &[V]) -> Option<Vec<&'static str>>
where
    DB: diesel::backend::Backend,
    V: RowValues<DB>,
{
    let first = rows.first()?;
    if !rows.iter().all(RowValues::is_plain) {
        return None;
    }
    let mut columns = Vec::with_capacity(first.len());
    first.columns(&mut columns);
    Some(columns)
}

/// Writes `columns` as a list of quoted names: `("id", "name")`.
pub(crate) fn walk_columns<DB: diesel::backend::Backend>(
    columns: &[&'static str],
    out: &mut AstPass<'_, '_, DB>,
) -> QueryResult<()> {
    out.push_sql("(");
    for (index, name) in columns.iter().enumerate() {
        if index > 0 {
            out.push_sql(", ");
        }
        out.push_identifier(name)?;
    }
    out.push_sql(")");
    Ok(())
}

/// The row of `&Model` for Diesel's table `T`, as `#[derive(DistributedId)]` writes it from the
/// model's fields and Diesel's attributes (`#[diesel(table_name, column_name, skip_insertion,
/// treat_none_as_default_value)]`), the values Diesel's derived `Insertable` would bind: each
/// field's `AsExpression` for its column's SQL type. A model whose row the derive does not
/// write (its table inferred from its name, or a field `embed`ded or `serialize_as`) gives
/// [`NotWritten`], and its inserts are Diesel's own.
#[doc(hidden)]
pub trait InsertRow<T> {
    /// The row's values: a tuple of [`ColumnValue`]s, or [`NotWritten`].
    type Values;

    /// The row's values, borrowing the model.
    fn row_values(self) -> Self::Values;
}

/// A field's value for its column, written as a bind parameter; `None` for an `Option` field
/// Diesel's `Insertable` writes as `DEFAULT` (unless `treat_none_as_default_value = false`):
/// a row holding one is not rewritten.
#[doc(hidden)]
#[derive(Debug)]
pub struct ColumnValue<E> {
    pub column: &'static str,
    pub value: Option<E>,
}

/// The row of a model the derive does not write: no statement of seqgen's rewrites it.
#[doc(hidden)]
#[derive(Debug)]
pub struct NotWritten;

impl<E, DB> RowValues<DB> for ColumnValue<E>
where
    DB: diesel::backend::Backend,
    E: QueryFragment<DB>,
{
    fn len(&self) -> usize {
        1
    }
    fn columns(&self, into: &mut Vec<&'static str>) {
        into.push(self.column);
    }
    fn is_plain(&self) -> bool {
        self.value.is_some()
    }
    fn walk_value<'b>(&'b self, _: usize, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        match &self.value {
            Some(value) => value.walk_ast(out),
            None => Err(NotRewritten::error(
                "seqgen rewrites no insert with a DEFAULT value",
            )),
        }
    }
}

impl<DB: diesel::backend::Backend> RowValues<DB> for NotWritten {
    fn len(&self) -> usize {
        0
    }
    fn columns(&self, _: &mut Vec<&'static str>) {}
    fn is_plain(&self) -> bool {
        false
    }
    fn walk_value<'b>(&'b self, _: usize, _: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        Err(NotRewritten::error(
            "seqgen writes the rows of a model that names its `#[diesel(table_name)]` \
             and embeds no other",
        ))
    }
}

/// [`RowValues`] for the rows the derive writes ([`InsertRow`]), up to 64 columns (Diesel's
/// `64-column-tables`); the derive gives a model of more columns [`NotWritten`].
macro_rules! row_values_tuples {
    ($($name:ident)+) => {
        impl<DB: diesel::backend::Backend, $($name: RowValues<DB>),+> RowValues<DB> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn len(&self) -> usize {
                let ($($name,)+) = self;
                0 $(+ $name.len())+
            }

            #[allow(non_snake_case)]
            fn columns(&self, into: &mut Vec<&'static str>) {
                let ($($name,)+) = self;
                $($name.columns(into);)+
            }

            #[allow(non_snake_case)]
            fn is_plain(&self) -> bool {
                let ($($name,)+) = self;
                true $(&& $name.is_plain())+
            }

            #[allow(non_snake_case)]
            fn walk_value<'b>(&'b self, index: usize, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
                let ($($name,)+) = self;
                let mut index = index;
                $(
                    let len = $name.len();
                    if index < len {
                        return $name.walk_value(index, out);
                    }
                    index -= len;
                )+
                let _ = index;
                Err(NotRewritten::error("a value past the row's columns"))
            }
        }
    };
}

macro_rules! row_values_up_to {
    ($first:ident $($rest:ident)*) => {
        row_values_tuples!($first $($rest)*);
        row_values_up_to!($($rest)*);
    };
    () => {};
}

row_values_up_to!(
    T63 T62 T61 T60 T59 T58 T57 T56 T55 T54 T53 T52 T51 T50 T49 T48 T47 T46 T45 T44 T43 T42 T41
    T40 T39 T38 T37 T36 T35 T34 T33 T32 T31 T30 T29 T28 T27 T26 T25 T24 T23 T22 T21 T20 T19 T18
    T17 T16 T15 T14 T13 T12 T11 T10 T9 T8 T7 T6 T5 T4 T3 T2 T1 T0
);
