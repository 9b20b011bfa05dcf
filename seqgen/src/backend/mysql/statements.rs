//! MySQL's own statement texts (see the module above): the reservation by `UPDATE` and
//! `LAST_INSERT_ID`, and the creation of a row without gap locks.

use diesel::mysql::Mysql;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable, Text, Unsigned, Untyped};

use crate::backend::dialect::{Durability, Fingerprint};
use crate::backend::statement::{
    bind_counter, walk_at_least_start, walk_before_start, walk_where_counter, walk_where_key_row,
    Returns, Statement,
};
use crate::backend::Counter;

/// Adds to an existing counter and remembers the new value as `LAST_INSERT_ID()`. A counter
/// behind its own `start_value` (else the spec's start) jumps forward to it; a counter past
/// the limit is left alone.
pub(super) struct Bump;

impl Returns for Bump {
    type SqlType = BigInt;
}

impl QueryFragment<Mysql> for Statement<'_, Bump> {
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        walk_bump(self.counter(), self.count(), self.limit(), out)
    }
}

/// [`Bump`] inside the caller's transaction, where it changes nothing unless MariaDB still holds
/// that transaction (`@@in_transaction`; MySQL reads the condition as a comment). A Galera
/// node can roll a transaction back between two statements and let the client hear nothing of
/// it (the abort is reported to a `COM_STMT_CLOSE`, which has no reply: Diesel closes every
/// statement it does not cache); the statements that follow would then each commit alone,
/// the counter's new value apart from the rows given its numbers.
pub(super) struct BumpHeld;

impl Returns for BumpHeld {
    type SqlType = BigInt;
}

impl QueryFragment<Mysql> for Statement<'_, BumpHeld> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        walk_bump(self.counter(), self.count(), self.limit(), out.reborrow())?;
        out.push_sql(" /*M! AND @@in_transaction = 1 */");
        Ok(())
    }
}

/// The text of [`Bump`]: also the start of [`BumpHeld`] and [`BumpKnownKey`].
fn walk_bump<'b>(
    counter: &'b Counter<'_>,
    count: &'b i64,
    limit: &'b i64,
    mut out: AstPass<'_, 'b, Mysql>,
) -> QueryResult<()> {
    out.push_sql("UPDATE db_key SET current_value = LAST_INSERT_ID(");
    walk_at_least_start("current_value", "start_value", &counter.start, &mut out)?;
    out.push_sql(" + ");
    out.push_bind_param::<BigInt, i64>(count)?;
    out.push_sql("), updated_at = CURRENT_TIMESTAMP(6)");
    walk_where_counter(*counter, &mut out)?;
    out.push_sql(" AND ");
    walk_at_least_start("current_value", "start_value", &counter.start, &mut out)?;
    out.push_sql(" <= ");
    out.push_bind_param::<BigInt, i64>(limit)
}

/// [`Bump`] for an undated, unscoped key whose row is as the caller expects: that row is both
/// the counter and the key's settings, so the statement checks on the row it updates that it
/// records the caller's shape and that the block's size the caller worked out from the
/// `batch_size` it last saw is the one the row gives now (its `batch_size`, else the
/// generator's batch). A row that fails either (or is missing, or past the limit) is left
/// alone, and the caller reads the key's row and reserves with [`Bump`] instead.
///
/// A dated or scoped counter has its settings on another row, and joining `db_key` to itself
/// makes MariaDB's multi-table `UPDATE` go through a temporary table: measured, that one
/// statement took longer than the three it would replace, so such counters keep the three.
pub(super) struct BumpKnownKey<'a, 'r> {
    pub(super) request: &'r crate::backend::Request<'a>,
    pub(super) count: i64,
    pub(super) limit: i64,
}

impl QueryId for BumpKnownKey<'_, '_> {
    type QueryId = BumpKnownKey<'static, 'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl QueryFragment<Mysql> for BumpKnownKey<'_, '_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        use crate::backend::statement::walk_block_size;
        let r = self.request;
        walk_bump(&r.counter, &self.count, &self.limit, out.reborrow())?;
        // `shape` compares byte for byte: the table's collation is `utf8mb4_bin`.
        out.push_sql(" AND shape = ");
        out.push_bind_param::<Text, str>(r.shape)?;
        out.push_sql(" AND ");
        walk_block_size("batch_size", &r.need, &r.batch, &r.largest, out.reborrow())?;
        out.push_sql(" = ");
        out.push_bind_param::<BigInt, i64>(&self.count)?;
        Ok(())
    }
}

/// After [`BumpKnownKey`], on the same connection: the new value and what
/// [`identify`](crate::backend::SharedStatements::identify) reads of the database (fingerprint, durability,
/// token) and the key row's `batch_size`, for the next reservation to expect (the block just
/// reserved was checked against it in the statement). The token row, once created, never
/// changes.
pub(super) struct ReadBack;

impl Returns for ReadBack {
    type SqlType = Untyped;
}

/// A row of [`ReadBack`], read by its columns' names.
#[derive(QueryableByName)]
pub(super) struct ReadBackRow {
    #[diesel(sql_type = Unsigned<BigInt>)]
    pub(super) last: u64,
    #[diesel(sql_type = Text)]
    pub(super) fingerprint: String,
    #[diesel(sql_type = Text)]
    pub(super) durability: String,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) token: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) batch_size: Option<i64>,
}

impl QueryFragment<Mysql> for Statement<'_, ReadBack> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("SELECT LAST_INSERT_ID() AS last, ");
        Fingerprint.walk_ast(out.reborrow())?;
        out.push_sql(" AS fingerprint, ");
        Durability.walk_ast(out.reborrow())?;
        out.push_sql(
            " AS durability, (SELECT t.current_value FROM db_key t \
             WHERE t.key_name = '' AND t.scope = '' AND t.period = '') AS token, \
             (SELECT k.batch_size FROM db_key k WHERE k.key_name = ",
        );
        out.push_bind_param::<Text, str>(self.counter().key)?;
        out.push_sql(" AND k.scope = '' AND k.period = '') AS batch_size");
        Ok(())
    }
}

/// A new counter row's start: its key row's `start_value - 1` (else the spec's start - 1), read with a
/// lock once the key row exists (a plain read would see a transaction's old snapshot).
pub(super) struct StartOfRow;

impl Returns for StartOfRow {
    type SqlType = BigInt;
}

impl QueryFragment<Mysql> for Statement<'_, StartOfRow> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        walk_before_start("MAX(start_value)", &self.counter().start, &mut out)?;
        out.push_sql(" FROM db_key");
        walk_where_key_row(self.counter().key, &mut out)?;
        out.push_sql(" FOR UPDATE");
        Ok(())
    }
}

/// Creates a counter row at the value given ([`StartOfRow`]), unless it exists. Not
/// `INSERT IGNORE`, which locks an existing row shared: two transactions that both hold it
/// shared deadlock when each then updates it. `ON DUPLICATE KEY UPDATE` locks an existing
/// row exclusively and a new one by its record alone, so creations never wait on each other
/// and the update after needs no lock it does not hold. (The no-op update fires the
/// `db_key_never_back` trigger, which lets an unchanged counter pass.)
pub(super) struct CreateRowAt;

impl Returns for CreateRowAt {
    type SqlType = BigInt;
}

impl QueryFragment<Mysql> for Statement<'_, CreateRowAt> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("INSERT INTO db_key (key_name, scope, period, current_value) VALUES (");
        bind_counter(*self.counter(), &mut out)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(self.count())?;
        out.push_sql(") ON DUPLICATE KEY UPDATE key_name = key_name");
        Ok(())
    }
}

// Never run there (`Backend::ONE_STATEMENT_GAPLESS_INSERT`); implemented so that `execute`
// has one bound for every backend.
impl<F, V> QueryFragment<Mysql> for crate::backend::one_statement::OneStatement<F, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        Err(crate::backend::one_statement::not_one_statement())
    }
}

/// Whether the session carries a marker (`Backend::carries_mark`): a statement of its own type,
/// so that it is prepared once per connection and costs one round trip.
pub(super) struct CarriesMark<'a>(pub(super) &'a str);

impl QueryId for CarriesMark<'_> {
    type QueryId = CarriesMark<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for CarriesMark<'_> {
    type SqlType = diesel::sql_types::Bool;
}

impl QueryFragment<Mysql> for CarriesMark<'_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        out.push_sql("SELECT COALESCE(@seqgen_identity = ");
        out.push_bind_param::<Text, str>(self.0)?;
        out.push_sql(", FALSE)");
        Ok(())
    }
}

// The checking insert (`asserted.rs`): Diesel's insert; on a guess, of one row selected only on a
// marked session (a bulk checks the mark with a statement of its own: `Backend::carries_mark`).
impl<F, V> QueryFragment<Mysql> for crate::backend::asserted::Asserted<F, V>
where
    F: QueryFragment<Mysql>,
    V: crate::backend::row_values::RowValues<Mysql>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, Mysql>) -> QueryResult<()> {
        use crate::backend::asserted::NOT_CHECKED;
        use crate::backend::row_values::NotRewritten;
        self.walk(out, |rows, mark, out| match (mark, rows) {
            (None, rows) => {
                out.push_sql("VALUES ");
                for (index, row) in rows.iter().enumerate() {
                    out.push_sql(if index == 0 { "(" } else { ", (" });
                    row.walk_values(out.reborrow())?;
                    out.push_sql(")");
                }
                Ok(())
            }
            (Some(mark), [row]) => {
                out.push_sql("SELECT ");
                row.walk_values(out.reborrow())?;
                out.push_sql(" FROM DUAL WHERE @seqgen_identity = ");
                out.push_bind_param::<Text, str>(mark)
            }
            (Some(_), _) => Err(NotRewritten::error(NOT_CHECKED)),
        })
    }
}
