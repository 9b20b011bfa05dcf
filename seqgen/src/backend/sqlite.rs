//! SQLite: one `INSERT … ON CONFLICT DO UPDATE … RETURNING` per reservation.
//!
//! A single write statement in autocommit mode takes the write lock before it reads, like an
//! immediate transaction, and waits for other writers through the busy timeout. Configure
//! every connection with [`configure`] (or [`SqliteSetup`] on an r2d2 pool).
//!
//! What SQLite writes differently (`dialect.rs`) is at the end of this file, with its refusal
//! of the two inserts it never sends (`asserted.rs`, `one_statement.rs`).

use diesel::connection::{LoadConnection, SimpleConnection};
use diesel::prelude::*;
use diesel::query_builder::{AstPass, QueryFragment};
use diesel::sqlite::{Sqlite, SqliteConnection};
use diesel_migrations::{embed_migrations, EmbeddedMigrations};

use super::dialect::{
    Durability, DurableCommit, Fingerprint, Greatest, IgnoringEnd, InsertIgnoring, LockingRead,
    NowText, OnCheckedSession, TextType, Timeline,
};
use super::Counter;
use crate::backend::schema::db_key;
use crate::backend::Runner;

impl super::sealed::Sealed for Sqlite {}

impl super::Backend for Sqlite {
    const NAME: &'static str = "sqlite";
    const CREATES_ROWS_FIRST: bool = false;
    const READS_FIRST_IN_TRANSACTION: bool = false;
    const RESERVE_BESIDE_TRANSACTION: bool = false;
    const IDENTIFY_IS_A_ROUND_TRIP: bool = false;
    const KEEPS_INSERTS_PREPARED: bool = false;
    const MIGRATIONS: EmbeddedMigrations = embed_migrations!("migrations/sqlite");

    // Diesel's harness, whose bounds hold for a migrating connection of one named backend (not
    // of any backend: each backend states them). MySQL takes Galera's lease first.
    fn run_pending_migrations<C>(conn: &mut C) -> diesel::migration::Result<()>
    where
        C: LoadConnection<Backend = Self> + diesel::migration::MigrationConnection + 'static,
    {
        let found: String = diesel::select(diesel::dsl::sql::<diesel::sql_types::Text>(
            "sqlite_version()",
        ))
        .get_result(conn)?;
        super::server_version::refuse_older(&found, super::server_version::SQLITE)?;
        diesel_migrations::MigrationHarness::run_pending_migrations(conn, Self::MIGRATIONS)
            .map(drop)
    }
    // A commit is durable against a crash of the process; on power loss see "What can still
    // produce a duplicate" in `guide::guarantees`.
    const DURABILITY_SETTING: &'static str = "synchronous";
    const DURABLE: &'static str = "1";

    async fn reserve<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        in_transaction: bool,
    ) -> QueryResult<Option<i64>> {
        super::upsert::reserve(db, counter, count, limit, in_transaction).await
    }

    async fn create_row<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        super::upsert::create_row(db, counter).await
    }

    // SQLite locks the whole database, not rows: take its write lock with a no-op update, with
    // the busy timeout off for that one statement.
    async fn lock_row_nowait<D: Runner<Backend = Self>>(
        db: &mut D,
        counter: Counter<'_>,
    ) -> QueryResult<()> {
        #[derive(diesel::QueryableByName)]
        struct BusyTimeout {
            #[diesel(sql_type = diesel::sql_types::Integer)]
            timeout: i32,
        }
        let previous: BusyTimeout = db
            .get_named(diesel::sql_query("PRAGMA busy_timeout"))
            .await?;
        db.batch_execute("PRAGMA busy_timeout = 0").await?;
        let touched = db.execute(touch(counter)).await;
        db.batch_execute(&format!("PRAGMA busy_timeout = {}", previous.timeout))
            .await?;
        if touched? == 0 {
            // We hold the write lock now: creating the row cannot wait.
            Self::create_row(db, counter).await?;
        }
        Ok(())
    }

    fn complete_fingerprint(file: String) -> String {
        file_fingerprint(file)
    }

    super::admin_queries!();

    fn lock_for_writing<C>(conn: &mut C) -> QueryResult<()>
    where
        C: LoadConnection<Backend = Self>,
    {
        touch(super::Counter::TOKEN).execute(conn).map(drop)
    }
}

/// Takes the database's write lock (waiting through the busy timeout, if one is set) with an
/// update of the row of `counter` that changes nothing: a write statement takes the lock even
/// where it matches no row. Its run returns how many rows it matched.
fn touch(counter: super::Counter<'_>) -> Touch<'_> {
    diesel::update(db_key::table.find((counter.key, counter.scope, counter.period)))
        .set(db_key::current_value.eq(db_key::current_value))
}

type Touch<'a> = diesel::dsl::Update<
    diesel::dsl::Find<db_key::table, (&'a str, &'a str, &'a str)>,
    diesel::dsl::Eq<db_key::current_value, db_key::current_value>,
>;

/// `sqlite:` + the file + its device and inode; an in-memory or temporary database has no
/// file, and only its token tells it apart.
fn file_fingerprint(file: String) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let Ok(meta) = std::fs::metadata(&file) {
            return format!("sqlite:{}:{}:{file}", meta.dev(), meta.ino());
        }
    }
    format!("sqlite:{file}")
}

/// The settings seqgen recommends for every SQLite connection: a 5 s busy timeout, so
/// writers queue instead of failing with "database is locked"; WAL, so readers never block
/// the writer; `synchronous = NORMAL`, safe with WAL.
pub const RECOMMENDED_PRAGMAS: &str =
    "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;";

/// Applies [`RECOMMENDED_PRAGMAS`] to one connection.
///
/// Connections opened together on a new file (a pool's first connections, instances started
/// at once) all try to switch it to WAL; SQLite fails such a switch at once with "database is
/// locked" where waiting could deadlock, without calling the busy handler. The switch is tried
/// again then, for up to the busy timeout, as a writer's wait would be.
pub fn configure(conn: &mut SqliteConnection) -> QueryResult<()> {
    const SWITCH_ATTEMPTS: u32 = 100;
    conn.batch_execute("PRAGMA busy_timeout = 5000")?;
    let mut attempt = 1;
    loop {
        match conn.batch_execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;") {
            Err(e) if super::is_busy(&e) && attempt < SWITCH_ATTEMPTS => {
                // 1, 2, … 50 ms apart: about 4 s in all.
                std::thread::sleep(std::time::Duration::from_millis(u64::from(attempt.min(50))));
                attempt += 1;
            }
            result => return result,
        }
    }
}

/// Opens a SQLite connection for diesel-async (`SyncConnectionWrapper`) with
/// [`RECOMMENDED_PRAGMAS`] applied: what [`SqliteSetup`] does for r2d2, for the async API. Its
/// shape is diesel-async's pool setup callback:
///
/// ```
/// use diesel_async::pooled_connection::{deadpool::Pool, AsyncDieselConnectionManager, ManagerConfig};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let url = dir.path().join("app.db").display().to_string();
/// let mut config = ManagerConfig::default();
/// config.custom_setup = Box::new(diesel_seqgen::sqlite::establish_async);
/// let manager = AsyncDieselConnectionManager::new_with_config(url, config);
/// let pool = Pool::builder(manager).max_size(8).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[cfg(feature = "async-sqlite")]
pub fn establish_async(
    url: &str,
) -> std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = diesel::ConnectionResult<
                    diesel_async::sync_connection_wrapper::SyncConnectionWrapper<SqliteConnection>,
                >,
            > + Send
            + '_,
    >,
> {
    let url = url.to_owned();
    Box::pin(async move {
        // Opening a file and three pragmas: quick enough not to need a blocking thread.
        let mut conn = SqliteConnection::establish(&url)?;
        configure(&mut conn).map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
        Ok(diesel_async::sync_connection_wrapper::SyncConnectionWrapper::new(conn))
    })
}

#[cfg(feature = "r2d2")]
/// An r2d2 connection customizer applying [`RECOMMENDED_PRAGMAS`] to every pooled connection.
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
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct SqliteSetup;

#[cfg(feature = "r2d2")]
impl diesel::r2d2::CustomizeConnection<SqliteConnection, diesel::r2d2::Error> for SqliteSetup {
    fn on_acquire(&self, conn: &mut SqliteConnection) -> Result<(), diesel::r2d2::Error> {
        configure(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

impl QueryFragment<Sqlite> for Greatest {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("MAX");
        Ok(())
    }
}

impl QueryFragment<Sqlite> for InsertIgnoring {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("INSERT OR IGNORE INTO");
        Ok(())
    }
}

impl QueryFragment<Sqlite> for IgnoringEnd {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("");
        Ok(())
    }
}

// The main database's file; `complete_fingerprint` adds its device and inode, so a copy of
// the file is another database even where it was moved to the original's path.
impl QueryFragment<Sqlite> for Fingerprint {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("COALESCE((SELECT file FROM pragma_database_list WHERE name = 'main'), '')");
        Ok(())
    }
}

// A commit is durable against a crash of the process; on power loss see "What can still
// produce a duplicate" in `guide::guarantees`.
impl QueryFragment<Sqlite> for Durability {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("'1'");
        Ok(())
    }
}

// No failovers, no timeline.
impl QueryFragment<Sqlite> for Timeline {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("NULL");
        Ok(())
    }
}

impl QueryFragment<Sqlite> for OnCheckedSession {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("");
        Ok(())
    }
}

// Commits are durable anyway (`Durability`).
impl QueryFragment<Sqlite> for DurableCommit {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("(SELECT 1) AS durable");
        Ok(())
    }
}

// One writer at a time: a read in a transaction that writes sees what is committed.
impl QueryFragment<Sqlite> for LockingRead {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("");
        Ok(())
    }
}

impl QueryFragment<Sqlite> for TextType {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("TEXT");
        Ok(())
    }
}

impl QueryFragment<Sqlite> for NowText {
    fn walk_ast<'b>(&'b self, mut out: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        out.push_sql("CAST(CURRENT_TIMESTAMP AS TEXT)");
        Ok(())
    }
}

// Never run there (`Backend::ONE_STATEMENT_GAPLESS_INSERT`); implemented so that `execute`
// has one bound for every backend.
impl<F, V> QueryFragment<Sqlite> for super::one_statement::OneStatement<F, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        Err(super::one_statement::not_one_statement())
    }
}

// Never run there (a SQLite database is told apart without a round trip); implemented so that
// `execute` has one bound for every backend.
impl<F, V> QueryFragment<Sqlite> for super::asserted::Asserted<F, V> {
    fn walk_ast<'b>(&'b self, _: AstPass<'_, 'b, Sqlite>) -> QueryResult<()> {
        Err(super::row_values::NotRewritten::error(
            super::asserted::NOT_CHECKED,
        ))
    }
}
