//! The statements every backend sends alike, each written once as `async` code over a
//! [`Runner`], Diesel's connection or diesel-async's. Their SQL is seqgen's own `QueryFragment`
//! types (at the end of this file, or `statement.rs`), or text with quoted names
//! (`pending_rows.rs`); what the databases write differently is a fragment of `dialect.rs`.
//!
//! The trait is implemented once, for every backend, by the blanket impl below: its `where`
//! clause states what the statements need of a backend (its binds, its fragments), and Rust
//! checks it where each backend implements [`Backend`](super::Backend), of which this is a
//! supertrait. So code generic over any backend calls these without naming those bounds.

use std::future::Future;

use diesel::backend::Backend as SqlBackend;
use diesel::deserialize::FromSql;
use diesel::prelude::*;
use diesel::query_builder::{AstPass, BoxedSqlQuery, Query, QueryFragment, QueryId, SqlQuery};
use diesel::serialize::ToSql;
use diesel::sql_types::{BigInt, Nullable, Text};

use super::dialect::{Durability, Fingerprint, IgnoringEnd, InsertIgnoring, LockingRead};
use super::dialect::{TextType, Timeline};
use super::pending_rows::{lock_sql, select_sql, waiting_sql, write_sql};
use super::statement::{walk_where_counter, walk_where_key_row};
use super::statement::{CreateToken, Identify, IdentifyRow, Statement};
use super::{Counter, Found, PendingRow, PendingRows, WaitingRows};
use crate::backend::Runner;

/// The statements every backend sends alike (see the module's documentation).
///
/// Implemented by the blanket impl below; its items are seqgen's internals.
#[doc(hidden)]
#[allow(private_bounds)] // its statements take seqgen's own driver: only seqgen calls them
pub trait SharedStatements: Sized {
    /// Sets `counter` back to `value` if it is still `held_end`, the end of a block this
    /// instance reserved last: whether it was.
    fn give_back<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> impl Future<Output = QueryResult<bool>> + Send;

    /// Stores `token` as this database's token, unless it has one.
    fn create_token<D: Runner<Backend = Self>>(
        db: &mut D,
        token: i64,
    ) -> impl Future<Output = QueryResult<()>> + Send;

    /// Reads `counter` without locking it; `None` if the row is missing.
    fn read<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<Option<i64>>> + Send;

    /// In one query, what a reservation needs to know first: see [`Found`]; its fingerprint
    /// as the server gives it ([`Backend::identify`](super::Backend::identify) completes it).
    fn identify_on_server<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
    ) -> impl Future<Output = QueryResult<Found>> + Send;

    /// Records `shape` on the existing key's row `key_row` (scope and period ''), unless a
    /// shape is recorded there already, and with it the row's [start](Counter::start) as its
    /// `start_value` where none is set and the start is not 1. See [`Backend::claim_shape`](super::Backend::claim_shape).
    fn record_shape<D: Runner<Backend = Self>>(
        db: &mut D,
        key_row: Counter<'_>,
        shape: &str,
    ) -> impl Future<Output = QueryResult<()>> + Send;

    /// The shape recorded on the key's row, as last committed (not as a transaction's snapshot
    /// saw it: MySQL reads it with a lock, [`LockingRead`]); `None` without a row or a shape.
    fn read_shape<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
    ) -> impl Future<Output = QueryResult<Option<String>>> + Send;

    /// Locks `key`'s row for the rest of the transaction, then reads up to a batch of the rows
    /// of `rows` still without a number, ordered, above `after`; `None` without a key's row.
    /// See `pending_rows.rs`.
    fn select_pending<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
        rows: &PendingRows<'_>,
        after: i64,
    ) -> impl Future<Output = QueryResult<Option<Vec<PendingRow>>>> + Send;

    /// Writes each `(order value, ID)` to its row of `rows` where it still has no number: how
    /// many rows it wrote.
    fn write_pending<D: Runner<Backend = Self>>(
        db: &mut D,
        rows: &PendingRows<'_>,
        numbers: &[(i64, String)],
    ) -> impl Future<Output = QueryResult<usize>> + Send;

    /// How many rows of `rows` have no number yet, the lowest order value among them and the
    /// highest of the table: a plain read, which waits for no lock. See `pending_rows.rs`.
    fn waiting_rows<D: Runner<Backend = Self>>(
        db: &mut D,
        rows: &PendingRows<'_>,
    ) -> impl Future<Output = QueryResult<WaitingRows>> + Send;
}

// Not `DB: Backend`: a bound on the very trait whose supertrait this is would stand in for
// this impl where its futures' types are compared, and they would not match.
impl<DB> SharedStatements for DB
where
    DB: diesel::backend::Backend + Default,
    DB::QueryBuilder: Default,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB> + FromSql<BigInt, DB>,
    String: ToSql<Text, DB> + FromSql<Text, DB>,
    InsertIgnoring: QueryFragment<DB>,
    IgnoringEnd: QueryFragment<DB>,
    Fingerprint: QueryFragment<DB>,
    Durability: QueryFragment<DB>,
    Timeline: QueryFragment<DB>,
    LockingRead: QueryFragment<DB>,
    TextType: QueryFragment<DB>,
    for<'f> BoxedSqlQuery<'f, DB, SqlQuery>: QueryFragment<DB>,
{
    async fn give_back<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> QueryResult<bool> {
        let changed = db
            .execute(GiveBack {
                counter,
                held_end,
                value,
            })
            .await?;
        Ok(changed == 1)
    }

    async fn create_token<D: Runner<Backend = Self>>(db: &mut D, token: i64) -> QueryResult<()> {
        let token = Statement::<CreateToken>::new(Counter::TOKEN, token);
        db.execute(token).await.map(drop)
    }

    async fn read<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<Option<i64>> {
        db.get_result(ReadCounter(counter)).await.optional()
    }

    async fn identify_on_server<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
    ) -> QueryResult<Found> {
        let rows: Vec<IdentifyRow> = db
            .load_named(Statement::<Identify>::new(Counter::key_row(key), 0))
            .await?;
        let first = rows.first().ok_or(diesel::result::Error::NotFound)?;
        let row = |name: &str| rows.iter().find(|r| r.key_name.as_deref() == Some(name));
        Ok(Found {
            fingerprint: first.fingerprint.clone(),
            durability: first.durability.clone(),
            timeline: super::timeline(first.timeline.as_deref()),
            token: row("").and_then(|r| r.current_value),
            batch: row(key).and_then(|r| r.batch_size),
            shape: row(key).and_then(|r| r.shape.clone()),
        })
    }

    async fn record_shape<D: Runner<Backend = Self>>(
        db: &mut D,
        key_row: Counter<'_>,
        shape: &str,
    ) -> QueryResult<()> {
        if key_row.start != 1 {
            // The spec's start, for the tools that read the table (`seqgen gaps`, `peek`), with
            // its shape: at the key's first use, unless an operator set one.
            db.execute(ClaimStart(key_row)).await?;
        }
        db.execute(ClaimShape {
            key: key_row.key,
            shape,
        })
        .await
        .map(drop)
    }

    async fn read_shape<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
    ) -> QueryResult<Option<String>> {
        let shape: Option<Option<String>> = db.get_result(ReadShape(key)).await.optional()?;
        Ok(shape.flatten())
    }

    async fn select_pending<D: Runner<Backend = Self>>(
        db: &mut D,
        key: &str,
        rows: &PendingRows<'_>,
        after: i64,
    ) -> QueryResult<Option<Vec<PendingRow>>> {
        let lock = diesel::sql_query(lock_sql::<Self>())
            .into_boxed::<Self>()
            .bind::<Text, _>(key.to_owned());
        if db.execute(lock).await? == 0 {
            return Ok(None);
        }
        let select = diesel::sql_query(select_sql::<Self>(rows)?)
            .into_boxed::<Self>()
            .bind::<BigInt, _>(after);
        db.load_named(select).await.map(Some)
    }

    async fn write_pending<D: Runner<Backend = Self>>(
        db: &mut D,
        rows: &PendingRows<'_>,
        numbers: &[(i64, String)],
    ) -> QueryResult<usize> {
        let sql = write_sql::<Self>(rows, numbers.len())?;
        let mut query = diesel::sql_query(sql).into_boxed::<Self>();
        for (order, id) in numbers {
            query = query.bind::<BigInt, _>(*order).bind::<Text, _>(id.clone());
        }
        for (order, _) in numbers {
            query = query.bind::<BigInt, _>(*order);
        }
        db.execute(query).await
    }

    async fn waiting_rows<D: Runner<Backend = Self>>(
        db: &mut D,
        rows: &PendingRows<'_>,
    ) -> QueryResult<WaitingRows> {
        let waiting = diesel::sql_query(waiting_sql::<Self>(rows)?).into_boxed::<Self>();
        db.get_named(waiting).await
    }
}

/// Sets a counter back to `value` if it still ends the block this instance reserved last
/// (`held_end`), and records what it lowered it from: the database refuses a lowering that does
/// not name it (the `db_key` trigger).
pub(crate) struct GiveBack<'a> {
    pub(crate) counter: Counter<'a>,
    pub(crate) held_end: i64,
    pub(crate) value: i64,
}

impl QueryId for GiveBack<'_> {
    type QueryId = GiveBack<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB> QueryFragment<DB> for GiveBack<'_>
where
    DB: SqlBackend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE db_key SET current_value = ");
        out.push_bind_param::<BigInt, i64>(&self.value)?;
        out.push_sql(", lowered_from = ");
        out.push_bind_param::<BigInt, i64>(&self.held_end)?;
        walk_where_counter(self.counter, &mut out)?;
        out.push_sql(" AND current_value = ");
        out.push_bind_param::<BigInt, i64>(&self.held_end)
    }
}

/// A counter's value, read without a lock; no row without the counter's.
pub(crate) struct ReadCounter<'a>(pub(crate) Counter<'a>);

impl QueryId for ReadCounter<'_> {
    type QueryId = ReadCounter<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ReadCounter<'_> {
    type SqlType = BigInt;
}

impl<DB> QueryFragment<DB> for ReadCounter<'_>
where
    DB: SqlBackend,
    str: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT current_value FROM db_key");
        walk_where_counter(self.0, &mut out)
    }
}

/// The shape recorded on a key's row, read with a lock where a plain read sees the
/// transaction's old snapshot ([`LockingRead`]); no row without the key's.
pub(crate) struct ReadShape<'a>(pub(crate) &'a str);

impl QueryId for ReadShape<'_> {
    type QueryId = ReadShape<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl Query for ReadShape<'_> {
    type SqlType = Nullable<Text>;
}

impl<DB> QueryFragment<DB> for ReadShape<'_>
where
    DB: SqlBackend,
    str: ToSql<Text, DB>,
    LockingRead: QueryFragment<DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("SELECT shape FROM db_key");
        walk_where_key_row(self.0, &mut out)?;
        LockingRead.walk_ast(out)
    }
}

/// Sets a key row's `start_value` to the spec's start (the counter's), unless the row has a
/// shape or a start already: at the key's first use, unless an operator set one.
pub(crate) struct ClaimStart<'a>(pub(crate) Counter<'a>);

impl QueryId for ClaimStart<'_> {
    type QueryId = ClaimStart<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB> QueryFragment<DB> for ClaimStart<'_>
where
    DB: SqlBackend,
    str: ToSql<Text, DB>,
    i64: ToSql<BigInt, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE db_key SET start_value = ");
        out.push_bind_param::<BigInt, i64>(&self.0.start)?;
        walk_where_key_row(self.0.key, &mut out)?;
        out.push_sql(" AND shape IS NULL AND start_value IS NULL");
        Ok(())
    }
}

/// Records a shape on a key's row unless it has one.
pub(crate) struct ClaimShape<'a> {
    pub(crate) key: &'a str,
    pub(crate) shape: &'a str,
}

impl QueryId for ClaimShape<'_> {
    type QueryId = ClaimShape<'static>;
    const HAS_STATIC_QUERY_ID: bool = true;
}

impl<DB> QueryFragment<DB> for ClaimShape<'_>
where
    DB: SqlBackend,
    str: ToSql<Text, DB>,
{
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        out.push_sql("UPDATE db_key SET shape = ");
        out.push_bind_param::<Text, str>(self.shape)?;
        walk_where_key_row(self.key, &mut out)?;
        out.push_sql(" AND shape IS NULL");
        Ok(())
    }
}
