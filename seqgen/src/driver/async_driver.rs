//! The [`Driver`] on diesel-async's connections, and the transactions seqgen opens on them.

use std::time::Duration;

use diesel::deserialize::{FromSqlRow, QueryableByName};
use diesel::expression::QueryMetadata;
use diesel::query_builder::{Query, QueryFragment, QueryId};
use diesel::sql_types::{SingleValue, Untyped};
use diesel::QueryResult;
use diesel_async::{AsyncConnection, RunQueryDsl};

use super::blocking::{depth, inside, released, savepoint_kept};
use super::Driver;
use crate::backend::{AsyncBackend, Backend, Counter, Runner};
use crate::sync::EventListener;

/// Runs the core on a diesel-async connection. Nothing here (nor in the core) holds an async
/// closure across an await: rustc cannot show such a future `Send` for every lifetime
/// (rust-lang/rust#110338, "implementation of `Send` is not general enough"), and an axum
/// handler's future must be.
pub(crate) struct NonBlocking<'c, C>(pub(crate) &'c mut C);

impl<C> Runner for NonBlocking<'_, C>
where
    C: AsyncConnection,
    C::Backend: 'static,
{
    type Backend = C::Backend;

    async fn execute<Q>(&mut self, query: Q) -> QueryResult<usize>
    where
        Q: QueryFragment<C::Backend> + QueryId + Send,
    {
        RunQueryDsl::execute(query, self.0).await
    }

    async fn load<Q, U>(&mut self, query: Q) -> QueryResult<Vec<U>>
    where
        Q: Query + QueryFragment<C::Backend> + QueryId + Send,
        Q::SqlType: SingleValue + 'static,
        C::Backend: QueryMetadata<Q::SqlType>,
        U: FromSqlRow<Q::SqlType, C::Backend> + Send + 'static,
    {
        RunQueryDsl::load(query, self.0).await
    }

    async fn load_named<Q, U>(&mut self, query: Q) -> QueryResult<Vec<U>>
    where
        Q: Query<SqlType = Untyped> + QueryFragment<C::Backend> + QueryId + Send,
        U: QueryableByName<C::Backend> + Send + 'static,
    {
        RunQueryDsl::load(query, self.0).await
    }

    async fn batch_execute(&mut self, sql: &str) -> QueryResult<()> {
        self.0.batch_execute(sql).await
    }
}

impl<C> Driver for NonBlocking<'_, C>
where
    C: diesel_async::AsyncConnection,
    C::Backend: AsyncBackend,
{
    const BLOCKING: bool = false;

    fn in_transaction(&mut self) -> bool {
        use diesel_async::TransactionManager as _;
        inside(C::TransactionManager::transaction_manager_status_mut(
            self.0,
        ))
    }

    async fn lock_nowait(&mut self, counter: Counter<'_>) -> QueryResult<()> {
        // In a savepoint: rolling it back keeps the caller's transaction usable.
        begin(self.0).await?;
        let locked = C::Backend::lock_row_nowait(&mut NonBlocking(&mut *self.0), counter).await;
        end(self.0, locked).await
    }

    async fn wait(&mut self, ended: EventListener) {
        ended.await;
    }

    async fn pause(time: Duration) {
        tokio::time::sleep(time).await;
    }
}

/// Begins a transaction (a savepoint inside the caller's) on a diesel-async connection, by
/// hand: seqgen's futures never hold `conn.transaction(async |conn| …)`, since a future holding
/// an async closure is not `Send` for every lifetime (rust-lang/rust#110338) and an axum
/// handler's must be. See [`end`].
pub(crate) async fn begin<C: AsyncConnection>(conn: &mut C) -> QueryResult<()> {
    use diesel_async::TransactionManager as _;
    C::TransactionManager::begin_transaction(conn).await
}

/// Ends the transaction [`begin`] began: commits after `Ok`, rolls back after `Err`; a
/// savepoint the database rolled back with the transaction around it is a conflict, as in
/// [`transaction`].
pub(crate) async fn end<C, T, E>(conn: &mut C, result: Result<T, E>) -> Result<T, E>
where
    C: diesel_async::AsyncConnection,
    E: From<diesel::result::Error>,
{
    use diesel_async::TransactionManager as _;
    let level = depth(C::TransactionManager::transaction_manager_status_mut(conn));
    match result {
        Ok(output) => match C::TransactionManager::commit_transaction(conn).await {
            Ok(()) => Ok(output),
            Err(error) => {
                if savepoint_kept(
                    level,
                    C::TransactionManager::transaction_manager_status_mut(conn),
                ) {
                    let _ = C::TransactionManager::rollback_transaction(conn).await;
                }
                Err(released(error).into())
            }
        },
        Err(error) => {
            // A failed rollback leaves the connection marked broken by diesel-async; the
            // error that caused it is the one to report.
            let _ = C::TransactionManager::rollback_transaction(conn).await;
            Err(error)
        }
    }
}
