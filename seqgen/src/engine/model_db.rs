//! The loom model's fake database (`model_check.rs`): one counter per period behind a lock, as
//! a database row is, reached through the driver's statements (its seam) and a pool.

use std::collections::BTreeMap;
use std::time::Duration;

use diesel::deserialize::{FromSqlRow, QueryableByName};
use diesel::expression::QueryMetadata;
use diesel::query_builder::{Query, QueryFragment, QueryId};
use diesel::sql_types::{SingleValue, Untyped};
use diesel::sqlite::Sqlite;
use diesel::QueryResult;
use loom::sync::{Arc, Mutex};

use crate::backend::{Counter, Found, Identified, Request, Runner};
use crate::batch::Batch;
use crate::driver::Driver;
use crate::reserve::pool::{PoolFuture, PoolReserve};
use crate::reserve::{identity::Identity, reserve_block, risks::Acceptance, Reserved};
use crate::sync::{EventListener, Listener};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// The database: each period's counter, and the key's shape.
#[derive(Default)]
pub(super) struct Db {
    counters: Mutex<BTreeMap<String, i64>>,
    shape: Mutex<Option<String>>,
}

impl Db {
    /// `UPDATE … SET current_value = current_value + count WHERE current_value <= limit`.
    fn bump(&self, period: &str, count: i64, limit: i64) -> Option<i64> {
        let mut counters = self.counters.lock().unwrap();
        let value = counters.entry(period.to_owned()).or_insert(0);
        (*value <= limit).then(|| {
            *value += count;
            *value
        })
    }

    fn found(&self) -> Found {
        Found {
            fingerprint: "model".into(),
            durability: "1".into(),
            timeline: None,
            token: Some(1),
            batch: None,
            shape: self.shape.lock().unwrap().clone(),
        }
    }

    pub(super) fn counter(&self, period: &str) -> i64 {
        *self.counters.lock().unwrap().get(period).unwrap_or(&0)
    }
}

/// What the model's driver says to SQL: the core reached a statement the model does not fake.
fn no_sql() -> diesel::result::Error {
    diesel::result::Error::QueryBuilderError("the model check runs no SQL".into())
}

/// A connection to the fake database, outside any transaction.
pub(super) struct Conn(pub(super) Arc<Db>);

// The model has no SQL: it answers at the driver's statements, its seam.
impl Runner for Conn {
    type Backend = Sqlite;

    async fn execute<Q>(&mut self, _: Q) -> QueryResult<usize>
    where
        Q: QueryFragment<Sqlite> + QueryId + Send,
    {
        Err(no_sql())
    }

    async fn load<Q, U>(&mut self, _: Q) -> QueryResult<Vec<U>>
    where
        Q: Query + QueryFragment<Sqlite> + QueryId + Send,
        Q::SqlType: SingleValue + 'static,
        Sqlite: QueryMetadata<Q::SqlType>,
        U: FromSqlRow<Q::SqlType, Sqlite> + Send + 'static,
    {
        Err(no_sql())
    }

    async fn load_named<Q, U>(&mut self, _: Q) -> QueryResult<Vec<U>>
    where
        Q: Query<SqlType = Untyped> + QueryFragment<Sqlite> + QueryId + Send,
        U: QueryableByName<Sqlite> + Send + 'static,
    {
        Err(no_sql())
    }

    async fn batch_execute(&mut self, _: &str) -> QueryResult<()> {
        Err(no_sql())
    }
}

impl Driver for Conn {
    const BLOCKING: bool = true;

    fn in_transaction(&mut self) -> bool {
        false
    }

    async fn reserve(
        &mut self,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        _: bool,
    ) -> QueryResult<Option<i64>> {
        Ok(self.0.bump(counter.period, count, limit))
    }

    async fn read(&mut self, counter: Counter<'_>) -> QueryResult<Option<i64>> {
        Ok(Some(self.0.counter(counter.period)))
    }

    async fn create_row(&mut self, _: Counter<'_>) -> QueryResult<()> {
        Ok(())
    }

    async fn replication(&mut self) -> QueryResult<crate::backend::Replication> {
        Ok(crate::backend::Replication::Waited)
    }

    async fn reserve_identified(
        &mut self,
        request: &Request<'_>,
    ) -> QueryResult<Option<Identified>> {
        let found = self.0.found();
        if found.shape.as_deref().is_some_and(|s| s != request.shape) {
            return Ok(None);
        }
        let count = request.need.max(request.batch);
        let last = self
            .0
            .bump(request.counter.period, count, request.largest - count);
        Ok(Some(Identified { found, count, last }))
    }

    async fn identify(&mut self, _: &str) -> QueryResult<Found> {
        Ok(self.0.found())
    }

    async fn create_token(&mut self, _: i64) -> QueryResult<()> {
        Ok(())
    }

    async fn mark_session(&mut self, _: &str) -> QueryResult<()> {
        Ok(())
    }

    async fn mark_timeline(&mut self, _: &str) -> QueryResult<()> {
        Ok(())
    }

    async fn claim_shape(&mut self, _: Counter<'_>, shape: &str) -> QueryResult<Option<String>> {
        let mut recorded = self.0.shape.lock().unwrap();
        Ok(Some(
            recorded.get_or_insert_with(|| shape.to_owned()).clone(),
        ))
    }

    async fn read_shape(&mut self, _: &str) -> QueryResult<Option<String>> {
        Ok(self.0.shape.lock().unwrap().clone())
    }

    async fn give_back(
        &mut self,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> QueryResult<bool> {
        let mut counters = self.0.counters.lock().unwrap();
        let current = counters.entry(counter.period.to_owned()).or_insert(0);
        Ok(*current == held_end && {
            *current = value;
            true
        })
    }

    async fn lock_nowait(&mut self, _: Counter<'_>) -> QueryResult<()> {
        Ok(())
    }

    async fn wait(&mut self, ended: EventListener) {
        ended.wait();
    }

    async fn pause(_: Duration) {}
}

/// A pool of connections to the fake database: reserves ahead on a thread of its own.
pub(super) struct Pool(pub(super) Arc<Db>);

impl PoolReserve for Pool {
    fn blocking(&self) -> bool {
        true
    }

    fn reserves_ahead(&self) -> bool {
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn reserve<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        need: u64,
        batch: Batch,
        non_durable: Acceptance,
        expected: &'a Found,
    ) -> PoolFuture<'a, Reserved> {
        let mut conn = Conn(Arc::clone(&self.0));
        Box::pin(async move {
            let expected = Some(expected);
            reserve_block(
                &mut conn,
                spec,
                scope,
                period,
                need,
                batch,
                non_durable,
                expected,
            )
            .await
        })
    }

    fn reserve_ahead<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        batch: Batch,
        non_durable: Acceptance,
    ) -> PoolFuture<'a, Option<Reserved>> {
        let mut conn = Conn(Arc::clone(&self.0));
        Box::pin(async move {
            reserve_block(&mut conn, spec, scope, period, 1, batch, non_durable, None)
                .await
                .map(Some)
        })
    }

    fn create_row<'a>(&'a self, _: Counter<'a>) -> PoolFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn backend(&self) -> &'static str {
        "model"
    }

    fn check_shape<'a>(&'a self, _: &'a Spec) -> PoolFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn identify(&self) -> PoolFuture<'_, Identity> {
        Box::pin(async { Ok(Identity::new("model", 1)) })
    }
}
