//! The reservation of the backends with `RETURNING` (SQLite, PostgreSQL): one
//! [`UpsertReturning`], refused (no row) past the limit; and their creation of a missing row,
//! one [`CreateRow`]. MySQL's are in `mysql/` (InnoDB's locks need other forms). Each backend's
//! [`Backend::reserve`](super::Backend::reserve) and
//! [`Backend::create_row`](super::Backend::create_row) are [`reserve`] and [`create_row`].

use diesel::deserialize::FromSqlRow;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Text};
use diesel::{OptionalExtension, QueryResult};

use super::dialect::{DurableCommit, Greatest, IgnoringEnd, InsertIgnoring, OnCheckedSession};
use super::statement::{bind_counter, walk_at_least_start, walk_before_start, walk_where_key_row};
use super::statement::{Returns, Statement};
use super::Counter;
use crate::backend::Runner;
use diesel::backend::Backend;

/// [`Backend::reserve`](super::Backend::reserve): one [`Upsert`], of the form for inside the
/// caller's transaction or outside it.
pub(crate) async fn reserve<D: Runner>(
    db: &mut D,
    counter: Counter<'_>,
    count: i64,
    limit: i64,
    in_transaction: bool,
) -> QueryResult<Option<i64>>
where
    for<'a> Statement<'a, UpsertReturning>: QueryFragment<D::Backend>,
    for<'a> Statement<'a, UpsertReturningInTransaction>: QueryFragment<D::Backend>,
    i64: FromSqlRow<BigInt, D::Backend>,
{
    match in_transaction {
        false => {
            let upsert = Statement::<UpsertReturning>::new(counter, count).limited(limit);
            db.get_result(upsert).await
        }
        true => {
            let upsert =
                Statement::<UpsertReturningInTransaction>::new(counter, count).limited(limit);
            db.get_result(upsert).await
        }
    }
    .optional()
}

/// [`Backend::create_row`](super::Backend::create_row): one [`CreateRow`].
pub(crate) async fn create_row<D: Runner>(db: &mut D, counter: Counter<'_>) -> QueryResult<()>
where
    for<'a> Statement<'a, CreateRow>: QueryFragment<D::Backend>,
{
    db.execute(Statement::<CreateRow>::new(counter, 0))
        .await
        .map(drop)
}

/// Adds to the counter, creating the row at its key row's start (else the spec's) if it is
/// missing, and returns the new value (`INSERT … ON CONFLICT DO UPDATE … RETURNING`: SQLite,
/// PostgreSQL). A counter behind its own `start_value` (else the spec's) jumps forward to it.
/// When the counter is past the limit nothing is written and no row comes back: a refused
/// request touches nothing. The statement commits durably whatever the session's setting.
/// `IN_TRANSACTION`: the reservation runs inside the caller's transaction, where on PostgreSQL
/// it writes nothing and returns no row unless seqgen checked this session's timeline
/// (`reserve/timeline.rs`); each form is a type of its own, so each is prepared once.
pub(crate) struct Upsert<const IN_TRANSACTION: bool>;

/// [`Upsert`] outside the caller's transaction.
pub(crate) type UpsertReturning = Upsert<false>;

/// [`Upsert`] inside the caller's transaction.
pub(crate) type UpsertReturningInTransaction = Upsert<true>;

impl<const IN_TRANSACTION: bool> Returns for Upsert<IN_TRANSACTION> {
    type SqlType = BigInt;
}

impl<DB, const IN_TRANSACTION: bool> QueryFragment<DB> for Statement<'_, Upsert<IN_TRANSACTION>>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    Greatest: QueryFragment<DB>,
    DurableCommit: QueryFragment<DB>,
    OnCheckedSession: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let values = (&self.count, &self.limit, &self.counter.start);
        walk_upsert(self.counter, values, IN_TRANSACTION, out)
    }
}

/// The text of [`Upsert`] (`on_checked_session`: inside the caller's transaction) with these
/// values: also the first part of PostgreSQL's
/// one-statement gapless insert (`one_statement.rs`).
pub(crate) fn walk_upsert<'b, DB>(
    counter: Counter<'b>,
    (count, limit, start): (&'b i64, &'b i64, &'b i64),
    on_checked_session: bool,
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    Greatest: QueryFragment<DB>,
    DurableCommit: QueryFragment<DB>,
    OnCheckedSession: QueryFragment<DB>,
{
    out.push_sql("INSERT INTO db_key (key_name, scope, period, current_value) SELECT ");
    bind_counter(counter, &mut out)?;
    out.push_sql(", s.base + ");
    out.push_bind_param::<BigInt, i64>(count)?;
    out.push_sql(" FROM (SELECT ");
    walk_before_start("MAX(k.start_value)", start, &mut out)?;
    out.push_sql(" AS base FROM ");
    DurableCommit.walk_ast(out.reborrow())?;
    out.push_sql(" LEFT JOIN db_key k ON k.key_name = ");
    out.push_bind_param::<Text, str>(counter.key)?;
    out.push_sql(" AND k.scope = '' AND k.period = '') AS s WHERE s.base <= ");
    out.push_bind_param::<BigInt, i64>(limit)?;
    if on_checked_session {
        OnCheckedSession.walk_ast(out.reborrow())?;
    }
    out.push_sql(" ON CONFLICT (key_name, scope, period) DO UPDATE SET current_value = ");
    walk_at_least_start(
        "db_key.current_value",
        "db_key.start_value",
        start,
        &mut out,
    )?;
    out.push_sql(" + ");
    out.push_bind_param::<BigInt, i64>(count)?;
    out.push_sql(", updated_at = CURRENT_TIMESTAMP WHERE ");
    walk_at_least_start(
        "db_key.current_value",
        "db_key.start_value",
        start,
        &mut out,
    )?;
    out.push_sql(" <= ");
    out.push_bind_param::<BigInt, i64>(limit)?;
    if on_checked_session {
        OnCheckedSession.walk_ast(out.reborrow())?;
    }
    out.push_sql(" RETURNING current_value");
    Ok(())
}

/// Creates a counter row at its key row's `start_value - 1` (without one, the spec's start - 1),
/// unless it exists. (MySQL creates rows its own way: `mysql/statements.rs`.)
pub(crate) struct CreateRow;

impl Returns for CreateRow {
    type SqlType = BigInt;
}

impl<DB> QueryFragment<DB> for Statement<'_, CreateRow>
where
    DB: Backend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
    InsertIgnoring: QueryFragment<DB>,
    IgnoringEnd: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        InsertIgnoring.walk_ast(out.reborrow())?;
        out.push_sql(" db_key (key_name, scope, period, current_value) SELECT ");
        bind_counter(self.counter, &mut out)?;
        out.push_sql(", ");
        walk_before_start("MAX(start_value)", &self.counter.start, &mut out)?;
        out.push_sql(" FROM db_key");
        walk_where_key_row(self.counter.key, &mut out)?;
        IgnoringEnd.walk_ast(out.reborrow())
    }
}
