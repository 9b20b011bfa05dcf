//! A follower's lag, as an operator sees it: `seqgen metrics --pending` prints how many rows of
//! a table wait for their number; served (`--listen`), it also says how long the oldest has
//! waited, growing while nobody numbers them and back to 0 once a follower did.
#![cfg(feature = "sqlite")]

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::Connection;

const PENDING: &str = "invoices:pend:number:id";

/// A database with `pend`: one numbered row and three waiting.
fn database(dir: &std::path::Path) -> String {
    let url = dir.join("lag.db").display().to_string();
    let mut conn = diesel::SqliteConnection::establish(&url).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    conn.batch_execute(
        "CREATE TABLE pend (id INTEGER PRIMARY KEY, number TEXT UNIQUE); \
         INSERT INTO pend (number) VALUES ('BY-HAND-1'), (NULL), (NULL), (NULL)",
    )
    .unwrap();
    url
}

/// `seqgen ARGS` on `url`: its stdout, after it succeeded.
fn seqgen(url: &str, args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_seqgen"))
        .args(args)
        .args(["--database-url", url])
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The value of `series` in an exposition.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
}

#[test]
fn printed_the_waiting_rows_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let url = database(dir.path());
    let text = seqgen(&url, &["metrics", "--pending", PENDING]);
    let rows = r#"seqgen_pending_rows{key="invoices",table="pend"}"#;
    assert_eq!(value(&text, rows), Some(3.0), "{text}");
    assert!(text.contains("# HELP seqgen_pending_rows"), "{text}");
    // Printed once, there is no "since" to tell an age from.
    assert!(!text.contains("seqgen_pending_oldest_age"), "{text}");
}

/// Kills the exporter when dropped.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn served_the_oldest_waiting_row_ages_until_numbered() {
    let dir = tempfile::tempdir().unwrap();
    let url = database(dir.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let address = format!("127.0.0.1:{port}");
    let log = dir.path().join("exporter.log");
    let mut exporter = Running(
        Command::new(env!("CARGO_BIN_EXE_seqgen"))
            .args(["metrics", "--listen", &address, "--pending", PENDING])
            .args(["--database-url", &url])
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let scrape = || -> Option<String> {
        ureq::get(&format!("http://{address}/metrics"))
            .call()
            .ok()?
            .into_string()
            .ok()
    };
    // Until it answers, or has ended (its error then said); a start on a busy machine (CI
    // builds beside it) took more than 10 s once.
    let started = Instant::now();
    let first = loop {
        if let Some(text) = scrape() {
            break text;
        }
        if let Some(status) = exporter.0.try_wait().unwrap() {
            let said = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("the exporter ended ({status}) before it answered: {said}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the exporter never answered in 60 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let (rows, age) = (
        r#"seqgen_pending_rows{key="invoices",table="pend"}"#,
        r#"seqgen_pending_oldest_age_seconds{key="invoices",table="pend"}"#,
    );
    assert_eq!(value(&first, rows), Some(3.0), "{first}");
    let first_age = value(&first, age).unwrap_or_else(|| panic!("{first}"));
    let waited = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    let second = scrape().unwrap();
    let second_age = value(&second, age).unwrap();
    assert!(
        second_age >= first_age + 0.3
            && second_age <= first_age + waited.elapsed().as_secs_f64() + 0.1,
        "{first_age} then {second_age}, {:?} apart",
        waited.elapsed()
    );
    // A follower numbers them: nothing waits, nothing ages.
    seqgen(
        &url,
        &[
            "number",
            "--key",
            "invoices",
            "--table",
            "pend",
            "--column",
            "number",
            "--order-by",
            "id",
            "--shape",
            "INV{seq:6}",
        ],
    );
    let third = scrape().unwrap();
    assert_eq!(
        (value(&third, rows), value(&third, age)),
        (Some(0.0), Some(0.0)),
        "{third}"
    );
}
