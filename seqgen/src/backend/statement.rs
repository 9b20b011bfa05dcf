//! seqgen's hand-written statements as Diesel queries whose prepared statements are cached.
//!
//! Diesel caches neither `sql_query` nor `ON CONFLICT DO UPDATE`; an uncached statement costs
//! PostgreSQL and MySQL an extra round trip to prepare it, on every reservation. Each statement
//! here is a [`Statement`] of a marker type of its own, which is what lets Diesel cache it
//! safely, and one `QueryFragment` impl that writes it: its SQL is read there, with what the
//! databases write differently as the fragments of `dialect.rs`, each named in the impl's
//! bounds. (MySQL's own statements are in `mysql/statements.rs`.)

use std::marker::PhantomData;

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Nullable, Text, Untyped};
use diesel::QueryableByName;
use diesel::{QueryResult, RunQueryDsl};

use super::dialect::{Durability, Fingerprint, Greatest, IgnoringEnd, InsertIgnoring, Timeline};
use diesel::backend::Backend;

use super::Counter;

/// The type of the rows a statement's marker returns.
pub(crate) trait Returns: 'static {
    type SqlType;
}

/// One run of the statement marked `S`, with its values: a counter, a count, a limit (the
/// largest value the counter may start from: the spec's capacity, or `i64::MAX`, minus the
/// count, so the statement can neither pass the capacity nor overflow) and the counter's
/// [start](Counter::start).
#[derive(Debug)]
pub(crate) struct Statement<'a, S> {
    pub(crate) counter: Counter<'a>,
    pub(crate) count: i64,
    pub(crate) limit: i64,
    text: PhantomData<S>,
}

impl<'a, S> Statement<'a, S> {
    pub(crate) fn new(counter: Counter<'a>, count: i64) -> Self {
        Statement {
            counter,
            count,
            limit: i64::MAX,
            text: PhantomData,
        }
    }

    /// With a limit.
    pub(crate) fn limited(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }

    #[cfg_attr(not(seqgen_mysql), allow(dead_code))] // MySQL's own statements
    pub(crate) fn counter(&self) -> &Counter<'a> {
        &self.counter
    }

    #[cfg_attr(not(seqgen_mysql), allow(dead_code))]
    pub(crate) fn count(&self) -> &i64 {
        &self.count
    }

    #[cfg_attr(not(seqgen_mysql), allow(dead_code))]
    pub(crate) fn limit(&self) -> &i64 {
        &self.limit
    }
}

/// `counter`'s key, scope and period, bound in that order with `, ` between them.
pub(crate) fn bind_counter<'b, DB>(
    counter: Counter<'b>,
    out: &mut AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    out.push_bind_param::<Text, str>(counter.key)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, str>(counter.scope)?;
    out.push_sql(", ");
    out.push_bind_param::<Text, str>(counter.period)
}

/// ` WHERE` the row is `counter`'s.
pub(crate) fn walk_where_counter<'b, DB>(
    counter: Counter<'b>,
    out: &mut AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    out.push_sql(" WHERE key_name = ");
    out.push_bind_param::<Text, str>(counter.key)?;
    out.push_sql(" AND scope = ");
    out.push_bind_param::<Text, str>(counter.scope)?;
    out.push_sql(" AND period = ");
    out.push_bind_param::<Text, str>(counter.period)
}

/// ` WHERE` the row is `key`'s key row (scope and period ''), which holds its settings.
pub(crate) fn walk_where_key_row<'b, DB>(
    key: &'b str,
    out: &mut AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    out.push_sql(" WHERE key_name = ");
    out.push_bind_param::<Text, str>(key)?;
    out.push_sql(" AND scope = '' AND period = ''");
    Ok(())
}

impl<S: Returns> QueryId for Statement<'_, S> {
    type QueryId = S;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<S: Returns> Query for Statement<'_, S> {
    type SqlType = S::SqlType;
}

impl<S, Conn> RunQueryDsl<Conn> for Statement<'_, S> {}

/// The size of a block as [`block_size`](crate::batch::block_size) gives it, in SQL: `need`,
/// or if that is more the key row's `batch_size` (`column`) where an operator set one, else
/// the generator's `batch`; at most `largest`. One text for every statement that sizes a
/// block on the server (PostgreSQL's reservation, MySQL's check of a known key's).
#[cfg(any(seqgen_pg, seqgen_mysql))]
pub(crate) fn walk_block_size<'b, DB>(
    column: &'static str,
    need: &'b i64,
    batch: &'b i64,
    largest: &'b i64,
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    i64: ToSql<BigInt, DB>,
{
    out.push_sql("LEAST(GREATEST(");
    out.push_bind_param::<BigInt, i64>(need)?;
    out.push_sql(", CASE WHEN ");
    out.push_sql(column);
    out.push_sql(" > 0 THEN ");
    out.push_sql(column);
    out.push_sql(" ELSE ");
    out.push_bind_param::<BigInt, i64>(batch)?;
    out.push_sql(" END), ");
    out.push_bind_param::<BigInt, i64>(largest)?;
    out.push_sql(")");
    Ok(())
}

/// The start rule, written once: the value a counter holds before its first number,
/// `COALESCE(start_value, start) - 1`, where `start_value` is an expression of the key row's
/// `start_value` (an operator's, or the one the spec recorded) and `start` the spec's start,
/// bound.
pub(crate) fn walk_before_start<'b, DB>(
    start_value: &'static str,
    start: &'b i64,
    out: &mut AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    i64: ToSql<BigInt, DB>,
{
    out.push_sql("COALESCE(");
    out.push_sql(start_value);
    out.push_sql(", ");
    out.push_bind_param::<BigInt, i64>(start)?;
    out.push_sql(") - 1");
    Ok(())
}

/// A row's counter (`current`), or the value before its start ([`walk_before_start`]) where it
/// is behind it: a counter behind its start jumps forward to it.
pub(crate) fn walk_at_least_start<'b, DB>(
    current: &'static str,
    start_value: &'static str,
    start: &'b i64,
    out: &mut AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    i64: ToSql<BigInt, DB>,
    Greatest: QueryFragment<DB>,
{
    Greatest.walk_ast(out.reborrow())?;
    out.push_sql("(");
    out.push_sql(current);
    out.push_sql(", ");
    walk_before_start(start_value, start, out)?;
    out.push_sql(")");
    Ok(())
}

/// What a reservation needs to know first, in one round trip: which database this is (its
/// fingerprint and the token row), whether the server commits durably, and the key's row
/// (batch override and recorded shape). One row per existing row of the two, or one row of
/// NULLs beside the fingerprint when neither exists.
pub(crate) struct Identify;

impl Returns for Identify {
    type SqlType = Untyped;
}

/// A row of [`Identify`], read by its columns' names.
#[derive(QueryableByName)]
pub(crate) struct IdentifyRow {
    #[diesel(sql_type = Text)]
    pub(crate) fingerprint: String,
    #[diesel(sql_type = Text)]
    pub(crate) durability: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub(crate) timeline: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(crate) key_name: Option<String>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) current_value: Option<i64>,
    #[diesel(sql_type = Nullable<BigInt>)]
    pub(crate) batch_size: Option<i64>,
    #[diesel(sql_type = Nullable<Text>)]
    pub(crate) shape: Option<String>,
}

impl<DB> QueryFragment<DB> for Statement<'_, Identify>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    Fingerprint: QueryFragment<DB>,
    Durability: QueryFragment<DB>,
    Timeline: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT ");
        Fingerprint.walk_ast(out.reborrow())?;
        out.push_sql(" AS fingerprint, ");
        Durability.walk_ast(out.reborrow())?;
        out.push_sql(" AS durability, ");
        Timeline.walk_ast(out.reborrow())?;
        out.push_sql(
            " AS timeline, k.key_name AS key_name, k.current_value AS current_value, \
             k.batch_size AS batch_size, k.shape AS shape \
             FROM (SELECT 1 AS here) AS h LEFT JOIN db_key k \
             ON k.scope = '' AND k.period = '' AND k.key_name IN ('', ",
        );
        out.push_bind_param::<Text, str>(self.counter.key)?;
        out.push_sql(")");
        Ok(())
    }
}

/// Stores the database's token (the count) in the reserved row, unless it has one.
pub(crate) struct CreateToken;

impl Returns for CreateToken {
    type SqlType = BigInt;
}

impl<DB> QueryFragment<DB> for Statement<'_, CreateToken>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    InsertIgnoring: QueryFragment<DB>,
    IgnoringEnd: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        InsertIgnoring.walk_ast(out.reborrow())?;
        out.push_sql(" db_key (key_name, scope, period, current_value) VALUES (");
        bind_counter(self.counter, &mut out)?;
        out.push_sql(", ");
        out.push_bind_param::<BigInt, i64>(&self.count)?;
        out.push_sql(")");
        IgnoringEnd.walk_ast(out.reborrow())
    }
}

/// Locks an existing counter row without waiting (PostgreSQL, MySQL): no row when it is
/// missing, an error when another transaction holds it.
#[cfg(any(seqgen_pg, seqgen_mysql))]
pub(crate) struct LockNowait;

#[cfg(any(seqgen_pg, seqgen_mysql))]
impl Returns for LockNowait {
    type SqlType = BigInt;
}

#[cfg(any(seqgen_pg, seqgen_mysql))]
impl<DB> QueryFragment<DB> for Statement<'_, LockNowait>
where
    DB: Backend,
    str: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT current_value FROM db_key");
        walk_where_counter(self.counter, &mut out)?;
        out.push_sql(" FOR UPDATE NOWAIT");
        Ok(())
    }
}
