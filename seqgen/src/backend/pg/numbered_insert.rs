//! The SQL of PostgreSQL's gapless insert that takes its numbers itself
//! (`backend/one_statement.rs`): Diesel's insert, with the ID column computed from a CTE that
//! advances the counter as a reservation inside the caller's transaction does.

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::QueryResult;

use crate::backend::one_statement::{not_one_statement, OneStatement};
use crate::backend::row_values::{columns_of, walk_columns, RowValues};
use crate::backend::Counter;

impl<F, V: RowValues<Pg>> OneStatement<F, V> {
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

impl<F, V> QueryFragment<Pg> for OneStatement<F, V>
where
    F: QueryFragment<Pg>,
    V: RowValues<Pg>,
{
    /// Prepared once per connection for one row. Diesel never caches a derived `Insertable`'s
    /// insert: a `None` prints `DEFAULT` instead of a parameter under the same type, so its
    /// values say they are unsafe to cache when walked. This statement has no `DEFAULT`
    /// (`row_values.rs` refuses one), walks the values without that mark, and is cached by its
    /// text (see `QueryId`), so the text is the statement. A bulk stays unprepared: each number
    /// of rows would be one more prepared statement. Diesel decides by walking the statement
    /// (this method is not forwarded through the reference it is given), so `walk_ast` says the
    /// same; this method is what seqgen calls to refuse an insert early.
    fn is_safe_to_cache_prepared(&self, _: &Pg) -> QueryResult<bool> {
        self.columns()?; // refused here, before Diesel reports the query to instrumentation
        Ok(self.rows.len() == 1)
    }

    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use crate::backend::upsert::walk_upsert;
        use diesel::sql_types::{BigInt, Text};

        let plan = &self.plan;
        let (columns, id) = self.columns()?;

        // A bulk stays unprepared (see `is_safe_to_cache_prepared`): Diesel asks the walk.
        if self.rows.len() > 1 {
            out.unsafe_to_cache_prepared();
        }
        out.push_sql("WITH seqgen_n AS (");
        let counter = Counter::new(plan.key, "", &plan.period);
        // As a reservation inside the caller's transaction (`UpsertReturningInTransaction`).
        let values = (&plan.count, &plan.limit, &plan.start);
        walk_upsert(counter, values, true, out.reborrow())?;
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
