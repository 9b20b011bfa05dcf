//! The process-wide default generator behind the free functions, the derive and
//! `insert_into`: one generator per database, told apart by its identity.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use diesel::connection::LoadConnection;

use crate::backend::Backend;
use crate::error::Result;
use crate::generator::Generator;
use crate::identity::{identify, Identity};
use crate::transaction::in_transaction;
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
/// needed inside your transactions are then reserved beside them (PostgreSQL, MySQL), and
/// your transactions never hold the counter row. Call it once at start-up, per database.
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
    let identity = {
        let mut conn = pool.get().map_err(crate::Error::Pool)?;
        identify(&mut *conn, "", true)?
            .1
            .ok_or(crate::Error::DifferentDatabase)?
    };
    let generator = Generator::default_for(identity.clone(), Some(Box::new(pool)));
    // A generator this replaces keeps serving the block it holds: both are disjoint.
    defaults().insert(identity, generator);
    Ok(())
}

/// The process-wide default: one generator per database, told apart by the database's token.
pub(crate) fn default_generator<C>(conn: &mut C) -> Result<Generator>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    let in_transaction = in_transaction(conn);
    // On SQLite, inside a transaction, numbers are taken in that transaction anyway; reading
    // the token first would make it a reader that must upgrade to a writer, which SQLite
    // refuses with "database is locked" under contention instead of waiting.
    if in_transaction && !C::Backend::RESERVE_BESIDE_TRANSACTION {
        return Ok(Generator::new());
    }
    // Inside a transaction the token is not created: a rollback would take it back. Without
    // one, a throwaway generator takes the numbers in that transaction, uncached.
    let Some(identity) = identify(conn, "", !in_transaction)?.1 else {
        return Ok(Generator::new());
    };
    let mut defaults = defaults();
    // Looked up first: the identity is cloned only the first time a database is met.
    if let Some(generator) = defaults.get(&identity) {
        return Ok(generator.clone());
    }
    let generator = Generator::default_for(identity.clone(), None);
    defaults.insert(identity, generator.clone());
    Ok(generator)
}

/// The next ID of `spec` from the process-wide default generator, which keeps one cache per
/// database (one query per call tells them apart: see `identity.rs`). See
/// [`Generator::next_id`].
pub fn next_id<C>(conn: &mut C, spec: &Spec) -> Result<String>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_id(conn, spec)
}

/// The next `n` IDs of `spec` from the process-wide default generator.
pub fn next_ids<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<String>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_ids(conn, spec, n)
}

/// The next `i64` ID of `spec` from the process-wide default generator.
pub fn next_number<C>(conn: &mut C, spec: &Spec) -> Result<i64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_number(conn, spec)
}

/// The next `n` `i64` IDs of `spec` from the process-wide default generator.
pub fn next_numbers<C>(conn: &mut C, spec: &Spec, n: usize) -> Result<Vec<i64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.next_numbers(conn, spec, n)
}

/// Gives the numbers the process-wide default generator holds for `conn`'s database back to
/// their counters, for a clean shutdown: see [`Generator::release`].
pub fn release<C>(conn: &mut C) -> Result<u64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    default_generator(conn)?.release(conn)
}

/// The last counter the database handed out for `spec`'s current period, on the system
/// clock: see [`Generator::last_value`].
pub fn last_value<C>(conn: &mut C, spec: &Spec) -> Result<Option<u64>>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::last_value_at(conn, spec, chrono::Utc::now())
}

/// The counter the database will hand out next for `spec`'s current period, on the system
/// clock: see [`Generator::peek_next`].
pub fn peek_next<C>(conn: &mut C, spec: &Spec) -> Result<u64>
where
    C: LoadConnection,
    C::Backend: Backend,
{
    crate::generator::peek_next_at(conn, spec, chrono::Utc::now())
}
