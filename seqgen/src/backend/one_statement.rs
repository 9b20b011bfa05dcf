//! The statement of a gapless insert that takes its numbers itself, on PostgreSQL: Diesel's
//! insert, rendered and parsed, rewritten with the ID column computed from a CTE that
//! advances the counter. `model/one_statement.rs` decides which inserts take it; this file is
//! the SQL.
//!
//! ```sql
//! /* the insert as Diesel writes it: only its bind parameters $1.. are used */
//! WITH seqgen_n AS (INSERT INTO db_key … ON CONFLICT … DO UPDATE … WHERE … AND
//!     current_setting('seqgen.timeline', true) = /* the server's timeline */ …
//!     RETURNING current_value),
//! seqgen_ins AS (INSERT INTO "invoices" ("id", "amount")
//!     SELECT $prefix || $period || lpad(seq, GREATEST($pad, length(seq)), '0'), seqgen_v.c1
//!     FROM (VALUES ($1, $2, 0), ($3, $4, 1)) AS seqgen_v(c0, c1, seqgen_row)
//!     CROSS JOIN seqgen_n CROSS JOIN LATERAL (SELECT CAST(current_value - $count + 1
//!         + seqgen_row AS TEXT) AS seq) AS seqgen_s)
//! SELECT current_value FROM seqgen_n
//! ```
//!
//! The user's `Insertable` stays Diesel's. Its bind parameters are registered by walking
//! Diesel's insert inside an SQL comment (Diesel's `AstPass` offers no way to collect binds
//! without writing SQL), and the rewritten copy refers to them by number. Anything but the
//! plain shape Diesel writes for `insert_into(t).values(…)` (`DEFAULT` for a `None`, an
//! expression) is refused before anything is sent ([`NotRewritten`]).

// Only PostgreSQL renders the statement; elsewhere its type exists for `execute`'s one bound.
#![cfg_attr(not(seqgen_pg), allow(dead_code, unused_imports))]

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::BigInt;
use diesel::{QueryResult, RunQueryDsl};

use super::rendered::{Dialect, NotRewritten, Rendered, RenderedOnce};
use super::row_values::{Naming, RowValues};
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

/// Diesel's insert `S` (rendered for its table, columns and bind parameters) of rows whose
/// values are `V`, with its ID column computed by the statement; see the module.
#[doc(hidden)]
pub struct OneStatement<S, V> {
    insert: S,
    /// Each row's values (a `ValuesClause`), walked for their bind parameters.
    rows: Vec<V>,
    plan: Plan,
    /// Diesel's insert as rendered and parsed, once (the statement is walked several times);
    /// `None` when it is not of the plain shape.
    rendered: RenderedOnce,
}

impl<S, V> OneStatement<S, V> {
    pub(crate) fn new(insert: S, rows: Vec<V>, plan: Plan) -> Self {
        OneStatement {
            insert,
            rows,
            plan,
            rendered: RenderedOnce::default(),
        }
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
impl<S, V> QueryId for OneStatement<S, V> {
    type QueryId = ();
    const HAS_STATIC_QUERY_ID: bool = false;
}

impl<S, V> Query for OneStatement<S, V> {
    type SqlType = BigInt;
}

impl<S, V, Conn> RunQueryDsl<Conn> for OneStatement<S, V> {}

#[cfg(seqgen_pg)]
impl<S: QueryFragment<diesel::pg::Pg>, V> OneStatement<S, V> {
    /// Diesel's insert, rendered and parsed once.
    fn rendered(&self) -> QueryResult<&Rendered> {
        (self
            .rendered
            .of::<diesel::pg::Pg, _>(&self.insert, Dialect::Postgres))
        .ok_or_else(not_one_statement)
    }

    /// Where the ID column stands in Diesel's insert; refused unless the insert has one
    /// column per field of the struct and the ID field's column stands at its field's place.
    fn id_column(&self) -> QueryResult<usize> {
        let (insert, plan) = (self.rendered()?, &self.plan);
        insert
            .position(plan.column)
            .filter(|&id| id == plan.index && insert.columns.len() == plan.struct_fields)
            .ok_or_else(not_one_statement)
    }
}

#[cfg(seqgen_pg)]
impl<S, V> QueryFragment<diesel::pg::Pg> for OneStatement<S, V>
where
    S: QueryFragment<diesel::pg::Pg>,
    V: RowValues<diesel::pg::Pg>,
{
    /// Prepared once per connection for one row. Diesel never caches a derived `Insertable`'s
    /// insert: a `None` prints `DEFAULT` instead of a parameter under the same type, so its
    /// values say they are unsafe to cache when walked. This statement has no `DEFAULT`
    /// (`Rendered::parse` refuses one), walks the values without that mark (`row_values.rs`),
    /// and is cached by its text (see `QueryId`), so the text is the statement. A bulk stays
    /// unprepared: each number of rows would be one more prepared statement. Diesel decides by
    /// walking the statement (this method is not forwarded through the reference it is given),
    /// so `walk_ast` says the same; this method is what seqgen calls to refuse an insert early.
    fn is_safe_to_cache_prepared(&self, _: &diesel::pg::Pg) -> QueryResult<bool> {
        self.id_column()?; // refused here, before Diesel reports the query to instrumentation
        Ok(self.rendered()?.rows.len() == 1)
    }

    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, diesel::pg::Pg>) -> QueryResult<()> {
        use crate::backend::statement::{walk_pieces, Text as _, UpsertReturningInTransaction};
        use diesel::sql_types::{BigInt, Text};

        let insert = self.rendered()?;
        let plan = &self.plan;
        let id = self.id_column()?;

        // A bulk stays unprepared (see `is_safe_to_cache_prepared`): Diesel asks the walk.
        if self.rows.len() > 1 {
            out.unsafe_to_cache_prepared();
        }
        // First, so that their parameters are $1.. as in the rendered copy.
        out.push_sql("/* ");
        for row in &self.rows {
            row.walk_values(out.reborrow(), &mut Naming::Bare)?;
            out.push_sql(" ");
        }
        out.push_sql("*/ WITH seqgen_n AS (");
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
        out.push_sql(&insert.table);
        out.push_sql(" (");
        out.push_sql(&insert.columns.join(", "));
        out.push_sql(") SELECT ");
        for column in 0..insert.columns.len() {
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
        out.push_sql(" FROM (VALUES ");
        for (index, row) in insert.rows.iter().enumerate() {
            if index > 0 {
                out.push_sql(", ");
            }
            out.push_sql(&format!("({}, {index})", row.join(", ")));
        }
        out.push_sql(") AS seqgen_v(");
        for column in 0..insert.columns.len() {
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
impl<S, V> QueryFragment<diesel::sqlite::Sqlite> for OneStatement<S, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::sqlite::Sqlite>) -> QueryResult<()> {
        Err(not_one_statement())
    }
}

#[cfg(seqgen_mysql)]
impl<S, V> QueryFragment<diesel::mysql::Mysql> for OneStatement<S, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, diesel::mysql::Mysql>) -> QueryResult<()> {
        Err(not_one_statement())
    }
}
