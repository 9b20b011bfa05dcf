//! seqgen on [diesel-async](https://docs.rs/diesel-async)'s connections: `AsyncPgConnection`,
//! `AsyncMysqlConnection`, and SQLite through `SyncConnectionWrapper` (the `async-postgres`,
//! `async-mysql` and `async-sqlite` features), and the connections their deadpool, bb8 and
//! mobc pools hand out.
//!
//! The same API as the crate root, `.await`ed: [`insert_into`], [`assign_ids`], [`next_id`]
//! and its siblings from the process-wide default generators, a [`Generator`] of your own,
//! gapless numbers in your async transaction and [`next_value`]. It is the same allocator as
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
//! use seqgen::DistributedId;
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
//! seqgen::run_migrations(&mut setup)?;
//! diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY, item TEXT NOT NULL)")
//!     .execute(&mut setup)?;
//!
//! let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
//! let mut order = NewOrder { order_no: String::new(), item: "tea".into() };
//! seqgen::r#async::insert_into(orders::table).values(&mut order).execute(&mut conn).await?;
//! assert_eq!(order.order_no, "ORD0001");
//!
//! let spec = seqgen::Spec::builder("tickets").prefix("T").date("").pad(3).build()?;
//! assert_eq!(seqgen::r#async::next_id(&mut conn, &spec).await?, "T001");
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

use diesel::deserialize::FromSqlRow;
use diesel::query_builder::{InsertStatement, QueryFragment, QueryId};
use diesel::sql_types::BigInt;
use diesel::{Insertable, Table};
use diesel_async::methods::{ExecuteDsl, LoadQuery};
use diesel_async::{AsyncConnection, RunQueryDsl};
use futures_core::Stream;

use crate::backend::AsyncBackend;
use crate::driver::{begin, end, Driver, NonBlocking};
use crate::error::Result;
use crate::generator::{formatted, formatted_one, numeric};
use crate::insert::Records;
use crate::model::{fill_on, gapless_field, plan_fill, unfill, DistributedId};
use crate::one_statement::{self, Numbering, OneStatement};
#[cfg(seqgen_async_pool)]
pub use crate::reserve::pool::async_pools::AsyncPool;
use crate::stats::KeyStats;
use crate::Sequence;
use seqgen_core::Spec;

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
/// # seqgen::run_migrations(&mut SqliteConnection::establish(&url)?)?;
/// let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
/// let spec = seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
///
/// let generator = seqgen::r#async::Generator::new();
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

    /// The next ID of `spec`, formatted: [`crate::Generator::next_id`].
    pub async fn next_id<C>(&self, conn: &mut C, spec: &Spec) -> Result<String>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.next_id_in(conn, spec, "").await
    }

    /// The next `n` IDs of `spec`, with at most one reservation.
    pub async fn next_ids<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.next_ids_in(conn, spec, "", n).await
    }

    /// The next ID of a numeric `spec` as an `i64`.
    pub async fn next_number<C>(&self, conn: &mut C, spec: &Spec) -> Result<i64>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.next_number_in(conn, spec, "").await
    }

    /// The next `n` IDs of a numeric `spec` as `i64`s, with at most one reservation.
    pub async fn next_numbers<C>(&self, conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.next_numbers_in(conn, spec, "", n).await
    }

    /// The next ID of a scoped `spec` in `scope`: [`crate::Generator::next_id_in`].
    pub async fn next_id_in<C>(&self, conn: &mut C, spec: &Spec, scope: &str) -> Result<String>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let mut id = String::new();
        let emit = formatted_one(spec, &mut id);
        self.inner
            .take_on(&mut NonBlocking(conn), spec, scope, 1, emit)
            .await?;
        Ok(id)
    }

    /// The next `n` IDs of a scoped `spec` in `scope`, with at most one reservation.
    pub async fn next_ids_in<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: usize,
    ) -> Result<Vec<String>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let mut ids = Vec::with_capacity(n);
        let emit = formatted(spec, &mut ids);
        self.inner
            .take_on(&mut NonBlocking(conn), spec, scope, n as u64, emit)
            .await?;
        Ok(ids)
    }

    /// The next ID of a numeric, scoped `spec` in `scope` as an `i64`.
    pub async fn next_number_in<C>(&self, conn: &mut C, spec: &Spec, scope: &str) -> Result<i64>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let mut id = 0;
        let emit = numeric(spec, |n| id = n)?;
        self.inner
            .take_on(&mut NonBlocking(conn), spec, scope, 1, emit)
            .await?;
        Ok(id)
    }

    /// The next `n` IDs of a numeric, scoped `spec` in `scope` as `i64`s, with at most one
    /// reservation.
    pub async fn next_numbers_in<C>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: usize,
    ) -> Result<Vec<i64>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        let mut ids = Vec::with_capacity(n);
        let emit = numeric(spec, |id| ids.push(id))?;
        self.inner
            .take_on(&mut NonBlocking(conn), spec, scope, n as u64, emit)
            .await?;
        Ok(ids)
    }

    /// Gives the numbers this generator still holds back to their counters, for a clean
    /// shutdown: [`crate::Generator::release`].
    pub async fn release<C>(&self, conn: &mut C) -> Result<u64>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
    {
        self.inner.release_on(&mut NonBlocking(conn)).await
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

/// Gives the process-wide default generator of the pool's database (the one behind this
/// module's free functions, [`assign_ids`] and [`insert_into`]) a pool of diesel-async
/// connections (diesel-async's deadpool or bb8 pool, the `deadpool` and `bb8` features), as
/// [`crate::use_pool`] does for r2d2: blocks needed inside your transactions are then reserved
/// beside them (PostgreSQL, MySQL), and the next block of a key is reserved on a task before
/// the current one runs dry. Call it once at start-up, per database, inside the runtime.
#[cfg(seqgen_async_pool)]
pub async fn use_pool(pool: impl AsyncPool) -> Result<()> {
    let identity = crate::reserve::pool::PoolReserve::identify(&pool).await?;
    crate::global::install_pool(identity, std::sync::Arc::new(pool));
    Ok(())
}

/// The process-wide default generator of the database `conn` reaches (one query tells it),
/// or a throwaway one where numbers are taken in the caller's transaction anyway.
async fn default_generator<C>(conn: &mut C) -> Result<Generator>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let found = crate::global::default_on(&mut NonBlocking(conn)).await?;
    Ok(Generator::from(found.unwrap_or_default()))
}

/// Free functions on the process-wide default generators (one per database, shared with the
/// blocking API's), each telling the database apart with one query per call: hold a
/// [`Generator`] per database to save it.
macro_rules! from_default {
    ($($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty;)*) => {$(
        $(#[$doc])*
        pub async fn $name<C>(conn: &mut C, $($arg: $ty),*) -> Result<$out>
        where
            C: AsyncConnection,
            C::Backend: AsyncBackend,
        {
            default_generator(conn).await?.$name(conn, $($arg),*).await
        }
    )*};
}

from_default! {
    /// The next ID of `spec` from the process-wide default generator: [`crate::next_id`].
    next_id(spec: &Spec) -> String;
    /// The next `n` IDs of `spec` from the process-wide default generator.
    next_ids(spec: &Spec, n: usize) -> Vec<String>;
    /// The next `i64` ID of `spec` from the process-wide default generator.
    next_number(spec: &Spec) -> i64;
    /// The next `n` `i64` IDs of `spec` from the process-wide default generator.
    next_numbers(spec: &Spec, n: usize) -> Vec<i64>;
    /// The next ID of a scoped `spec` in `scope` from the process-wide default generator.
    next_id_in(spec: &Spec, scope: &str) -> String;
    /// The next `n` IDs of a scoped `spec` in `scope` from the process-wide default generator.
    next_ids_in(spec: &Spec, scope: &str, n: usize) -> Vec<String>;
    /// The next `i64` ID of a scoped `spec` in `scope` from the process-wide default generator.
    next_number_in(spec: &Spec, scope: &str) -> i64;
    /// The next `n` `i64` IDs of a scoped `spec` in `scope` from the default generator.
    next_numbers_in(spec: &Spec, scope: &str, n: usize) -> Vec<i64>;
    /// Gives the numbers the default generator of `conn`'s database holds back:
    /// [`crate::release`].
    release() -> u64;
}

/// The next value of the gapless counter `key`, inside the caller's async transaction:
/// [`crate::next_value`].
pub async fn next_value<C>(conn: &mut C, key: &str) -> Result<i64>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let mut values = next_values_of(conn, &Sequence::new(key)?, "", 1).await?;
    Ok(values.pop().unwrap_or_default())
}

/// The next `n` values of the gapless counter `key`, inside the caller's async transaction.
pub async fn next_values<C>(conn: &mut C, key: &str, n: usize) -> Result<Vec<i64>>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    next_values_of(conn, &Sequence::new(key)?, "", n).await
}

/// The next `n` values of `sequence` in `scope` (`""` unscoped), as
/// [`Sequence::next_values_in`] takes them: for a sequence configured with
/// [`nowait`](Sequence::nowait), [`scoped`](Sequence::scoped) or
/// [`allow_outside_transaction`](Sequence::allow_outside_transaction).
pub async fn next_values_of<C>(
    conn: &mut C,
    sequence: &Sequence,
    scope: &str,
    n: usize,
) -> Result<Vec<i64>>
where
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    // Gapless numbers are never cached: any generator takes them the same way.
    let generator = Generator::new();
    let spec = sequence.counter_spec();
    if sequence.outside_transaction() && !NonBlocking(&mut *conn).in_transaction() {
        begin(conn).await?;
        let taken = generator.next_numbers_in(conn, spec, scope, n).await;
        end(conn, taken).await
    } else {
        generator.next_numbers_in(conn, spec, scope, n).await
    }
}

/// Fills the unset ID fields of `rows` from the process-wide default generator:
/// [`crate::assign_ids`].
pub async fn assign_ids<T, C>(rows: &mut [T], conn: &mut C) -> Result<()>
where
    T: DistributedId,
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    fill(rows, None, conn, &mut Vec::new()).await
}

/// Fills the unset ID fields of `rows` from `generator`.
pub async fn assign_ids_with<T, C>(
    rows: &mut [T],
    generator: &Generator,
    conn: &mut C,
) -> Result<()>
where
    T: DistributedId,
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    fill(rows, Some(generator), conn, &mut Vec::new()).await
}

/// [`crate::model::fill`] on an async connection.
async fn fill<T, C>(
    rows: &mut [T],
    generator: Option<&Generator>,
    conn: &mut C,
    filled: &mut Vec<(usize, usize)>,
) -> Result<()>
where
    T: DistributedId,
    C: AsyncConnection,
    C::Backend: AsyncBackend,
{
    let mut db = NonBlocking(conn);
    let Some(scopes) = plan_fill(rows, db.in_transaction())? else {
        return Ok(());
    };
    let default;
    let generator = match generator {
        Some(generator) => generator,
        None => {
            default = default_generator(db.0).await?;
            &default
        }
    };
    fill_on(rows, &generator.inner, &mut db, scopes, filled).await
}

/// Starts an insert that fills ID fields first, on an async connection:
/// `seqgen::r#async::insert_into(table).values(&mut rows).execute(&mut conn).await`, as
/// [`crate::insert_into`] does on a blocking one.
pub fn insert_into<T: Table>(target: T) -> IncompleteInsert<T> {
    IncompleteInsert { target }
}

/// An insert without values yet; see [`insert_into`].
#[derive(Debug, Clone, Copy)]
#[must_use = "an insert does nothing until it is executed"]
pub struct IncompleteInsert<T> {
    target: T,
}

impl<T> IncompleteInsert<T> {
    /// The records to insert; their unset ID fields are filled when the insert runs.
    pub fn values<R: Records + ?Sized>(self, records: &mut R) -> InsertWithIds<'_, T, R> {
        InsertWithIds {
            target: self.target,
            records,
            generator: None,
        }
    }
}

/// An insert that fills ID fields, then runs as diesel-async's; see [`insert_into`].
#[must_use = "an insert does nothing until it is executed"]
pub struct InsertWithIds<'a, T, R: ?Sized> {
    target: T,
    records: &'a mut R,
    generator: Option<&'a Generator>,
}

impl<'a, T, R> InsertWithIds<'a, T, R>
where
    T: Table + Send + 'a,
    R: Records + Send + ?Sized,
    for<'b> &'b R: Insertable<T>,
{
    /// Takes IDs from `generator` instead of the process-wide default.
    pub fn with_generator(mut self, generator: &'a Generator) -> Self {
        self.generator = Some(generator);
        self
    }

    /// Fills the IDs, inserts, and returns the number of rows inserted. On PostgreSQL a
    /// gapless record is numbered by the insert statement itself, as
    /// [`crate::InsertWithIds::execute`] says.
    pub async fn execute<C>(mut self, conn: &mut C) -> Result<usize>
    where
        T: Clone,
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        i64: FromSqlRow<BigInt, C::Backend>,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: ExecuteDsl<C>,
        for<'b> OneStatement<InsertStatement<T, <&'b R as Insertable<T>>::Values>>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        if let Some(inserted) = self.gapless_in_one_statement(conn).await? {
            return Ok(inserted);
        }
        fill_and_run!(self, conn, execute)
    }

    /// [`crate::InsertWithIds`]'s one-statement gapless insert, on diesel-async. Nothing is
    /// filled before the statement returned, so a future dropped midway leaves the records
    /// unset (and a transaction to its owner's rollback).
    async fn gapless_in_one_statement<C>(&mut self, conn: &mut C) -> Result<Option<usize>>
    where
        T: Clone,
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        i64: FromSqlRow<BigInt, C::Backend>,
        for<'b> OneStatement<InsertStatement<T, <&'b R as Insertable<T>>::Values>>:
            QueryFragment<C::Backend> + QueryId + Send,
    {
        let Some(field) = one_statement::field_of::<C::Backend, _>(self.records.as_rows()) else {
            return Ok(None);
        };
        let default;
        let generator = match self.generator {
            Some(generator) => generator,
            None => {
                default = default_generator(conn).await?;
                &default
            }
        };
        let (generator, n) = (&generator.inner, self.records.as_rows().len());
        let Some((numbering, plan)) = Numbering::start(generator, field, n)? else {
            return Ok(None);
        };
        let (target, records) = (self.target.clone(), &*self.records);
        // The statement is made and handed to diesel-async's `load` before anything is
        // awaited: held across an await, its type (which names `<&R as Insertable<T>>::Values`)
        // could not be shown `Send` for every lifetime, as `execute`'s future must be. For the
        // same reason this reads the row itself instead of `get_result`, whose future is a type
        // of the query's.
        let sent = async {
            let statement = OneStatement::new(diesel::insert_into(target).values(records), plan);
            statement.is_safe_to_cache_prepared(&C::Backend::default())?;
            let rows = conn.load(statement).await?;
            let mut rows = std::pin::pin!(rows);
            let first = std::future::poll_fn(|cx| Stream::poll_next(rows.as_mut(), cx)).await;
            first
                .map(|row| {
                    <i64 as FromSqlRow<BigInt, C::Backend>>::build_from_row(&row?)
                        .map_err(diesel::result::Error::DeserializationError)
                })
                .transpose()
        }
        .await;
        let numbered = numbering.end::<C::Backend, _>(generator, sent, self.records.as_rows())?;
        Ok(numbered.then_some(n))
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads one row (PostgreSQL, SQLite).
    pub async fn get_result<C, U>(self, conn: &mut C) -> Result<U>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        U: Send,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        fill_and_run!(self, conn, get_result)
    }

    /// Fills the IDs, inserts with `RETURNING`, and loads every row (PostgreSQL, SQLite).
    pub async fn get_results<C, U>(self, conn: &mut C) -> Result<Vec<U>>
    where
        C: AsyncConnection,
        C::Backend: AsyncBackend,
        U: Send,
        for<'b> InsertStatement<T, <&'b R as Insertable<T>>::Values>: LoadQuery<'b, C, U>,
    {
        fill_and_run!(self, conn, get_results)
    }

    /// Starts the insert: with a gapless field, a transaction (a savepoint inside the
    /// caller's), so that the number and the row commit or roll back together.
    async fn open<C>(self, conn: &mut C) -> Result<(T, Filling<'a, R>, Option<&'a Generator>)>
    where
        C: AsyncConnection,
    {
        let gapless = gapless_field::<R::Row>().is_some();
        if gapless {
            begin(conn).await?;
        }
        let filling = Filling {
            records: self.records,
            filled: Vec::new(),
            transaction: gapless,
            kept: !gapless,
        };
        Ok((self.target, filling, self.generator))
    }
}

/// The body of each [`InsertWithIds`] statement: opens the insert, fills the records, runs
/// diesel-async's `$run` on them, and closes it. A macro rather than a function taking the
/// statement as an async closure: a future holding one cannot be shown `Send`
/// (rust-lang/rust#110338), and an axum handler's must be.
macro_rules! fill_and_run {
    ($insert:expr, $conn:ident, $run:ident) => {{
        let (target, mut filling, generator) = $insert.open($conn).await?;
        let result = async {
            fill(
                filling.records.as_rows(),
                generator,
                $conn,
                &mut filling.filled,
            )
            .await?;
            let insert = diesel::insert_into(target).values(&*filling.records);
            Ok(insert.$run($conn).await?)
        }
        .await;
        close($conn, result, filling).await
    }};
}
use fill_and_run;

/// The records of an insert being filled, and which (row, field) got an ID. In a transaction
/// (a gapless field) the IDs are set back to unset when it is dropped before its transaction
/// committed: after a rollback, and also when the insert's future is dropped midway (a
/// timeout), whose transaction never commits. The rollback gives the numbers back to the next
/// caller; left in the records, a retry would insert them again — a duplicate.
struct Filling<'a, R: Records + ?Sized> {
    records: &'a mut R,
    filled: Vec<(usize, usize)>,
    transaction: bool,
    /// The IDs stay: no transaction to take them back, or it committed.
    kept: bool,
}

impl<R: Records + ?Sized> Drop for Filling<'_, R> {
    fn drop(&mut self) {
        if !self.kept {
            unfill(self.records.as_rows(), &self.filled);
        }
    }
}

/// Ends an insert [`InsertWithIds::open`] started: commits or rolls back its transaction, if
/// it has one; the records keep their IDs only once it committed (see [`Filling`]).
async fn close<C, O, R>(conn: &mut C, result: Result<O>, mut filling: Filling<'_, R>) -> Result<O>
where
    C: AsyncConnection,
    R: Records + ?Sized,
{
    if !filling.transaction {
        return result;
    }
    let result = end(conn, result).await;
    filling.kept = result.is_ok();
    result
}
