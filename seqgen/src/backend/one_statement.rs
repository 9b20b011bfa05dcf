//! The statement of a gapless insert that takes its numbers itself, on PostgreSQL: Diesel's
//! insert, built from its table and rows, with the ID column computed from a CTE that
//! advances the counter. `model/one_statement.rs` decides which inserts take it; this file is
//! the SQL.
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
//! and values each row's `ValuesClause` (`row_values.rs`), every value but the ID's written as
//! Diesel writes it. An insert of another shape (a `DEFAULT` for a `None`, an ID column that is
//! not its field's) is refused before anything is sent ([`NotRewritten`]).

// Only PostgreSQL sends the statement; elsewhere its type exists for `execute`'s one bound.
#![cfg_attr(not(seqgen_pg), allow(dead_code, unused_imports))]

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::BigInt;
use diesel::{QueryResult, RunQueryDsl};

use super::row_values::{columns_of, walk_columns, NotRewritten, RowValues};
use super::Counter;

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
    into: F,
    /// Each row's values (a `ValuesClause`).
    rows: Vec<V>,
    plan: Plan,
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

#[cfg(seqgen_pg)]
impl<F, V: RowValues<diesel::pg::Pg>> OneStatement<F, V> {
    /// The insert's columns, and where the ID column stands among them; refused unless the
    /// insert has one column per field of the struct, the ID field's column stands at its
    /// field's place, and no value is a `DEFAULT`.
    fn columns(&self) -> QueryResult<(Vec<&'static str>, usize)> {
        let columns = columns_of(&self.rows).ok_or_else(not_one_statement)?;
        let plan = &self.plan;
        let id = (columns.iter().position(|&name| name == plan.column))
            .filter(|&id| id == plan.index && columns.len() == plan.struct_fields)
            .ok_or_else(not_one_statement)?;
        Ok((columns, id))
    }
}

#[cfg(seqgen_pg)]
impl<F, V> QueryFragment<diesel::pg::Pg> for OneStatement<F, V>
where
    F: QueryFragment<diesel::pg::Pg>,
    V: RowValues<diesel::pg::Pg>,
{
    /// Prepared once per connection for one row. Diesel never caches a derived `Insertable`'s
    /// insert: a `None` prints `DEFAULT` instead of a parameter under the same type, so its
    /// values say they are unsafe to cache when walked. This statement has no `DEFAULT`
    /// (`row_values.rs` refuses one), walks the values without that mark, and is cached by its
    /// text (see `QueryId`), so the text is the statement. A bulk stays unprepared: each number
    /// of rows would be one more prepared statement. Diesel decides by walking the statement
    /// (this method is not forwarded through the reference it is given), so `walk_ast` says the
    /// same; this method is what seqgen calls to refuse an insert early.
    fn is_safe_to_cache_prepared(&self, _: &diesel::pg::Pg) -> QueryResult<bool> {
        self.columns()?; // refused here, before Diesel reports the query to instrumentation
        Ok(self.rows.len() == 1)
    }

    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        use crate::backend::statement::{walk_pieces, Text as _, UpsertReturningInTransaction};
        use diesel::sql_types::{BigInt, Text};

        let plan = &self.plan;
        let (columns, id) = self.columns()?;

        // A bulk stays unprepared (see `is_safe_to_cache_prepared`): Diesel asks the walk.
        if self.rows.len() > 1 {
            out.unsafe_to_cache_prepared();
        }
        out.push_sql("WITH seqgen_n AS (");
        let counter = Counter::new(plan.key, "", &plan.period);
        type Upsert = UpsertReturningInTransaction;
        walk_pieces(
            Upsert::PIECES,
            Upsert::ON_CHECKED_SESSION,
            counter,
            (&plan.count, &plan.limit, &plan.start),
            out.reborrow(),
        )?;
        out.push_sql("), seqgen_ins AS (INSERT INTO ");
        self.into.walk_ast(out.reborrow())?;
        out.push_sql(" ");
        walk_columns(&columns, &mut out)?;
        out.push_sql(" SELECT ");
        for column in 0..columns.len() {
            if column > 0 {
                out.push_sql(", ");
            }
            if column != id {
                out.push_sql(&format!("seqgen_v.c{column}"));
                continue;
            }
            // What `Spec::format` prints for a plain spec (`Spec::is_plain`).
            out.push_sql(if plan.numeric { "CAST(" } else { "(" });
            out.push_bind_param::<Text, str>(plan.prefix)?;
            out.push_sql(" || ");
            out.push_bind_param::<Text, str>(&plan.period)?;
            out.push_sql(" || lpad(seqgen_s.seq, GREATEST(CAST(");
            out.push_bind_param::<BigInt, i64>(&plan.pad)?;
            out.push_sql(" AS INTEGER), length(seqgen_s.seq)), '0')");
            out.push_sql(if plan.numeric { " AS BIGINT)" } else { ")" });
        }
        // Every value but the ID's, which the records do not have yet.
        out.push_sql(" FROM (VALUES ");
        for (index, row) in self.rows.iter().enumerate() {
            out.push_sql(if index == 0 { "(" } else { ", (" });
            for column in (0..columns.len()).filter(|&column| column != id) {
                row.walk_value(column, out.reborrow())?;
                out.push_sql(", ");
            }
            out.push_sql(&format!("{index})"));
        }
        out.push_sql(") AS seqgen_v(");
        for column in (0..columns.len()).filter(|&column| column != id) {
            out.push_sql(&format!("c{column}, "));
        }
        out.push_sql(
            "seqgen_row) CROSS JOIN seqgen_n CROSS JOIN LATERAL \
             (SELECT CAST(seqgen_n.current_value - ",
        );
        out.push_bind_param::<BigInt, i64>(&plan.count)?;
        out.push_sql(
            " + 1 + seqgen_v.seqgen_row AS TEXT) AS seq) AS seqgen_s) \
             SELECT current_value FROM seqgen_n",
        );
        Ok(())
    }
}

// Never run there (`Backend::ONE_STATEMENT_GAPLESS_INSERT`); implemented so that `execute`
// has one bound for every backend.
#[cfg(feature = "sqlite")]
impl<F, V> QueryFragment<diesel::sqlite::Sqlite> for OneStatement<F, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::sqlite::Sqlite>) -> QueryResult<()> {
        Err(not_one_statement())
    }
}

#[cfg(seqgen_mysql)]
impl<F, V> QueryFragment<diesel::mysql::Mysql> for OneStatement<F, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::mysql::Mysql>) -> QueryResult<()> {
        Err(not_one_statement())
    }
}
