//! The app processes of a run: loadgen, each in its own namespace, on the user's own doors
//! (`diesel_seqgen::insert_into` on the default generator after `use_pool`, `Generator::next_id`
//! on a dated key, and rows numbered after their commit by a follower), with a clock libfaketime can move, writing its history.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use super::check::Key;
use super::net::Net;

/// libfaketime, as Debian installs it (package `faketime`): the clock of a process it is
/// preloaded in follows the offset in the process's clock file, read again every second.
const FAKETIME: &str = "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1";

/// What an app does, by its index: the kinds take turns, so that two apps share each key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `insert_into` of batched rows, alone (the insert takes care of its transaction).
    Batched,
    /// `insert_into` of gapless rows in transactions of the app's, 10 % rolled back.
    Gapless,
    /// `next_id` of a key dated by the hour, inserted in a transaction, 10 % rolled back: the
    /// one a moved clock matters to.
    Dated,
    /// `insert_into` of rows numbered after their commit (`gapless = "deferred"`), by a
    /// follower each such app runs beside its writers.
    Deferred,
}

impl Kind {
    pub const ALL: [Kind; 4] = [Kind::Batched, Kind::Gapless, Kind::Dated, Kind::Deferred];

    pub fn of(app: usize) -> Kind {
        Kind::ALL[app % Kind::ALL.len()]
    }

    /// Where its numbers are counted.
    pub fn key(self) -> Key {
        let (rows, counter) = match self {
            Kind::Batched => ("nemesis_batched", ("loadgen_rows", "nemesis_batched")),
            Kind::Gapless => (
                "nemesis_gapless",
                ("loadgen_rows_gapless", "nemesis_gapless"),
            ),
            Kind::Dated => ("nemesis_dated", ("nemesis_dated", "")),
            Kind::Deferred => ("nemesis_deferred", ("loadgen_pending", "")),
        };
        Key {
            rows: rows.into(),
            counter: (counter.0.into(), counter.1.into()),
            gapless: matches!(self, Kind::Gapless | Kind::Deferred),
            deferred: self == Kind::Deferred,
        }
    }

    fn arguments(self) -> Vec<String> {
        let key = self.key().rows;
        let list: &[&str] = match self {
            Kind::Batched => &["--via", "insert-into", "--mode", "batched"],
            Kind::Gapless => &[
                "--via",
                "insert-into",
                "--mode",
                "gapless",
                "--rollback",
                "0.1",
            ],
            Kind::Dated => &[
                "--via",
                "next-id",
                "--date",
                "%y%m%d%H",
                "--rollback",
                "0.1",
            ],
            Kind::Deferred => &[
                "--via",
                "insert-into",
                "--mode",
                "deferred",
                "--rollback",
                "0.1",
            ],
        };
        let mut args: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        args.extend(["--insert".into(), "--key".into(), key]);
        args
    }
}

/// One app: its namespace, its process (when running) and its files.
pub struct App {
    pub index: usize,
    pub kind: Kind,
    ns: String,
    child: Option<Child>,
    pub history: PathBuf,
    clock: PathBuf,
    log: PathBuf,
    /// The exits of its processes that failed, with the end of what they printed.
    pub failures: Vec<String>,
    /// Whether it runs a transaction the database aborted again (`--retry-conflicts`), as an
    /// app on Galera must: a certification conflict aborts one of two writers of a row.
    retry_conflicts: bool,
}

impl App {
    pub fn new(
        index: usize,
        ns: String,
        dir: &Path,
        retry_conflicts: bool,
    ) -> Result<Self, String> {
        let app = App {
            index,
            kind: Kind::of(index),
            ns,
            child: None,
            history: dir.join(format!("app{index}.history")),
            clock: dir.join(format!("app{index}.clock")),
            log: dir.join(format!("app{index}.log")),
            failures: Vec::new(),
            retry_conflicts,
        };
        app.set_clock(0)?;
        Ok(app)
    }

    /// Its turn among the nodes of a cluster (`Server::app_url`): its own index, but one turn
    /// for every writer of the gapless key, which the guide keeps on one Galera node (on
    /// several, MariaDB 10.11 leaves some clients of a transaction another node aborted
    /// waiting forever: `BENCHMARKS.md`, "A MariaDB Galera cluster").
    pub fn turn(&self) -> usize {
        match self.kind {
            // The first app of its kind: kinds take turns over the apps (`Kind::of`).
            Kind::Gapless => self.index % Kind::ALL.len(),
            _ => self.index,
        }
    }

    /// Starts its loadgen on `url` until `deadline` (at least 3 s).
    pub fn start(&mut self, url: &str, deadline: Instant) -> Result<(), String> {
        let seconds = deadline
            .saturating_duration_since(Instant::now())
            .as_secs_f64()
            .max(3.0);
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| e.to_string())?;
        let mut cmd = Net::command(&self.ns, &exe);
        cmd.args(["--loadgen", "--url", url, "--threads", "2"])
            .arg("--seconds")
            .arg(format!("{seconds:.1}"))
            .arg("--history")
            .arg(&self.history)
            .args(self.kind.arguments())
            .args(self.retry_conflicts.then_some("--retry-conflicts"))
            .env("LD_PRELOAD", FAKETIME)
            .env("FAKETIME_TIMESTAMP_FILE", &self.clock)
            .env("FAKETIME_CACHE_DURATION", "1")
            .env("DONT_FAKE_MONOTONIC", "1")
            .stdout(Stdio::null())
            .stderr(log);
        self.child = Some(cmd.spawn().map_err(|e| format!("app{}: {e}", self.index))?);
        Ok(())
    }

    /// Sends `signal` (`STOP`, `CONT`, `KILL`) to its process, if it runs; a process that
    /// already ended by itself is no fault's concern.
    pub fn signal(&mut self, signal: &str) -> Result<(), String> {
        let Some(child) = &self.child else {
            return Ok(());
        };
        Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .map_err(|e| e.to_string())?;
        if signal == "KILL" {
            if let Some(mut child) = self.child.take() {
                let _ = child.wait();
            }
        }
        Ok(())
    }

    /// Moves its clock `seconds` away from the true time (0: back to true).
    pub fn set_clock(&self, seconds: i64) -> Result<(), String> {
        std::fs::write(&self.clock, format!("{seconds:+}\n")).map_err(|e| e.to_string())
    }

    /// Whether its process is still running; a failed exit is kept in `failures`.
    pub fn running(&mut self) -> bool {
        let Some(child) = self.child.as_mut() else {
            return false;
        };
        match child.try_wait() {
            Ok(None) => true,
            Ok(Some(status)) => {
                if !status.success() {
                    let log = std::fs::read_to_string(&self.log).unwrap_or_default();
                    let tail: Vec<&str> = log.lines().rev().take(3).collect();
                    self.failures.push(format!(
                        "app{} exited with {status}: {}",
                        self.index,
                        tail.join(" | ")
                    ));
                }
                self.child = None;
                false
            }
            Err(_) => false,
        }
    }
}

impl Drop for App {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(child.id().to_string())
                .status();
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
