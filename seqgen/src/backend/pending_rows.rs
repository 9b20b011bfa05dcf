//! The statements of gapless numbers given after the commit ([`crate::pending`]): a table seqgen
//! knows only by the names of its columns, so its SQL is written here with quoted names and
//! bound values, once for every backend; `shared.rs` runs it.

use diesel::prelude::*;
use diesel::query_builder::{QueryBuilder, QueryFragment};
use diesel::Column;

use super::NamedTable;

use super::dialect::TextType;
use diesel::sql_types::{Nullable, Text};

/// Where a table keeps the numbers seqgen gives its rows after they commit: the table, the
/// column of the number (text, NULL until numbered), and an integer column that orders the rows
/// (an auto-increment or identity key). Optionally the column holding each row's scope and the
/// one holding its document's date. See [`crate::pending`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PendingRows<'a> {
    pub(crate) table: &'a str,
    pub(crate) column: &'a str,
    pub(crate) order_by: &'a str,
    pub(crate) scope_column: Option<&'a str>,
    pub(crate) date_column: Option<&'a str>,
    pub(crate) batch: usize,
}

impl<'a> PendingRows<'a> {
    /// Rows of `table` (`"schema.table"` where it has one) whose `column` is NULL, numbered in
    /// the order of `order_by`, an integer column unique to each row.
    pub fn new(table: &'a str, column: &'a str, order_by: &'a str) -> Self {
        PendingRows {
            table,
            column,
            order_by,
            scope_column: None,
            date_column: None,
            batch: 500,
        }
    }

    /// Rows whose `column` is NULL, numbered in the order of `order_by`: two columns of one
    /// Diesel table (`invoices::number`, `invoices::id`), so that a misspelt name or columns of
    /// two tables are compile errors. The string form is [`PendingRows::new`], for names a command
    /// line supplies.
    ///
    /// ```
    /// diesel::table! { invoices (id) { id -> Integer, number -> Nullable<Text> } }
    ///
    /// let rows = diesel_seqgen::pending::PendingRows::of(invoices::number, invoices::id);
    /// assert_eq!(rows, diesel_seqgen::pending::PendingRows::new("invoices", "number", "id"));
    /// ```
    pub fn of<C, O>(column: C, order_by: O) -> PendingRows<'static>
    where
        C: Column,
        C::Table: NamedTable,
        O: Column<Table = C::Table>,
    {
        let _ = column; // only its type names it
        Self::with_column(order_by, C::NAME)
    }

    /// The rows whose `column` (a name) is NULL, in the table of `order_by` and in its order:
    /// [`PendingRows::of`], and [`crate::pending::rows_of`], which has the column's name from
    /// the derive.
    pub(crate) fn with_column<O>(order_by: O, column: &'static str) -> PendingRows<'static>
    where
        O: Column<Table: NamedTable>,
    {
        let _ = order_by; // only its type names it
        PendingRows::new(O::Table::sql_name(), column, O::NAME)
    }

    /// The column holding each row's scope, for a scoped spec: a row's number is taken in the
    /// scope the column holds (read as text). A row whose scope is NULL is left unnumbered. A
    /// Diesel column gives its name as `invoices::company_id::NAME` (`diesel::Column` in scope).
    pub fn scoped_by(mut self, column: &'a str) -> Self {
        self.scope_column = Some(column);
        self
    }

    /// The column holding each row's document date (a `DATE` column, or text `YYYY-MM-DD…`): a
    /// row's number is taken in that date's period, instead of the clock's at numbering.
    pub fn dated_by(mut self, column: &'a str) -> Self {
        self.date_column = Some(column);
        self
    }

    /// How many rows one short transaction numbers at most (500 unless set; at least 1).
    pub fn batch(mut self, rows: usize) -> Self {
        self.batch = rows.max(1);
        self
    }
}

/// A row still without a number, as [`select`] reads it: its order value, scope and date as
/// text.
#[doc(hidden)]
#[derive(Debug, QueryableByName)]
pub struct PendingRow {
    /// The order column's value.
    #[diesel(sql_type = Text)]
    pub order_key: String,
    /// The scope column's value, with one.
    #[diesel(sql_type = Nullable<Text>)]
    pub scope: Option<String>,
    /// The date column's value, with one.
    #[diesel(sql_type = Nullable<Text>)]
    pub day: Option<String>,
}

/// An update of `key`'s row of `db_key` that changes nothing, which every backend locks for the
/// rest of the transaction: followers of one key take turns. Binds the key (text).
pub(crate) fn lock_sql<B>() -> String
where
    B: diesel::backend::Backend,
    B::QueryBuilder: Default,
{
    let mut sql = B::QueryBuilder::default();
    sql.push_sql("UPDATE db_key SET current_value = current_value WHERE key_name = ");
    sql.push_bind_param();
    sql.push_sql(" AND scope = '' AND period = ''");
    sql.finish()
}

/// Up to `rows.batch` rows of `rows.table` without a number whose order value is above a
/// bound value (big integer), in order, as [`PendingRow`]s.
pub(crate) fn select_sql<B>(rows: &PendingRows<'_>) -> QueryResult<String>
where
    B: diesel::backend::Backend + Default,
    B::QueryBuilder: Default,
    TextType: QueryFragment<B>,
{
    let mut sql = B::QueryBuilder::default();
    let text = |sql: &mut B::QueryBuilder, column: Option<&str>| -> QueryResult<()> {
        sql.push_sql("CAST(");
        match column {
            Some(column) => sql.push_identifier(column)?,
            None => sql.push_sql("NULL"),
        }
        sql.push_sql(" AS ");
        TextType.to_sql(sql, &B::default())?;
        sql.push_sql(")");
        Ok(())
    };
    sql.push_sql("SELECT ");
    text(&mut sql, Some(rows.order_by))?;
    sql.push_sql(" AS order_key, ");
    text(&mut sql, rows.scope_column)?;
    sql.push_sql(" AS scope, ");
    text(&mut sql, rows.date_column)?;
    sql.push_sql(" AS day FROM ");
    table(&mut sql, rows.table)?;
    sql.push_sql(" WHERE ");
    sql.push_identifier(rows.column)?;
    sql.push_sql(" IS NULL AND ");
    sql.push_identifier(rows.order_by)?;
    sql.push_sql(" > ");
    sql.push_bind_param();
    sql.push_sql(" ORDER BY ");
    sql.push_identifier(rows.order_by)?;
    sql.push_sql(&format!(" LIMIT {}", rows.batch));
    Ok(sql.finish())
}

/// One statement writing `count` IDs to their rows where they still have no number: binds
/// `count` pairs (order value, big integer; ID, text), then the `count` order values again.
/// On MariaDB it writes nothing outside a transaction (`@@in_transaction`, in a comment the
/// other databases skip): where a Galera node rolled the batch's transaction back unheard
/// (`mysql::BumpHeld`), the rows would get numbers whose counter went back.
pub(crate) fn write_sql<B>(rows: &PendingRows<'_>, count: usize) -> QueryResult<String>
where
    B: diesel::backend::Backend,
    B::QueryBuilder: Default,
{
    let mut sql = B::QueryBuilder::default();
    sql.push_sql("UPDATE ");
    table(&mut sql, rows.table)?;
    sql.push_sql(" SET ");
    sql.push_identifier(rows.column)?;
    sql.push_sql(" = CASE ");
    sql.push_identifier(rows.order_by)?;
    for _ in 0..count {
        sql.push_sql(" WHEN ");
        sql.push_bind_param();
        sql.push_sql(" THEN ");
        sql.push_bind_param();
    }
    sql.push_sql(" END WHERE ");
    sql.push_identifier(rows.column)?;
    sql.push_sql(" IS NULL AND ");
    sql.push_identifier(rows.order_by)?;
    sql.push_sql(" IN (");
    for i in 0..count {
        if i > 0 {
            sql.push_sql(", ");
        }
        sql.push_bind_param();
    }
    sql.push_sql(") /*M! AND @@in_transaction = 1 */");
    Ok(sql.finish())
}

/// How many rows of a table wait for their number, as [`waiting`] reads them: their count,
/// the lowest order value among them and the highest of the whole table, as text.
#[doc(hidden)]
#[derive(Debug, QueryableByName)]
pub struct WaitingRows {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub(crate) waiting: i64,
    #[diesel(sql_type = Nullable<Text>)]
    pub(crate) oldest: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(crate) newest: Option<String>,
}

/// How many rows of `rows.table` have no number yet ([`WaitingRows`]): a plain read, which
/// waits for no lock.
pub(crate) fn waiting_sql<B>(rows: &PendingRows<'_>) -> QueryResult<String>
where
    B: diesel::backend::Backend + Default,
    B::QueryBuilder: Default,
    TextType: QueryFragment<B>,
{
    let mut sql = B::QueryBuilder::default();
    let cast = |sql: &mut B::QueryBuilder, aggregate: &str| -> QueryResult<()> {
        sql.push_sql("CAST(");
        sql.push_sql(aggregate);
        sql.push_sql("(");
        sql.push_identifier(rows.order_by)?;
        sql.push_sql(") AS ");
        TextType.to_sql(sql, &B::default())?;
        sql.push_sql(")");
        Ok(())
    };
    sql.push_sql("SELECT COUNT(*) AS waiting, ");
    cast(&mut sql, "MIN")?;
    sql.push_sql(" AS oldest, (SELECT ");
    cast(&mut sql, "MAX")?;
    sql.push_sql(" FROM ");
    table(&mut sql, rows.table)?;
    sql.push_sql(") AS newest FROM ");
    table(&mut sql, rows.table)?;
    sql.push_sql(" WHERE ");
    sql.push_identifier(rows.column)?;
    sql.push_sql(" IS NULL");
    Ok(sql.finish())
}

/// Pushes `table`, each of its dot-separated parts quoted.
fn table<B: diesel::backend::Backend>(
    sql: &mut impl QueryBuilder<B>,
    table: &str,
) -> QueryResult<()> {
    for (i, part) in table.split('.').enumerate() {
        if i > 0 {
            sql.push_sql(".");
        }
        sql.push_identifier(part)?;
    }
    Ok(())
}
