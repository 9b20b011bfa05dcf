//! The process-wide default generators: one [`Generator`] per database, told apart by the
//! database's identity, behind [`insert_into`](crate::insert_into), [`assign_ids`] and the
//! functions here. Use them when one generator per database is all you need; hold a
//! [`Generator`] of your own for another clock, other block sizes or a database of its own.
//!
//! A connection checked out of an r2d2 pool (passed as the `PooledConnection` itself) is told
//! apart once and then remembers its database. On any other connection,
//! `insert_into(..).execute` serves cached IDs on a guess that the insert checks itself, and
//! the rest costs one query per call to tell which database it reaches. [`use_pool`] gives a database's default generator a pool,
//! for reservations beside your transactions and ahead of need.

pub(crate) mod guess;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

#[cfg(feature = "r2d2")]
use diesel::connection::LoadConnection;

use crate::backend::asserted::Mark;
use crate::backend::{Backend, IdConnection};
use crate::driver::{drive, Blocking, Driver};
use crate::error::Result;
use crate::generator::Generator;
use crate::model::Records;
use crate::reserve::identity::{identify, Identity};
pub use crate::reserve::risks::{accept_async_replication, accept_non_durable_server};
use crate::stats::KeyStats;
use diesel_seqgen_core::Scoped;

/// The process-wide default generators, one per database.
fn defaults() -> std::sync::MutexGuard<'static, HashMap<Identity, Generator>> {
    static DEFAULTS: OnceLock<Mutex<HashMap<Identity, Generator>>> = OnceLock::new();
    DEFAULTS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Gives the process-wide default generator (the one behind [`next_id`], `assign_ids` and
/// [`insert_into`](crate::insert_into)) a pool for the database the pool connects to: blocks
/// needed inside your transactions are then reserved beside them (PostgreSQL, MySQL), your
/// transactions never hold the counter row, and the next block of a key is reserved in the
/// background before the current one runs dry. Call it once at start-up, per database.
///
/// Pass the pool's connections as they come (`&mut pool.get()?`, not `&mut *conn`): a pooled
/// connection is identified once and then remembers its database, so cached IDs cost no
/// query; on a dereferenced or plain connection `insert_into(..).execute` checks the database
/// in the insert itself, and the other functions identify it with one query per call.
///
/// ```
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::SqliteConnection;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.db");
/// let pool = Pool::builder()
///     .connection_customizer(Box::new(diesel_seqgen::sqlite::SqliteSetup))
///     .build(ConnectionManager::<SqliteConnection>::new(path.to_str().unwrap()))?;
/// diesel_seqgen::run_migrations(&mut *pool.get()?)?;
/// diesel_seqgen::global::use_pool(pool)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "r2d2")]
pub fn use_pool<C>(pool: diesel::r2d2::Pool<diesel::r2d2::ConnectionManager<C>>) -> Result<()>
where
    C: diesel::r2d2::R2D2Connection + LoadConnection + 'static,
    C::Backend: Backend,
{
    let identity = drive(crate::reserve::pool::PoolReserve::identify(&pool))?;
    install_pool(identity, std::sync::Arc::new(pool));
    Ok(())
}

/// Gives the default generator of the database `identity` `pool`. A generator that already
/// served IDs keeps its blocks: nothing it holds is lost.
#[cfg(seqgen_pool)]
pub(crate) fn install_pool(
    identity: Identity,
    pool: std::sync::Arc<dyn crate::reserve::pool::PoolReserve>,
) {
    defaults()
        .entry(identity.clone())
        .or_insert_with(|| Generator::default_for(identity))
        .set_pool(pool);
}

/// What a pooled connection remembers of the database it reaches (in its r2d2 extensions,
/// which live as long as the physical connection): that database's default generator.
#[cfg_attr(not(feature = "r2d2"), allow(dead_code))]
struct Remembered(Generator);

/// The process-wide default: one generator per database, told apart by its identity. A
/// connection checked out of an r2d2 pool is identified once, at its first use, and then
/// remembers its database; any other connection is identified at every call (one query).
pub(crate) fn default_generator<C>(conn: &mut C) -> Result<Generator>
where
    C: IdConnection,
{
    // A physical connection reaches one database for its whole life, so what it was found to
    // reach once still holds (the README names the exception: MySQL's `USE other`).
    let remembered = remembered(conn);
    match &remembered {
        Some(Some(generator)) => return Ok(generator.clone()),
        Some(None) => {} // pooled, met for the first time
        None => say_identified_per_call::<C::Backend>(
            "pass a pooled connection as it comes (`&mut pool.get()?`, not `&mut *conn`), or \
             hold a `diesel_seqgen::Generator` per database (`.with_generator(&generator)`)",
        ),
    }
    let generator = drive(default_on(&mut Blocking(&mut *conn)))?;
    if let (Some(None), Some(generator)) = (&remembered, &generator) {
        remember(conn, generator);
    }
    Ok(generator.unwrap_or_default())
}

/// The process-wide default generator of the database `db` reaches (the connection at `at`),
/// identified with one query, for a connection that cannot remember it: its session is then
/// marked as reaching that database (one more statement, the first time at its address, or
/// with `remark` when its session lost the mark), so that the next inserts on it can check the
/// guess themselves (`guess.rs`).
pub(crate) async fn default_marked_on<D: Driver>(
    db: &mut D,
    at: guess::Place,
    remark: bool,
) -> Result<Generator> {
    let Some(generator) = default_on(db).await? else {
        return Ok(Generator::default());
    };
    let (mark, marked) = guess::mark_at(at, &generator);
    if remark || !marked {
        let mark = mark.unwrap_or_else(|| Mark {
            value: guess::marker_of(&generator),
        });
        db.mark_session(&mark.value).await?;
        guess::marked(at, &generator, mark);
    }
    Ok(generator)
}

/// Whether `conn` remembers its database (an r2d2 pooled connection passed as it comes).
pub(crate) fn remembers<C: IdConnection>(conn: &mut C) -> bool {
    remembered(conn).is_some()
}

/// The process-wide default generator of the database `db` reaches, identified with one
/// query; `None` where numbers are taken in the caller's transaction, uncached, by a
/// throwaway generator.
pub(crate) async fn default_on<D: Driver>(db: &mut D) -> Result<Option<Generator>> {
    let in_transaction = db.in_transaction();
    // On SQLite, inside a transaction, numbers are taken in that transaction anyway; reading
    // the token first would make it a reader that must upgrade to a writer, which SQLite
    // refuses with "database is locked" under contention instead of waiting.
    if in_transaction && !D::Backend::RESERVE_BESIDE_TRANSACTION {
        return Ok(None);
    }
    // Inside a transaction the token is not created: a rollback would take it back. Without
    // one, a throwaway generator takes the numbers in that transaction, uncached.
    let Some(identity) = identify(db, "", !in_transaction).await?.1 else {
        return Ok(None);
    };
    let mut defaults = defaults();
    // Looked up first: the identity is cloned only the first time a database is met.
    Ok(Some(match defaults.get(&identity) {
        Some(generator) => generator.clone(),
        None => {
            let generator = Generator::default_for(identity.clone());
            defaults.insert(identity, generator.clone());
            generator
        }
    }))
}

/// What `conn` remembers of its database: `None` if it is not an r2d2 pooled connection
/// (it cannot remember), `Some(None)` if it is one met for the first time.
fn remembered<C>(conn: &mut C) -> Option<Option<Generator>>
where
    C: IdConnection,
{
    #[cfg(feature = "r2d2")]
    if let Some(extensions) = crate::reserve::pool::extensions(conn) {
        return Some(extensions.get::<Remembered>().map(|r| r.0.clone()));
    }
    let _ = conn;
    None
}

/// Says once per process, backend and form, with `tracing` (`warn`), that the default generator
/// tells the database apart with one query on every call of a connection form, which halves
/// the rate of single-row inserts on a server; `fix` names the faster form.
#[cfg_attr(not(feature = "tracing"), allow(unused_variables))]
pub(crate) fn say_identified_per_call<B: Backend>(fix: &'static str) {
    #[cfg(feature = "tracing")]
    {
        static SAID: Mutex<Vec<(&'static str, &'static str)>> = Mutex::new(Vec::new());
        if !B::IDENTIFY_IS_A_ROUND_TRIP {
            return;
        }
        let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
        if said.contains(&(B::NAME, fix)) {
            return;
        }
        said.push((B::NAME, fix));
        crate::trace::event!(
            warn,
            backend = B::NAME,
            "diesel-seqgen's default generator reads the database's identity with one query on every \
             call of this connection (about half the rate of single-row inserts): {fix}"
        );
    }
}

/// Lets `conn`, if it is a pooled connection, remember its database's default generator.
fn remember<C>(conn: &mut C, generator: &Generator)
where
    C: IdConnection,
{
    #[cfg(feature = "r2d2")]
    if let Some(extensions) = crate::reserve::pool::extensions(conn) {
        extensions.insert(Remembered(generator.clone()));
    }
    let _ = (conn, generator);
}

/// The next ID of `spec` (`&spec`, or `spec.scope("acme")`) from the process-wide default
/// generator of `conn`'s database: see [`Generator::next_id`].
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// let users = diesel_seqgen::Spec::builder("users").prefix("U").date("%Y%m%d").pad(6).build()?;
/// let id = diesel_seqgen::global::next_id(&mut conn, &users)?; // e.g. "U20261121000001"
/// assert!(id.starts_with('U') && id.ends_with("000001"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn next_id<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<String>
where
    C: IdConnection,
{
    default_generator(conn)?.next_id(conn, spec)
}

/// The next `n` IDs of `spec` from the process-wide default generator, with at most one
/// reservation: see [`Generator::next_ids`].
pub fn next_ids<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>, n: usize) -> Result<Vec<String>>
where
    C: IdConnection,
{
    default_generator(conn)?.next_ids(conn, spec, n)
}

/// The next ID of `spec` in its `i64` form from the process-wide default generator: see
/// [`Generator::next_number`].
pub fn next_number<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<i64>
where
    C: IdConnection,
{
    default_generator(conn)?.next_number(conn, spec)
}

/// The next `n` IDs of `spec` in their `i64` form from the process-wide default generator.
pub fn next_numbers<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>, n: usize) -> Result<Vec<i64>>
where
    C: IdConnection,
{
    default_generator(conn)?.next_numbers(conn, spec, n)
}

/// Fills the unset ID fields of `records` (one record, a slice or a `Vec` of them) from the
/// process-wide default generator, on `conn`; then insert them with plain Diesel. See
/// [`Generator::assign_ids`] (re-exported as [`crate::assign_ids`]).
pub fn assign_ids<R, C>(conn: &mut C, records: &mut R) -> Result<()>
where
    R: Records + ?Sized,
    C: IdConnection,
{
    crate::model::fill(records.as_rows(), conn, &mut Vec::new(), |conn| {
        default_generator(conn).map(Generator::into_engine)
    })
}

/// Gives the numbers the process-wide default generator holds for `conn`'s database back to
/// their counters, for a clean shutdown: see [`Generator::release`].
pub fn release<C>(conn: &mut C) -> Result<u64>
where
    C: IdConnection,
{
    default_generator(conn)?.release(conn)
}

/// What the process-wide default generators (one per database) did for each key, summed over
/// the databases, in key order: see [`Generator::stats`].
pub fn stats() -> Vec<KeyStats> {
    let generators: Vec<Generator> = defaults().values().cloned().collect();
    crate::stats::per_key(generators.iter().flat_map(Generator::stats))
}

/// The last counter the database handed out for `spec`'s current period, on the system
/// clock: see [`Generator::last_value`].
pub fn last_value<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<Option<u64>>
where
    C: IdConnection,
{
    let target = spec.into();
    crate::engine::last_value_at(conn, target.spec(), target.scope(), chrono::Utc::now())
}

/// The counter the database will hand out next for `spec`'s current period, on the system
/// clock: see [`Generator::peek_next`].
pub fn peek_next<'s, C>(conn: &mut C, spec: impl Into<Scoped<'s>>) -> Result<u64>
where
    C: IdConnection,
{
    let target = spec.into();
    crate::engine::peek_next_at(conn, target.spec(), target.scope(), chrono::Utc::now())
}
