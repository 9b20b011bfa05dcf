//! The statement of a gapless insert that takes its numbers itself, on PostgreSQL: Diesel's
//! insert, built from its table and rows, with the ID column computed from a CTE that
//! advances the counter. `model/numbering.rs` decides which inserts take it; this file is
//! the statement's type, `pg/numbered_insert.rs` its SQL (the other backends refuse it, in
//! their files).
//!
//! ```sql
//! WITH seqgen_n AS (INSERT INTO db_key … ON CONFLICT … DO UPDATE … WHERE … AND
//!     current_setting('seqgen.timeline', true) = /* the server's timeline */ …
//!     RETURNING current_value),
//! seqgen_ins AS (INSERT INTO "invoices" ("id", "amount")
//!     SELECT $prefix || $period || lpad(seq, GREATEST($pad, length(seq)), '0'), seqgen_v.c1
//!     FROM (VALUES ($4, 0), ($5, 1)) AS seqgen_v(c1, seqgen_row)
//!     CROSS JOIN seqgen_n CROSS JOIN LATERAL (SELECT CAST(current_value - $count + 1
//!         + seqgen_row AS TEXT) AS seq) AS seqgen_s)
//! SELECT current_value FROM seqgen_n
//! ```
//!
//! The user's `Insertable` stays Diesel's: the table is its `Table::from_clause`, the columns
//! and values each row's as the derive writes it (`InsertRow`, `row_values.rs`), every value
//! but the ID's bound as Diesel binds it. An insert of another shape (a `DEFAULT` for a `None`,
//! an ID column that is not its field's, a model whose row the derive does not write) is
//! refused before anything is sent ([`NotRewritten`]).

// Only PostgreSQL sends the statement; elsewhere its type exists for `execute`'s one bound.
#![cfg_attr(not(seqgen_pg), allow(dead_code, unused_imports))]

use diesel::query_builder::{Query, QueryId};
use diesel::sql_types::BigInt;
use diesel::RunQueryDsl;

use super::row_values::NotRewritten;

/// What the statement needs besides Diesel's insert: the counter, the block, and how IDs
/// print. The spec's parts are `'static`: the derive keeps its specs for the program's life.
#[derive(Debug)]
// `pub` in a crate-private module: `insert::Insert`'s hidden method takes it, and no one
// outside can name it.
pub struct Plan {
    pub(crate) key: &'static str,
    pub(crate) period: String,
    /// How many numbers (one per row).
    pub(crate) count: i64,
    /// The largest value the counter may have before `count` more (see `Backend::reserve`).
    pub(crate) limit: i64,
    /// The spec's first number of a period ([`Counter::start`]).
    pub(crate) start: i64,
    pub(crate) prefix: &'static str,
    pub(crate) pad: i64,
    /// The ID column, as Diesel names it (unquoted), and where its field stands among the
    /// struct's `struct_fields` fields: Diesel's derived `Insertable` writes one column per
    /// field, in that order, so the column of that name must stand there too. A table whose
    /// `#[sql_name]` differs from the field's name, or an `embed`ded or skipped field, does
    /// not match and takes the usual path: the name alone could be another field's column.
    pub(crate) column: &'static str,
    pub(crate) index: usize,
    pub(crate) struct_fields: usize,
    /// Whether the column takes the `i64` form of the ID.
    pub(crate) numeric: bool,
}

/// An insert into the table `F` writes (Diesel's `T::FromClause`) of rows whose values are
/// `V`, with its ID column computed by the statement; see the module.
#[doc(hidden)]
pub struct OneStatement<F, V> {
    pub(crate) into: F,
    /// Each row's values (`InsertRow::Values`).
    pub(crate) rows: Vec<V>,
    pub(crate) plan: Plan,
}

impl<F, V> OneStatement<F, V> {
    pub(crate) fn new(into: F, rows: Vec<V>, plan: Plan) -> Self {
        OneStatement { into, rows, plan }
    }
}

/// Why a gapless insert takes the usual path ([`NotRewritten`]).
const NOT_ONE_STATEMENT: &str = "this insert cannot take its gapless IDs in one statement";

/// [`NotRewritten`] for a gapless insert.
pub(crate) fn not_one_statement() -> diesel::result::Error {
    NotRewritten::error(NOT_ONE_STATEMENT)
}

// The SQL depends on which column is the ID, which the insert's type does not tell (two
// models may insert the same column types into the same table): Diesel caches the prepared
// statement by its text instead.
impl<F, V> QueryId for OneStatement<F, V> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<F, V> Query for OneStatement<F, V> {
    type SqlType = BigInt;
}

impl<F, V, Conn> RunQueryDsl<Conn> for OneStatement<F, V> {}
