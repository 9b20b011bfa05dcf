//! What the databases write differently, each a small fragment type with one `QueryFragment`
//! impl per backend, in that backend's file (`sqlite.rs`, `pg/mod.rs`, `mysql/fragments.rs`), as
//! Diesel writes its `InsertOrIgnore`. A statement that uses a fragment names it in its
//! bounds (`statement.rs`); text built at run time (`admin_queries.rs`) renders one with
//! [`sql_of`].

use diesel::backend::Backend as DieselBackend;
use diesel::query_builder::{QueryBuilder, QueryFragment, QueryId};
use diesel::QueryResult;

/// The SQL function giving the larger of two values: `GREATEST`, `MAX` on SQLite.
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct Greatest;

/// The start of an insert that skips rows already there, up to the table's name: `INSERT OR
/// IGNORE INTO`, `INSERT IGNORE INTO`, or PostgreSQL's `INSERT INTO` with [`IgnoringEnd`].
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct InsertIgnoring;

/// The end of that insert, where the backend says it there (`ON CONFLICT DO NOTHING` on
/// PostgreSQL); nothing elsewhere.
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct IgnoringEnd;

/// An expression (text) naming the database a connection talks to, the same on every
/// connection to it and different for a copy of it (see `reserve/identity.rs`).
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct Fingerprint;

/// An expression (text) giving the server setting that decides whether a committed
/// reservation survives a crash of the server ([`Backend::DURABILITY_SETTING`](super::Backend::DURABILITY_SETTING)).
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct Durability;

/// An expression (text, or NULL) giving the server's history of failovers as a number in hex
/// that only grows: PostgreSQL's timeline, which a promoted standby raises. NULL where the
/// backend has none, or on a standby.
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct Timeline;

/// ` AND` a condition that seqgen checked this session's timeline (`Backend::mark_timeline`) and it
/// is still the server's: written by a reservation inside the caller's transaction, which
/// then runs only on a session checked since the last failover (`reserve/timeline.rs`).
/// Nothing where the backend has no timelines.
#[derive(Debug, Clone, Copy, QueryId)]
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))] // the upsert's
pub(crate) struct OnCheckedSession;

/// A one-row derived table whose evaluation makes the statement's transaction commit
/// durably whatever the session's setting (PostgreSQL's `synchronous_commit`); a plain
/// one-row table where commits are durable anyway.
#[derive(Debug, Clone, Copy, QueryId)]
#[cfg_attr(not(any(feature = "sqlite", seqgen_pg)), allow(dead_code))] // the upsert's
pub(crate) struct DurableCommit;

/// The end of a read of `db_key` that must see the row as last committed, not as the
/// transaction's snapshot saw it: ` FOR UPDATE` on MySQL (REPEATABLE READ would miss a shape
/// another transaction recorded after this one's snapshot); nothing where each statement reads
/// what is committed (READ COMMITTED, SQLite's one writer).
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct LockingRead;

/// The type a value is cast to for reading it as text: `TEXT`, `CHAR` on MySQL.
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct TextType;

/// The database's time now, as text, as `updated_at` shows a row written now (the session's
/// time zone where the column has none).
#[derive(Debug, Clone, Copy, QueryId)]
pub(crate) struct NowText;

/// The SQL `fragment` writes on `DB`, for text built at run time (a fragment with bind
/// parameters has none of its values in it).
pub(crate) fn sql_of<DB, F>(fragment: F) -> QueryResult<String>
where
    DB: DieselBackend + Default,
    DB::QueryBuilder: Default,
    F: QueryFragment<DB>,
{
    let mut out = DB::QueryBuilder::default();
    fragment.to_sql(&mut out, &DB::default())?;
    Ok(out.finish())
}
