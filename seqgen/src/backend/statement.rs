//! seqgen's hand-written statements as Diesel queries whose prepared statements are cached.
//!
//! Diesel caches neither `sql_query` nor `ON CONFLICT DO UPDATE`; an uncached statement costs
//! PostgreSQL and MySQL an extra round trip to prepare it, on every reservation. Each statement
//! here is a type of its own (its [`Text`] marker), which is what lets Diesel cache it safely.

use std::marker::PhantomData;

use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, HasSqlType, Text as SqlText};
use diesel::{QueryResult, RunQueryDsl};

/// A piece of a statement: SQL text, or where a value is bound.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Piece {
    Sql(&'static str),
    /// The backend's two-argument maximum: `GREATEST`, or `MAX` on SQLite.
    Greatest,
    /// The start of an insert that skips rows already there (`INSERT IGNORE INTO`, ...).
    InsertIgnoring,
    /// Its end, where the backend says it there (`ON CONFLICT DO NOTHING` on PostgreSQL).
    InsertIgnoringEnd,
    Key,
    Period,
    Count,
}

/// The text of one statement, and the type of the rows it returns.
pub(crate) trait Text: 'static {
    const PIECES: &'static [Piece];
    type SqlType;
}

/// One run of statement `S`, with its values.
#[derive(Debug)]
pub(crate) struct Statement<'a, S> {
    key: &'a str,
    period: &'a str,
    count: i64,
    text: PhantomData<S>,
}

impl<'a, S> Statement<'a, S> {
    pub(crate) fn new(key: &'a str, period: &'a str, count: i64) -> Self {
        Statement {
            key,
            period,
            count,
            text: PhantomData,
        }
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
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        for piece in S::PIECES {
            match piece {
                Piece::Sql(sql) => out.push_sql(sql),
                Piece::Greatest => out.push_sql(DB::GREATEST),
                Piece::InsertIgnoring => out.push_sql(DB::INSERT_IGNORING.0),
                Piece::InsertIgnoringEnd => out.push_sql(DB::INSERT_IGNORING.1),
                Piece::Key => out.push_bind_param::<SqlText, str>(self.key)?,
                Piece::Period => out.push_bind_param::<SqlText, str>(self.period)?,
                Piece::Count => out.push_bind_param::<BigInt, i64>(&self.count)?,
            }
        }
        Ok(())
    }
}

impl<S, Conn> RunQueryDsl<Conn> for Statement<'_, S> {}

/// The token row and the key row, read together before a reservation.
pub(crate) struct TokenAndBatch;

impl Text for TokenAndBatch {
    const PIECES: &'static [Piece] = &[
        Piece::Sql(
            "SELECT key_name, current_value, batch_size FROM db_key \
             WHERE period = '' AND key_name IN ('', ",
        ),
        Piece::Key,
        Piece::Sql(")"),
    ];
    type SqlType = (SqlText, BigInt, diesel::sql_types::Nullable<BigInt>);
}

/// Adds to the counter, creating the row at its key row's start if it is missing, and returns
/// the new value (`INSERT … ON CONFLICT DO UPDATE … RETURNING`: SQLite, PostgreSQL). A counter
/// behind its own `start_value` jumps forward to it.
pub(crate) struct UpsertReturning;

impl Text for UpsertReturning {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("INSERT INTO db_key (key_name, period, current_value) SELECT "),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", COALESCE(MAX(start_value), 1) - 1 + "),
        Piece::Count,
        Piece::Sql(" FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(
            " AND period = '' ON CONFLICT (key_name, period) DO UPDATE SET current_value = ",
        ),
        Piece::Greatest,
        Piece::Sql("(db_key.current_value, COALESCE(db_key.start_value, 1) - 1) + "),
        Piece::Count,
        Piece::Sql(", updated_at = CURRENT_TIMESTAMP RETURNING current_value"),
    ];
    type SqlType = BigInt;
}

/// Creates a counter row at its key row's `start_value - 1` (0 without one), unless it exists.
pub(crate) struct CreateRow;

impl Text for CreateRow {
    const PIECES: &'static [Piece] = &[
        Piece::InsertIgnoring,
        Piece::Sql(" db_key (key_name, period, current_value) SELECT "),
        Piece::Key,
        Piece::Sql(", "),
        Piece::Period,
        Piece::Sql(", COALESCE(MAX(start_value), 1) - 1 FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND period = ''"),
        Piece::InsertIgnoringEnd,
    ];
    type SqlType = BigInt;
}

/// Stores the database's token (the count) in the reserved row, unless it has one.
pub(crate) struct CreateToken;

impl Text for CreateToken {
    const PIECES: &'static [Piece] = &[
        Piece::InsertIgnoring,
        Piece::Sql(" db_key (key_name, period, current_value) VALUES ("),
        Piece::Key,
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
pub(crate) struct LockNowait;

impl Text for LockNowait {
    const PIECES: &'static [Piece] = &[
        Piece::Sql("SELECT current_value FROM db_key WHERE key_name = "),
        Piece::Key,
        Piece::Sql(" AND period = "),
        Piece::Period,
        Piece::Sql(" FOR UPDATE NOWAIT"),
    ];
    type SqlType = BigInt;
}
