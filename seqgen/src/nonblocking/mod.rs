//! seqgen on [diesel-async](https://docs.rs/diesel-async)'s connections: `AsyncPgConnection`,
//! `AsyncMysqlConnection`, and SQLite through `SyncConnectionWrapper` (the `async-postgres`,
//! `async-mysql` and `async-sqlite` features), and the connections their deadpool, bb8 and
//! mobc pools hand out.
//!
//! The same API as the blocking one, `.await`ed: [`insert_into`], [`assign_ids`], [`next_id`]
//! and its siblings from the process-wide default generators (what [`crate::global`] has for
//! blocking connections), a [`Generator`] of your own, gapless numbers in your async
//! transaction and [`next_value`]. It is the same allocator as
//! the blocking one, not a copy: blocks, periods, policies, identity checks and every
//! guarantee are shared code, and only the statements run differently. A [`Generator`] shares
//! its blocks with the [`crate::Generator`] it was made from, so an app that is half sync and
//! half async keeps one cache.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use diesel::prelude::*;
//! use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
//! use diesel_async::AsyncConnection;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { orders (order_no) { order_no -> Text, item -> Text } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = orders)]
//! struct NewOrder {
//!     #[distributed_id(prefix = "ORD", date = "", pad = 4)]
//!     order_no: String,
//!     item: String,
//! }
//!
//! // Migrations run on a blocking connection (for PostgreSQL and MySQL: diesel-async's
//! // `AsyncConnectionWrapper`, inside `spawn_blocking`).
//! # let dir = tempfile::tempdir()?;
//! # let url = dir.path().join("app.db").display().to_string();
//! let mut setup = SqliteConnection::establish(&url)?;
//! diesel_seqgen::run_migrations(&mut setup)?;
//! diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY, item TEXT NOT NULL)")
//!     .execute(&mut setup)?;
//!
//! let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
//! let mut order = NewOrder { order_no: String::new(), item: "tea".into() };
//! diesel_seqgen::nonblocking::insert_into(orders::table).values(&mut order).execute(&mut conn).await?;
//! assert_eq!(order.order_no, "ORD0001");
//!
//! let spec = diesel_seqgen::Spec::builder("tickets").prefix("T").date("").pad(3).build()?;
//! assert_eq!(diesel_seqgen::nonblocking::next_id(&mut conn, &spec).await?, "T001");
//! # Ok(())
//! # }
//! ```
//!
//! # Tasks and cancellation
//! When a key's block runs dry, one task reserves the next and the others await it; no lock
//! is held across an await. A future dropped at any point (a timeout, a client gone) leaves
//! no number to be served twice: the block it was reserving, if the database took the
//! statement, is a hole, and the next caller reserves again. An insert with a gapless field
//! dropped before its savepoint committed sets its records' IDs back to unset, as a rollback
//! does. (Records filled by [`assign_ids`] inside your own transaction are yours to clear if
//! that transaction does not commit, as on the blocking side.)
//!
//! # Pools
//! Connections from any pool work as they are. Give a generator a pool of its own (the
//! `deadpool` or `bb8` feature: [`GeneratorBuilder::async_pool`](crate::GeneratorBuilder),
//! or [`use_pool`] for the default generators) and on PostgreSQL and MySQL it reserves the
//! blocks needed inside your transactions beside them, and the next block of a busy key on a
//! task before the current one runs dry. Without one, batched numbers needed inside a
//! transaction are taken in that transaction, uncached (see [`crate::Generator`],
//! "Transactions"), and blocks are reserved by the task that finds the block empty. Its own
//! pool, because tasks that hold every connection of a shared one inside transactions would
//! each wait for one more.

mod free;
mod insert;
mod pending;

pub use free::*;
pub use insert::{insert_into, IncompleteInsert, InsertWithIds};
pub use pending::number_pending;

use std::ops::Range;

use diesel_async::AsyncConnection;

use crate::backend::AsyncBackend;
use crate::driver::NonBlocking;
use crate::engine::{formatted, formatted_one, numeric};
use crate::error::Result;
use crate::model::Records;
use crate::stats::KeyStats;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Scoped;
use free::fill;

/// Hands out IDs for one database on diesel-async connections: [`crate::Generator`]'s blocks
/// and configuration, its methods `.await`ed.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use diesel::prelude::*;
/// use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
/// use diesel_async::AsyncConnection;
///
/// # let dir = tempfile::tempdir()?;
/// # let url = dir.path().join("app.db").display().to_string();
/// # diesel_seqgen::run_migrations(&mut SqliteConnection::establish(&url)?)?;
/// let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
/// let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
///
/// let generator = diesel_seqgen::nonblocking::Generator::new();
/// assert_eq!(generator.next_id(&mut conn, &spec).await?, "ORD0001");
/// assert_eq!(generator.next_ids(&mut conn, &spec, 2).await?, ["ORD0002", "ORD0003"]);
/// assert_eq!(generator.reservations(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct Generator {
    inner: crate::Generator,
}

impl From<crate::Generator> for Generator {
    /// The async face of `generator`: both share their blocks.
    fn from(generator: crate::Generator) -> Self {
        Generator { inner: generator }
    }
}

impl AsRef<crate::Generator> for Generator {
    fn as_ref(&self) -> &crate::Generator {
        &self.inner
    }
}

impl Generator {
    /// A generator on the system clock; configure one with [`crate::Generator::builder`] and
    /// [`From`].
    pub fn new() -> Self {
        Generator::default()
    }

    /// The next ID of `spec` (`&spec`, or `spec.scope("acme")`), formatted:
    /// [`crate::Generator::next_id`].
    pub async fn next_id<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<String>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let target = spec.into();
        let mut id = String::new();
        let emit = formatted_one(target, &mut id);
        self.take(conn, target, 1, emit).await?;
        Ok(id)
    }

    /// The next `n` IDs of `spec`, with at most one reservation.
    pub async fn next_ids<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<String>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let target = spec.into();
        let mut ids = Vec::with_capacity(n);
        let emit = formatted(target, &mut ids);
        self.take(conn, target, n, emit).await?;
        Ok(ids)
    }

    /// The next ID of a numeric `spec` as an `i64`.
    pub async fn next_number<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<i64>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let target = spec.into();
        let mut id = 0;
        let emit = numeric(target.spec(), |n| id = n)?;
        self.take(conn, target, 1, emit).await?;
        Ok(id)
    }

    /// The next `n` IDs of a numeric `spec` as `i64`s, with at most one reservation.
    pub async fn next_numbers<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<i64>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let target = spec.into();
        let mut ids = Vec::with_capacity(n);
        let emit = numeric(target.spec(), |id| ids.push(id))?;
        self.take(conn, target, n, emit).await?;
        Ok(ids)
    }

    /// Takes `n` numbers of `target` on `conn`, handed to `emit`.
    async fn take<C, F>(&self, conn: &mut C, target: Scoped<'_>, n: usize, emit: F) -> Result<()>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        self.inner
            .engine()
            .take_on(&mut NonBlocking(conn), target, n as u64, emit)
            .await
    }

    /// Fills the unset ID fields of `records` from this generator:
    /// [`crate::Generator::assign_ids`].
    pub async fn assign_ids<R, C>(&self, conn: &mut C, records: &mut R) -> Result<()>
    where
        R: Records + ?Sized,
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        fill(records.as_rows(), Some(self), conn, &mut Vec::new()).await
    }

    /// Gives the numbers this generator still holds back to their counters, for a clean
    /// shutdown: [`crate::Generator::release`].
    pub async fn release<C>(&self, conn: &mut C) -> Result<u64>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.inner.engine().release_on(&mut NonBlocking(conn)).await
    }

    /// How many reservations this generator made: [`crate::Generator::reservations`].
    pub fn reservations(&self) -> u64 {
        self.inner.reservations()
    }

    /// What this generator did for each key: [`crate::Generator::stats`].
    pub fn stats(&self) -> Vec<KeyStats> {
        self.inner.stats()
    }
}
