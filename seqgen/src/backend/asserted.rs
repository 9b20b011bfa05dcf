//! An insert that checks, in the statement itself, which database the connection reaches:
//! Diesel's insert, rendered and parsed, rewritten to insert its rows only when the session
//! carries the marker seqgen set on it after identifying its database (`Backend::mark_session`).
//! A connection seqgen cannot remember (a plain one, or `&mut *pooled`) is then served from
//! a guessed database's cache with no query of its own; a wrong guess inserts nothing, never
//! another database's numbers (`crate::global::guess`).
//!
//! ```sql
//! -- PostgreSQL
//! /* the insert as Diesel writes it */ INSERT INTO "users" ("id", "name")
//!     SELECT * FROM (VALUES ($1, $2), ($3, $4)) AS seqgen_v
//!     WHERE current_setting('seqgen.identity', true) = $5
//! -- MySQL, MariaDB
//! /* the insert as Diesel writes it */ INSERT INTO `users` (`id`, `name`)
//!     SELECT * FROM (SELECT ? AS c0, ? AS c1 UNION ALL SELECT ?, ?) AS seqgen_v
//!     WHERE @seqgen_identity = ?
//! ```
//!
//! As in `one_statement.rs`, Diesel's insert is walked inside an SQL comment to register its
//! bind parameters, which the rewritten copy refers to in the same order; anything but the
//! plain shape is refused before anything is sent ([`NotAsserted`]).
//!
//! MySQL's `USE other` is not seen (as a pooled connection that remembers its database does not
//! see it: see "What can still produce a duplicate" in `guide::guarantees`): a prepared
//! statement keeps the `DATABASE()` it was prepared under.

#![cfg_attr(not(any(seqgen_pg, seqgen_mysql)), allow(dead_code, unused_imports))]

use std::sync::{Arc, OnceLock};

use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};

use super::rendered::{Dialect, Rendered};

/// Diesel's insert `S`, inserting only on the database `marker` names; see the module.
#[doc(hidden)]
pub struct Asserted<S> {
    insert: S,
    marker: Arc<str>,
    /// Diesel's insert as rendered and parsed, once; `None` when not of the plain shape.
    rendered: OnceLock<Option<Rendered>>,
}

impl<S> Asserted<S> {
    pub(crate) fn new(insert: S, marker: Arc<str>) -> Self {
        Asserted {
            insert,
            marker,
            rendered: OnceLock::new(),
        }
    }
}

/// Returned, before anything is sent, when an insert is not of the shape this statement
/// rewrites: the caller then tells the database apart with a query.
#[derive(Debug)]
pub(crate) struct NotAsserted;

impl std::fmt::Display for NotAsserted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("this insert cannot check the database it reaches itself")
    }
}

impl std::error::Error for NotAsserted {}

/// Whether `e` is [`NotAsserted`]: nothing was sent.
pub(crate) fn is_not_asserted(e: &diesel::result::Error) -> bool {
    matches!(e, diesel::result::Error::QueryBuilderError(e) if e.is::<NotAsserted>())
}

fn not_asserted() -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError(Box::new(NotAsserted))
}

// Cached by its text, as Diesel caches what has no static id.
impl<S> QueryId for Asserted<S> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<S, Conn> RunQueryDsl<Conn> for Asserted<S> {}

impl<S> Asserted<S> {
    /// Diesel's insert, rendered and parsed, once.
    fn rendered<DB>(&self, dialect: Dialect) -> QueryResult<&Rendered>
    where
        DB: diesel::backend::Backend + Default,
        DB::QueryBuilder: Default,
        S: QueryFragment<DB>,
    {
        use diesel::query_builder::QueryBuilder;
        self.rendered
            .get_or_init(|| {
                let mut builder = DB::QueryBuilder::default();
                self.insert.to_sql(&mut builder, &DB::default()).ok()?;
                Rendered::parse(&builder.finish(), dialect)
            })
            .as_ref()
            .ok_or_else(not_asserted)
    }

    /// The statement, for a backend whose `rendered` is Diesel's insert parsed: `values`
    /// writes the rows as a derived table, `check` the condition on the marker, bound after.
    fn walk<'b, DB>(
        &'b self,
        rendered: &Rendered,
        mut out: AstPass<'_, 'b, DB>,
        values: impl FnOnce(&Rendered) -> String,
        check: (&str, &str),
    ) -> QueryResult<()>
    where
        DB: diesel::backend::Backend,
        S: QueryFragment<DB>,
        str: diesel::serialize::ToSql<diesel::sql_types::Text, DB>,
        DB: diesel::sql_types::HasSqlType<diesel::sql_types::Text>,
    {
        // First, so that its parameters come first, as in the rewritten copy.
        out.push_sql("/* ");
        self.insert.walk_ast(out.reborrow())?;
        out.push_sql(" */ INSERT INTO ");
        out.push_sql(&rendered.table);
        out.push_sql(" (");
        out.push_sql(&rendered.columns.join(", "));
        out.push_sql(") SELECT * FROM (");
        out.push_sql(&values(rendered));
        out.push_sql(") AS seqgen_v WHERE ");
        out.push_sql(check.0);
        out.push_bind_param::<diesel::sql_types::Text, str>(&self.marker)?;
        out.push_sql(check.1);
        Ok(())
    }
}

/// Prepared once per connection for one row, as Diesel would if its insert had no `DEFAULT`
/// to print (which `Rendered::parse` refuses); a bulk stays unprepared, or each number of rows
/// would be one more prepared statement.
#[cfg(seqgen_pg)]
impl<S: QueryFragment<diesel::pg::Pg>> QueryFragment<diesel::pg::Pg> for Asserted<S> {
    fn is_safe_to_cache_prepared(&self, _: &diesel::pg::Pg) -> QueryResult<bool> {
        Ok(self.pg()?.rows.len() == 1)
    }

    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        let values = |r: &Rendered| {
            let rows: Vec<String> = r
                .rows
                .iter()
                .map(|row| format!("({})", row.join(", ")))
                .collect();
            format!("VALUES {}", rows.join(", "))
        };
        let check = ("current_setting('seqgen.identity', true) = ", "");
        self.walk(self.pg()?, out, values, check)
    }
}

#[cfg(seqgen_pg)]
impl<S: QueryFragment<diesel::pg::Pg>> Asserted<S> {
    fn pg(&self) -> QueryResult<&Rendered> {
        self.rendered::<diesel::pg::Pg>(Dialect::Postgres)
    }
}

#[cfg(seqgen_mysql)]
impl<S: QueryFragment<diesel::mysql::Mysql>> QueryFragment<diesel::mysql::Mysql> for Asserted<S> {
    fn is_safe_to_cache_prepared(&self, _: &diesel::mysql::Mysql) -> QueryResult<bool> {
        Ok(self.mysql()?.rows.len() == 1)
    }

    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, diesel::mysql::Mysql>) -> QueryResult<()> {
        // MySQL's `VALUES` rows cannot stand in a derived table; `SELECT`s joined can.
        let values = |r: &Rendered| {
            let rows: Vec<String> = r
                .rows
                .iter()
                .enumerate()
                .map(|(index, row)| {
                    let columns: Vec<String> = row
                        .iter()
                        .enumerate()
                        .map(|(c, value)| match index {
                            0 => format!("{value} AS c{c}"),
                            _ => value.clone(),
                        })
                        .collect();
                    format!("SELECT {}", columns.join(", "))
                })
                .collect();
            rows.join(" UNION ALL ")
        };
        let check = ("@seqgen_identity = ", "");
        self.walk(self.mysql()?, out, values, check)
    }
}

#[cfg(seqgen_mysql)]
impl<S: QueryFragment<diesel::mysql::Mysql>> Asserted<S> {
    fn mysql(&self) -> QueryResult<&Rendered> {
        self.rendered::<diesel::mysql::Mysql>(Dialect::Mysql)
    }
}

// Never run there (a SQLite database is told apart without a round trip); implemented so that
// `execute` has one bound for every backend.
#[cfg(feature = "sqlite")]
impl<S> QueryFragment<diesel::sqlite::Sqlite> for Asserted<S> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::sqlite::Sqlite>) -> QueryResult<()> {
        Err(not_asserted())
    }
}
