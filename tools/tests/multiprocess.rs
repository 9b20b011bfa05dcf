//! Several app instances in separate processes against one database, on every enabled
//! backend: 4 processes x 4 threads; a process killed with SIGKILL mid-run and started again;
//! two processes whose clocks are a day apart; series rolling over while three processes take
//! numbers; 20 scopes, each with its own counter, batched and gapless. Never a duplicate.
//!
//! The instances are this test binary itself, re-executed with `--loadgen ARGS…`, which runs
//! the load generator of `tools/src/bin/loadgen.rs`. SQLite always runs (a file in a temp dir);
//! PostgreSQL and MySQL run with `PG_DATABASE_URL` / `MYSQL_DATABASE_URL` and the `postgres` /
//! `mysql` features, and under `CI=true` a missing URL fails the run.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

mod support;

use support::{check_distinct, exactly_one_to_n, finish, loadgen, read_ids};

/// One test: given a scratch directory and a database URL, `Err` says what went wrong.
type Scenario = fn(&Path, &str) -> Result<(), String>;

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    let mut scenarios: Vec<(&str, Scenario)> = vec![
        ("four_processes_four_threads", four_processes_four_threads),
        ("killed_and_restarted", killed_and_restarted),
        ("clocks_a_day_apart", clocks_a_day_apart),
        (
            "series_roll_over_across_processes",
            series_roll_over_across_processes,
        ),
        ("release_on_exit", release_on_exit),
        ("scoped_batched", scoped_batched),
        (
            "scoped_gapless_with_rollbacks",
            scoped_gapless_with_rollbacks,
        ),
    ];
    if ASYNC {
        scenarios.push((
            "async_four_processes_32_tasks",
            async_four_processes_32_tasks,
        ));
        scenarios.push(("async_gapless_with_rollbacks", async_gapless_with_rollbacks));
    }
    let backends = [
        ("sqlite", cfg!(feature = "sqlite"), None),
        (
            "postgres",
            cfg!(feature = "postgres"),
            Some("PG_DATABASE_URL"),
        ),
        ("mysql", cfg!(feature = "mysql"), Some("MYSQL_DATABASE_URL")),
    ];
    let mut trials = Vec::new();
    for (backend, enabled, var) in backends {
        if !enabled {
            continue;
        }
        for &(name, scenario) in &scenarios {
            trials.push(support::trial(format!("{backend}::{name}"), move || {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let url = match var {
                    // SQLite: a file of this scenario's own.
                    None => dir.path().join("multiprocess.db").display().to_string(),
                    Some(var) => match std::env::var(var) {
                        Ok(url) => url,
                        Err(_) if std::env::var("CI").as_deref() == Ok("true") => {
                            return Err(format!(
                                "{var} is not set: under CI=true every enabled backend runs"
                            ))
                        }
                        Err(_) => return Ok(format!("skipped: set {var}")),
                    },
                };
                scenario(dir.path(), &url).map(|()| "ok".to_owned())
            }));
        }
    }
    support::run_trials(trials)
}

/// Whether loadgen has `--async` for every enabled backend (the features `async-sqlite`,
/// `async-postgres`, `async-mysql` come together in CI's `--all-features`).
const ASYNC: bool = cfg!(all(
    any(feature = "async-sqlite", not(feature = "sqlite")),
    any(feature = "async-postgres", not(feature = "postgres")),
    any(feature = "async-mysql", not(feature = "mysql")),
    feature = "async"
));

/// A key no earlier run used (server databases keep their counters).
fn fresh_key(name: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("mp_{name}_{}_{:x}", std::process::id(), nanos % 0xffff_ffff)
}

/// One loadgen process per file, all at once, with the same arguments; waits for them all.
fn run_processes(url: &str, key: &str, files: &[PathBuf], args: &[&str]) -> Result<(), String> {
    let children: Vec<Child> = files
        .iter()
        .map(|out| {
            loadgen(url, key, out, args)
                .spawn()
                .map_err(|e| e.to_string())
        })
        .collect::<Result<_, _>>()?;
    for (i, child) in children.into_iter().enumerate() {
        finish(child, &format!("process {i}"))?;
    }
    Ok(())
}

/// `processes` loadgen processes on a new key named after `name`, all at once with `args`;
/// the IDs they committed.
fn run_on_new_key(
    dir: &Path,
    url: &str,
    name: &str,
    processes: usize,
    args: &[&str],
) -> Result<Vec<String>, String> {
    let key = fresh_key(name);
    let files: Vec<PathBuf> = (0..processes)
        .map(|i| dir.join(format!("{key}-{i}.ids")))
        .collect();
    run_processes(url, &key, &files, args)?;
    Ok(read_ids(&files))
}

fn four_processes_four_threads(dir: &Path, url: &str) -> Result<(), String> {
    let ids = run_on_new_key(
        dir,
        url,
        "four",
        4,
        &["--threads", "4", "--ids", "4000", "--batch", "50"],
    )?;
    if ids.len() != 16_000 {
        return Err(format!("expected 16000 IDs, got {}", ids.len()));
    }
    check_distinct(&ids)
}

fn killed_and_restarted(dir: &Path, url: &str) -> Result<(), String> {
    let key = fresh_key("killed");
    let (first, second, steady) = (
        dir.join(format!("{key}-killed.ids")),
        dir.join(format!("{key}-restarted.ids")),
        dir.join(format!("{key}-steady.ids")),
    );
    let load = [
        "--threads",
        "4",
        "--insert",
        "--rollback",
        "0.1",
        "--batch",
        "20",
    ];
    let steady_child = loadgen(
        url,
        &key,
        &steady,
        &[&load[..], &["--seconds", "3"]].concat(),
    )
    .spawn()
    .map_err(|e| e.to_string())?;
    let mut doomed = loadgen(
        url,
        &key,
        &first,
        &[&load[..], &["--seconds", "30"]].concat(),
    )
    .spawn()
    .map_err(|e| e.to_string())?;
    // Kill it once it has written some IDs: mid-run, blocks cached and transactions open.
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::metadata(&first).map_or(0, |m| m.len()) < 2_000 {
        if let Ok(Some(_)) = doomed.try_wait() {
            return finish(doomed, "the process to kill")
                .and_then(|out| Err(format!("the process to kill ended by itself: {out}")));
        }
        if Instant::now() > deadline {
            let _ = doomed.kill();
            return Err("the process to kill wrote no IDs in 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    doomed.kill().map_err(|e| e.to_string())?; // SIGKILL
    doomed.wait().map_err(|e| e.to_string())?;
    let restarted = loadgen(
        url,
        &key,
        &second,
        &[&load[..], &["--ids", "2000"]].concat(),
    )
    .spawn()
    .map_err(|e| e.to_string())?;
    finish(restarted, "the restarted process")?;
    finish(steady_child, "the process running beside them")?;

    let ids = read_ids(&[first, second, steady]);
    check_distinct(&ids)?;
    let counters: Vec<u64> = ids.iter().filter_map(|id| id[1..].parse().ok()).collect();
    let max = counters.iter().max().copied().unwrap_or(0);
    println!(
        "  {} committed IDs, highest counter {max}: {} holes (cached by the killed process, \
         rolled back, or in flight)",
        ids.len(),
        max.saturating_sub(ids.len() as u64)
    );
    Ok(())
}

fn clocks_a_day_apart(dir: &Path, url: &str) -> Result<(), String> {
    let key = fresh_key("skew");
    let files = [
        dir.join(format!("{key}-now.ids")),
        dir.join(format!("{key}-behind.ids")),
    ];
    let common = [
        "--threads",
        "2",
        "--ids",
        "3000",
        "--batch",
        "25",
        "--date",
        "%Y%m%d",
    ];
    let now = loadgen(url, &key, &files[0], &common)
        .spawn()
        .map_err(|e| e.to_string())?;
    let behind = loadgen(
        url,
        &key,
        &files[1],
        &[&common[..], &["--clock-offset-secs", "-86400"]].concat(),
    )
    .spawn()
    .map_err(|e| e.to_string())?;
    finish(now, "the process on time")?;
    finish(behind, "the process a day behind")?;
    let ids = read_ids(&files);
    if ids.len() != 6000 {
        return Err(format!("expected 6000 IDs, got {}", ids.len()));
    }
    let dates: HashSet<&str> = ids.iter().map(|id| &id[1..9]).collect();
    if dates.len() < 2 {
        return Err(format!("expected two dates in the IDs, got {dates:?}"));
    }
    check_distinct(&ids)
}

fn series_roll_over_across_processes(dir: &Path, url: &str) -> Result<(), String> {
    let args = [
        "--threads",
        "2",
        "--ids",
        "100000",
        "--batch",
        "25",
        "--series",
        "A,B,C,D",
        "--series-max",
        "300",
    ];
    let ids = run_on_new_key(dir, url, "series", 3, &args)?;
    check_distinct(&ids)?;
    if ids.len() > 1200 {
        return Err(format!("{} IDs from 4 series of 300", ids.len()));
    }
    for code in ["A", "B", "C", "D"] {
        // `L` + series code + 12 digits: every series was used, none skipped.
        if !ids.iter().any(|id| id[1..].starts_with(code)) {
            return Err(format!("series {code} was skipped"));
        }
    }
    Ok(())
}

/// `--release-on-exit`: runs one after another leave no hole (each gives back what it held and
/// the next continues there); four at once, where only the last to reserve can give back,
/// still issue nothing twice.
fn release_on_exit(dir: &Path, url: &str) -> Result<(), String> {
    let key = fresh_key("release");
    let sequential: Vec<PathBuf> = (0..3)
        .map(|i| dir.join(format!("{key}-seq-{i}.ids")))
        .collect();
    for file in &sequential {
        run_processes(
            url,
            &key,
            std::slice::from_ref(file),
            &[
                "--threads",
                "1",
                "--ids",
                "1000",
                "--batch",
                "300",
                "--release-on-exit",
            ],
        )?;
    }
    let ids = read_ids(&sequential);
    let mut counters: Vec<u64> = ids.iter().filter_map(|id| id[1..].parse().ok()).collect();
    counters.sort_unstable();
    if counters != (1..=3000).collect::<Vec<_>>() {
        return Err(format!(
            "three runs of 1000 with release should be exactly 1..=3000, got {} IDs up to {:?}",
            counters.len(),
            counters.last()
        ));
    }
    let concurrent: Vec<PathBuf> = (0..4)
        .map(|i| dir.join(format!("{key}-par-{i}.ids")))
        .collect();
    run_processes(
        url,
        &key,
        &concurrent,
        &[
            "--threads",
            "4",
            "--ids",
            "3000",
            "--batch",
            "50",
            "--release-on-exit",
        ],
    )?;
    let mut all = ids;
    all.extend(read_ids(&concurrent));
    if all.len() != 15_000 {
        return Err(format!("expected 15000 IDs, got {}", all.len()));
    }
    check_distinct(&all)
}

/// The IDs of `--scopes` runs (`SCOPE ID` lines), by scope.
fn by_scope(lines: &[String]) -> Result<BTreeMap<String, Vec<String>>, String> {
    let mut scopes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in lines {
        let (scope, id) = line
            .split_once(' ')
            .ok_or_else(|| format!("not a `SCOPE ID` line: {line:?}"))?;
        scopes
            .entry(scope.to_owned())
            .or_default()
            .push(id.to_owned());
    }
    Ok(scopes)
}

/// 4 processes x 4 threads taking batched IDs in 20 scopes, each inserted in a transaction
/// (through the pool beside it on PostgreSQL and MySQL, inside it on SQLite), each process
/// giving back what it holds at the end: no ID twice within a scope (each scope's counter
/// hands out its own blocks), and every scope was used.
fn scoped_batched(dir: &Path, url: &str) -> Result<(), String> {
    let ids = run_on_new_key(
        dir,
        url,
        "scoped",
        4,
        &[
            "--threads",
            "4",
            "--ids",
            "2000",
            "--batch",
            "20",
            "--scopes",
            "20",
            "--insert",
            "--release-on-exit",
        ],
    )?;
    if ids.len() != 8_000 {
        return Err(format!("expected 8000 IDs, got {}", ids.len()));
    }
    let scopes = by_scope(&ids)?;
    if scopes.len() != 20 {
        return Err(format!("expected 20 scopes, got {}", scopes.len()));
    }
    for (scope, ids) in &scopes {
        check_distinct(ids).map_err(|e| format!("scope {scope}: {e}"))?;
    }
    Ok(())
}

/// 4 processes x 4 threads inserting gapless IDs in 20 scopes, a tenth of the transactions
/// rolled back: each scope's committed numbers are exactly 1..N.
fn scoped_gapless_with_rollbacks(dir: &Path, url: &str) -> Result<(), String> {
    let ids = run_on_new_key(
        dir,
        url,
        "scoped_gapless",
        4,
        &[
            "--threads",
            "4",
            "--ids",
            "500",
            "--mode",
            "gapless",
            "--insert",
            "--rollback",
            "0.1",
            "--scopes",
            "20",
        ],
    )?;
    let scopes = by_scope(&ids)?;
    if scopes.len() != 20 {
        return Err(format!("expected 20 scopes, got {}", scopes.len()));
    }
    let mut committed = 0;
    for (scope, ids) in &scopes {
        committed += exactly_one_to_n(ids).map_err(|e| format!("scope {scope}: {e}"))?;
    }
    // About a tenth rolled back; all but those committed.
    if !(1_500..2_000).contains(&committed) {
        return Err(format!(
            "expected about 1800 committed IDs, got {committed}"
        ));
    }
    Ok(())
}

/// `diesel_seqgen::nonblocking`: 4 processes × 32 tasks on one key, each ID inserted in a transaction
/// (a tenth rolled back) through a deadpool pool. Never a duplicate.
fn async_four_processes_32_tasks(dir: &Path, url: &str) -> Result<(), String> {
    let ids = run_on_new_key(
        dir,
        url,
        "async",
        4,
        &[
            "--async",
            "--threads",
            "32",
            "--ids",
            "2000",
            "--batch",
            "50",
            "--insert",
            "--rollback",
            "0.1",
        ],
    )?;
    if !(7_000..8_000).contains(&ids.len()) {
        return Err(format!(
            "expected about 7200 committed IDs, got {}",
            ids.len()
        ));
    }
    check_distinct(&ids)
}

/// `diesel_seqgen::nonblocking` in gapless mode: 4 processes × 32 tasks, a tenth of the transactions
/// rolled back after taking their number: the committed numbers are exactly 1..=N.
fn async_gapless_with_rollbacks(dir: &Path, url: &str) -> Result<(), String> {
    let ids = run_on_new_key(
        dir,
        url,
        "async_gapless",
        4,
        &[
            "--async",
            "--threads",
            "32",
            "--ids",
            "250",
            "--mode",
            "gapless",
            "--insert",
            "--rollback",
            "0.1",
        ],
    )?;
    let committed = exactly_one_to_n(&ids)?;
    if !(800..1_000).contains(&committed) {
        return Err(format!("expected about 900 committed IDs, got {committed}"));
    }
    Ok(())
}
