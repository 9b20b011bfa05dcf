//! One row's values as Diesel's derived `Insertable` gives them, walked for the statements that
//! rewrite Diesel's insert (`asserted.rs`, `one_statement.rs`) so that those statements can be
//! prepared once per connection.

use diesel::insertable::{ColumnInsertValue, DefaultableColumnInsertValue};
use diesel::query_builder::{AstPass, QueryFragment, ValuesClause};
use diesel::QueryResult;

use super::rendered::NotRewritten;

/// One row's values as Diesel's derived `Insertable` gives them (a `ValuesClause` of a tuple
/// of `DefaultableColumnInsertValue`s), written as bind parameters without their column list
/// (`$1, $2`), and without telling Diesel they are unsafe to cache, as Diesel's own walk does
/// for every value of a derived `Insertable` (for the `DEFAULT` a `None` may print, which is
/// refused here). So a rewritten statement of one row is prepared once per connection, where
/// Diesel parses and plans its own insert at every call. (`DefaultableColumnInsertValue` and
/// `ColumnInsertValue` are Diesel's hidden public types: the workspace pins Diesel 2.3.)
#[doc(hidden)]
pub trait RowValues<DB: diesel::backend::Backend> {
    /// Writes the values, each a bind parameter, named as `naming` says.
    fn walk_values<'b>(&'b self, out: AstPass<'_, 'b, DB>, naming: &mut Naming) -> QueryResult<()>;
}

/// Whether each value of a row is written bare (`?, ?`) or named (`? AS c0, ? AS c1`), as the
/// first row of a derived table must be on MariaDB: its columns take the first row's names,
/// and `?, ?` would name two columns `?`.
#[doc(hidden)]
pub enum Naming {
    /// `?, ?`
    Bare,
    /// `? AS c0, ? AS c1`: the next value's number.
    #[cfg_attr(not(seqgen_mysql), allow(dead_code))]
    Named(usize),
}

impl Naming {
    /// Names the value just written, if values are named.
    fn after_value<DB: diesel::backend::Backend>(&mut self, out: &mut AstPass<'_, '_, DB>) {
        if let Naming::Named(next) = self {
            out.push_sql(&format!(" AS c{next}"));
            *next += 1;
        }
    }
}

impl<V, Tab, DB> RowValues<DB> for ValuesClause<V, Tab>
where
    DB: diesel::backend::Backend,
    V: RowValues<DB>,
{
    fn walk_values<'b>(&'b self, out: AstPass<'_, 'b, DB>, naming: &mut Naming) -> QueryResult<()> {
        self.values.walk_values(out, naming)
    }
}

impl<T, DB> RowValues<DB> for DefaultableColumnInsertValue<T>
where
    DB: diesel::backend::Backend,
    T: QueryFragment<DB>,
{
    fn walk_values<'b>(
        &'b self,
        mut out: AstPass<'_, 'b, DB>,
        naming: &mut Naming,
    ) -> QueryResult<()> {
        match self {
            DefaultableColumnInsertValue::Expression(value) => {
                value.walk_ast(out.reborrow())?;
                naming.after_value(&mut out);
                Ok(())
            }
            DefaultableColumnInsertValue::Default => Err(NotRewritten::error(
                "seqgen rewrites no insert with a DEFAULT value",
            )),
        }
    }
}

impl<Col, Expr, DB> RowValues<DB> for ColumnInsertValue<Col, Expr>
where
    DB: diesel::backend::Backend,
    Self: QueryFragment<DB>,
{
    fn walk_values<'b>(
        &'b self,
        mut out: AstPass<'_, 'b, DB>,
        naming: &mut Naming,
    ) -> QueryResult<()> {
        self.walk_ast(out.reborrow())?;
        naming.after_value(&mut out);
        Ok(())
    }
}

/// [`RowValues`] for the tuples Diesel's derive makes, up to 64 columns (Diesel's
/// `64-column-tables`). A model of more columns (`128-column-tables`) does not satisfy
/// `diesel_seqgen::insert::Insert`: insert it with `execute_with`, or split the model.
macro_rules! row_values_tuples {
    ($($name:ident)+) => {
        impl<DB: diesel::backend::Backend, $($name: RowValues<DB>),+> RowValues<DB> for ($($name,)+) {
            #[allow(non_snake_case)]
            fn walk_values<'b>(
                &'b self,
                mut out: AstPass<'_, 'b, DB>,
                naming: &mut Naming,
            ) -> QueryResult<()> {
                let ($($name,)+) = self;
                let mut first = true;
                $(
                    if !std::mem::take(&mut first) {
                        out.push_sql(", ");
                    }
                    $name.walk_values(out.reborrow(), naming)?;
                )+
                let _ = first;
                Ok(())
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
