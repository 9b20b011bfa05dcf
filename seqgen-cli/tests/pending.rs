//! `seqgen number --follow` as a sidecar, killed with SIGKILL mid-work: two followers number
//! committed rows in batches of 1,000 while 4,000 more arrive before each of six kills of one
//! of them (a new one each time, killed 40 to 225 ms after its start); after every
//! kill the numbered rows hold exactly 1..k and the key's counter is k (a killed batch left
//! nothing, neither numbers in rows nor a counter ahead of them); the last start numbers the
//! rest, 1..N. On SQLite, PostgreSQL and MariaDB (the servers of CI; skipped with a line
//! where their URL is not set, a failure under `CI=true`). Then the sidecar whose sessions are
//! cut (it connects again), ended by SIGTERM (exit code 0), and one pointed at a missing table
//! (exit code 2 at once).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};

const ROWS: usize = 4_000;
const KEY: &str = "pend_inv";

/// `seqgen ARGS --database-url URL`, started.
fn spawn(url: &str, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(args)
        .args(["--database-url", url])
        .current_dir(std::env::temp_dir())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

const NUMBER: [&str; 13] = [
    "number",
    "--key",
    KEY,
    "--table",
    "pend",
    "--column",
    "number",
    "--order-by",
    "id",
    "--shape",
    "INV{seq:6}",
    "--batch",
    "1000",
];

/// A follower process, killed with SIGKILL when the test lets go of it (or fails).
struct Killed(Child);

impl Killed {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A server's URL from `var`, or `None` (with a line) where it is not set; under `CI=true` a
/// missing server is a failure.
#[allow(dead_code)] // not with SQLite alone
fn server(var: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(url) => Some(url),
        Err(_) if std::env::var_os("CI").is_some() => panic!("{var} is not set, and CI is"),
        Err(_) => {
            println!("skipped: {var} is not set");
            None
        }
    }
}

/// `url` with its database replaced by `name`.
#[allow(dead_code)]
fn with_database(url: &str, name: &str) -> String {
    format!("{}/{name}", url.rsplit_once('/').unwrap().0)
}

macro_rules! killed_followers {
    ($name:ident, $conn:ty, $id:literal, $snapshot:expr, $setup:expr) => {
        #[test]
        fn $name() {
            let Some((url, _guard)) = ($setup) else {
                return;
            };
            let mut conn = <$conn>::establish(&url).unwrap();
            // SQLite: WAL and a busy timeout, as the command sets them (the switch to WAL
            // cannot happen while followers write).
            let (snapshot, setup): (&str, &str) = $snapshot;
            if !setup.is_empty() {
                conn.batch_execute(setup).unwrap();
            }
            diesel_seqgen::run_migrations(&mut conn).unwrap();
            conn.batch_execute(&format!(
                "DROP TABLE IF EXISTS pend; CREATE TABLE pend ({}, number VARCHAR(20) UNIQUE, v INT)",
                $id
            ))
            .unwrap();
            let values: Vec<String> = (0..ROWS).map(|i| format!("({i})")).collect();
            let insert = format!("INSERT INTO pend (v) VALUES {}", values.join(", "));
            conn.batch_execute(&insert).unwrap();
            let mut follow = NUMBER.to_vec();
            follow.extend(["--follow", "--poll-ms", "5"]);
            let mut steady = Killed(spawn(&url, &follow));
            let mut kills = 0;
            let started = Instant::now();
            while kills < 6 && started.elapsed() < Duration::from_secs(60) {
                // More rows before each kill: the followers are at work when it lands.
                conn.batch_execute(&insert).unwrap();
                let mut victim = Killed(spawn(&url, &follow));
                std::thread::sleep(Duration::from_millis(40 + 37 * kills));
                victim.kill(); // SIGKILL
                kills += 1;
                // The steady follower may be mid-batch too: a committed state is what is read.
                println!("after kill {kills}: {} numbered", check(&mut conn, snapshot, false, 0));
            }
            steady.kill();
            let last = Command::new(env!("CARGO_BIN_EXE_seqgen"))
                .args(NUMBER)
                .args(["--database-url", &url])
                .output()
                .unwrap();
            assert!(last.status.success(), "{}", String::from_utf8_lossy(&last.stderr));
            check(&mut conn, snapshot, true, ROWS * (kills as usize + 1));
        }
    };
}

/// The numbered rows hold exactly 1..k and the counter is k; with `all`, k is `rows`.
/// Returns k.
fn check<C>(conn: &mut C, snapshot: &str, all: bool, rows: usize) -> u64
where
    C: diesel::connection::LoadConnection,
    C::Backend: 'static,
    C::Backend: diesel::sql_types::HasSqlType<Text> + diesel::sql_types::HasSqlType<BigInt>,
    Option<String>: diesel::deserialize::FromSqlRow<Nullable<Text>, C::Backend>,
    i64: diesel::deserialize::FromSqlRow<BigInt, C::Backend>,
    diesel::expression::SqlLiteral<Nullable<Text>>:
        diesel::query_builder::QueryFragment<C::Backend>,
    diesel::expression::SqlLiteral<BigInt>: diesel::query_builder::QueryFragment<C::Backend>,
{
    // One transaction on one snapshot (PostgreSQL: `snapshot` makes it REPEATABLE READ): the
    // rows and the counter as of one moment.
    conn.transaction::<_, diesel::result::Error, _>(|conn| {
        if !snapshot.is_empty() {
            conn.batch_execute(snapshot)?;
        }
        let numbers: Vec<Option<String>> =
            diesel::dsl::sql::<Nullable<Text>>("SELECT number FROM pend ORDER BY id").load(conn)?;
        let counter: i64 = diesel::dsl::sql::<BigInt>(&format!(
            "SELECT current_value FROM db_key WHERE key_name = '{KEY}' AND scope = '' AND period = ''"
        ))
        .get_result(conn)
        .optional()?
        .unwrap_or(0);
        let mut taken: Vec<u64> = numbers.iter().flatten().map(|n| n[3..].parse().unwrap()).collect();
        taken.sort_unstable();
        let k = taken.len() as u64;
        assert_eq!(taken, (1..=k).collect::<Vec<_>>(), "numbers with a hole or twice");
        assert_eq!(counter as u64, k, "the counter and the numbered rows disagree");
        if all {
            assert_eq!(k as usize, rows);
        }
        Ok(k)
    })
    .unwrap()
}

#[cfg(feature = "sqlite")]
killed_followers!(
    sqlite,
    diesel::SqliteConnection,
    "id INTEGER PRIMARY KEY",
    ("", diesel_seqgen::sqlite::RECOMMENDED_PRAGMAS),
    {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pending.db");
        let url = path.to_str().unwrap().to_owned();
        std::fs::File::create(&path).unwrap();
        Some((url, dir))
    }
);

/// Drops the database of a test at its end.
#[allow(dead_code)]
struct Dropped<C: Connection + SimpleConnection>(String, String, std::marker::PhantomData<C>);

impl<C: Connection + SimpleConnection> Drop for Dropped<C> {
    fn drop(&mut self) {
        if let Ok(mut admin) = C::establish(&self.0) {
            // PostgreSQL: the sessions of killed followers may linger a moment.
            let force = if self.0.starts_with("postgres") {
                " WITH (FORCE)"
            } else {
                ""
            };
            let _ = admin.batch_execute(&format!("DROP DATABASE IF EXISTS {}{force}", self.1));
        }
    }
}

/// A database of the test's own on the server of `var`, named after `test`.
#[allow(dead_code)]
fn database<C: Connection + SimpleConnection>(
    var: &str,
    test: &str,
) -> Option<(String, Dropped<C>)> {
    let admin_url = server(var)?;
    let name = format!("seqgen_cli_{test}_{}", std::process::id());
    let mut admin = C::establish(&admin_url).unwrap();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let url = with_database(&admin_url, &name);
    Some((url, Dropped(admin_url, name, std::marker::PhantomData)))
}

#[cfg(feature = "postgres")]
killed_followers!(
    postgres,
    diesel::PgConnection,
    "id BIGSERIAL PRIMARY KEY",
    ("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", ""),
    { database::<diesel::PgConnection>("PG_DATABASE_URL", "pending") }
);

#[cfg(feature = "mysql")]
killed_followers!(
    mysql,
    diesel::MysqlConnection,
    "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    ("", ""),
    { database::<diesel::MysqlConnection>("MYSQL_DATABASE_URL", "pending") }
);

/// `seqgen number --follow` while its sessions are cut three times (`pg_terminate_backend`,
/// `KILL`: a lost connection, as a restart or a failover makes it): it connects again and
/// numbers the rows committed meanwhile, each within [`LONGEST_WAIT`]; then SIGTERM ends it
/// with exit code 0. Every row holds exactly one of 1..N, the counter is N.
macro_rules! lost_connections {
    ($name:ident, $conn:ty, $id:literal, $snapshot:expr, $setup:expr, $cut:expr) => {
        #[test]
        fn $name() {
            let Some((url, _guard)) = ($setup) else {
                return;
            };
            let mut conn = <$conn>::establish(&url).unwrap();
            if !url.contains("://") {
                // SQLite: the follower holds the one write lock for a moment; wait for it, as
                // an app's connection does, rather than fail with "database is locked".
                conn.batch_execute("PRAGMA busy_timeout = 5000").unwrap();
            }
            diesel_seqgen::run_migrations(&mut conn).unwrap();
            conn.batch_execute(&format!(
                "CREATE TABLE pend ({}, number VARCHAR(20) UNIQUE, v INT)",
                $id
            ))
            .unwrap();
            let mut follow = NUMBER.to_vec();
            follow.extend(["--follow", "--poll-ms", "5"]);
            let mut follower = Killed(spawn(&url, &follow));
            let cut: fn(&mut $conn) -> usize = $cut;
            for round in 0..4 {
                conn.batch_execute("INSERT INTO pend (v) VALUES (1), (2), (3), (4), (5)")
                    .unwrap();
                let waited = until_numbered(&mut conn, 5 * (round + 1));
                println!("round {round}: numbered {waited:.1?} after the commit");
                if round < 3 {
                    let sessions = cut(&mut conn);
                    assert!(sessions >= 1, "no session of the follower to cut");
                }
            }
            assert_eq!(terminated(&mut follower.0), Some(0), "SIGTERM: exit code 0");
            check(&mut conn, $snapshot, true, 20);
        }
    };
}

/// The longest a committed row may wait for its number here: far above a reconnection's
/// pause (100 ms after the first failure), far below a lock wait's timeout.
const LONGEST_WAIT: Duration = Duration::from_secs(30);

/// Waits until the first `rows` rows of `pend` all have a number: how long it took.
fn until_numbered<C>(conn: &mut C, rows: usize) -> Duration
where
    C: diesel::connection::LoadConnection,
    C::Backend: diesel::sql_types::HasSqlType<BigInt> + 'static,
    i64: diesel::deserialize::FromSqlRow<BigInt, C::Backend>,
    diesel::expression::SqlLiteral<BigInt>: diesel::query_builder::QueryFragment<C::Backend>,
{
    let started = Instant::now();
    loop {
        let numbered: i64 =
            diesel::dsl::sql::<BigInt>("SELECT COUNT(*) FROM pend WHERE number IS NOT NULL")
                .get_result(conn)
                .unwrap();
        if numbered as usize >= rows {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < LONGEST_WAIT,
            "{numbered} of {rows} rows numbered after {LONGEST_WAIT:?}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Sends SIGTERM to `child` and waits (at most 10 s) for it to end: its exit code.
fn terminated(child: &mut Child) -> Option<i32> {
    let sent = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("still running 10 s after SIGTERM");
}

#[cfg(feature = "sqlite")]
lost_connections!(
    sqlite_sigterm,
    diesel::SqliteConnection,
    "id INTEGER PRIMARY KEY",
    "",
    {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("follow.db");
        let url = path.to_str().unwrap().to_owned();
        let mut conn = diesel::SqliteConnection::establish(&url).unwrap();
        diesel_seqgen::sqlite::configure(&mut conn).unwrap();
        Some((url, dir))
    },
    // A file has no session to cut: the rounds and SIGTERM alone.
    |_| 1
);

#[cfg(feature = "postgres")]
lost_connections!(
    postgres_lost_connections,
    diesel::PgConnection,
    "id BIGSERIAL PRIMARY KEY",
    "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ",
    { database::<diesel::PgConnection>("PG_DATABASE_URL", "lost") },
    |conn| {
        diesel::dsl::sql::<BigInt>(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
        )
        .get_result::<i64>(conn)
        .unwrap() as usize
    }
);

#[cfg(feature = "mysql")]
lost_connections!(
    mysql_lost_connections,
    diesel::MysqlConnection,
    "id BIGINT AUTO_INCREMENT PRIMARY KEY",
    "",
    { database::<diesel::MysqlConnection>("MYSQL_DATABASE_URL", "lost") },
    |conn| {
        let sessions: Vec<i64> = diesel::dsl::sql::<BigInt>(
            "SELECT ID FROM information_schema.PROCESSLIST \
             WHERE DB = DATABASE() AND ID <> CONNECTION_ID()",
        )
        .load(conn)
        .unwrap();
        for id in &sessions {
            // The session may have ended meanwhile.
            let _ = conn.batch_execute(&format!("KILL {id}"));
        }
        sessions.len()
    }
);

/// A table that does not exist is nothing a new attempt can fix: `--follow` exits with code
/// 2 at once, naming it, rather than trying for ever.
#[cfg(feature = "sqlite")]
#[test]
fn a_missing_table_ends_the_follower_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.db");
    let url = path.to_str().unwrap().to_owned();
    let mut conn = diesel::SqliteConnection::establish(&url).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let mut follow = NUMBER.to_vec();
    follow.extend(["--follow", "--poll-ms", "5"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(&follow)
        .args(["--database-url", &url])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "still following a missing table"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("pend"), "{stderr}");
}
