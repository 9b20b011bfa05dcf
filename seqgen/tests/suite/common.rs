//! One behaviour suite, every backend: tests are generic over [`TestConnection`] and
//! instantiated per backend by `backend_tests!`, like Diesel's own suite.
//!
//! SQLite gets a new file per test. PostgreSQL and MySQL come from `PG_DATABASE_URL` and
//! `MYSQL_DATABASE_URL` (falling back to `DATABASE_URL`); tests there share one database and
//! stay apart by using their own key names. A backend without a URL is skipped with a printed
//! line, except under `CI=true`, where that fails the test.
#![allow(dead_code)] // a feature set may leave parts unused

use std::sync::atomic::{AtomicU32, Ordering};

use diesel::connection::{LoadConnection, SimpleConnection};
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::Connection;
use diesel_migrations::MigrationHarness;

/// A connection type the suite runs on.
pub trait TestConnection:
    R2D2Connection
    + LoadConnection<Backend = Self::B>
    + MigrationHarness<Self::B>
    + diesel_seqgen::MigrateConnection
{
    /// The backend, restated so that `diesel_seqgen::Backend` is known to hold for it.
    type B: diesel_seqgen::Backend;
    /// The backend's name in test output.
    const NAME: &'static str;
    /// Where to connect, or `None` when this backend is not configured.
    fn test_url(dir: &std::path::Path) -> Option<String>;
    /// Per-connection setup (SQLite's busy timeout and WAL).
    fn configure(_conn: &mut Self) {}
    /// Makes this connection give up waiting for a row lock after about a second.
    fn short_lock_wait(conn: &mut Self);
    /// Runs this connection's transactions (autocommit statements included) SERIALIZABLE.
    fn serializable(conn: &mut Self);
    /// The server's id of this connection's session; `None` for SQLite (no server).
    fn session_id(_conn: &mut Self) -> Option<i64> {
        None
    }
    /// Ends session `id` from `admin`, as an operator or a network failure would.
    fn kill_session(_admin: &mut Self, _id: i64) {}
    /// Whether another session's update of `table` (on this connection's database) waits for
    /// a row lock, as the server shows it; `None` for SQLite (a writer waits in its busy
    /// handler, unseen).
    fn update_waits(_conn: &mut Self, _table: &str) -> Option<bool> {
        None
    }
    /// The first column of every row of `sql`, as text (Diesel loads are concrete per backend).
    fn texts(conn: &mut Self, sql: &str) -> Vec<String>;
    /// Creates the empty database `name` beside the test database `url` (SQLite: a file in
    /// `dir`) and returns its URL.
    fn create_database(url: &str, dir: &std::path::Path, name: &str) -> String;
    /// Copies database `from` to the new database `to`, the way an operator would (a file
    /// copy, `CREATE DATABASE … TEMPLATE`, `mysqldump | mariadb`), and returns its URL.
    fn copy_database(url: &str, dir: &std::path::Path, from: &str, to: &str) -> String;
    /// Drops database `name` (SQLite: nothing, the directory goes with the test).
    fn drop_database(_url: &str, _name: &str) {}
}

#[derive(diesel::QueryableByName)]
struct Text {
    #[diesel(sql_type = diesel::sql_types::Text)]
    text: String,
}

macro_rules! texts {
    () => {
        fn texts(conn: &mut Self, sql: &str) -> Vec<String> {
            use diesel::RunQueryDsl;
            diesel::sql_query(sql)
                .load::<Text>(conn)
                .unwrap()
                .into_iter()
                .map(|t| t.text)
                .collect()
        }
    };
}

#[cfg(feature = "sqlite")]
impl TestConnection for diesel::SqliteConnection {
    type B = diesel::sqlite::Sqlite;
    const NAME: &'static str = "sqlite";
    texts!();
    fn test_url(dir: &std::path::Path) -> Option<String> {
        Some(dir.join("test.db").to_str().unwrap().to_owned())
    }
    fn configure(conn: &mut Self) {
        diesel_seqgen::sqlite::configure(conn).unwrap();
    }
    fn short_lock_wait(conn: &mut Self) {
        conn.batch_execute("PRAGMA busy_timeout = 1000").unwrap();
    }
    fn serializable(_: &mut Self) {
        // SQLite transactions are always serializable.
    }
    fn create_database(_: &str, dir: &std::path::Path, name: &str) -> String {
        dir.join(format!("{name}.db")).to_str().unwrap().to_owned()
    }
    fn copy_database(url: &str, dir: &std::path::Path, from: &str, to: &str) -> String {
        let from = Self::create_database(url, dir, from);
        // Everything into the main file first, as a careful operator would.
        Self::establish(&from)
            .unwrap()
            .batch_execute("PRAGMA wal_checkpoint(TRUNCATE)")
            .unwrap();
        let to = Self::create_database(url, dir, to);
        std::fs::copy(&from, &to).unwrap();
        to
    }
}

#[cfg(feature = "postgres")]
impl TestConnection for diesel::PgConnection {
    type B = diesel::pg::Pg;
    const NAME: &'static str = "postgres";
    texts!();
    fn test_url(_: &std::path::Path) -> Option<String> {
        server_url("PG_DATABASE_URL")
    }
    fn short_lock_wait(conn: &mut Self) {
        conn.batch_execute("SET lock_timeout = '1s'").unwrap();
    }
    fn serializable(conn: &mut Self) {
        conn.batch_execute(
            "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        )
        .unwrap();
    }
    fn session_id(conn: &mut Self) -> Option<i64> {
        use diesel::RunQueryDsl;
        let pid: i32 = diesel::select(diesel::dsl::sql::<diesel::sql_types::Integer>(
            "pg_backend_pid()",
        ))
        .get_result(conn)
        .unwrap();
        Some(i64::from(pid))
    }
    fn kill_session(admin: &mut Self, id: i64) {
        admin
            .batch_execute(&format!("SELECT pg_terminate_backend({id})"))
            .unwrap();
    }
    fn update_waits(conn: &mut Self, table: &str) -> Option<bool> {
        let waiting = Self::texts(
            conn,
            &format!(
                "SELECT CAST(count(*) AS TEXT) AS text FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock' \
                 AND query LIKE 'UPDATE \"{table}\"%'"
            ),
        );
        Some(waiting[0] != "0")
    }
    fn create_database(url: &str, _: &std::path::Path, name: &str) -> String {
        admin::<Self>(url, &format!("CREATE DATABASE {name}"));
        with_database(url, name)
    }
    fn copy_database(url: &str, _: &std::path::Path, from: &str, to: &str) -> String {
        admin::<Self>(url, &format!("CREATE DATABASE {to} TEMPLATE {from}"));
        with_database(url, to)
    }
    fn drop_database(url: &str, name: &str) {
        admin::<Self>(url, &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
    }
}

#[cfg(feature = "mysql")]
impl TestConnection for diesel::MysqlConnection {
    type B = diesel::mysql::Mysql;
    const NAME: &'static str = "mysql";
    texts!();
    fn test_url(_: &std::path::Path) -> Option<String> {
        server_url("MYSQL_DATABASE_URL")
    }
    fn short_lock_wait(conn: &mut Self) {
        conn.batch_execute("SET SESSION innodb_lock_wait_timeout = 1")
            .unwrap();
    }
    fn serializable(conn: &mut Self) {
        conn.batch_execute("SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE")
            .unwrap();
    }
    fn session_id(conn: &mut Self) -> Option<i64> {
        use diesel::RunQueryDsl;
        let id: u64 = diesel::select(diesel::dsl::sql::<
            diesel::sql_types::Unsigned<diesel::sql_types::BigInt>,
        >("CONNECTION_ID()"))
        .get_result(conn)
        .unwrap();
        Some(id as i64)
    }
    fn kill_session(admin: &mut Self, id: i64) {
        admin.batch_execute(&format!("KILL {id}")).unwrap();
    }
    fn update_waits(conn: &mut Self, table: &str) -> Option<bool> {
        // information_schema.INNODB_TRX did not list such an update in its LOCK WAIT state
        // (MariaDB 10.11); the process list shows it still under way.
        let waiting = Self::texts(
            conn,
            &format!(
                "SELECT CAST(COUNT(*) AS CHAR) AS text FROM information_schema.PROCESSLIST \
                 WHERE DB = DATABASE() AND STATE = 'Updating' AND INFO LIKE 'UPDATE `{table}`%'"
            ),
        );
        Some(waiting[0] != "0")
    }
    fn create_database(url: &str, _: &std::path::Path, name: &str) -> String {
        admin::<Self>(url, &format!("CREATE DATABASE {name}"));
        with_database(url, name)
    }
    fn copy_database(url: &str, dir: &std::path::Path, from: &str, to: &str) -> String {
        // Table by table, rows and all, as a dump restored elsewhere would be (triggers aside).
        // Not with mysqldump: MariaDB 10.11.19 crashed (signal 11 in ha_maria::drop_table)
        // on one of its information_schema queries while CI loaded the machine.
        let to_url = Self::create_database(url, dir, to);
        let mut conn = Self::establish(url).unwrap();
        let show =
            diesel::dsl::sql::<diesel::sql_types::Text>(&format!("SHOW TABLES FROM `{from}`"));
        let tables: Vec<String> = diesel::RunQueryDsl::load(show, &mut conn).unwrap();
        assert!(!tables.is_empty(), "no table in {from} to copy");
        for table in tables {
            conn.batch_execute(&format!(
                "CREATE TABLE `{to}`.`{table}` LIKE `{from}`.`{table}`;
                 INSERT INTO `{to}`.`{table}` SELECT * FROM `{from}`.`{table}`"
            ))
            .unwrap();
        }
        to_url
    }
    fn drop_database(url: &str, name: &str) {
        admin::<Self>(url, &format!("DROP DATABASE IF EXISTS {name}"));
    }
}

/// `url` with its database replaced by `name`.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn with_database(url: &str, name: &str) -> String {
    let (server, _) = url.rsplit_once('/').unwrap();
    format!("{server}/{name}")
}

/// Runs `sql` on a new connection to the test database `url`.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn admin<C: TestConnection>(url: &str, sql: &str) {
    C::establish(url).unwrap().batch_execute(sql).unwrap();
}

fn server_url(var: &str) -> Option<String> {
    std::env::var(var)
        .or_else(|_| std::env::var("DATABASE_URL").map_err(|_| ()))
        .ok()
        // DATABASE_URL may name the other server: take it only for its own scheme.
        .filter(|url| match var {
            "PG_DATABASE_URL" => url.starts_with("postgres"),
            _ => url.starts_with("mysql"),
        })
}

/// One test's database: a fresh SQLite file, or the shared server database.
pub struct TestDb<C> {
    pub url: String,
    /// Unique to this test: prefix for key names.
    run: String,
    _dir: tempfile::TempDir,
    _conn: std::marker::PhantomData<fn() -> C>,
}

impl<C: TestConnection> TestDb<C> {
    /// Opens this backend's test database with seqgen's migrations run, or `None` (after
    /// printing why) when the backend is not configured.
    pub fn open(test: &str) -> Option<Self> {
        let dir = tempfile::tempdir().unwrap();
        let Some(url) = C::test_url(dir.path()) else {
            let line = format!(
                "skipping {test} on {}: set PG_DATABASE_URL / MYSQL_DATABASE_URL to run it",
                C::NAME
            );
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "{line} (a missing URL fails under CI=true)"
            );
            println!("{line}");
            return None;
        };
        let run = format!("{test}_{}", unique_suffix());
        let db = TestDb {
            url,
            run,
            _dir: dir,
            _conn: std::marker::PhantomData,
        };
        diesel_seqgen::run_migrations(&mut db.connect()).unwrap();
        Some(db)
    }

    /// A key name no other test uses.
    pub fn key(&self, name: &str) -> String {
        format!("{name}_{}", self.run)
    }

    /// A new connection.
    pub fn connect(&self) -> C {
        let mut conn = C::establish(&self.url).unwrap();
        C::configure(&mut conn);
        conn
    }

    /// A pool of `size` connections.
    pub fn pool(&self, size: u32) -> Pool<ConnectionManager<C>> {
        self.pool_with(size, false)
    }

    /// A pool of `size` connections, all SERIALIZABLE when `serializable` is set.
    pub fn pool_with(&self, size: u32, serializable: bool) -> Pool<ConnectionManager<C>> {
        pool_on(&self.url, size, serializable)
    }
}

/// A pool of `size` connections to `url`, all SERIALIZABLE when `serializable` is set.
pub fn pool_on<C: TestConnection>(
    url: &str,
    size: u32,
    serializable: bool,
) -> Pool<ConnectionManager<C>> {
    {
        #[derive(Debug)]
        struct Setup(bool);
        impl<C: TestConnection> diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for Setup {
            fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
                C::configure(conn);
                if self.0 {
                    C::serializable(conn);
                }
                Ok(())
            }
        }
        Pool::builder()
            .max_size(size)
            .connection_customizer(Box::new(Setup(serializable)))
            .build(ConnectionManager::new(url))
            .unwrap()
    }
}

/// A database of its own for one test, beside the test database: for what needs a whole
/// database (copies, migrations from the start). Dropped at the end of the test.
pub struct Scratch<'a, C: TestConnection> {
    db: &'a TestDb<C>,
    pub name: String,
    pub url: String,
}

impl<C: TestConnection> TestDb<C> {
    /// A new empty database (no migrations run).
    pub fn scratch(&self, name: &str) -> Scratch<'_, C> {
        let name = self.scratch_name(name);
        let url = C::create_database(&self.url, self._dir.path(), &name);
        Scratch {
            db: self,
            name,
            url,
        }
    }

    /// A copy of `from`, made the way an operator would.
    pub fn copy(&self, from: &Scratch<'_, C>, name: &str) -> Scratch<'_, C> {
        let name = self.scratch_name(name);
        let url = C::copy_database(&self.url, self._dir.path(), &from.name, &name);
        Scratch {
            db: self,
            name,
            url,
        }
    }

    /// A database name unique to this test run, short enough for MySQL (64 characters).
    fn scratch_name(&self, name: &str) -> String {
        format!("seqgen_{name}_{}", unique_suffix())
    }
}

/// Unique to this process and call, and short: process id, a clock reading, a sequence number.
fn unique_suffix() -> String {
    static SEQ: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!(
        "{}_{nanos:x}_{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    )
}

impl<C: TestConnection> Scratch<'_, C> {
    /// A pool of `size` connections to this database.
    pub fn pool(&self, size: u32) -> Pool<ConnectionManager<C>> {
        pool_on(&self.url, size, false)
    }

    /// A new connection to this database.
    pub fn connect(&self) -> C {
        let mut conn = C::establish(&self.url).unwrap();
        C::configure(&mut conn);
        conn
    }
}

impl<C: TestConnection> Drop for Scratch<'_, C> {
    fn drop(&mut self) {
        C::drop_database(&self.db.url, &self.name);
    }
}

/// Instantiates generic tests `fn name<C: TestConnection>(db: TestDb<C>)` once per enabled
/// backend, as `sqlite::name`, `postgres::name`, `mysql::name`.
#[macro_export]
macro_rules! backend_tests {
    ($($test:ident),* $(,)?) => {
        #[cfg(feature = "sqlite")]
        mod sqlite {
            $(#[test]
            fn $test() {
                if let Some(db) = $crate::common::TestDb::<diesel::SqliteConnection>::open(stringify!($test)) {
                    super::$test(db);
                }
            })*
        }
        #[cfg(feature = "postgres")]
        mod postgres {
            $(#[test]
            fn $test() {
                if let Some(db) = $crate::common::TestDb::<diesel::PgConnection>::open(stringify!($test)) {
                    super::$test(db);
                }
            })*
        }
        #[cfg(feature = "mysql")]
        mod mysql {
            $(#[test]
            fn $test() {
                if let Some(db) = $crate::common::TestDb::<diesel::MysqlConnection>::open(stringify!($test)) {
                    super::$test(db);
                }
            })*
        }
    };
}

/// Counts the statements `conn` sends from now on (Diesel's instrumentation sees each).
pub fn count_queries<C: diesel::Connection>(
    conn: &mut C,
) -> std::sync::Arc<std::sync::atomic::AtomicUsize> {
    count_statements(conn, "").0
}

/// Counts the statements `conn` sends from now on, and those whose text contains `prepared`
/// that it prepares for its cache.
/// Statements a bulk insert of the default generator sends on a plain connection once the
/// session is marked: one checking insert, except on MySQL, whose bulk checks the session's
/// mark with a statement of its own first (`seqgen/src/insert/plan.rs`).
pub fn statements_per_bulk(backend: &str) -> usize {
    if backend == "mysql" {
        2
    } else {
        1
    }
}

pub fn count_statements<C: diesel::Connection>(
    conn: &mut C,
    prepared: &str,
) -> (
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use diesel::connection::InstrumentationEvent;
    use std::sync::{atomic::AtomicUsize, Arc};
    let text = prepared.to_owned();
    let (sent, prepared) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let (s, p) = (Arc::clone(&sent), Arc::clone(&prepared));
    conn.set_instrumentation(move |event: InstrumentationEvent<'_>| match event {
        InstrumentationEvent::StartQuery { .. } => {
            s.fetch_add(1, Ordering::Relaxed);
        }
        InstrumentationEvent::CacheQuery { sql, .. } if sql.contains(&text) => {
            p.fetch_add(1, Ordering::Relaxed);
        }
        _ => {}
    });
    (sent, prepared)
}

/// A database of its own with seqgen's migrations and `create_table` run; with `start`
/// (`(key, value)`), the undated key `key` (spec: prefix `G`, pad 7) counts from `value`, so
/// that its numbers and another database's can be told apart.
pub fn scratch_with_table<'a, C: TestConnection>(
    db: &'a TestDb<C>,
    name: &str,
    create_table: &str,
    start: Option<(&str, i64)>,
) -> Scratch<'a, C> {
    let scratch = db.scratch(name);
    let mut conn = scratch.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    conn.batch_execute(create_table).unwrap();
    if let Some((key, value)) = start {
        let spec = diesel_seqgen::Spec::builder(key)
            .prefix("G")
            .date("")
            .pad(7)
            .build()
            .unwrap();
        diesel_seqgen::Generator::new()
            .next_id(&mut conn, &spec)
            .unwrap();
        diesel_seqgen::admin::set(
            &mut conn,
            key,
            diesel_seqgen::admin::Setting::StartValue,
            Some(value),
        )
        .unwrap();
    }
    scratch
}

/// A table name of a test's own, from its key `key` (its end: MySQL's names have at most 64
/// characters, and the end holds what makes the key unique).
pub fn table_name(key: &str) -> String {
    format!("t{}", &key[key.len().saturating_sub(40)..])
}

/// Panics with the first repeated value, if any.
pub fn assert_distinct<T: std::hash::Hash + Eq + std::fmt::Debug + Clone>(ids: &[T]) {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    for id in ids {
        assert!(
            seen.insert(id.clone()),
            "duplicate ID {id:?} among {} IDs",
            ids.len()
        );
    }
}

/// A generator with fixed blocks (the spec's `batch`, never grown) on a clock fixed at
/// 2026-11-23 10:00 UTC, and that clock, to move it: for tests that count blocks,
/// reservations or counter values, where fixed sizes are the point. What the defaults do under
/// load is `invariant.rs`' job (and the seed's cyclic test, `policies.rs`).
pub fn generator_on_fixed_clock() -> (
    std::sync::Arc<diesel_seqgen::clock::FixedClock>,
    diesel_seqgen::Generator,
) {
    use chrono::TimeZone;
    let clock = std::sync::Arc::new(diesel_seqgen::clock::FixedClock::new(
        chrono::Utc
            .with_ymd_and_hms(2026, 11, 23, 10, 0, 0)
            .unwrap(),
    ));
    let generator = diesel_seqgen::Generator::builder()
        .clock(std::sync::Arc::clone(&clock))
        .fixed_batch()
        .build();
    (clock, generator)
}

/// An undated spec of `key`, pad 6, blocks of 10: small blocks for counting reservations.
pub fn blocks_of_ten(key: &str) -> diesel_seqgen::Spec {
    diesel_seqgen::Spec::builder(key)
        .date("")
        .pad(6)
        .batch(10)
        .build()
        .unwrap()
}
