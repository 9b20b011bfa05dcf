//! What the tests that start servers of their own share (`servers.rs`: PostgreSQL and
//! pgbouncer; `galera_cluster.rs`, also used by `tools/tests/galera_faults.rs`; the fault
//! tests of `tools/tests/`): free ports, whether we run as root, how a missing server binary
//! skips a test, waits that say what they waited for, and the servers' logs when a test fails.
#![allow(dead_code)] // each user needs only part of it

use std::path::Path;
use std::time::{Duration, Instant};

/// A port nobody listens on now, below the kernel's ephemeral range (32768 and up on Linux):
/// a port the kernel hands out may be taken as the source port of an outgoing connection
/// (a loadgen's, a replica's) before the server that was to listen on it starts. Each call in
/// a process gives the next port after the last (none twice: a cluster asks for a dozen before
/// it starts any), from a place drawn once from the process id and the clock. A port is also
/// claimed by a file (`port_claimed`), so that two test processes running side by side (CI's
/// two groups of tests with servers of their own) never both take one before either listens.
pub fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::OnceLock;
    const FIRST: u32 = 20_000;
    const PORTS: u32 = 12_000;
    static START: OnceLock<u32> = OnceLock::new();
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let start = *START.get_or_init(|| {
        std::process::id().wrapping_mul(7_919)
            ^ std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |t| t.subsec_micros())
    });
    for _ in 0..PORTS {
        let port = FIRST + (start.wrapping_add(NEXT.fetch_add(1, Ordering::Relaxed)) % PORTS);
        if std::net::TcpListener::bind(("127.0.0.1", port as u16)).is_ok()
            && port_claimed(port as u16)
        {
            return port as u16;
        }
    }
    panic!("no free port in {FIRST}..{}", FIRST + PORTS);
}

/// Whether this process claimed `port`: it created the port's file in a directory every
/// test process shares. A claim older than an hour (a test that ended long ago) is taken over.
fn port_claimed(port: u16) -> bool {
    let dir = std::env::temp_dir().join("seqgen-test-ports");
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join(port.to_string());
    let claim = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&file)
            .is_ok()
    };
    if claim() {
        return true;
    }
    let stale = std::fs::metadata(&file)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_some_and(|age| age > std::time::Duration::from_secs(3600));
    stale && std::fs::remove_file(&file).is_ok() && claim()
}

/// Waits until `ready` holds, for at most `limit`, checking soon and then less often (20 ms
/// growing to 500 ms: a check may start a client process); prints what it waited for and how
/// long. Past `limit`: an error that says what was awaited and how long.
pub fn wait_for(
    what: &str,
    limit: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<Duration, String> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(20);
    loop {
        if ready() {
            let waited = started.elapsed();
            println!("waited {waited:.1?} for {what}");
            return Ok(waited);
        }
        let waited = started.elapsed();
        if waited >= limit {
            return Err(format!("gave up after {waited:.1?} waiting for {what}"));
        }
        std::thread::sleep(pause.min(limit - waited));
        pause = (pause * 3 / 2).min(Duration::from_millis(500));
    }
}

/// [`wait_for`], panicking past `limit`.
pub fn wait_until(what: &str, limit: Duration, ready: impl FnMut() -> bool) -> Duration {
    wait_for(what, limit, ready).unwrap_or_else(|e| panic!("{e}"))
}

/// When the current thread is panicking (a failed test dropping its servers): the last 50
/// lines of each log, under its name, so that a failure in CI explains itself.
pub fn print_logs_if_failing<'a>(logs: impl IntoIterator<Item = (String, &'a Path)>) {
    if std::thread::panicking() {
        print_logs(logs);
    }
}

/// The last 50 lines of each log, under its name.
pub fn print_logs<'a>(logs: impl IntoIterator<Item = (String, &'a Path)>) {
    for (name, path) in logs {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| format!("(unreadable: {e})\n"));
        let lines: Vec<&str> = text.lines().collect();
        let tail = &lines[lines.len().saturating_sub(50)..];
        println!(
            "---- the last {} lines of {name} ({}):",
            tail.len(),
            path.display()
        );
        for line in tail {
            println!("{line}");
        }
    }
}

/// Whether this process runs as root: servers then run as their own user, since PostgreSQL
/// and pgbouncer refuse root and MariaDB wants to be told.
pub fn as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| out.stdout.trim_ascii() == b"0")
}

/// Says that `test` is skipped because `what` is not installed; under `CI=true`, where every
/// server the tests need is installed, that fails the test instead.
pub fn skip(test: &str, what: &str) {
    let line = format!("skipping {test}: {what} not installed");
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{line} (under CI=true that is a failure)"
    );
    println!("{line}");
}

/// A test that hangs is ended by nextest's timeout, which prints nothing of the servers it
/// started: armed with a limit under that timeout, this prints what `diagnose` finds (what the
/// servers are doing, their logs) and ends the process with a failure, unless it is dropped
/// first, at the end of the test.
#[must_use = "the watchdog is disarmed when dropped"]
pub struct Watchdog(Option<std::sync::mpsc::Sender<()>>);

impl Watchdog {
    /// Arms it for `test`, `limit` from now.
    pub fn arm(test: &str, limit: Duration, diagnose: impl FnOnce() + Send + 'static) -> Self {
        let (disarm, disarmed) = std::sync::mpsc::channel::<()>();
        let test = test.to_owned();
        std::thread::spawn(move || {
            // Dropped (disconnected) before the limit: the test ended.
            if disarmed.recv_timeout(limit) != Err(std::sync::mpsc::RecvTimeoutError::Timeout) {
                return;
            }
            println!("---- {test} still runs after {limit:?}: what its servers are doing");
            diagnose();
            println!("---- {test} hung: ended by its watchdog after {limit:?}");
            std::process::exit(101);
        });
        Watchdog(Some(disarm))
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.0.take();
    }
}
