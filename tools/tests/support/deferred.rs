//! Gapless numbers given after the commit, under faults: writer threads commit rows without a
//! number (one in ten rolled back) and reconnect after any failure, while two `seqgen number
//! --follow` processes (the command users run as a sidecar, never restarted here) number
//! them. At the end every committed row has exactly one of 1..N, and the key's counter is N.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Text};

use crate::own_servers::wait_for;

/// The key whose numbers the followers give.
pub const KEY: &str = "deferred_invoices";

/// A connection the writers and the check use.
pub trait Db: diesel_seqgen::MigrateConnection + SimpleConnection + Send {
    /// The table's integer key, as this database declares one.
    const ID: &'static str;
    /// Every row's number, `None` where it has none.
    fn numbers(&mut self) -> QueryResult<Vec<Option<String>>>;
    /// The key's counter, 0 without a row.
    fn counter(&mut self) -> QueryResult<i64>;
}

macro_rules! db {
    ($conn:ty, $feature:literal, $id:literal) => {
        #[cfg(feature = $feature)]
        impl Db for $conn {
            const ID: &'static str = $id;
            fn numbers(&mut self) -> QueryResult<Vec<Option<String>>> {
                diesel::dsl::sql::<Nullable<Text>>("SELECT number FROM pend ORDER BY id").load(self)
            }
            fn counter(&mut self) -> QueryResult<i64> {
                diesel::dsl::sql::<BigInt>(&format!(
                    "SELECT current_value FROM db_key WHERE key_name = '{KEY}' \
                     AND scope = '' AND period = ''"
                ))
                .get_result(self)
                .optional()
                .map(Option::unwrap_or_default)
            }
        }
    };
}
db!(diesel::PgConnection, "postgres", "id BIGSERIAL PRIMARY KEY");
db!(
    diesel::MysqlConnection,
    "mysql",
    "id BIGINT AUTO_INCREMENT PRIMARY KEY"
);

/// The `seqgen` command built beside this test (`target/debug/seqgen`).
fn seqgen() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let path = exe
        .parent()
        .and_then(|deps| deps.parent())
        .map(|debug| debug.join("seqgen"))
        .ok_or("no target directory")?;
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} is missing: build the workspace's binaries (`cargo test --all-features --workspace --no-run`)",
            path.display()
        ))
    }
}

/// Writers and followers at work on `pend` (see the module's documentation).
pub struct Deferred {
    url: String,
    stop: Arc<AtomicBool>,
    writers: Vec<JoinHandle<()>>,
    committed: Arc<AtomicU64>,
    failures: Arc<AtomicU64>,
    followers: Vec<Child>,
}

impl Deferred {
    /// Creates `pend` (and `db_key`) on `url`, then starts `writers` threads and two followers.
    pub fn start<C: Db>(url: &str, writers: usize) -> Result<Self, String> {
        let mut conn = C::establish(url).map_err(|e| e.to_string())?;
        diesel_seqgen::run_migrations(&mut conn).map_err(|e| e.to_string())?;
        conn.batch_execute(&format!(
            "CREATE TABLE pend ({}, number VARCHAR(20) UNIQUE, v INT)",
            C::ID
        ))
        .map_err(|e| e.to_string())?;
        let seqgen = seqgen()?;
        let followers = (0..2)
            .map(|_| {
                Command::new(&seqgen)
                    .args(["number", "--follow", "--key", KEY, "--table", "pend"])
                    .args([
                        "--column",
                        "number",
                        "--order-by",
                        "id",
                        "--shape",
                        "INV{seq:7}",
                    ])
                    .args(["--batch", "50", "--poll-ms", "10", "--database-url", url])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|e| e.to_string())
            })
            .collect::<Result<_, _>>()?;
        let (stop, committed, failures) = Default::default();
        let mut deferred = Deferred {
            url: url.to_owned(),
            stop,
            writers: Vec::new(),
            committed,
            failures,
            followers,
        };
        for writer in 0..writers {
            let (url, stop) = (url.to_owned(), Arc::clone(&deferred.stop));
            let (committed, failures) = (
                Arc::clone(&deferred.committed),
                Arc::clone(&deferred.failures),
            );
            deferred.writers.push(std::thread::spawn(move || {
                write::<C>(&url, writer, &stop, &committed, &failures)
            }));
        }
        Ok(deferred)
    }

    /// Rows the writers committed (and knew it) so far.
    pub fn committed(&self) -> u64 {
        self.committed.load(Ordering::Relaxed)
    }

    /// Stops the writers, waits until the followers numbered every row (at most 60 s), ends
    /// them with SIGTERM (each must exit 0, never having stopped by itself) and checks the
    /// table: its summary.
    pub fn finish<C: Db>(mut self) -> Result<String, String> {
        self.stop.store(true, Ordering::Relaxed);
        for writer in self.writers.drain(..) {
            writer.join().map_err(|_| "a writer panicked")?;
        }
        let mut conn = C::establish(&self.url).map_err(|e| e.to_string())?;
        wait_for(
            "the followers to number every committed row",
            Duration::from_secs(60),
            || {
                conn.numbers()
                    .is_ok_and(|numbers| numbers.iter().all(Option::is_some))
            },
        )?;
        for (i, mut follower) in self.followers.drain(..).enumerate() {
            if let Some(status) = follower.try_wait().map_err(|e| e.to_string())? {
                return Err(format!(
                    "follower {i} stopped by itself ({status}): {}",
                    stderr(follower)
                ));
            }
            Command::new("kill")
                .args(["-TERM", &follower.id().to_string()])
                .status()
                .map_err(|e| e.to_string())?;
            let status = follower.wait().map_err(|e| e.to_string())?;
            let log = stderr(follower);
            if !status.success() {
                return Err(format!(
                    "follower {i} ended with {status} after SIGTERM: {log}"
                ));
            }
            let reconnects = log.matches("connecting again").count();
            println!("follower {i}: {reconnects} reconnects, exit 0 after SIGTERM");
        }
        let numbers = conn.numbers().map_err(|e| e.to_string())?;
        let mut taken: Vec<u64> = numbers
            .iter()
            .map(|n| {
                n.as_deref()
                    .and_then(|n| n[3..].parse().ok())
                    .ok_or("a row without a number")
            })
            .collect::<Result<_, _>>()?;
        taken.sort_unstable();
        let n = taken.len() as u64;
        if taken != (1..=n).collect::<Vec<_>>() {
            return Err(format!("the {n} rows' numbers are not exactly 1..={n}"));
        }
        let counter = conn.counter().map_err(|e| e.to_string())?;
        if counter as u64 != n {
            return Err(format!("the counter is {counter}, the table holds 1..={n}"));
        }
        Ok(format!(
            "deferred: {n} committed rows numbered exactly 1..={n} by 2 followers (counter {n}); \
             {} commits acknowledged, {} writer failures",
            self.committed(),
            self.failures.load(Ordering::Relaxed)
        ))
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for follower in &mut self.followers {
            let _ = follower.kill();
            let _ = follower.wait();
        }
    }
}

/// What a follower wrote to its standard error.
fn stderr(mut child: Child) -> String {
    let mut text = String::new();
    if let Some(mut err) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
    }
    text
}

/// A writer: a row per transaction, every tenth rolled back, until `stop`; after a failure
/// (a lost connection, a server restarting, a failover) it connects again after 50 ms.
fn write<C: Db>(
    url: &str,
    writer: usize,
    stop: &AtomicBool,
    committed: &AtomicU64,
    failures: &AtomicU64,
) {
    let mut i = writer;
    let mut conn: Option<C> = None;
    while !stop.load(Ordering::Relaxed) {
        let outcome = match conn.as_mut() {
            Some(c) => c.transaction(|c| {
                c.batch_execute("INSERT INTO pend (v) VALUES (1)")?;
                if i % 10 == 3 {
                    return Err(diesel::result::Error::RollbackTransaction);
                }
                Ok(())
            }),
            None => match C::establish(url) {
                Ok(c) => {
                    conn = Some(c);
                    continue;
                }
                Err(_) => Err(diesel::result::Error::BrokenTransactionManager),
            },
        };
        match outcome {
            Ok(()) => {
                committed.fetch_add(1, Ordering::Relaxed);
            }
            Err(diesel::result::Error::RollbackTransaction) => {}
            Err(_) => {
                failures.fetch_add(1, Ordering::Relaxed);
                conn = None;
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        i += 1;
        // A business pace, not a flood: the followers' work is the point.
        std::thread::sleep(Duration::from_millis(2));
    }
}
