//! Database servers that crash under load, started for this test alone: a private PostgreSQL
//! (`initdb` into a temp dir, another port) and a private MariaDB (`mariadb-install-db`), never
//! the shared servers (`support/private_servers.rs`). Several loadgen processes take numbers
//! (and two insert through `diesel_seqgen::insert_into`, as users do) while the server is
//! killed and started again; every process finishes its run (loadgen reconnects) and no ID
//! repeats. Then `seqgen number --follow` sidecars through the same crashes.
//!
//! PostgreSQL runs with `synchronous_commit = off` and a 10 s WAL writer delay, so that a crash
//! loses every commit that did not ask for durability: seqgen's reservations must ask. MariaDB
//! first runs with `innodb_flush_log_at_trx_commit = 2`, which seqgen refuses unless told,
//! then with 1 and a SIGKILL of the server.
//!
//! Runs with the `postgres` / `mysql` features; a missing server binary skips the scenario,
//! except under `CI=true`, where it fails. Like `multiprocess`, the loadgen processes are this
//! test binary re-executed with `--loadgen ARGS…`.

#[cfg(any(feature = "postgres", feature = "mysql"))]
#[path = "support/deferred.rs"]
mod deferred;
#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "support/private_servers.rs"]
mod private_servers;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::Duration;

use libtest_mimic::Trial;
use own_servers::{print_logs, wait_for};
use private_servers::{find_program, postgres_bin, PrivateMariadb, PrivatePostgres};
use support::{check_distinct, loadgen, read_ids};

type Scenario = fn(&Path) -> Result<Outcome, String>;

enum Outcome {
    /// Its summary line.
    Passed(String),
    Skipped(String),
}

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    let mut trials = Vec::new();
    #[cfg(feature = "postgres")]
    {
        trials.push(trial(
            "postgres::crashes_lose_no_reservation",
            postgres_crashes,
        ));
        trials.push(trial(
            "postgres::followers_number_through_crashes",
            postgres_followers,
        ));
    }
    #[cfg(feature = "mysql")]
    {
        trials.push(trial(
            "mysql::non_durable_refused_then_crashes",
            mariadb_crashes,
        ));
        trials.push(trial(
            "mysql::followers_number_through_crashes",
            mariadb_followers,
        ));
    }
    support::run_trials(trials)
}

/// `scenario` in a directory of its own; skipped where a server binary is missing, except
/// under `CI=true`, where that fails.
fn trial(name: &str, scenario: Scenario) -> Trial {
    support::trial(name.to_owned(), move || {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        match scenario(dir.path())? {
            Outcome::Passed(summary) => Ok(summary),
            Outcome::Skipped(why) if std::env::var("CI").as_deref() != Ok("true") => {
                Ok(format!("skipped: {why}"))
            }
            Outcome::Skipped(why) => Err(format!("{why} (under CI=true every scenario runs)")),
        }
    })
}

/// Waits until the processes' `files` hold `more` IDs than `from`; how many they hold.
fn wait_for_more_ids(files: &[PathBuf], from: usize, more: usize) -> Result<usize, String> {
    let mut ids = from;
    wait_for(
        &format!("{more} more IDs committed by the processes"),
        Duration::from_secs(30),
        || {
            ids = read_ids(files).len();
            ids >= from + more
        },
    )?;
    Ok(ids)
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

fn postgres_crashes(dir: &Path) -> Result<Outcome, String> {
    let Some(bin) = postgres_bin() else {
        return Ok(Outcome::Skipped(
            "no PostgreSQL server binaries (initdb, pg_ctl)".into(),
        ));
    };
    let server = PrivatePostgres::start(dir, &bin)?;
    let outcome = postgres_crashes_on(dir, &server);
    if outcome.is_err() {
        print_logs([("the PostgreSQL server".to_owned(), server.log.as_path())]);
    }
    outcome
}

fn postgres_crashes_on(dir: &Path, server: &PrivatePostgres) -> Result<Outcome, String> {
    let url = server.url();
    let files: Vec<PathBuf> = (0..4).map(|i| dir.join(format!("pg-{i}.ids"))).collect();
    // A fixed small batch: reservations all the time, so the crashes hit some in flight.
    let args = [
        "--threads",
        "4",
        "--seconds",
        "10",
        "--batch",
        "50",
        "--fixed-batch",
    ];
    let children = spawn_all(&url, "crash", &files, &args)?;
    let inserting = InsertingUsersWay::start(dir, &url, "10")?;
    // Each crash once the processes are writing (a reservation of 50 every few IDs), not at
    // a time: on a busy machine they may take seconds to start, or to come back.
    let (mut crashes, mut written) = (0, 0);
    for _ in 0..2 {
        written = wait_for_more_ids(&files, written, 500)?;
        server.crash_and_restart()?;
        crashes += 1;
    }
    let reports = finish_all(children)?;
    let ids = read_ids(&files);
    check_distinct(&ids)?;
    if reconnects(&reports) == 0 {
        return Err("no process saw the crashes: the test did not test anything".into());
    }
    let inserted = inserting.finish()?;
    Ok(Outcome::Passed(format!(
        "{} IDs from 4 processes x 4 threads across {crashes} crashes (pg_ctl -m immediate), \
         {} reconnects, 0 duplicates; {inserted}",
        ids.len(),
        reconnects(&reports)
    )))
}

/// Two processes inserting the way users do (`--via insert-into`: bulks of 5 on the pooled
/// connection and the default generator; single rows with a generator of its own, fixed
/// blocks of 50) for `seconds`, on keys of their own, beside a scenario's other processes.
/// Batched keys only: where the server was told not to flush commits (PostgreSQL here),
/// a gapless number's commit may be lost with its row, and taken again.
struct InsertingUsersWay {
    files: Vec<PathBuf>,
    children: Children,
}

impl InsertingUsersWay {
    fn start(dir: &Path, url: &str, seconds: &str) -> Result<Self, String> {
        let common = [
            "--threads",
            "2",
            "--seconds",
            seconds,
            "--insert",
            "--via",
            "insert-into",
        ];
        let forms: [(&str, &[&str]); 2] = [
            ("crash_pooled_bulk", &["--bulk", "5"]),
            (
                "crash_own",
                &["--form", "own", "--batch", "50", "--fixed-batch"],
            ),
        ];
        let mut files = Vec::new();
        let mut children = Vec::new();
        for (key, extra) in forms {
            let file = dir.join(format!("{key}.ids"));
            let args: Vec<&str> = common.iter().chain(extra).copied().collect();
            children.extend(spawn_all(url, key, std::slice::from_ref(&file), &args)?.children);
            files.push(file);
        }
        Ok(InsertingUsersWay {
            files,
            children: Children { children },
        })
    }

    /// Waits for the processes (each must finish its run) and checks their IDs: the summary.
    fn finish(self) -> Result<String, String> {
        let reports = finish_all(self.children)?;
        let mut rows = 0;
        for file in &self.files {
            let ids = read_ids(std::slice::from_ref(file));
            check_distinct(&ids)?;
            rows += ids.len();
        }
        Ok(format!(
            "{rows} rows through diesel_seqgen::insert_into (bulks on &mut pooled, a generator \
             of its own), {} reconnects, 0 duplicates",
            reconnects(&reports)
        ))
    }
}

/// Two `seqgen number --follow` sidecars and two writers of rows numbered after their commit,
/// through two crashes of the server (`pg_ctl -m immediate`): the followers connect again by
/// themselves, and every committed row ends with exactly one of 1..N.
#[cfg(feature = "postgres")]
fn postgres_followers(dir: &Path) -> Result<Outcome, String> {
    let Some(bin) = postgres_bin() else {
        return Ok(Outcome::Skipped(
            "no PostgreSQL server binaries (initdb, pg_ctl)".into(),
        ));
    };
    let server = PrivatePostgres::start(dir, &bin)?;
    let outcome =
        through_crashes::<diesel::PgConnection>(&server.url(), || server.crash_and_restart());
    if outcome.is_err() {
        print_logs([("the PostgreSQL server".to_owned(), server.log.as_path())]);
    }
    outcome.map(Outcome::Passed)
}

/// Writers and followers ([`deferred::Deferred`]) on `url` through two `crashes`, each once
/// they committed 200 more rows.
#[cfg(any(feature = "postgres", feature = "mysql"))]
fn through_crashes<C: deferred::Db>(
    url: &str,
    mut crash: impl FnMut() -> Result<(), String>,
) -> Result<String, String> {
    let load = deferred::Deferred::start::<C>(url, 2)?;
    for _ in 0..2 {
        let from = load.committed();
        wait_for(
            "200 more rows committed by the writers",
            Duration::from_secs(60),
            || load.committed() >= from + 200,
        )?;
        crash()?;
    }
    let from = load.committed();
    wait_for(
        "200 rows committed after the last crash",
        Duration::from_secs(60),
        || load.committed() >= from + 200,
    )?;
    load.finish::<C>()
        .map(|summary| format!("{summary}; 2 crashes"))
}

// ---------------------------------------------------------------------------------------------
// MariaDB

fn mariadb_crashes(dir: &Path) -> Result<Outcome, String> {
    let (Some(install_db), Some(server_bin)) = (
        find_program("mariadb-install-db"),
        find_program("mariadbd").or_else(|| {
            let sbin = PathBuf::from("/usr/sbin/mariadbd");
            sbin.exists().then_some(sbin)
        }),
    ) else {
        return Ok(Outcome::Skipped(
            "no MariaDB server binaries (mariadb-install-db, mariadbd)".into(),
        ));
    };
    let mut server = PrivateMariadb::install(dir, &install_db, &server_bin)?;
    let outcome = mariadb_crashes_on(dir, &mut server);
    if outcome.is_err() {
        print_logs([("the MariaDB server".to_owned(), server.log.as_path())]);
    }
    outcome
}

fn mariadb_crashes_on(dir: &Path, server: &mut PrivateMariadb) -> Result<Outcome, String> {
    // 1. A server that does not flush its log at every commit is refused, with the setting
    //    named, unless the run accepts it.
    server.start(&["--innodb-flush-log-at-trx-commit=2"])?;
    let url = server.url();
    let refused = loadgen(&url, "refused", &dir.join("refused.ids"), &["--ids", "10"])
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&refused.stderr);
    if refused.status.success() || !stderr.contains("innodb_flush_log_at_trx_commit") {
        return Err(format!(
            "a non-durable server must be refused, naming the setting; got {}: {stderr}",
            refused.status
        ));
    }
    let accepted = loadgen(
        &url,
        "accepted",
        &dir.join("accepted.ids"),
        &["--ids", "10", "--accept-non-durable-server"],
    )
    .output()
    .map_err(|e| e.to_string())?;
    if !accepted.status.success() {
        return Err(format!(
            "--accept-non-durable-server must run: {}",
            String::from_utf8_lossy(&accepted.stderr)
        ));
    }

    // 2. A durable server killed with SIGKILL under load, twice.
    server.kill()?;
    server.start(&[])?;
    let files: Vec<PathBuf> = (0..3)
        .map(|i| dir.join(format!("mariadb-{i}.ids")))
        .collect();
    // A fixed small batch: reservations all the time, so the crashes hit some in flight.
    let args = [
        "--threads",
        "4",
        "--seconds",
        "9",
        "--batch",
        "50",
        "--fixed-batch",
    ];
    let children = spawn_all(&url, "crash", &files, &args)?;
    let inserting = InsertingUsersWay::start(dir, &url, "9")?;
    let (mut crashes, mut written) = (0, 0);
    for _ in 0..2 {
        written = wait_for_more_ids(&files, written, 500)?;
        server.kill()?;
        server.start(&[])?;
        crashes += 1;
    }
    let reports = finish_all(children)?;
    let ids = read_ids(&files);
    check_distinct(&ids)?;
    if reconnects(&reports) == 0 {
        return Err("no process saw the crashes: the test did not test anything".into());
    }
    let inserted = inserting.finish()?;
    Ok(Outcome::Passed(format!(
        "refused with innodb_flush_log_at_trx_commit = 2, accepted when told; then {} IDs from \
         3 processes x 4 threads across {crashes} SIGKILLs of mariadbd, {} reconnects, \
         0 duplicates; {inserted}",
        ids.len(),
        reconnects(&reports)
    )))
}

/// The same as [`postgres_followers`] on MariaDB, killed with SIGKILL twice.
#[cfg(feature = "mysql")]
fn mariadb_followers(dir: &Path) -> Result<Outcome, String> {
    let (Some(install_db), Some(server_bin)) = (
        find_program("mariadb-install-db"),
        find_program("mariadbd").or_else(|| {
            let sbin = PathBuf::from("/usr/sbin/mariadbd");
            sbin.exists().then_some(sbin)
        }),
    ) else {
        return Ok(Outcome::Skipped(
            "no MariaDB server binaries (mariadb-install-db, mariadbd)".into(),
        ));
    };
    let mut server = PrivateMariadb::install(dir, &install_db, &server_bin)?;
    server.start(&[])?;
    let url = server.url();
    let server = std::cell::RefCell::new(server);
    let outcome = through_crashes::<diesel::MysqlConnection>(&url, || {
        let mut server = server.borrow_mut();
        server.kill()?;
        server.start(&[])
    });
    if outcome.is_err() {
        let server = server.borrow();
        print_logs([("the MariaDB server".to_owned(), server.log.as_path())]);
    }
    outcome.map(Outcome::Passed)
}

// ---------------------------------------------------------------------------------------------
// Processes and IDs

struct Children {
    children: Vec<Child>,
}

fn spawn_all(url: &str, key: &str, files: &[PathBuf], args: &[&str]) -> Result<Children, String> {
    let children = files
        .iter()
        .map(|out| {
            loadgen(url, key, out, args)
                .spawn()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    Ok(Children { children })
}

/// Waits for every process; each must have finished its run. Returns their JSON lines.
fn finish_all(children: Children) -> Result<Vec<String>, String> {
    let mut reports = Vec::new();
    for (i, child) in children.children.into_iter().enumerate() {
        let output = child.wait_with_output().map_err(|e| e.to_string())?;
        if !output.status.success() {
            return Err(format!(
                "process {i} did not survive the crashes ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        reports.push(String::from_utf8_lossy(&output.stdout).trim().to_owned());
    }
    Ok(reports)
}

/// The sum of the `reconnects` of loadgen's JSON lines.
fn reconnects(reports: &[String]) -> u64 {
    reports
        .iter()
        .filter_map(|line| {
            let rest = &line[line.find("\"reconnects\":")? + "\"reconnects\":".len()..];
            rest.split(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum()
}
