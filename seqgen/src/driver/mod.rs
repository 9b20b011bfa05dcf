//! How the allocator reaches the database: one core, two drivers.
//!
//! Everything that decides (which numbers to serve, whether and what to reserve, whether a
//! block may be cached, which database this is) is written once, as `async` code over a
//! [`Driver`]: the statements it runs are its only await points, besides waiting for another
//! caller's reservation of the same key. A driver does what a connection does (run a statement,
//! load its rows, run a batch of SQL: a [`Runner`]; hold a savepoint); every statement is
//! written once over a runner, in its backend's file ([`Backend`]) or, where every backend
//! sends the same SQL, in `backend/shared.rs` ([`SharedStatements`]). [`Blocking`] drives the core on a Diesel
//! connection, whose futures are ready at once ([`drive`] polls them once); with an `async-*`
//! feature, `NonBlocking` drives it on a diesel-async connection. No lock is held across an
//! await.

#[cfg(seqgen_async)]
mod async_driver;
mod blocking;

use std::future::Future;
use std::time::Duration;

use diesel::QueryResult;

use crate::backend::{
    Backend, Counter, Found, Identified, Replication, Request, Runner, SharedStatements,
};
use crate::sync::EventListener;

pub(crate) use crate::backend::{drive, Blocking};
#[cfg(seqgen_async)]
pub(crate) use async_driver::{begin, end, NonBlocking};
pub(crate) use blocking::{in_transaction, transaction};

/// One connection, as the allocator core uses it: a [`Runner`] (what a connection does for the
/// statements) with transactions and waits.
///
/// The methods after those are the statements the core runs, each a call of the statement
/// written once in [`Backend`] or [`SharedStatements`]: the seam where the loom model (`engine/model_check.rs`)
/// puts a fake database in place of SQL. A driver over a real connection keeps them as they
/// are.
pub(crate) trait Driver: Runner<Backend: Backend> {
    /// Whether the driver blocks its thread ([`Blocking`]): it may use a blocking (r2d2) pool,
    /// and the async driver an async one (deadpool, bb8). A blocking pool's call would stall an
    /// async runtime; an async pool needs one.
    const BLOCKING: bool;

    /// Whether the connection is inside a transaction Diesel knows of. A connection whose
    /// transaction state is broken counts as inside one: nothing reserved on it is cached.
    fn in_transaction(&mut self) -> bool;

    /// [`Backend::lock_row_nowait`], in a savepoint: a busy row leaves the caller's transaction
    /// usable (PostgreSQL would otherwise abort it).
    fn lock_nowait(&mut self, counter: Counter<'_>)
        -> impl Future<Output = QueryResult<()>> + Send;

    /// Waits until `ended` is notified: another caller's reservation of a key ended.
    async fn wait(&mut self, ended: EventListener);

    /// Pauses between two attempts of a statement the database aborted.
    async fn pause(time: Duration);

    /// [`Backend::reserve`].
    async fn reserve(
        &mut self,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        in_transaction: bool,
    ) -> QueryResult<Option<i64>> {
        Self::Backend::reserve(self, counter, count, limit, in_transaction).await
    }

    /// [`Backend::reserve_identified`].
    async fn reserve_identified(
        &mut self,
        request: &Request<'_>,
    ) -> QueryResult<Option<Identified>> {
        Self::Backend::reserve_identified(self, request).await
    }

    /// [`SharedStatements::read`].
    #[cfg_attr(not(seqgen_pool), allow(dead_code))] // for the pools' own work
    async fn read(&mut self, counter: Counter<'_>) -> QueryResult<Option<i64>> {
        Self::Backend::read(self, counter).await
    }

    /// [`Backend::create_row`].
    async fn create_row(&mut self, counter: Counter<'_>) -> QueryResult<()> {
        Self::Backend::create_row(self, counter).await
    }

    /// [`Backend::identify`].
    async fn identify(&mut self, key: &str) -> QueryResult<Found> {
        Self::Backend::identify(self, key).await
    }

    /// [`SharedStatements::create_token`].
    async fn create_token(&mut self, token: i64) -> QueryResult<()> {
        Self::Backend::create_token(self, token).await
    }

    /// [`Backend::mark_session`].
    async fn mark_session(&mut self, marker: &str) -> QueryResult<()> {
        Self::Backend::mark_session(self, marker).await
    }

    /// [`Backend::mark_timeline`].
    async fn mark_timeline(&mut self, timeline: &str) -> QueryResult<()> {
        Self::Backend::mark_timeline(self, timeline).await
    }

    /// [`Backend::claim_shape`].
    async fn claim_shape(
        &mut self,
        key_row: Counter<'_>,
        shape: &str,
    ) -> QueryResult<Option<String>> {
        Self::Backend::claim_shape(self, key_row, shape).await
    }

    /// [`SharedStatements::read_shape`].
    async fn read_shape(&mut self, key: &str) -> QueryResult<Option<String>> {
        Self::Backend::read_shape(self, key).await
    }

    /// [`Backend::replication`].
    async fn replication(&mut self) -> QueryResult<Replication> {
        Self::Backend::replication(self).await
    }

    /// [`SharedStatements::give_back`].
    async fn give_back(
        &mut self,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> QueryResult<bool> {
        Self::Backend::give_back(self, counter, held_end, value).await
    }
}
