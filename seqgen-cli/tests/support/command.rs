//! Running the `seqgen` binary in the CLI's tests: its exit code and output, with a deadline
//! past which a test says what the database's sessions were doing instead of hanging.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::Duration;

#[cfg(any(feature = "postgres", feature = "mysql"))]
use diesel::prelude::*;
use wait_timeout::ChildExt;

/// The binary's exit code, stdout and stderr.
pub struct Run {
    pub code: i32,
    pub out: String,
    pub err: String,
}

pub fn seqgen(url: Option<&str>, args: &[&str]) -> Run {
    // In the temporary directory: no `.env` of the repository's is read there.
    seqgen_in(&std::env::temp_dir(), url, args)
}

/// The longest one `seqgen` command may take here. They take milliseconds; past this the test
/// ends with what the database's sessions were doing (a lock wait names its holder).
pub const DEADLINE: Duration = Duration::from_secs(60);

/// [`seqgen`] run in `dir` (where it looks for a `.env` file).
pub fn seqgen_in(dir: &std::path::Path, url: Option<&str>, args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_seqgen"));
    command
        .args(args)
        .current_dir(dir)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(url) = url {
        command.env("DATABASE_URL", url);
    }
    let mut child = command.spawn().expect("run seqgen");
    // Read on threads of their own: a pipe that fills would stop the child.
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            pipe.unwrap().read_to_string(&mut text).unwrap();
            text
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let Some(status) = child.wait_timeout(DEADLINE).unwrap() else {
        let sessions = url.map_or_else(String::new, sessions);
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "`seqgen {}` still ran after {DEADLINE:?} (killed); the database's other sessions \
             then:\n{sessions}",
            args.join(" ")
        );
    };
    Run {
        code: status.code().expect("an exit code, not a signal"),
        out: out.join().unwrap(),
        err: err.join().unwrap(),
    }
}

/// What the other sessions of the database at `url` are doing, a line each (a server
/// backend's; nothing for SQLite).
pub fn sessions(url: &str) -> String {
    #[cfg(feature = "postgres")]
    if url.starts_with("postgres") {
        let mut conn = PgConnection::establish(url).unwrap();
        return diesel::dsl::sql::<diesel::sql_types::Text>(
            "SELECT coalesce(string_agg(format('pid %s, %s, waiting on %s/%s, blocked by %s, \
             in a transaction since %s: %s', pid, state, wait_event_type, wait_event, \
             pg_blocking_pids(pid), xact_start, left(query, 200)), E'\\n'), '') \
             FROM pg_stat_activity WHERE datname IS NOT NULL AND pid <> pg_backend_pid()",
        )
        .get_result(&mut conn)
        .unwrap();
    }
    #[cfg(feature = "mysql")]
    if url.starts_with("mysql") {
        let mut conn = MysqlConnection::establish(url).unwrap();
        return diesel::dsl::sql::<diesel::sql_types::Text>(
            "SELECT COALESCE(GROUP_CONCAT(CONCAT_WS(', ', ID, DB, COMMAND, CONCAT(TIME, ' s'), \
             STATE, LEFT(INFO, 200)) SEPARATOR '\\n'), '') \
             FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()",
        )
        .get_result(&mut conn)
        .unwrap();
    }
    let _ = url;
    String::new()
}

/// Armed for a test on the database at `url`: unless dropped first, after `limit` it prints
/// the database's sessions and ends the test process with a failure.
#[must_use = "the watchdog is disarmed when dropped"]
pub struct Watchdog {
    // Dropped with the watchdog: the thread's channel disconnects.
    _disarm: std::sync::mpsc::Sender<()>,
}

impl Watchdog {
    pub fn arm(url: &str, limit: Duration) -> Self {
        let (disarm, disarmed) = std::sync::mpsc::channel::<()>();
        let url = url.to_owned();
        std::thread::spawn(move || {
            // Disconnected before the limit: the test ended.
            if disarmed.recv_timeout(limit) == Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                println!("still running after {limit:?}; the database's other sessions:");
                println!("{}", sessions(&url));
                std::process::exit(101);
            }
        });
        Watchdog { _disarm: disarm }
    }
}

/// Asserts the run exited with `code`, showing its output when it did not.
#[track_caller]
pub fn expect(run: &Run, code: i32) {
    assert_eq!(
        run.code, code,
        "exit code; stdout:\n{}\nstderr:\n{}",
        run.out, run.err
    );
}

/// `seqgen number` on column `ref` of table `refs` at `url`, rows in `id` order, the IDs
/// shaped as `shape`, with `more` arguments (a scope or date column): it must exit 0.
#[allow(dead_code)] // the tests of shapes, not every file that runs seqgen
pub fn number_refs(url: &str, shape: &str, more: &[&str]) {
    let mut args = vec![
        "number",
        "--key",
        "refs",
        "--table",
        "refs",
        "--column",
        "ref",
        "--order-by",
        "id",
        "--shape",
        shape,
    ];
    args.extend_from_slice(more);
    expect(&seqgen(Some(url), &args), 0);
}
