//! The `db_key` migrations, embedded in the crate, one set per backend.
//!
//! seqgen's migration has the version `00000000000100`, far from the timestamps Diesel's CLI
//! gives application migrations: Diesel records versions only, so two equal versions would
//! silently skip one another.

use std::borrow::Borrow;

use crate::backend::{Backend, MigrateConnection};
use crate::error::{Error, Result};
use diesel::migration::{Migration, MigrationSource};

/// How often [`run_migrations`] retries when another process migrates at the same moment (on
/// a Galera cluster each statement of one is a conflict for the others).
const MIGRATION_ATTEMPTS: u32 = 10;

/// Creates the `db_key` table if it is missing. Idempotent, and safe when several processes
/// start at once. A server older than seqgen's SQL needs (PostgreSQL 12, SQLite 3.35, MariaDB
/// 10.2.1, MySQL 8.0.16: the README's "Versions") is refused first, with an
/// [`Error::Migration`] that names the version it needs.
///
/// ```
/// use diesel::prelude::*;
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel_seqgen::run_migrations(&mut conn)?; // a second run does nothing
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_migrations<C: MigrateConnection>(conn: &mut C) -> Result<()> {
    let mut attempt = 1;
    loop {
        match C::Backend::run_pending_migrations(conn) {
            Ok(()) => return Ok(()),
            // Two processes racing: the loser fails inserting the same version into
            // `__diesel_schema_migrations` (the DDL itself is IF NOT EXISTS); the next
            // attempt finds nothing pending.
            // No other attempt makes a server newer.
            Err(e) if e.is::<crate::backend::server_version::ServerTooOld>() => {
                return Err(Error::Migration(e))
            }
            Err(_) if attempt < MIGRATION_ATTEMPTS => {
                attempt += 1;
                std::thread::sleep(std::time::Duration::from_millis(50 * u64::from(attempt)));
            }
            Err(e) => return Err(Error::Migration(e)),
        }
    }
}

/// seqgen's migrations followed by the application's, as one [`MigrationSource`].
///
/// Run both with one call, and revert the application's without tripping over seqgen's
/// version in `__diesel_schema_migrations` (Diesel's `revert_all_migrations` with the
/// application's source alone fails there):
///
/// ```
/// use diesel::prelude::*;
/// use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
///
/// const APP_MIGRATIONS: EmbeddedMigrations = embed_migrations!("tests/app_migrations/sqlite");
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// conn.run_pending_migrations(diesel_seqgen::migrations::with_app_migrations(APP_MIGRATIONS))?;
/// conn.revert_all_migrations(diesel_seqgen::migrations::with_app_migrations(APP_MIGRATIONS))?;
/// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
/// ```
pub fn with_app_migrations<DB, S>(app: S) -> WithAppMigrations<DB, S>
where
    DB: Backend,
    S: MigrationSource<DB>,
{
    WithAppMigrations {
        app,
        _backend: std::marker::PhantomData,
    }
}

/// The embedded `db_key` migrations of one backend.
pub const fn backend_migrations<DB: Backend>() -> diesel_migrations::EmbeddedMigrations {
    DB::MIGRATIONS
}

/// See [`with_app_migrations`].
#[derive(Debug)]
pub struct WithAppMigrations<DB, S> {
    app: S,
    _backend: std::marker::PhantomData<fn() -> DB>,
}

impl<DB, S: Clone> Clone for WithAppMigrations<DB, S> {
    fn clone(&self) -> Self {
        WithAppMigrations {
            app: self.app.clone(),
            _backend: std::marker::PhantomData,
        }
    }
}

impl<DB, S: Copy> Copy for WithAppMigrations<DB, S> {}

impl<DB, S> MigrationSource<DB> for WithAppMigrations<DB, S>
where
    DB: Backend,
    S: MigrationSource<DB>,
{
    fn migrations(&self) -> diesel::migration::Result<Vec<Box<dyn Migration<DB>>>> {
        let mut all = DB::MIGRATIONS.borrow().migrations()?;
        all.extend(self.app.migrations()?);
        Ok(all)
    }
}
