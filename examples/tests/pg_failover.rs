//! Loadgen processes across PostgreSQL failovers, on servers started for this test alone
//! (`seqgen/tests/suite/servers.rs`: `initdb`, `pg_basebackup`, free ports, never the shared
//! server): a primary with a synchronous standby crashed (`pg_ctl -m immediate`) under four
//! processes, the standby promoted, the processes going on there through one multi-host URL;
//! and a primary whose standby is asynchronous, where gapless numbers are refused. Every
//! committed ID is read back; each scenario prints its IDs, faults and duplicates.
//!
//! Runs with the `postgres` feature; without PostgreSQL's server binaries it is skipped,
//! except under `CI=true`, where it fails. Like `multiprocess`, the loadgen processes are this
//! test binary re-executed with `--loadgen ARGS…`.

#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "../../seqgen/tests/suite/servers.rs"]
mod servers;
mod support;

use std::path::Path;
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use diesel::prelude::*;
use servers::PgCluster;
use support::{check_distinct, finish, loadgen, read_ids, report_field};

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    let Some(mut cluster) = PgCluster::new("pg_failover") else {
        return ExitCode::SUCCESS;
    };
    support::run_scenarios(
        "postgres",
        &mut cluster,
        &[
            (
                "a_synchronous_standby_promoted_under_load",
                promoted_under_load,
            ),
            (
                "gapless_refused_on_an_asynchronous_primary",
                gapless_refused,
            ),
        ],
    )
}

/// Four processes × 2 threads insert rows through a URL naming both servers; the primary
/// crashes, the standby is promoted, and they go on there.
fn promoted_under_load(dir: &Path, cluster: &mut PgCluster) -> Result<String, String> {
    let primary = cluster.primary("sync_primary", true);
    let standby = cluster.standby("sync_standby", &primary);
    let url = format!(
        "postgres://postgres@127.0.0.1:{},127.0.0.1:{}/postgres?target_session_attrs=read-write",
        primary.port, standby.port
    );
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
    let children: Vec<Child> = files
        .iter()
        .map(|file| loadgen(&url, "promoted", file, &args).spawn())
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while read_ids(&files).len() < 1_000 {
        if Instant::now() > deadline {
            return Err("no IDs after 20 s".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let before = read_ids(&files).len();
    primary.crash();
    standby.promote();
    let mut reconnects = 0;
    for (i, child) in children.into_iter().enumerate() {
        let report = finish(child, &format!("process {i}"))?;
        reconnects += report_field(&report, "reconnects");
    }
    let ids = read_ids(&files);
    check_distinct(&ids)?;
    Ok(format!(
        "{} IDs by 4 processes ({before} before the crash), primary crashed and standby \
         promoted, {reconnects} reconnects, 0 repeated",
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

/// Waits until the primary at `url` lists a standby.
fn wait_for_standby(url: &str) -> Result<(), String> {
    let mut conn = PgConnection::establish(url).map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let listed: bool = diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
            "EXISTS (SELECT 1 FROM pg_stat_replication)",
        ))
        .get_result(&mut conn)
        .map_err(|e| e.to_string())?;
        if listed {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the standby never connected".into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
