//! The process-wide default generator behind the free functions, the derive and
//! `insert_into`: one generator per database, told apart by its identity.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use diesel::connection::LoadConnection;

use crate::backend::Backend;
use crate::driver::{drive, Blocking, Driver};
use crate::error::Result;
use crate::generator::Generator;
use crate::reserve::identity::{identify, Identity};
use crate::stats::KeyStats;
use seqgen_core::Spec;

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
/// query; a dereferenced or plain connection is identified with one query per call.
///
/// ```
/// use diesel::r2d2::{ConnectionManager, Pool};
/// use diesel::SqliteConnection;
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.db");
/// let pool = Pool::builder()
///     .connection_customizer(Box::new(seqgen::sqlite::SqliteSetup))
///     .build(ConnectionManager::<SqliteConnection>::new(path.to_str().unwrap()))?;
/// seqgen::run_migrations(&mut *pool.get()?)?;
/// seqgen::use_pool(pool)?;
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
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    // A physical connection reaches one database for its whole life, so what it was found to
    // reach once still holds (the README names the exception: MySQL's `USE other`).
    if let Some(remembered) = remembered(conn) {
        return Ok(remembered);
    }
    let generator = drive(default_on(&mut Blocking(&mut *conn)))?;
    if let Some(generator) = &generator {
        remember(conn, generator);
    }
    Ok(generator.unwrap_or_default())
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

/// The default generator `conn` remembered, if it is a pooled connection that did so.
fn remembered<C>(conn: &mut C) -> Option<Generator>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    #[cfg(feature = "r2d2")]
    if let Some(Remembered(generator)) = crate::reserve::pool::extensions(conn)?.get::<Remembered>()
    {
        return Some(generator.clone());
    }
    let _ = conn;
    None
}

/// Lets `conn`, if it is a pooled connection, remember its database's default generator.
fn remember<C>(conn: &mut C, generator: &Generator)
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    #[cfg(feature = "r2d2")]
    if let Some(extensions) = crate::reserve::pool::extensions(conn) {
        extensions.insert(Remembered(generator.clone()));
    }
    let _ = (conn, generator);
}

/// The next ID of `spec` from the process-wide default generator, which keeps one cache per
/// database. It tells databases apart once per connection for connections checked out of an
/// r2d2 pool (pass the `PooledConnection` itself), and with one query per call for any other
/// connection: hold a [`Generator`] per database to avoid that query. See
/// [`Generator::next_id`].
pub fn next_id<C>(conn: &mut C, spec: &Spec) -> Result<String>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_id(conn, spec)
}

/// The next `n` IDs of `spec` from the process-wide default generator.
pub fn next_ids<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_ids(conn, spec, n)
}

/// The next `i64` ID of `spec` from the process-wide default generator.
pub fn next_number<C>(conn: &mut C, spec: &Spec) -> Result<i64>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_number(conn, spec)
}

/// The next `n` `i64` IDs of `spec` from the process-wide default generator.
pub fn next_numbers<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_numbers(conn, spec, n)
}

/// The next ID of a scoped `spec` in `scope` from the process-wide default generator: see
/// [`Generator::next_id_in`].
pub fn next_id_in<C>(conn: &mut C, spec: &Spec, scope: &str) -> Result<String>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_id_in(conn, spec, scope)
}

/// The next `n` IDs of a scoped `spec` in `scope` from the process-wide default generator.
pub fn next_ids_in<C>(conn: &mut C, spec: &Spec, scope: &str, n: usize) -> Result<Vec<String>>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_ids_in(conn, spec, scope, n)
}

/// The next `i64` ID of a scoped `spec` in `scope` from the process-wide default generator.
pub fn next_number_in<C>(conn: &mut C, spec: &Spec, scope: &str) -> Result<i64>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_number_in(conn, spec, scope)
}

/// The next `n` `i64` IDs of a scoped `spec` in `scope` from the process-wide default
/// generator.
pub fn next_numbers_in<C>(conn: &mut C, spec: &Spec, scope: &str, n: usize) -> Result<Vec<i64>>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.next_numbers_in(conn, spec, scope, n)
}

/// Gives the numbers the process-wide default generator holds for `conn`'s database back to
/// their counters, for a clean shutdown: see [`Generator::release`].
pub fn release<C>(conn: &mut C) -> Result<u64>
where
    C: LoadConnection + 'static,
    C::Backend: Backend,
{
    default_generator(conn)?.release(conn)
}

/// What the process-wide default generators (one per database) did for each key, summed over
/// the databases, in key order: see [`Generator::stats`]. A generator that
/// [`use_pool`] replaced is no longer counted.
pub fn stats() -> Vec<KeyStats> {
    let generators: Vec<Generator> = defaults().values().cloned().collect();
    crate::stats::per_key(generators.iter().flat_map(Generator::stats))
}

/// The last counter the database handed out for `spec`'s current period, on the system
/// clock: see [`Generator::last_value`].
pub fn last_value<C>(conn: &mut C, spec: &Spec) -> Result<Option<u64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::last_value_at(conn, spec, "", chrono::Utc::now())
}

/// [`last_value`] of a scoped `spec` in `scope`: see [`Generator::last_value_in`].
pub fn last_value_in<C>(conn: &mut C, spec: &Spec, scope: &str) -> Result<Option<u64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::last_value_at(conn, spec, scope, chrono::Utc::now())
}

/// The counter the database will hand out next for `spec`'s current period, on the system
/// clock: see [`Generator::peek_next`].
pub fn peek_next<C>(conn: &mut C, spec: &Spec) -> Result<u64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::peek_next_at(conn, spec, "", chrono::Utc::now())
}

/// [`peek_next`] of a scoped `spec` in `scope`: see [`Generator::peek_next_in`].
pub fn peek_next_in<C>(conn: &mut C, spec: &Spec, scope: &str) -> Result<u64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::peek_next_at(conn, spec, scope, chrono::Utc::now())
}
