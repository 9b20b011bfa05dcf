//! The statements of [`Backend`] on diesel-async's connections: each declared once with its
//! blocking twin (`core_statements!`, `declare.rs`), the rest here beside their twins' names.

use std::future::Future;

use diesel::QueryResult;
use diesel_async::AsyncConnection;

use super::{Backend, Counter, Found, Identified, PendingRow, PendingRows, Request};

/// The statements of [`Backend`] that the allocator core runs, on diesel-async's connections
/// (the `async-*` features). Written once with the blocking ones (see `core_queries!`).
///
/// Sealed; its items are seqgen's internals.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "diesel-seqgen was built without diesel-async's `{Self}` connections",
    label = "a diesel-async connection to `{Self}`",
    note = "turn on diesel-seqgen's `async-sqlite`, `async-postgres` or `async-mysql` feature for it"
)]
pub trait AsyncBackend: Backend {
    crate::backend::core_statements!(async_statements);

    /// [`Backend::lock_nowait`].
    fn lock_nowait<C>(
        conn: &mut C,
        counter: Counter<'_>,
    ) -> impl Future<Output = QueryResult<()>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::select_pending`].
    fn select_pending<C>(
        conn: &mut C,
        key: &str,
        rows: &PendingRows<'_>,
        after: i64,
    ) -> impl Future<Output = QueryResult<Option<Vec<PendingRow>>>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::write_pending`].
    fn write_pending<C>(
        conn: &mut C,
        rows: &PendingRows<'_>,
        numbers: &[(i64, String)],
    ) -> impl Future<Output = QueryResult<usize>> + Send
    where
        C: AsyncConnection<Backend = Self>;

    /// [`Backend::read_committed_next`].
    fn read_committed_next<C>(conn: &mut C) -> impl Future<Output = QueryResult<()>> + Send
    where
        C: AsyncConnection<Backend = Self>,
    {
        let _ = conn;
        async { Ok(()) }
    }
}
