//! Loadgen processes across PostgreSQL failovers, on servers started for this test alone
//! (`seqgen/tests/suite/servers.rs`: `initdb`, `pg_basebackup`, free ports, never the shared
//! server): a primary with a synchronous standby crashed (`pg_ctl -m immediate`) under four
//! processes, the standby promoted, the processes going on there through one multi-host URL;
//! the old primary then restarted writable beside it (a split brain), where every process is
//! refused; an asynchronous standby that fell behind promoted under load, whose repeated
//! numbers the check must see; and a primary whose standby is asynchronous, where gapless
//! numbers are refused. Every committed ID is read back; each scenario prints its IDs, faults
//! and duplicates.
//!
//! Runs with the `postgres` feature; without PostgreSQL's server binaries it is skipped,
//! except under `CI=true`, where it fails. Like `multiprocess`, the loadgen processes are this
//! test binary re-executed with `--loadgen ARGS…`.

#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "../../seqgen/tests/suite/servers.rs"]
mod servers;
mod support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::Duration;

use diesel::prelude::*;
use own_servers::wait_for;
use servers::{PgCluster, PgServer};
use support::{check_distinct, finish, loadgen, read_ids, report_field};

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    let scenarios: [(&str, support::Scenario<PgCluster>); 4] = [
        (
            "a_synchronous_standby_promoted_under_load",
            promoted_under_load,
        ),
        (
            "the_old_primary_back_beside_the_promoted_one_is_refused",
            split_brain_refused,
        ),
        (
            "a_lagging_asynchronous_standby_promoted_repeats_ids_the_check_sees",
            lagging_standby_caught,
        ),
        (
            "gapless_refused_on_an_asynchronous_primary",
            gapless_refused,
        ),
    ];
    // Each scenario starts servers of its own: each is a trial of its own.
    let trials = scenarios.into_iter().map(|(name, scenario)| {
        support::trial(format!("postgres::{name}"), move || {
            let Some(mut cluster) = PgCluster::new("pg_failover") else {
                return Ok("skipped".into());
            };
            let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
            let outcome = scenario(dir.path(), &mut cluster);
            if outcome.is_err() {
                cluster.print_logs();
            }
            outcome
        })
    });
    support::run_trials(trials.collect())
}

/// Four processes × 2 threads insert rows through a URL naming both servers (two through
/// `diesel_seqgen::insert_into`, as users do: bulks on the pooled connection, gapless numbers
/// on the connection inside it); the primary crashes, the standby is promoted, and they go on
/// there.
fn promoted_under_load(dir: &Path, cluster: &mut PgCluster) -> Result<String, String> {
    let primary = cluster.primary("sync_primary", true);
    let standby = cluster.standby("sync_standby", &primary);
    let url = both(&primary, &standby);
    let files: Vec<_> = (0..4)
        .map(|i| dir.join(format!("promoted-{i}.ids")))
        .collect();
    let args = [
        "--threads",
        "2",
        "--seconds",
        "6",
        "--insert",
        "--rollback",
        "0.1",
    ];
    // Each with a key of its own: a key's counter is one per insert path.
    let through_insert: [(&str, &[&str]); 2] = [
        ("promoted_bulk", &["--via", "insert-into", "--bulk", "5"]),
        (
            "promoted_gapless",
            &[
                "--via",
                "insert-into",
                "--form",
                "deref",
                "--mode",
                "gapless",
            ],
        ),
    ];
    let children: Vec<Child> = files
        .iter()
        .enumerate()
        .map(|(i, file)| match i {
            0 | 1 => loadgen(&url, "promoted", file, &args).spawn(),
            _ => {
                let (key, extra) = through_insert[i - 2];
                loadgen(&url, key, file, &[&args[..], extra].concat()).spawn()
            }
        })
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let before = wait_for_ids(&files, 1_000)?;
    primary.crash();
    standby.promote();
    let mut reconnects = 0;
    for (i, child) in children.into_iter().enumerate() {
        let report = finish(child, &format!("process {i}"))?;
        reconnects += report_field(&report, "reconnects");
    }
    let mut ids = 0;
    for files in [&files[..2], &files[2..3], &files[3..]] {
        let these = read_ids(files);
        check_distinct(&these)?;
        ids += these.len();
    }
    Ok(format!(
        "{ids} IDs by 4 processes (2 through insert_into; {before} before the crash), primary \
         crashed and standby promoted, {reconnects} reconnects, 0 repeated"
    ))
}

/// Two processes on batched numbers and two on gapless ones, through a URL naming the primary
/// first; the primary crashes, the standby is promoted and the processes go on there (for
/// long enough that each reserves there: a block lasts about a second). Then the old primary
/// comes back writable (its standby gone, an operator clears the wait for one) and every
/// session is cut: the processes reconnect to the old primary, and each is refused at its
/// next reservation there (`Error::OldTimeline`). Without that, it would hand out the numbers
/// the promoted server already did.
fn split_brain_refused(dir: &Path, cluster: &mut PgCluster) -> Result<String, String> {
    let primary = cluster.primary("split_primary", true);
    let standby = cluster.standby("split_standby", &primary);
    let url = both(&primary, &standby);
    let files: Vec<_> = (0..4).map(|i| dir.join(format!("split-{i}.ids"))).collect();
    // A bound: a process never refused ends after 30 s, and the scenario fails.
    let batched = ["--threads", "2", "--seconds", "30", "--insert"];
    let mut gapless = batched.to_vec();
    gapless.extend(["--mode", "gapless", "--rollback", "0.1"]);
    let children: Vec<Child> = files
        .iter()
        .enumerate()
        .map(|(i, file)| match i {
            0 | 1 => loadgen(&url, "split", file, &batched).spawn(),
            _ => loadgen(&url, "split_gapless", file, &gapless).spawn(),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let before = wait_for_ids(&files, 1_000)?;
    primary.crash();
    standby.promote();
    let promoted = read_ids(&files).len();
    std::thread::sleep(Duration::from_secs(3));
    let on_promoted = read_ids(&files).len() - promoted;
    primary.configure("synchronous_standby_names = ''\n");
    primary.start();
    let cut = cut_sessions(&standby)?;
    let mut refused = 0;
    for (i, child) in children.into_iter().enumerate() {
        match finish(child, &format!("process {i}")) {
            Ok(report) => return Err(format!("process {i} was never refused: {report}")),
            Err(e) if e.contains("an old primary left behind") => refused += 1,
            Err(e) => return Err(e),
        }
    }
    // Each key's IDs apart: both print as `L` and the counter.
    check_distinct(&read_ids(&files[..2]))?;
    check_distinct(&read_ids(&files[2..]))?;
    let ids = read_ids(&files);
    Ok(format!(
        "{} IDs by 4 processes (2 gapless; {before} before the crash, {on_promoted} in 3 s on \
         the promoted server), old primary restarted and {cut} sessions cut: {refused} of 4 \
         processes refused there, 0 repeated",
        ids.len()
    ))
}

/// Two processes on batched numbers through a URL naming both servers; the asynchronous
/// standby is stopped for 2 s under load (it keeps the WAL it had), then the primary crashes
/// and the standby is started and promoted, and two more processes start there (instances
/// restarted after the failover). The promoted server hands out again what the primary
/// handed out meanwhile. seqgen refuses gapless keys on such a primary, not batched ones; a
/// process that lived through it may see its counter go back (`Error::CounterWentBack`), a
/// new one cannot; the check after the run must see the repeated IDs, or it could see none.
fn lagging_standby_caught(dir: &Path, cluster: &mut PgCluster) -> Result<String, String> {
    let primary = cluster.primary("lag_primary", false);
    let standby = cluster.standby("lag_standby", &primary);
    let url = both(&primary, &standby);
    wait_for_standby(&format!(
        "postgres://postgres@127.0.0.1:{}/postgres",
        primary.port
    ))?;
    let files: Vec<_> = (0..4).map(|i| dir.join(format!("lag-{i}.ids"))).collect();
    let spawn = |files: &[PathBuf], seconds: &str| {
        let args = ["--threads", "2", "--seconds", seconds, "--insert"];
        files
            .iter()
            .map(|file| loadgen(&url, "lag", file, &args).spawn())
            .collect::<Result<Vec<Child>, _>>()
            .map_err(|e| e.to_string())
    };
    let through = spawn(&files[..2], "10")?;
    wait_for_ids(&files, 1_000)?;
    standby.crash();
    let stopped = read_ids(&files).len();
    std::thread::sleep(Duration::from_secs(2));
    let behind = read_ids(&files).len() - stopped;
    primary.crash();
    standby.start();
    standby.promote();
    let restarted = spawn(&files[2..], "2")?;
    let (mut went_back, mut refused_by_table) = (0, 0);
    for (i, child) in through.into_iter().chain(restarted).enumerate() {
        match finish(child, &format!("process {i}")) {
            Ok(_) => {}
            Err(e) if i < 2 && e.contains("so the counter went back") => went_back += 1,
            // A repeated ID inserted where its twin is already a row on the promoted server
            // (a process that lived through the failover serves its block there, one started
            // after reserves from the counter that went back): the table's key refuses it.
            Err(e) if e.contains("duplicate key value violates unique constraint") => {
                refused_by_table += 1
            }
            Err(e) => return Err(e),
        }
    }
    let ids = read_ids(&files);
    let repeated = ids.len() - ids.iter().collect::<HashSet<_>>().len() + refused_by_table;
    if repeated == 0 {
        return Err(format!(
            "no ID repeated among {}: the check saw nothing of the {behind} IDs the standby \
             never received",
            ids.len()
        ));
    }
    Ok(format!(
        "{} IDs by 4 processes, {behind} committed while the standby was stopped; after its \
         promotion {went_back} of the 2 processes that lived through it refused (counter went \
         back), and IDs repeated: {repeated} seen by the check ({refused_by_table} of them \
         refused by the table's key)",
        ids.len()
    ))
}

/// A primary streaming to an asynchronous standby: a process taking gapless numbers is
/// refused with the reason; batched numbers go on.
fn gapless_refused(dir: &Path, cluster: &mut PgCluster) -> Result<String, String> {
    let primary = cluster.primary("async_primary", false);
    let _standby = cluster.standby("async_standby", &primary);
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", primary.port);
    wait_for_standby(&url)?;
    let file = dir.join("async-gapless.ids");
    let gapless = [
        "--mode",
        "gapless",
        "--insert",
        "--threads",
        "2",
        "--ids",
        "100",
    ];
    let refused = match finish(
        loadgen(&url, "async", &file, &gapless).spawn().unwrap(),
        "gapless",
    ) {
        Ok(report) => return Err(format!("gapless numbers were taken: {report}")),
        Err(e) if e.contains("do not wait for a standby") => e,
        Err(e) => return Err(format!("refused for another reason: {e}")),
    };
    if !read_ids(&[file]).is_empty() {
        return Err("a refused process committed IDs".into());
    }
    let file = dir.join("async-batched.ids");
    let batched = ["--threads", "2", "--ids", "1000"];
    finish(
        loadgen(&url, "async_batched", &file, &batched)
            .spawn()
            .unwrap(),
        "batched",
    )?;
    let ids = read_ids(&[file]);
    check_distinct(&ids)?;
    let reason = refused.split("loadgen: ").last().unwrap_or_default().trim();
    Ok(format!(
        "gapless refused (\"{}…\"), {} batched IDs taken",
        reason.chars().take(100).collect::<String>(),
        ids.len()
    ))
}

/// A URL naming both servers, `first` first: libpq keeps the first that accepts writes.
fn both(first: &PgServer<'_>, second: &PgServer<'_>) -> String {
    format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        first.port, second.port
    )
}

/// Waits until the `files` hold `n` IDs (at most 20 s); how many they hold.
fn wait_for_ids(files: &[PathBuf], n: usize) -> Result<usize, String> {
    let mut ids = 0;
    wait_for(
        &format!("{n} IDs committed by the processes"),
        Duration::from_secs(20),
        || {
            ids = read_ids(files).len();
            ids >= n
        },
    )
    .map_err(|e| format!("{e} ({ids} committed)"))?;
    Ok(ids)
}

/// Ends every other client session on `server`, as a network cut would: how many.
fn cut_sessions(server: &PgServer<'_>) -> Result<i64, String> {
    let url = format!("postgres://postgres@127.0.0.1:{}/postgres", server.port);
    let mut conn = PgConnection::establish(&url).map_err(|e| e.to_string())?;
    diesel::select(diesel::dsl::sql::<diesel::sql_types::BigInt>(
        "(SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
          WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())",
    ))
    .get_result(&mut conn)
    .map_err(|e| e.to_string())
}

/// Waits until the primary at `url` lists a standby.
fn wait_for_standby(url: &str) -> Result<(), String> {
    let mut conn = PgConnection::establish(url).map_err(|e| e.to_string())?;
    wait_for(
        "the primary to list its standby (pg_stat_replication)",
        Duration::from_secs(30),
        || {
            diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
                "EXISTS (SELECT 1 FROM pg_stat_replication)",
            ))
            .get_result(&mut conn)
            .unwrap_or(false)
        },
    )
    .map(drop)
}
