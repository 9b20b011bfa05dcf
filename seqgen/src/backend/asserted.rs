//! An insert that checks, in the statement itself, which database the connection reaches:
//! Diesel's insert, built from its table and rows, written to insert its rows only when the
//! session carries the marker seqgen set on it after identifying its database (`Backend::mark_session`).
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
//! -- MySQL, MariaDB: one row; a bulk asks `SELECT COALESCE(@seqgen_identity = ?, FALSE)` first,
//! -- on the session that then sends Diesel's insert (`Backend::carries_mark`)
//! INSERT INTO `users` (`id`, `name`) SELECT ?, ? FROM DUAL WHERE @seqgen_identity = ?
//! ```
//!
//! Each backend's form is in its file (`pg/mod.rs`, `mysql/statements.rs`; SQLite refuses it in
//! `sqlite.rs`). On another database (or a session not marked yet) the statement inserts no row,
//! and the caller reads that count: a wrong guess is never told by an error's text. MySQL's
//! insert of several rows that inserts nothing elsewhere would be a derived table of them,
//! spelled differently by MySQL (`VALUES ROW(…)`) and MariaDB, which cost MariaDB 10–20 % more
//! on bulks of 100 (an earlier form); a `UNION ALL` of the rows, which both spell alike, costs
//! MariaDB's server 1.4–1.8× Diesel's `VALUES` (`tools/scripts/mariadb_bulk_forms.py`); a check
//! of the mark costs a light round trip.
//!
//! The table is Diesel's (`Table::from_clause`), the columns and values each row's as the
//! derive writes it (`InsertRow`, `row_values.rs`); a `DEFAULT` for a `None`, or a model whose
//! row the derive does not write, is refused before anything is sent ([`NotRewritten`]), and
//! the caller tells the database apart with a query instead.
//!
//! With no mark, the same statement is Diesel's insert as Diesel writes it (`VALUES (…), (…)`),
//! written by seqgen so that it is prepared and kept too: the default generator's insert on a
//! connection that remembers its database, and a `Generator` of the caller's
//! (`insert/bounds.rs`).
//!
//! Prepared and kept, as Diesel keeps a statement of a fixed shape: one row, and a bulk of one
//! of the first [`KEPT_SIZES`] sizes seen for its table and row type in this process (at most
//! [`MAX_KEPT_ROWS`] rows). Diesel prepares its own bulk of a `Vec` at every call, since every
//! size would be one more statement on the server; so is a bulk of any other size here. A
//! connection then keeps at most [`KEPT_SIZES`] bulk statements per table and row type of each
//! form (checked, and not), far below MySQL's `max_prepared_stmt_count` (16,382 per server by
//! default) for any pool, and a steady bulk (an import in chunks of 500) costs one round trip
//! where Diesel's takes two.
//!
//! MySQL's `USE other` is not seen (as a pooled connection that remembers its database does not
//! see it: see "What can still produce a duplicate" in `guide::guarantees`): a prepared
//! statement keeps the `DATABASE()` it was prepared under.

#![cfg_attr(not(any(seqgen_pg, seqgen_mysql)), allow(dead_code, unused_imports))]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use diesel::query_builder::{AstPass, QueryFragment, QueryId};
use diesel::{QueryResult, RunQueryDsl};

use super::row_values::{columns_of, walk_columns, InsertRow, NotRewritten, RowValues};

/// The mark a session carries once seqgen identified its database (see
/// `Backend::mark_session`).
#[doc(hidden)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mark {
    pub(crate) value: Arc<str>,
}

/// An insert into the table `F` writes (Diesel's `T::FromClause`) of rows whose values are
/// `V`, inserting only on the database `mark` names (with no mark, Diesel's insert written
/// by seqgen, kept prepared as the module says); see the module.
#[doc(hidden)]
pub struct Asserted<F, V> {
    into: F,
    /// Each row's values (`InsertRow::Values`).
    rows: Vec<V>,
    mark: Option<Mark>,
    /// Its table and row type (their Rust type names), for [`keeps_prepared`].
    shape: &'static str,
    /// [`keeps_prepared`]'s answer, asked once: Diesel walks a statement several times.
    kept: std::cell::OnceCell<bool>,
}

impl<F, V> Asserted<F, V> {
    /// The insert of `rows` into `table`, inserting only on the database `mark` names (with
    /// none, Diesel's insert); the table and row type name its shape, for [`keeps_prepared`].
    pub(crate) fn of<'b, T, Row>(table: &T, rows: &'b [Row], mark: Option<Mark>) -> Self
    where
        T: diesel::Table<FromClause = F>,
        &'b Row: InsertRow<T, Values = V>,
    {
        Asserted {
            into: table.from_clause(),
            rows: rows.iter().map(InsertRow::row_values).collect(),
            mark,
            shape: std::any::type_name::<(T, Row)>(),
            kept: std::cell::OnceCell::new(),
        }
    }
}

/// Bulk sizes kept prepared per table and row type, process-wide: see the module.
pub(crate) const KEPT_SIZES: usize = 4;

/// Rows above which a bulk is never kept prepared: its statement's memory on the server grows
/// with its parameters.
pub(crate) const MAX_KEPT_ROWS: usize = 1000;

/// Whether an insert of `rows` rows of `shape` is kept prepared: one row always; a bulk of up
/// to [`MAX_KEPT_ROWS`] rows if its size is one of the first [`KEPT_SIZES`] sizes seen for
/// `shape`.
fn keeps_prepared(shape: &'static str, rows: usize) -> bool {
    static KEPT: Mutex<Option<HashMap<&'static str, Vec<usize>>>> = Mutex::new(None);
    if rows <= 1 {
        return true;
    }
    if rows > MAX_KEPT_ROWS {
        return false;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    let sizes = kept
        .get_or_insert_with(HashMap::new)
        .entry(shape)
        .or_default();
    if sizes.contains(&rows) {
        return true;
    }
    if sizes.len() < KEPT_SIZES {
        sizes.push(rows);
        return true;
    }
    false
}

/// Whether a checking insert of `rows` rows on `B` asks the session for its mark with a
/// statement of its own first ([`Backend::carries_mark`](super::Backend::carries_mark)), then
/// sends the insert without one: MySQL's bulk, which cannot check itself (module docs).
pub(crate) fn asks_first<B: super::Backend>(rows: usize) -> bool {
    !B::CHECKS_A_BULK && rows > 1
}

/// Why an insert takes the query instead ([`NotRewritten`]).
pub(crate) const NOT_CHECKED: &str = "this insert cannot check the database it reaches itself";

// Cached by its text, as Diesel caches what has no static id.
impl<F, V> QueryId for Asserted<F, V> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<F, V, Conn> RunQueryDsl<Conn> for Asserted<F, V> {}

impl<F, V> Asserted<F, V> {
    /// `INSERT INTO <table> (<columns>) `, then `rows` writes the rows and the check of the
    /// mark.
    pub(crate) fn walk<'b, DB>(
        &'b self,
        mut out: AstPass<'_, 'b, DB>,
        rows: impl FnOnce(&'b [V], Option<&'b str>, &mut AstPass<'_, 'b, DB>) -> QueryResult<()>,
    ) -> QueryResult<()>
    where
        DB: diesel::backend::Backend,
        F: QueryFragment<DB>,
        V: RowValues<DB>,
    {
        let columns = columns_of(&self.rows).ok_or_else(|| NotRewritten::error(NOT_CHECKED))?;
        // Any other bulk is prepared at every call, as Diesel's (see the module). Asked once
        // the insert is known to be written here, so that a refused one takes no size.
        if !*self
            .kept
            .get_or_init(|| keeps_prepared(self.shape, self.rows.len()))
        {
            out.unsafe_to_cache_prepared();
        }
        out.push_sql("INSERT INTO ");
        self.into.walk_ast(out.reborrow())?;
        out.push_sql(" ");
        walk_columns(&columns, &mut out)?;
        out.push_sql(" ");
        rows(&self.rows, self.mark.as_ref().map(|m| &*m.value), &mut out)
    }
}
