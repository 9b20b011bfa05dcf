//! Loadgen processes on the high-availability stack PostgreSQL users run: three Patroni nodes
//! (`synchronous_mode`, a 20 s TTL, Patroni's default 10 s loop), etcd, and HAProxy routing to
//! Patroni's `/primary` (`support/patroni.rs`). The leader crashed under batched and gapless
//! load; the crashed leader restarted (it rejoins as a replica, and a process pointed straight
//! at it gets no ID); a planned switchover under load; new gapless users started right after
//! a failover, while Patroni has not named the new primary's synchronous standby yet (none
//! refused). Every committed ID is read back: none repeated, gapless ones exactly 1..N. Each
//! scenario prints its IDs, the longest write stall a probe saw through HAProxy, and the
//! reconnects.
//!
//! Runs with the `postgres` feature; without Patroni, etcd, HAProxy or PostgreSQL's server
//! binaries it is skipped, except under `CI=true`, where it fails. The loadgen processes are
//! this test binary re-executed with `--loadgen ARGS…`.

#[path = "support/deferred.rs"]
mod deferred;
#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
#[path = "support/patroni.rs"]
mod patroni_cluster;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use diesel::connection::SimpleConnection;
use diesel::prelude::*;
use own_servers::{wait_for, wait_until};
use patroni_cluster::PatroniCluster;
use support::{check_distinct, exactly_one_to_n, finish, loadgen, read_ids, report_field};

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    support::run_trials(vec![support::cluster_trial(
        "patroni::failovers_on_one_cluster",
        || PatroniCluster::start("patroni"),
        vec![
            ("a_leader_crash_under_load", leader_crash),
            ("the_old_leader_rejoins_as_a_replica", old_leader_rejoins),
            ("a_switchover_under_load", switchover),
            (
                "new_gapless_users_right_after_a_failover_are_not_refused",
                new_gapless_users,
            ),
        ],
    )])
}

/// Two batched and two gapless processes through HAProxy, and rows numbered after their
/// commit by two `seqgen number --follow` sidecars; the leader's machine dies (Patroni,
/// postmaster and backends killed); Patroni promotes the synchronous standby and the
/// processes (the followers without a restart) go on there.
fn leader_crash(dir: &Path, cluster: &mut PatroniCluster) -> Result<String, String> {
    let leader = cluster.wait_for_leader(Duration::from_secs(30));
    cluster.wait_for_sync_standby(Duration::from_secs(30));
    let load = Load::start(dir, cluster, "crash", 30)?;
    let deferred = deferred::Deferred::start::<PgConnection>(&cluster.url(), 2)?;
    load.wait_for_ids(1_000)?;
    let crashed = Instant::now();
    cluster.crash_node(leader);
    let new = cluster.wait_for_leader(Duration::from_secs(60));
    let failover = crashed.elapsed();
    let from = deferred.committed();
    wait_for(
        "100 rows numbered after their commit, committed on the new leader",
        Duration::from_secs(60),
        || deferred.committed() >= from + 100,
    )?;
    let summary = load.finish(&format!(
        "node{leader} crashed, node{new} promoted in {failover:.1?}"
    ))?;
    Ok(format!("{summary}; {}", deferred.finish::<PgConnection>()?))
}

/// The leader crashed by the last scenario, started again: Patroni rewinds it and it rejoins
/// as a replica; HAProxy never routes to it, and a process pointed straight at it gets no ID.
fn old_leader_rejoins(dir: &Path, cluster: &mut PatroniCluster) -> Result<String, String> {
    let Some(down) = cluster.nodes.iter().position(|node| !node.running()) else {
        return Err("no node is down (the crash scenario runs first)".into());
    };
    let started = Instant::now();
    cluster.start_node(down);
    cluster.wait_for_replicas(2, Duration::from_secs(90));
    let rejoined = started.elapsed();
    if cluster.leader() == Some(down) {
        return Err(format!("node{down} came back as the leader"));
    }
    let file = dir.join("straight.ids");
    let args = ["--threads", "1", "--ids", "10", "--insert"];
    let refused = match finish(
        loadgen(&cluster.node_url(down), "patroni_straight", &file, &args)
            .spawn()
            .map_err(|e| e.to_string())?,
        "a process pointed at the old leader",
    ) {
        Ok(report) => return Err(format!("the old leader handed out IDs: {report}")),
        Err(e) => e,
    };
    if !read_ids(&[file]).is_empty() {
        return Err("a process on the old leader committed IDs".into());
    }
    let reason = refused.split("loadgen: ").last().unwrap_or_default().trim();
    Ok(format!(
        "node{down} rejoined as a replica in {rejoined:.1?}; a process pointed at it got no ID \
         (\"{}\")",
        reason.chars().take(80).collect::<String>()
    ))
}

/// The same load through a planned switchover (Patroni's REST API).
fn switchover(dir: &Path, cluster: &mut PatroniCluster) -> Result<String, String> {
    let leader = cluster.wait_for_leader(Duration::from_secs(30));
    cluster.wait_for_sync_standby(Duration::from_secs(30));
    let load = Load::start(dir, cluster, "switchover", 20)?;
    load.wait_for_ids(1_000)?;
    let asked = Instant::now();
    cluster.switchover(leader)?;
    wait_until("a new leader", Duration::from_secs(60), || {
        cluster.leader().is_some_and(|new| new != leader)
    });
    let took = asked.elapsed();
    load.finish(&format!("switchover from node{leader} in {took:.1?}"))
}

/// A switchover, then, as soon as HAProxy reaches the new primary (before Patroni names its
/// synchronous standby, up to a loop later), four processes start taking gapless numbers:
/// none is refused, and the numbers are exactly 1..N.
fn new_gapless_users(dir: &Path, cluster: &mut PatroniCluster) -> Result<String, String> {
    let leader = cluster.wait_for_leader(Duration::from_secs(30));
    cluster.wait_for_sync_standby(Duration::from_secs(60));
    cluster.switchover(leader)?;
    let url = cluster.url();
    wait_until(
        "HAProxy on the new primary",
        Duration::from_secs(60),
        || {
            cluster.leader().is_some_and(|new| new != leader)
                && PgConnection::establish(&url).is_ok_and(|mut conn| {
                    diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
                        "NOT pg_is_in_recovery()",
                    ))
                    .get_result::<bool>(&mut conn)
                    .unwrap_or(false)
                })
        },
    );
    let unnamed = !sync_standby_named(&url);
    let started = Instant::now();
    let files: Vec<PathBuf> = (0..4).map(|i| dir.join(format!("new-{i}.ids"))).collect();
    let args = [
        "--threads",
        "2",
        "--ids",
        "200",
        "--insert",
        "--mode",
        "gapless",
    ];
    let children = files
        .iter()
        .map(|file| loadgen(&url, "patroni_new_gapless", file, &args).spawn())
        .collect::<Result<Vec<Child>, _>>()
        .map_err(|e| e.to_string())?;
    for (i, child) in children.into_iter().enumerate() {
        finish(child, &format!("gapless process {i}"))?;
    }
    let committed = exactly_one_to_n(&read_ids(&files))?;
    Ok(format!(
        "4 gapless processes started right after a switchover ({}), none refused: {committed} \
         numbers, exactly 1..={committed}, in {:.1?}",
        if unnamed {
            "no synchronous standby named yet"
        } else {
            "the synchronous standby already named"
        },
        started.elapsed()
    ))
}

/// Whether the primary at `url` names a synchronous standby.
fn sync_standby_named(url: &str) -> bool {
    PgConnection::establish(url).is_ok_and(|mut conn| {
        diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
            "current_setting('synchronous_standby_names') <> ''",
        ))
        .get_result::<bool>(&mut conn)
        .unwrap_or(false)
    })
}

/// Two batched and two gapless loadgen processes (10 % of the gapless transactions rolled
/// back) through HAProxy for `seconds`, and a probe writing a row every 20 ms through it.
struct Load {
    files: Vec<PathBuf>,
    children: Vec<Child>,
    probe: Probe,
    /// Where the rows are read back: the cluster's URL, and each process's key.
    url: String,
    keys: [String; 4],
}

impl Load {
    fn start(
        dir: &Path,
        cluster: &PatroniCluster,
        name: &str,
        seconds: u32,
    ) -> Result<Self, String> {
        let url = cluster.url();
        let seconds = seconds.to_string();
        let batched = ["--threads", "2", "--seconds", &seconds, "--insert"];
        let mut gapless = batched.to_vec();
        gapless.extend(["--mode", "gapless", "--rollback", "0.1"]);
        let files: Vec<PathBuf> = (0..4)
            .map(|i| dir.join(format!("{name}-{i}.ids")))
            .collect();
        // The second of each through `diesel_seqgen::insert_into`, as users insert (bulks on
        // the pooled connection; gapless rows on the connection inside it), on a key of its
        // own: a key's counter is one per insert path.
        let through_insert = |args: &[&'static str], extra: &[&'static str]| {
            let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
            all.extend(
                ["--via", "insert-into"]
                    .iter()
                    .chain(extra)
                    .map(|a| a.to_string()),
            );
            all
        };
        let args: [Vec<String>; 4] = [
            batched.iter().map(|a| a.to_string()).collect(),
            through_insert(&["--threads", "2", "--insert"], &["--bulk", "5"]),
            gapless.iter().map(|a| a.to_string()).collect(),
            through_insert(
                &[
                    "--threads",
                    "2",
                    "--insert",
                    "--mode",
                    "gapless",
                    "--rollback",
                    "0.1",
                ],
                &["--form", "deref"],
            ),
        ];
        let keys = ["batched", "batched_insert", "gapless", "gapless_insert"]
            .map(|kind| format!("{name}_{kind}"));
        let children = files
            .iter()
            .zip(&keys)
            .zip(&args)
            .map(|((file, key), args)| {
                let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
                if !args.contains(&"--seconds") {
                    args.extend(["--seconds", &seconds]);
                }
                loadgen(&url, key, file, &args).spawn()
            })
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
        Ok(Load {
            files,
            children,
            probe: Probe::start(url.clone()),
            url,
            keys,
        })
    }

    /// Waits until the processes committed `n` IDs (at most 30 s).
    fn wait_for_ids(&self, n: usize) -> Result<(), String> {
        wait_for(
            &format!("{n} IDs committed by the processes"),
            Duration::from_secs(30),
            || read_ids(&self.files).len() >= n,
        )
        .map(drop)
    }

    /// Waits for the processes and checks what they committed: the summary after `fault`.
    fn finish(self, fault: &str) -> Result<String, String> {
        let mut reconnects = 0;
        for (i, child) in self.children.into_iter().enumerate() {
            let report = finish(child, &format!("process {i}"))?;
            reconnects += report_field(&report, "reconnects");
        }
        let stall = self.probe.stop()?;
        let mut batched = 0;
        for file in &self.files[..2] {
            let ids = read_ids(std::slice::from_ref(file));
            check_distinct(&ids)?;
            batched += ids.len();
        }
        // Gapless: what the database holds is exactly 1..N, and holds every number a process
        // saw committed. Not the processes' own lists alone: a COMMIT whose answer was lost
        // with the old primary's connection is committed but unknown to its process, which
        // counts it as failed (a number missing from the lists, present in the table).
        let mut conn = PgConnection::establish(&self.url).map_err(|e| e.to_string())?;
        let (mut gapless, mut unknown) = (Vec::new(), 0);
        for (file, key) in self.files[2..].iter().zip(&self.keys[2..]) {
            let acknowledged = read_ids(std::slice::from_ref(file));
            let committed: Vec<String> = diesel::dsl::sql::<diesel::sql_types::Text>(&format!(
                "SELECT id FROM loadgen_rows WHERE key_name = '{key}'"
            ))
            .load(&mut conn)
            .map_err(|e| e.to_string())?;
            let n = exactly_one_to_n(&committed).map_err(|e| format!("{key}: {e}"))?;
            let in_table: std::collections::HashSet<&String> = committed.iter().collect();
            if let Some(lost) = acknowledged.iter().find(|id| !in_table.contains(id)) {
                return Err(format!(
                    "{key}: {lost} was committed for its process, and is not in the table"
                ));
            }
            unknown += n.saturating_sub(acknowledged.len());
            gapless.push(n);
        }
        Ok(format!(
            "{fault}: {batched} batched IDs (half through insert_into), 0 repeated; gapless in \
             the table exactly 1..={} and 1..={} (through insert_into), {unknown} committed \
             without their process knowing; longest write stall {stall:.1?}, {reconnects} \
             reconnects",
            gapless[0], gapless[1]
        ))
    }
}

/// A thread writing a row through HAProxy every 20 ms, reconnecting when the connection
/// drops: the longest time between two writes that succeeded is the write stall.
struct Probe {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Duration>,
}

impl Probe {
    fn start(url: String) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let thread = std::thread::spawn(move || {
            let (mut last, mut longest) = (Instant::now(), Duration::ZERO);
            let mut conn: Option<PgConnection> = None;
            while !stopping.load(Ordering::Relaxed) {
                let wrote = conn
                    .take()
                    .or_else(|| PgConnection::establish(&url).ok())
                    .and_then(|mut c| {
                        c.batch_execute(
                            "CREATE TABLE IF NOT EXISTS patroni_probe (at timestamptz); \
                             INSERT INTO patroni_probe VALUES (clock_timestamp())",
                        )
                        .ok()?;
                        Some(c)
                    });
                if let Some(c) = wrote {
                    longest = longest.max(last.elapsed());
                    last = Instant::now();
                    conn = Some(c);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
            longest
        });
        Probe { stop, thread }
    }

    fn stop(self) -> Result<Duration, String> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| "the probe panicked".to_owned())
    }
}
