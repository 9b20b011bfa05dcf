//! seqgen's hand-written statements as Diesel queries whose prepared statements are cached.
//!
//! Diesel caches neither `sql_query` nor `ON CONFLICT DO UPDATE`; an uncached statement costs
//! PostgreSQL and MySQL an extra round trip to prepare it, on every reservation. Each statement
//! here is a type of its own (its [`Text`] marker), which is what lets Diesel cache it safely.

use std::marker::PhantomData;

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Nullable, Text as SqlText};
use diesel::{QueryResult, RunQueryDsl};

/// A piece of a statement: SQL text, or where a value is bound.
#[derive(Debug, Clone, Copy)]
// MySQL alone (no RETURNING) builds its reservation from fewer pieces.
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))]
pub(crate) enum Piece {
    Sql(&'static str),
    /// The backend's two-argument maximum: `GREATEST`, or `MAX` on SQLite.
    Greatest,
    /// The start of an insert that skips rows already there (`INSERT IGNORE INTO`, ...).
    InsertIgnoring,
    /// Its end, where the backend says it there (`ON CONFLICT DO NOTHING` on PostgreSQL).
    InsertIgnoringEnd,
    /// An expression naming the database the connection talks to (see `identity.rs`).
    Fingerprint,
    /// An expression giving the server's durability setting, as the server shows it.
    Durability,
    /// An expression giving the server's timeline, in hex (`Backend::TIMELINE`).
    Timeline,
    /// ` AND` a condition that seqgen checked this session's timeline
    /// (`Backend::CHECKED_TIMELINE`), in a statement that asks for it ([`Text::ON_CHECKED_SESSION`])
    /// on a backend with timelines; nothing otherwise.
    OnCheckedSession,
    /// A one-row derived table whose evaluation makes the statement's transaction commit
    /// durably (PostgreSQL: `synchronous_commit = on` for that transaction alone).
    DurableCommit,
    Key,
    Scope,
    Period,
    Count,
    /// The spec's start ([`Counter::start`](super::Counter::start)): the first number of a
    /// period whose key row has no `start_value`.
    Start,
    /// The largest counter value a reservation may start from: the spec's capacity (or
    /// `i64::MAX`) minus the count, so the statement can neither pass the capacity nor
    /// overflow.
    Limit,
}

/// The text of one statement, and the type of the rows it returns.
pub(crate) trait Text: 'static {
    const PIECES: &'static [Piece];
    type SqlType;
    /// Whether its [`Piece::OnCheckedSession`] conditions are written.
    const ON_CHECKED_SESSION: bool = false;
}

/// One run of statement `S`, with its values.
#[derive(Debug)]
pub(crate) struct Statement<'a, S> {
    counter: super::Counter<'a>,
    count: i64,
    limit: i64,
    text: PhantomData<S>,
}

impl<'a, S> Statement<'a, S> {
    pub(crate) fn new(counter: super::Counter<'a>, count: i64) -> Self {
        Statement {
            counter,
            count,
            limit: i64::MAX,
            text: PhantomData,
        }
    }

    /// With a [`Piece::Limit`].
    pub(crate) fn limited(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }
}

impl<S: Text> QueryId for Statement<'_, S> {
    type QueryId = S;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<S: Text> Query for Statement<'_, S> {
    type SqlType = S::SqlType;
}

impl<S, DB> QueryFragment<DB> for Statement<'_, S>
where
    S: Text,
    DB: super::Backend + HasSqlType<SqlText> + HasSqlType<BigInt>,
    str: ToSql<SqlText, DB>,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        let (pieces, checked) = (S::PIECES, S::ON_CHECKED_SESSION);
        let values = (&self.count, &self.limit, &self.counter.start);
        walk_pieces(pieces, checked, self.counter, values, out)
    }
}

/// Writes `pieces` with these values: the body of a [`Statement`], for a statement that holds
/// one inside its own (`one_statement.rs`); `on_checked_session` as [`Text::ON_CHECKED_SESSION`].
pub(crate) fn walk_pieces<'b, DB>(
    pieces: &[Piece],
    on_checked_session: bool,
    counter: super::Counter<'b>,
    (count, limit, start): (&'b i64, &'b i64, &'b i64),
    mut out: AstPass<'_, 'b, DB>,
) -> QueryResult<()>
where
    DB: super::Backend + HasSqlType<SqlText> + HasSqlType<BigInt>,
    str: ToSql<SqlText, DB>,
    i64: ToSql<BigInt, DB>,
{
    for piece in pieces {
        match piece {
            Piece::Sql(sql) => out.push_sql(sql),
            Piece::Greatest => out.push_sql(DB::GREATEST),
            Piece::InsertIgnoring => out.push_sql(DB::INSERT_IGNORING.0),
            Piece::InsertIgnoringEnd => out.push_sql(DB::INSERT_IGNORING.1),
            Piece::Fingerprint => out.push_sql(DB::FINGERPRINT),
            Piece::Durability => out.push_sql(DB::DURABILITY),
            Piece::Timeline => out.push_sql(DB::TIMELINE),
            Piece::OnCheckedSession if on_checked_session && !DB::CHECKED_TIMELINE.is_empty() => {
                out.push_sql(" AND ");
                out.push_sql(DB::CHECKED_TIMELINE);
                out.push_sql(" = ");
                out.push_sql(DB::TIMELINE);
            }
            Piece::OnCheckedSession => {}
            Piece::DurableCommit => out.push_sql(DB::DURABLE_COMMIT),
            Piece::Limit => out.push_bind_param::<BigInt, i64>(limit)?,
            Piece::Key => out.push_bind_param::<SqlText, str>(counter.key)?,
            Piece::Scope => out.push_bind_param::<SqlText, str>(counter.scope)?,
            Piece::Period => out.push_bind_param::<SqlText, str>(counter.period)?,
            Piece::Count => out.push_bind_param::<BigInt, i64>(count)?,
            Piece::Start => out.push_bind_param::<BigInt, i64>(start)?,
        }
    }
    Ok(())
}

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
    DB: super::Backend + HasSqlType<BigInt>,
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

impl<S, Conn> RunQueryDsl<Conn> for Statement<'_, S> {}

/// What a reservation needs to know first, in one round trip: which database this is (its
/// fingerprint and the token row), whether the server commits durably, and the key's row
/// (batch override and recorded shape). One row per existing row of the two, or one row of
/// NULLs beside the fingerprint when neither exists.
pub(crate) struct Identify;

impl Text for Identify {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("SELECT "),
        Piece::Fingerprint,
        Piece::Sql(", "),
        Piece::Durability,
        Piece::Sql(", "),
        Piece::Timeline,
        Piece::Sql(
            ", k.key_name, k.current_value, k.batch_size, k.shape \
             FROM (SELECT 1 AS here) AS h LEFT JOIN db_key k \
             ON k.scope = '' AND k.period = '' AND k.key_name IN ('', ",
        ),
        Piece::Key,
        Piece::Sql(")"),
    ];
    type SqlType = (
        SqlText,
        SqlText,
        Nullable<SqlText>,
        Nullable<SqlText>,
        Nullable<BigInt>,
        Nullable<BigInt>,
        Nullable<SqlText>,
    );
}

/// Adds to the counter, creating the row at its key row's start (else the spec's) if it is
/// missing, and returns the new value (`INSERT … ON CONFLICT DO UPDATE … RETURNING`: SQLite,
/// PostgreSQL). A counter behind its own `start_value` (else the spec's) jumps forward to it. When the counter is past the
/// [limit](Piece::Limit) nothing is written and no row comes back: a refused request touches
/// nothing. The statement commits durably whatever the session's setting.
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))]
pub(crate) struct UpsertReturning;

impl Text for UpsertReturning {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("INSERT INTO db_key (key_name, scope, period, current_value) SELECT "),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Scope,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", s.base + "),
        Piece::Count,
        Piece::Sql(" FROM (SELECT COALESCE(MAX(k.start_value), "),
        Piece::Start,
        Piece::Sql(") - 1 AS base FROM "),
        Piece::DurableCommit,
        Piece::Sql(" LEFT JOIN db_key k ON k.key_name = "),
        Piece::Key,
        Piece::Sql(" AND k.scope = '' AND k.period = '') AS s WHERE s.base <= "),
        Piece::Limit,
        Piece::OnCheckedSession,
        Piece::Sql(" ON CONFLICT (key_name, scope, period) DO UPDATE SET current_value = "),
        Piece::Greatest,
        Piece::Sql("(db_key.current_value, COALESCE(db_key.start_value, "),
        Piece::Start,
        Piece::Sql(") - 1) + "),
        Piece::Count,
        Piece::Sql(", updated_at = CURRENT_TIMESTAMP WHERE "),
        Piece::Greatest,
        Piece::Sql("(db_key.current_value, COALESCE(db_key.start_value, "),
        Piece::Start,
        Piece::Sql(") - 1) <= "),
        Piece::Limit,
        Piece::OnCheckedSession,
        Piece::Sql(" RETURNING current_value"),
    ];
    type SqlType = BigInt;
}

/// [`UpsertReturning`] inside the caller's transaction: on PostgreSQL it writes nothing and
/// returns no row unless seqgen checked this session's timeline (`reserve::timeline`).
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))]
pub(crate) struct UpsertReturningInTransaction;

impl Text for UpsertReturningInTransaction {
    const PIECES: &'static [Piece] = UpsertReturning::PIECES;
    type SqlType = BigInt;
    const ON_CHECKED_SESSION: bool = true;
}

/// Creates a counter row at its key row's `start_value - 1` (without one, the spec's start - 1),
/// unless it exists. (MySQL creates rows its own way: `mysql/statements.rs`.)
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))]
pub(crate) struct CreateRow;

impl Text for CreateRow {
    const PIECES: &'static [Piece] = &[
        Piece::InsertIgnoring,
        Piece::Sql(" db_key (key_name, scope, period, current_value) SELECT "),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Scope,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", COALESCE(MAX(start_value), "),
        Piece::Start,
        Piece::Sql(") - 1 FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND scope = '' AND period = ''"),
        Piece::InsertIgnoringEnd,
    ];
    type SqlType = BigInt;
}

/// Stores the database's token (the count) in the reserved row, unless it has one.
pub(crate) struct CreateToken;

impl Text for CreateToken {
    const PIECES: &'static [Piece] = &[
        Piece::InsertIgnoring,
        Piece::Sql(" db_key (key_name, scope, period, current_value) VALUES ("),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Scope,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", "),
        Piece::Count,
        Piece::Sql(")"),
        Piece::InsertIgnoringEnd,
    ];
    type SqlType = BigInt;
}

/// Locks an existing counter row without waiting (PostgreSQL, MySQL): no row when it is
/// missing, an error when another transaction holds it.
#[cfg(any(seqgen_pg, seqgen_mysql))]
pub(crate) struct LockNowait;

#[cfg(any(seqgen_pg, seqgen_mysql))]
impl Text for LockNowait {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("SELECT current_value FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND scope = "),
        Piece::Scope,
        Piece::Sql(" AND period = "),
        Piece::Period,
        Piece::Sql(" FOR UPDATE NOWAIT"),
    ];
    type SqlType = BigInt;
}
