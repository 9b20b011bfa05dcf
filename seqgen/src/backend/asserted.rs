//! An insert that checks, in the statement itself, which database the connection reaches:
//! Diesel's insert, rendered and parsed, rewritten to insert its rows only when the session
//! carries the marker seqgen set on it after identifying its database (`Backend::mark_session`).
//! A connection seqgen cannot remember (a plain one, or `&mut *pooled`) is then served from
//! a guessed database's cache with no query of its own; a wrong guess inserts nothing, never
//! another database's numbers (`crate::global::guess`).
//!
//! ```sql
//! -- PostgreSQL: one row, and several
//! INSERT INTO "users" ("id", "name") SELECT $1, $2
//!     WHERE current_setting('seqgen.identity', true) = $3
//! INSERT INTO "users" ("id", "name") SELECT * FROM (VALUES ($1, $2), ($3, $4)) AS seqgen_v
//!     WHERE current_setting('seqgen.identity', true) = $5
//! -- MySQL, MariaDB: one row
//! INSERT INTO `users` (`id`, `name`) SELECT ?, ? FROM DUAL WHERE @seqgen_identity = ?
//! ```
//!
//! The table and columns come from Diesel's insert, rendered and parsed (anything but the plain
//! shape, such as a `DEFAULT` for a `None`, is refused before anything is sent: [`NotRewritten`]);
//! the values are Diesel's own, each row's `ValuesClause` walked without its column list.
//!
//! MySQL's `USE other` is not seen (as a pooled connection that remembers its database does not
//! see it: see "What can still produce a duplicate" in `guide::guarantees`): a prepared
//! statement keeps the `DATABASE()` it was prepared under.

#![cfg_attr(not(any(seqgen_pg, seqgen_mysql)), allow(dead_code, unused_imports))]

use std::sync::Arc;

use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};

use super::rendered::{Dialect, NotRewritten, Rendered, RenderedOnce};
use super::row_values::RowValues;

/// Diesel's insert `S` (rendered for its table and columns) of rows whose values are `V`,
/// inserting only on the database `marker` names; see the module.
#[doc(hidden)]
pub struct Asserted<S, V> {
    insert: S,
    /// Each row's values (a `ValuesClause`).
    rows: Vec<V>,
    marker: Arc<str>,
    /// Diesel's insert as rendered and parsed, once; `None` when not of the plain shape.
    rendered: RenderedOnce,
}

impl<S, V> Asserted<S, V> {
    pub(crate) fn new(insert: S, rows: Vec<V>, marker: Arc<str>) -> Self {
        Asserted {
            insert,
            rows,
            marker,
            rendered: RenderedOnce::default(),
        }
    }
}

/// Why an insert takes the query instead ([`NotRewritten`]).
const NOT_CHECKED: &str = "this insert cannot check the database it reaches itself";

// Cached by its text, as Diesel caches what has no static id.
impl<S, V> QueryId for Asserted<S, V> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<S, V, Conn> RunQueryDsl<Conn> for Asserted<S, V> {}

impl<S, V> Asserted<S, V> {
    /// Diesel's insert, rendered and parsed, once.
    fn rendered<DB>(&self, dialect: Dialect) -> QueryResult<&Rendered>
    where
        DB: diesel::backend::Backend + Default,
        DB::QueryBuilder: Default,
        S: QueryFragment<DB>,
    {
        (self.rendered.of::<DB, _>(&self.insert, dialect))
            .ok_or_else(|| NotRewritten::error(NOT_CHECKED))
    }

    /// The statement, for a backend whose `rendered` is Diesel's insert parsed: `INSERT INTO
    /// <table> (<columns>) `, then `rows` writes the rows' source from their values, up to the
    /// comparison with the marker, whose bind parameter comes last.
    fn walk<'b, DB>(
        &'b self,
        rendered: &Rendered,
        mut out: AstPass<'_, 'b, DB>,
        rows: impl FnOnce(&'b [V], &mut AstPass<'_, 'b, DB>) -> QueryResult<()>,
    ) -> QueryResult<()>
    where
        DB: diesel::backend::Backend,
        str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
        DB: diesel::sql_types::HasSqlType<diesel::sql_types::Text>,
    {
        // A bulk stays unprepared, as Diesel's: each number of rows would be one more
        // prepared statement.
        if self.rows.len() > 1 {
            out.unsafe_to_cache_prepared();
        }
        out.push_sql("INSERT INTO ");
        out.push_sql(&rendered.table);
        out.push_sql(" (");
        out.push_sql(&rendered.columns.join(", "));
        out.push_sql(") ");
        rows(&self.rows, &mut out)?;
        out.push_bind_param::<diesel::sql_types::Text, str>(&self.marker)
    }
}

/// `(a, b), (c, d)` of `rows`.
// PostgreSQL's checked insert.
#[cfg_attr(not(seqgen_pg), allow(dead_code))]
fn each_row<'b, DB, V>(rows: &'b [V], out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()>
where
    DB: diesel::backend::Backend,
    V: RowValues<DB>,
{
    for (index, row) in rows.iter().enumerate() {
        out.push_sql(if index == 0 { "(" } else { ", (" });
        row.walk_values(out.reborrow())?;
        out.push_sql(")");
    }
    Ok(())
}

#[cfg(seqgen_pg)]
impl<S, V> QueryFragment<diesel::pg::Pg> for Asserted<S, V>
where
    S: QueryFragment<diesel::pg::Pg>,
    V: RowValues<diesel::pg::Pg>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        let rendered = self.rendered::<diesel::pg::Pg>(Dialect::Postgres)?;
        self.walk(rendered, out, |rows, out| {
            if let [row] = rows {
                out.push_sql("SELECT ");
                row.walk_values(out.reborrow())?;
            } else {
                out.push_sql("SELECT * FROM (VALUES ");
                each_row(rows, out)?;
                out.push_sql(") AS seqgen_v");
            }
            out.push_sql(" WHERE current_setting('seqgen.identity', true) = ");
            Ok(())
        })
    }
}

/// One row only (`Backend::MOST_ROWS_CHECKED`): MySQL's `VALUES` rows cannot stand in a derived
/// table (MariaDB, MySQL before 8.0.19), and a `UNION ALL` of rows costs more than the query the
/// check saves.
#[cfg(seqgen_mysql)]
impl<S, V> QueryFragment<diesel::mysql::Mysql> for Asserted<S, V>
where
    S: QueryFragment<diesel::mysql::Mysql>,
    V: RowValues<diesel::mysql::Mysql>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, diesel::mysql::Mysql>) -> QueryResult<()> {
        let rendered = self.rendered::<diesel::mysql::Mysql>(Dialect::Mysql)?;
        self.walk(rendered, out, |rows, out| {
            let [row] = rows else {
                return Err(NotRewritten::error(NOT_CHECKED));
            };
            out.push_sql("SELECT ");
            row.walk_values(out.reborrow())?;
            out.push_sql(" FROM DUAL WHERE @seqgen_identity = ");
            Ok(())
        })
    }
}

// Never run there (a SQLite database is told apart without a round trip); implemented so that
// `execute` has one bound for every backend.
#[cfg(feature = "sqlite")]
impl<S, V> QueryFragment<diesel::sqlite::Sqlite> for Asserted<S, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::sqlite::Sqlite>) -> QueryResult<()> {
        Err(NotRewritten::error(NOT_CHECKED))
    }
}
