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
//! -- MariaDB from 10.3.3: several rows (a table value constructor, after a first row that
//! -- names the columns: a derived table's columns take the first row's names)
//! INSERT INTO `users` (`id`, `name`) SELECT * FROM (SELECT ? AS c0, ? AS c1
//!     UNION ALL VALUES (?, ?), (?, ?)) AS seqgen_v WHERE @seqgen_identity = ?
//! -- MySQL from 8.0.19: several rows (its table value constructor names them column_0, ...)
//! INSERT INTO `users` (`id`, `name`) SELECT * FROM (VALUES ROW(?, ?), ROW(?, ?), ROW(?, ?))
//!     AS seqgen_v WHERE @seqgen_identity = ?
//! ```
//!
//! Which of the last two a server takes is read once per database from its `VERSION()`
//! ([`Rows::of_mysql`]); an older MySQL, or a version seqgen cannot read, checks one row per
//! insert and tells the database apart with a query for a bulk.
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
use super::row_values::{Naming, RowValues};

/// The mark a session carries once seqgen identified its database (see
/// `Backend::mark_session`), and how an insert checking it writes several rows there.
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub(crate) value: Arc<str>,
    pub(crate) rows: Rows,
}

/// How an insert that checks the session's mark writes several rows, by the server it reaches.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rows {
    /// `VALUES (…), (…)`: PostgreSQL; MariaDB from 10.3.3, after a first row that names the
    /// columns.
    Values,
    /// `VALUES ROW(…), ROW(…)`: MySQL from 8.0.19.
    ValuesRow,
    /// One row per checked insert: a MySQL before 8.0.19, or a server whose version seqgen
    /// cannot read. A bulk there tells the database apart with a query.
    One,
}

impl Rows {
    /// The rows a MySQL or MariaDB server of `version` (its `VERSION()`, such as
    /// `10.11.19-MariaDB-0+deb12u1` or `8.0.36`) takes.
    #[cfg_attr(not(seqgen_mysql), allow(dead_code))]
    pub(crate) fn of_mysql(version: &str) -> Rows {
        let mariadb = version.contains("MariaDB");
        // The prefix old clients' handshakes needed, should a server put it there.
        let version = match version.strip_prefix("5.5.5-") {
            Some(rest) if mariadb => rest,
            _ => version,
        };
        let mut numbers = version
            .split(|c: char| !c.is_ascii_digit())
            .map(|n| n.parse::<u32>().ok());
        let (Some(Some(major)), Some(Some(minor)), Some(Some(patch))) =
            (numbers.next(), numbers.next(), numbers.next())
        else {
            return Rows::One;
        };
        let at_least = |least: (u32, u32, u32)| (major, minor, patch) >= least;
        if mariadb {
            if at_least((10, 3, 3)) {
                Rows::Values
            } else {
                Rows::One
            }
        } else if at_least((8, 0, 19)) {
            Rows::ValuesRow
        } else {
            Rows::One
        }
    }

    /// Whether an insert of `rows` rows can check the mark itself.
    pub(crate) fn can_check(self, rows: usize) -> bool {
        rows == 1 || self != Rows::One
    }
}

/// Diesel's insert `S` (rendered for its table and columns) of rows whose values are `V`,
/// inserting only on the database `mark` names; see the module.
#[doc(hidden)]
pub struct Asserted<S, V> {
    insert: S,
    /// Each row's values (a `ValuesClause`).
    rows: Vec<V>,
    mark: Mark,
    /// Diesel's insert as rendered and parsed, once; `None` when not of the plain shape.
    rendered: RenderedOnce,
}

impl<S, V> Asserted<S, V> {
    pub(crate) fn new(insert: S, rows: Vec<V>, mark: Mark) -> Self {
        Asserted {
            insert,
            rows,
            mark,
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
        out.push_bind_param::<diesel::sql_types::Text, str>(&self.mark.value)
    }
}

/// `(a, b), (c, d)` of `rows`, each row opened with `open` (`(` or `ROW(`).
fn each_row<'b, DB, V>(rows: &'b [V], open: &str, out: &mut AstPass<'_, 'b, DB>) -> QueryResult<()>
where
    DB: diesel::backend::Backend,
    V: RowValues<DB>,
{
    for (index, row) in rows.iter().enumerate() {
        if index > 0 {
            out.push_sql(", ");
        }
        out.push_sql(open);
        row.walk_values(out.reborrow(), &mut Naming::Bare)?;
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
                row.walk_values(out.reborrow(), &mut Naming::Bare)?;
            } else {
                out.push_sql("SELECT * FROM (VALUES ");
                each_row(rows, "(", out)?;
                out.push_sql(") AS seqgen_v");
            }
            out.push_sql(" WHERE current_setting('seqgen.identity', true) = ");
            Ok(())
        })
    }
}

/// Several rows as the server takes them ([`Rows`]): a `UNION ALL` of one `SELECT` per row
/// would cost more than the query the check saves (0.65× a plain insert of 100 rows, against
/// 0.8× with the query).
#[cfg(seqgen_mysql)]
impl<S, V> QueryFragment<diesel::mysql::Mysql> for Asserted<S, V>
where
    S: QueryFragment<diesel::mysql::Mysql>,
    V: RowValues<diesel::mysql::Mysql>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, diesel::mysql::Mysql>) -> QueryResult<()> {
        let rendered = self.rendered::<diesel::mysql::Mysql>(Dialect::Mysql)?;
        let many = self.mark.rows;
        self.walk(rendered, out, |rows, out| {
            match (rows, many) {
                ([row], _) => {
                    out.push_sql("SELECT ");
                    row.walk_values(out.reborrow(), &mut Naming::Bare)?;
                    out.push_sql(" FROM DUAL");
                }
                ([first, rest @ ..], Rows::Values) => {
                    out.push_sql("SELECT * FROM (SELECT ");
                    first.walk_values(out.reborrow(), &mut Naming::Named(0))?;
                    out.push_sql(" UNION ALL VALUES ");
                    each_row(rest, "(", out)?;
                    out.push_sql(") AS seqgen_v");
                }
                (_, Rows::ValuesRow) => {
                    out.push_sql("SELECT * FROM (VALUES ");
                    each_row(rows, "ROW(", out)?;
                    out.push_sql(") AS seqgen_v");
                }
                _ => return Err(NotRewritten::error(NOT_CHECKED)),
            }
            out.push_sql(" WHERE @seqgen_identity = ");
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

#[cfg(test)]
mod tests {
    use super::Rows;

    #[test]
    fn rows_by_server_version() {
        for (version, rows) in [
            ("10.11.19-MariaDB-0+deb12u1", Rows::Values),
            ("10.3.3-MariaDB", Rows::Values),
            ("10.3.2-MariaDB-log", Rows::One),
            ("5.5.5-10.2.44-MariaDB", Rows::One),
            ("5.5.5-10.11.6-MariaDB", Rows::Values),
            ("11.4.2-MariaDB-ubu2404", Rows::Values),
            ("8.0.19", Rows::ValuesRow),
            ("8.4.3-commercial", Rows::ValuesRow),
            ("9.1.0", Rows::ValuesRow),
            ("8.0.18", Rows::One),
            ("5.7.44-log", Rows::One),
            ("", Rows::One),
            ("unknown", Rows::One),
        ] {
            assert_eq!(Rows::of_mysql(version), rows, "{version}");
        }
        assert!(Rows::One.can_check(1) && !Rows::One.can_check(2));
        assert!(Rows::Values.can_check(100) && Rows::ValuesRow.can_check(100));
    }
}
