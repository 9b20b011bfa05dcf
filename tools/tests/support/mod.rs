//! What the fault tests share: their mains (each scenario a trial that cargo test and
//! cargo-nextest list, filter and run by name), the loadgen child processes (each test binary
//! re-executes itself with `--loadgen ARGS…`), and reading back and checking the IDs they
//! wrote.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::Instant;

use libtest_mimic::{Arguments, Trial};

/// Runs `trials` as libtest runs tests (`--list`, filters, `--exact`, `--ignored`), one at a
/// time unless told otherwise: each drives processes and servers of its own, and two at once
/// would only slow each other down.
pub fn run_trials(trials: Vec<Trial>) -> ExitCode {
    let mut args = Arguments::from_args();
    args.test_threads.get_or_insert(1);
    libtest_mimic::run(&args, trials).exit_code()
}

/// A trial running `scenario`, which returns its summary line or why it failed. A failure is
/// a panic, so that the servers the scenario started print their logs as they are dropped.
#[allow(dead_code)] // the cluster tests' scenarios share one trial: `cluster_trial`
pub fn trial(
    name: String,
    scenario: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> Trial {
    Trial::test(name, move || {
        let started = Instant::now();
        match scenario() {
            Ok(summary) => {
                println!("{summary} ({:.1?})", started.elapsed());
                Ok(())
            }
            Err(e) => panic!("{e} (after {:.1?})", started.elapsed()),
        }
    })
}

/// When this binary was started as a loadgen process, runs it and ends the process with its
/// exit status (`seqgen_tools::exit_at_once`); otherwise `None`.
pub fn run_as_loadgen() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--loadgen") {
        seqgen_tools::exit_at_once(seqgen_tools::loadgen::status_with(args.into_iter().skip(1)));
    }
    None
}

/// A loadgen process on `url` and `key`, appending the IDs it commits to `out`.
pub fn loadgen(url: &str, key: &str, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::current_exe().expect("own path"));
    cmd.args(["--loadgen", "--url", url, "--key", key, "--out"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// Every whole line of the files; a line cut short by SIGKILL is not an ID that was issued.
pub fn read_ids(files: &[PathBuf]) -> Vec<String> {
    let mut ids = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let whole = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        ids.extend(whole.lines().map(str::to_owned));
    }
    ids
}

/// `Err` with how many IDs repeat, and the first of them.
pub fn check_distinct(ids: &[String]) -> Result<(), String> {
    let mut seen = HashSet::with_capacity(ids.len());
    let duplicates: Vec<&String> = ids.iter().filter(|id| !seen.insert(*id)).collect();
    match duplicates.first() {
        None => Ok(()),
        Some(first) => Err(format!(
            "{} duplicate IDs among {} (first: {first})",
            duplicates.len(),
            ids.len()
        )),
    }
}

/// How many gapless IDs (one letter, then the counter) were committed, when their counters
/// are exactly 1..=N.
#[allow(dead_code)] // crash.rs takes no gapless numbers
pub fn exactly_one_to_n(ids: &[String]) -> Result<usize, String> {
    let mut numbers: Vec<u64> = ids
        .iter()
        .map(|id| id[1..].parse().map_err(|_| format!("not an ID: {id}")))
        .collect::<Result<_, _>>()?;
    numbers.sort_unstable();
    if numbers != (1..=numbers.len() as u64).collect::<Vec<_>>() {
        return Err(format!(
            "{} committed numbers are not exactly 1..={} (last {:?})",
            numbers.len(),
            numbers.len(),
            numbers.last()
        ));
    }
    Ok(numbers.len())
}

/// Waits for the loadgen process `child`: its report (stdout, trimmed), or `what` failed and
/// why (its stderr).
#[allow(dead_code)] // crash.rs waits for its processes together
pub fn finish(child: Child, what: &str) -> Result<String, String> {
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "{what} exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// A number field of loadgen's JSON report (0 when missing).
#[allow(dead_code)] // multiprocess and crash read none
pub fn report_field(report: &str, name: &str) -> u64 {
    let pattern = format!("\"{name}\":");
    report
        .find(&pattern)
        .map(|at| &report[at + pattern.len()..])
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|digits| digits.parse().ok())
        .unwrap_or(0)
}

/// A fault scenario of a cluster test: given a scratch directory and the cluster, its
/// summary line (IDs, faults, duplicates) or what went wrong.
#[allow(dead_code)] // multiprocess and crash have scenarios of their own shape
pub type Scenario<S> = fn(&std::path::Path, &mut S) -> Result<String, String>;

/// One trial, `name`, that starts a cluster with `start` (`None`: skipped, printed) and runs
/// `scenarios` on it in order, each printed with its summary or why it failed: they share
/// the cluster's state (a node one crashes is down in the next), so they are not trials of
/// their own. `SEQGEN_SCENARIO=PART` runs those whose name contains PART. A failure panics
/// while the cluster lives, so that its servers print their logs as it drops.
#[allow(dead_code)]
pub fn cluster_trial<S: 'static>(
    name: &str,
    start: fn() -> Option<S>,
    scenarios: Vec<(&'static str, Scenario<S>)>,
) -> Trial {
    Trial::test(name, move || {
        let Some(mut cluster) = start() else {
            return Ok(());
        };
        let dir = tempfile::tempdir().expect("temp dir");
        let only = std::env::var("SEQGEN_SCENARIO").ok();
        let mut failed = Vec::new();
        for (name, scenario) in scenarios {
            if only.as_deref().is_some_and(|part| !name.contains(part)) {
                continue;
            }
            let started = Instant::now();
            match scenario(dir.path(), &mut cluster) {
                Ok(summary) => println!("{name} ... ok ({:.1?}): {summary}", started.elapsed()),
                Err(e) => {
                    println!("{name} ... FAILED ({:.1?}): {e}", started.elapsed());
                    failed.push(name);
                }
            }
        }
        assert!(failed.is_empty(), "failed: {}", failed.join(", "));
        Ok(())
    })
}
