//! The handle users hold: a [`Generator`] delegates every call to its engine
//! (`crate::engine`), where each concern has its file; its [builder](GeneratorBuilder) is
//! beside it.

mod builder;

pub use builder::GeneratorBuilder;

use crate::backend::IdConnection;
use crate::engine::{formatted, formatted_one, numeric, Engine};
use crate::error::Result;
use crate::model::{fill, Records};
use crate::reserve::identity::Identity;
use crate::stats::KeyStats;
use diesel_seqgen_core::Scoped;

/// Hands out IDs for one database, reserving a block of numbers per round trip and serving
/// the rest from memory.
///
/// Cheap to clone (clones share their blocks), `Send + Sync`. Use one `Generator` per
/// database; it checks at every reservation that it is still talking to the same one and
/// fails with [`Error::DifferentDatabase`](crate::Error::DifferentDatabase) otherwise. The functions of [`crate::global`] use a
/// process-wide default that tells databases apart: once per connection for connections
/// checked out of an r2d2 pool, in the insert itself for `insert_into(..).execute` on any other,
/// and with one query per call for the rest.
///
/// # Blocks
/// A key's first block holds the spec's `batch` numbers; while blocks last less than a second
/// the next is twice as big (up to 100,000, and a hundredth of what a period can hold), and
/// it halves back when they last long: see [`GeneratorBuilder::adaptive_batch`] and
/// [`fixed_batch`](GeneratorBuilder::fixed_batch). With a [pool](GeneratorBuilder::pool), the
/// next block is reserved in the background once 80 % of the current one is served
/// (PostgreSQL, MySQL), so a caller rarely waits for a round trip; one that empties the block
/// first waits for that reservation rather than making its own. Without a pool, the caller
/// that finds the block empty reserves on its own connection while the others wait. The
/// background reservation takes an idle pool connection only, so give the pool one more
/// connection than your threads hold at once.
///
/// # Scopes
/// A [scoped](diesel_seqgen_core::SpecBuilder::scoped) spec has a block per scope value
/// (`spec.scope("acme")`), reserved and refilled as above, sized by the scope's own demand
/// (from a few numbers, down to one for a quiet scope). A generator keeps blocks for at most
/// 65,536 scopes of a spec ([`max_scopes`](GeneratorBuilder::max_scopes)), and drops a scope
/// nobody used for five minutes ([`scope_idle`](GeneratorBuilder::scope_idle)): its unused
/// numbers go back to their counters.
///
/// # Transactions
/// Numbers are cached only from reservations that have committed. When the connection is
/// inside a transaction and the cache is empty, the generator either reserves a block through
/// its [pool](GeneratorBuilder::pool) in a separate autocommit statement (PostgreSQL, MySQL),
/// or takes exactly the numbers asked for inside the caller's transaction and caches nothing
/// (no pool, and always on SQLite, where a second connection could not write while the
/// caller holds the write lock). The second way holds the `db_key` row lock until the caller
/// commits, which serialises writers of that key.
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
///
/// let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
/// let generator = diesel_seqgen::Generator::new();
/// assert_eq!(generator.next_id(&mut conn, &spec)?, "ORD0001");
/// assert_eq!(generator.next_ids(&mut conn, &spec, 2)?, ["ORD0002", "ORD0003"]);
/// assert_eq!(generator.reservations(), 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Generator {
    engine: Engine,
}

impl Default for Generator {
    fn default() -> Self {
        Generator::new()
    }
}

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generator")
            .field("database", &self.engine.database())
            .field("pool", &self.engine.has_pool())
            .field("reservations", &self.reservations())
            .finish_non_exhaustive()
    }
}

impl Generator {
    /// The next ID of `spec` (`&spec`, or `spec.scope("acme")` for a
    /// [scoped](diesel_seqgen_core::SpecBuilder::scoped) spec: see [`Scoped`]), formatted.
    ///
    /// A scope (a company, an order, a tenant: 1 to 191 characters, without control
    /// characters or white space at either end, else [`Error::InvalidScope`](crate::Error::InvalidScope)) has its own
    /// counter: each counts from 1 in every period, with its own block in batched mode and its
    /// own row lock in gapless mode, so gapless transactions of different scopes never wait
    /// for each other. The scope is not printed: IDs repeat across scopes, and are unique
    /// together with the scope (make that pair the table's unique key). A scoped spec without
    /// a scope, or an unscoped one with a scope, fails with [`Error::ScopeMismatch`](crate::Error::ScopeMismatch).
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").pad(4).scoped().build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("acme"))?, "INV0001");
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("acme"))?, "INV0002");
    /// assert_eq!(generator.next_id(&mut conn, invoices.scope("globex"))?, "INV0001");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn next_id<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<String>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let mut id = String::new();
        self.engine
            .take(conn, target, 1, formatted_one(target, &mut id))?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` ([`next_id`](Self::next_id)), formatted, with at most one
    /// reservation.
    pub fn next_ids<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<String>>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let mut ids = Vec::with_capacity(n);
        self.engine
            .take(conn, target, n as u64, formatted(target, &mut ids))?;
        Ok(ids)
    }

    /// The next ID of `spec` ([`next_id`](Self::next_id)) in its `i64` form; the spec must be
    /// [numeric](diesel_seqgen_core::Spec::is_numeric).
    pub fn next_number<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<i64>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut id = 0;
        self.engine
            .take(conn, target, 1, numeric(spec, |n| id = n)?)?;
        Ok(id)
    }

    /// The next `n` IDs of `spec` ([`next_id`](Self::next_id)) in their `i64` form, with at
    /// most one reservation.
    pub fn next_numbers<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
        n: usize,
    ) -> Result<Vec<i64>>
    where
        C: IdConnection,
    {
        let target = spec.into();
        let spec = target.spec();
        let mut ids = Vec::with_capacity(n);
        let emit = numeric(spec, |id| ids.push(id))?;
        self.engine.take(conn, target, n as u64, emit)?;
        Ok(ids)
    }

    /// How many reservations (database round trips that took numbers) this generator made.
    pub fn reservations(&self) -> u64 {
        self.engine.reservations()
    }

    /// What this generator did for each key it served, in key order: IDs served from memory,
    /// reservations and the numbers they took, numbers abandoned (holes) and given back,
    /// retries, conflicts and reservation times. See [`KeyStats`].
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let spec = diesel_seqgen::Spec::builder("orders").date("").pad(4).batch(10).build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// generator.next_ids(&mut conn, &spec, 3)?; // reserves 1..=10, serves 1..=3
    /// generator.next_id(&mut conn, &spec)?;     // 4, from memory
    /// let stats = &generator.stats()[0];
    /// assert_eq!((stats.key.as_str(), stats.reservations, stats.numbers_reserved), ("orders", 1, 10));
    /// assert_eq!(stats.served_from_memory, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn stats(&self) -> Vec<KeyStats> {
        self.engine.stats()
    }

    /// The last counter the database handed out for `spec`'s current period (on this
    /// generator's clock), or `None` when it handed out none yet. Nothing is reserved or
    /// locked.
    ///
    /// This is the database's view. In batched mode it counts whole blocks: numbers an
    /// instance still holds in memory are included, whether or not they were served. In
    /// gapless mode it is the last number a committed transaction took (a transaction that
    /// holds the counter but has not committed is not seen).
    pub fn last_value<'s, C>(
        &self,
        conn: &mut C,
        spec: impl Into<Scoped<'s>>,
    ) -> Result<Option<u64>>
    where
        C: IdConnection,
    {
        self.engine.last_value(conn, spec)
    }

    /// The counter the database will hand out next for `spec`'s current period, if nothing
    /// else takes one first: after the last one, or at the key's `start_value` when an
    /// operator set one ahead. Nothing is reserved or locked. Format it with
    /// [`Spec::format`](diesel_seqgen_core::Spec::format) and [`Spec::period_at`](diesel_seqgen_core::Spec::period_at).
    ///
    /// In gapless mode it is the number the next committing transaction gets, if no other
    /// commits first. In batched mode it is where the next *reservation* starts: an instance
    /// may still serve numbers below it from memory. Fails with the error `next_id` would
    /// give when the period is full ([`Error::Overflow`](crate::Error::Overflow) or
    /// [`Error::SeriesExhausted`](crate::Error::SeriesExhausted)), and with
    /// [`Error::ShapeChanged`](crate::Error::ShapeChanged) when the key records another shape.
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let invoices = diesel_seqgen::Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// assert_eq!(generator.last_value(&mut conn, &invoices)?, None);
    /// assert_eq!(generator.peek_next(&mut conn, &invoices)?, 1);
    /// conn.transaction(|conn| generator.next_id(conn, &invoices))?;
    /// assert_eq!(generator.last_value(&mut conn, &invoices)?, Some(1));
    /// let next = generator.peek_next(&mut conn, &invoices)?;
    /// assert_eq!(invoices.format("", next), "INV000002");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn peek_next<'s, C>(&self, conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<u64>
    where
        C: IdConnection,
    {
        self.engine.peek_next(conn, spec)
    }

    /// Gives the numbers this generator still holds back to their counters, for a clean
    /// shutdown: a restarted app then continues without a hole. One compare-and-set per
    /// cached block (`SET current_value = <first unused - 1> WHERE current_value = <block
    /// end>`), which succeeds only when no other instance reserved after this one; otherwise
    /// those numbers stay holes, as they would without it. Nothing this generator held is
    /// served afterwards either way: a later call reserves again. Returns how many numbers
    /// went back.
    ///
    /// Numbers are served in order, so what a generator holds is always the end of its
    /// blocks: after `release`, the numbers one generator handed out are exactly `1..=n`
    /// when no other instance reserved from the same counters.
    ///
    /// Fails with [`Error::DifferentDatabase`](crate::Error::DifferentDatabase) when `conn` reaches another database than the
    /// one this generator reserved from.
    ///
    /// ```
    /// use diesel::prelude::*;
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(100).build()?;
    ///
    /// let generator = diesel_seqgen::Generator::new();
    /// assert_eq!(generator.next_id(&mut conn, &spec)?, "ORD0001"); // 2..=100 held
    /// assert_eq!(generator.release(&mut conn)?, 99);
    /// // The next instance (here: a new generator) continues without a hole.
    /// assert_eq!(diesel_seqgen::Generator::new().next_id(&mut conn, &spec)?, "ORD0002");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn release<C>(&self, conn: &mut C) -> Result<u64>
    where
        C: IdConnection,
    {
        self.engine.release(conn)
    }

    /// Fills the unset ID fields of `records` (one record, a slice or a `Vec` of them) from
    /// this generator, on `conn`: one call per annotated field for all the records, so at
    /// most one reservation per field (per scope, for a scoped field). Then insert them with
    /// plain Diesel. ([`crate::assign_ids`] does the same from the process-wide default.)
    ///
    /// ```
    /// use diesel::prelude::*;
    /// use diesel_seqgen::DistributedId;
    ///
    /// diesel::table! { menus (id) { id -> Text, title -> Text } }
    ///
    /// #[derive(Insertable, DistributedId)]
    /// #[diesel(table_name = menus)]
    /// struct NewMenu {
    ///     #[distributed_id(prefix = "MENU", date = "")]
    ///     id: String,
    ///     title: String,
    /// }
    ///
    /// let mut conn = SqliteConnection::establish(":memory:")?;
    /// diesel_seqgen::run_migrations(&mut conn)?;
    /// diesel::sql_query("CREATE TABLE menus (id TEXT PRIMARY KEY, title TEXT NOT NULL)").execute(&mut conn)?;
    ///
    /// let mut rows: Vec<NewMenu> = ["Tea", "Cake"]
    ///     .map(|title| NewMenu { id: String::new(), title: title.into() })
    ///     .into();
    /// diesel_seqgen::Generator::new().assign_ids(&mut conn, &mut rows)?;
    /// diesel::insert_into(menus::table).values(&rows).execute(&mut conn)?;
    /// assert_eq!(rows[1].id, "MENU000002");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn assign_ids<R, C>(&self, conn: &mut C, records: &mut R) -> Result<()>
    where
        R: Records + ?Sized,
        C: IdConnection,
    {
        let engine = &self.engine;
        fill(records.as_rows(), conn, &mut Vec::new(), |_| {
            Ok(engine.clone())
        })
    }

    /// The engine behind this handle, for the crate's own callers.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(crate) fn into_engine(self) -> Engine {
        self.engine
    }

    pub(crate) fn from_engine(engine: Engine) -> Self {
        Generator { engine }
    }

    /// A process-wide default generator for the database `identity`.
    pub(crate) fn default_for(identity: Identity) -> Self {
        Generator::from_engine(Engine::default_for(identity))
    }

    /// Whether `other` is this generator (a clone of it), not merely one like it.
    pub(crate) fn is(&self, other: &Generator) -> bool {
        self.engine.is(&other.engine)
    }

    /// Unique in the process, never reused.
    pub(crate) fn uid(&self) -> u64 {
        self.engine.uid()
    }

    /// Gives this generator `pool` (the process-wide default's, by `use_pool`).
    #[cfg(seqgen_pool)]
    pub(crate) fn set_pool(&self, pool: std::sync::Arc<dyn crate::reserve::pool::PoolReserve>) {
        self.engine.set_pool(pool);
    }
}
