//! PostgreSQL's reservation in one statement: [`ReserveIdentified`].

use diesel::pg::Pg;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::sql_types::{BigInt, Nullable, Text, Untyped};
use diesel::{QueryResult, QueryableByName};

use crate::backend::dialect::{Durability, DurableCommit, Fingerprint, Timeline};

/// A reservation and everything [`identify`](crate::backend::SharedStatements::identify) reads, in one
/// statement: a CTE reads the database's fingerprint, durability and token and the key row
/// (its `batch_size`, which sizes the block, and its shape), a data-modifying CTE upserts the
/// counter as [`UpsertReturning`](crate::backend::upsert::UpsertReturning) does, and the main query
/// returns both. Nothing is written when the key row records another shape or the block
/// would pass the limit.
pub(super) struct ReserveIdentified<'a, 'r>(pub(super) &'r crate::backend::Request<'a>);

/// What [`ReserveIdentified`] returns, read by name: the database as
/// [`Found`](crate::backend::Found) has it, the block's size and its last number (none when
/// nothing was reserved).
#[derive(QueryableByName)]
pub(super) struct ReserveIdentifiedRow {
    #[diesel(sql_type = Text)]
    pub(super) fingerprint: String,
    #[diesel(sql_type = Text)]
    pub(super) durability: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) timeline: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) token: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) batch_size: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(super) shape: Option<String>,
    #[diesel(sql_type = BigInt)]
    pub(super) count: i64,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(super) last: Option<i64>,
}

impl QueryId for ReserveIdentified<'_, '_> {
    type QueryId = ReserveIdentified<'static, 'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ReserveIdentified<'_, '_> {
    type SqlType = Untyped;
}

impl QueryFragment<Pg> for ReserveIdentified<'_, '_> {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Pg>) -> QueryResult<()> {
        use crate::backend::statement::{walk_at_least_start, walk_before_start, walk_block_size};
        let r = self.0;
        // MATERIALIZED: `info` is read once, so the size added is the size returned.
        out.push_sql("WITH info AS MATERIALIZED (SELECT ");
        Fingerprint.walk_ast(out.reborrow())?;
        out.push_sql(" AS fingerprint, ");
        Durability.walk_ast(out.reborrow())?;
        out.push_sql(" AS durability, ");
        Timeline.walk_ast(out.reborrow())?;
        out.push_sql(
            " AS timeline, (SELECT t.current_value FROM db_key t \
             WHERE t.key_name = '' AND t.scope = '' AND t.period = '') AS token, \
             k.batch_size, k.shape, ",
        );
        walk_before_start("k.start_value", &r.counter.start, &mut out)?;
        out.push_sql(" AS base, ");
        walk_block_size(
            "k.batch_size",
            &r.need,
            &r.batch,
            &r.largest,
            out.reborrow(),
        )?;
        out.push_sql(
            " AS count FROM (SELECT 1 AS here) AS h LEFT JOIN db_key k \
             ON k.key_name = ",
        );
        out.push_bind_param::<Text, str>(r.counter.key)?;
        out.push_sql(
            " AND k.scope = '' AND k.period = ''), reserved AS (INSERT INTO db_key \
             (key_name, scope, period, current_value) SELECT ",
        );
        out.push_bind_param::<Text, str>(r.counter.key)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(r.counter.scope)?;
        out.push_sql(", ");
        out.push_bind_param::<Text, str>(r.counter.period)?;
        out.push_sql(", info.base + info.count FROM info, ");
        DurableCommit.walk_ast(out.reborrow())?;
        out.push_sql(" WHERE info.base <= ");
        out.push_bind_param::<BigInt, i64>(&r.largest)?;
        out.push_sql(" - info.count AND (info.shape IS NULL OR info.shape = ");
        out.push_bind_param::<Text, str>(r.shape)?;
        out.push_sql(") ON CONFLICT (key_name, scope, period) DO UPDATE SET current_value = ");
        let (current, start_value) = ("db_key.current_value", "db_key.start_value");
        walk_at_least_start(current, start_value, &r.counter.start, &mut out)?;
        out.push_sql(" + (SELECT count FROM info), updated_at = CURRENT_TIMESTAMP WHERE ");
        walk_at_least_start(current, start_value, &r.counter.start, &mut out)?;
        out.push_sql(" <= ");
        out.push_bind_param::<BigInt, i64>(&r.largest)?;
        out.push_sql(
            " - (SELECT count FROM info) RETURNING current_value) \
             SELECT info.fingerprint, info.durability, info.timeline, info.token, \
             info.batch_size, \
             info.shape, info.count, (SELECT current_value FROM reserved) AS last FROM info",
        );
        Ok(())
    }
}
