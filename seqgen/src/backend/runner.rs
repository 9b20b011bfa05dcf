//! What a connection does for seqgen's statements: run a statement, load its rows, run a batch
//! of SQL. Every statement is written once over a [`Runner`] (in its backend's file, or in
//! `shared.rs`), so one body runs on Diesel's connections ([`Blocking`], here) and on
//! diesel-async's (`driver/async_driver.rs`). The allocator core's driver (`crate::driver`) is
//! a runner with transactions, waits and the statements added.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use diesel::connection::LoadConnection;
use diesel::deserialize::{FromSqlRow, QueryableByName};
use diesel::expression::QueryMetadata;
use diesel::query_builder::{AstPass, Query, QueryFragment, QueryId};
use diesel::query_dsl::methods::ExecuteDsl;
use diesel::sql_types::{SingleValue, Untyped};
use diesel::{QueryResult, RunQueryDsl};

/// A connection as seqgen's statements use it. Each method is one of Diesel's public calls
/// (`ExecuteDsl::execute`, `RunQueryDsl::load`, `batch_execute`), or diesel-async's.
#[doc(hidden)] // public only to be named in `Backend`'s statements
pub trait Runner: Sized + Send {
    /// The database's backend.
    type Backend: diesel::backend::Backend;

    /// Runs `query`: how many rows it changed.
    fn execute<Q>(&mut self, query: Q) -> impl Future<Output = QueryResult<usize>> + Send
    where
        Q: QueryFragment<Self::Backend> + QueryId + Send;

    /// The rows of `query`, whose rows are one SQL type (one column, or one value).
    fn load<Q, U>(&mut self, query: Q) -> impl Future<Output = QueryResult<Vec<U>>> + Send
    where
        Q: Query + QueryFragment<Self::Backend> + QueryId + Send,
        Q::SqlType: SingleValue + 'static,
        Self::Backend: QueryMetadata<Q::SqlType>,
        U: FromSqlRow<Q::SqlType, Self::Backend> + Send + 'static;

    /// The rows of `query`, each read by its columns' names (`SELECT … AS name`): a row of
    /// several SQL types, which Diesel loads generically only by name.
    fn load_named<Q, U>(&mut self, query: Q) -> impl Future<Output = QueryResult<Vec<U>>> + Send
    where
        Q: Query<SqlType = Untyped> + QueryFragment<Self::Backend> + QueryId + Send,
        U: QueryableByName<Self::Backend> + Send + 'static;

    /// Runs `sql`, one or more statements without bound values.
    fn batch_execute(&mut self, sql: &str) -> impl Future<Output = QueryResult<()>> + Send;

    /// The first row of `query` ([`load`](Runner::load)); `NotFound` without one.
    fn get_result<Q, U>(&mut self, query: Q) -> impl Future<Output = QueryResult<U>> + Send
    where
        Q: Query + QueryFragment<Self::Backend> + QueryId + Send,
        Q::SqlType: SingleValue + 'static,
        Self::Backend: QueryMetadata<Q::SqlType>,
        U: FromSqlRow<Q::SqlType, Self::Backend> + Send + 'static,
    {
        async move { first(self.load(query).await?) }
    }

    /// The first row of `query` ([`load_named`](Runner::load_named)); `NotFound` without one.
    fn get_named<Q, U>(&mut self, query: Q) -> impl Future<Output = QueryResult<U>> + Send
    where
        Q: Query<SqlType = Untyped> + QueryFragment<Self::Backend> + QueryId + Send,
        U: QueryableByName<Self::Backend> + Send + 'static,
    {
        async move { first(self.load_named(query).await?) }
    }
}

/// The first of `rows`; `NotFound` without one, as Diesel's `get_result` says it.
fn first<U>(rows: Vec<U>) -> QueryResult<U> {
    rows.into_iter()
        .next()
        .ok_or(diesel::result::Error::NotFound)
}

/// A Diesel connection as a [`Runner`] (and, in `crate::driver`, the core's blocking driver):
/// every statement completes before its future is polled ([`drive`]).
pub(crate) struct Blocking<'c, C>(pub(crate) &'c mut C);

impl<C: LoadConnection> Runner for Blocking<'_, C>
where
    C::Backend: 'static,
{
    type Backend = C::Backend;

    async fn execute<Q>(&mut self, query: Q) -> QueryResult<usize>
    where
        Q: QueryFragment<C::Backend> + QueryId + Send,
    {
        ExecuteDsl::execute(query, self.0)
    }

    async fn load<Q, U>(&mut self, query: Q) -> QueryResult<Vec<U>>
    where
        Q: Query + QueryFragment<C::Backend> + QueryId + Send,
        Q::SqlType: SingleValue + 'static,
        C::Backend: QueryMetadata<Q::SqlType>,
        U: FromSqlRow<Q::SqlType, C::Backend> + Send + 'static,
    {
        Run(query).load(self.0)
    }

    async fn load_named<Q, U>(&mut self, query: Q) -> QueryResult<Vec<U>>
    where
        Q: Query<SqlType = Untyped> + QueryFragment<C::Backend> + QueryId + Send,
        U: QueryableByName<C::Backend> + Send + 'static,
    {
        Run(query).load(self.0)
    }

    async fn batch_execute(&mut self, sql: &str) -> QueryResult<()> {
        self.0.batch_execute(sql)
    }
}

/// A query Diesel's `RunQueryDsl` runs on any connection: seqgen's statements implement
/// Diesel's query traits for any backend, but not `RunQueryDsl`, which Diesel has per query
/// type. Its `QueryId` is the query's, so Diesel caches its prepared statement alike.
struct Run<Q>(Q);

impl<Q: QueryId> QueryId for Run<Q> {
    type QueryId = Q::QueryId;
    const HAS_STATIC_QUERY_ID: bool = Q::HAS_STATIC_QUERY_ID;
}

impl<Q: Query> Query for Run<Q> {
    type SqlType = Q::SqlType;
}

impl<DB: diesel::backend::Backend, Q: QueryFragment<DB>> QueryFragment<DB> for Run<Q> {
    fn walk_ast<'b>(&'b self, pass: AstPass<'_, 'b, DB>) -> QueryResult<()> {
        self.0.walk_ast(pass)
    }
}

impl<Q, C> RunQueryDsl<C> for Run<Q> {}

/// The output of `future`, whose every await point is ready at once: a statement (or the
/// allocator core) on a [`Blocking`] runner.
pub(crate) fn drive<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(output) => output,
        // A blocking runner's futures never wait: they block instead.
        Poll::Pending => unreachable!("a blocking driver's future was not ready"),
    }
}
