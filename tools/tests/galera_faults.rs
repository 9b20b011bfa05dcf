//! Several loadgen processes on a 3-node MariaDB Galera cluster started for this test alone
//! (`seqgen/tests/suite/galera_cluster.rs`: own data directories and ports, never the shared
//! server), two on each node, under what a cluster goes through: writers on every node with
//! growing and with small fixed blocks, gapless inserts on one writer node, a node killed and
//! rejoining, a rolling restart, a node cut off and healed. Every
//! process finishes its run (loadgen reconnects), every committed ID is read back, and none
//! repeats; each scenario prints its IDs, faults and duplicates.
//!
//! Runs with the `mysql` feature; without `mariadbd` and `galera-4` it is skipped, except under
//! `CI=true`, where it fails. Like `multiprocess`, the loadgen processes are this test binary
//! re-executed with `--loadgen ARGS…`.

#[path = "../../seqgen/tests/suite/galera_cluster.rs"]
mod galera_cluster;
#[path = "../../seqgen/tests/suite/own_servers.rs"]
mod own_servers;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitCode};
use std::time::{Duration, Instant};

use galera_cluster::GaleraCluster;
use own_servers::wait_for;
use support::{check_distinct, exactly_one_to_n, loadgen, read_ids, report_field};

const NODES: usize = 3;

fn main() -> ExitCode {
    if let Some(code) = support::run_as_loadgen() {
        return code;
    }
    support::run_trials(vec![support::cluster_trial(
        "galera::faults_on_one_cluster",
        || GaleraCluster::start("galera_faults", NODES),
        vec![
            ("writers_on_every_node", writers_on_every_node),
            ("small_fixed_blocks", small_fixed_blocks),
            ("gapless_on_one_writer_node", gapless_on_one_writer_node),
            ("a_node_killed_and_rejoining", a_node_killed_and_rejoining),
            ("a_rolling_restart", a_rolling_restart),
            ("a_node_cut_off_and_healed", a_node_cut_off_and_healed),
        ],
    )])
}

/// Two loadgen processes per node on `key`, each with `args`.
struct Load {
    children: Vec<Child>,
    files: Vec<PathBuf>,
}

impl Load {
    fn start(
        cluster: &GaleraCluster,
        dir: &Path,
        key: &str,
        args: &[&str],
    ) -> Result<Self, String> {
        Self::start_on(cluster, dir, key, args, |i| i % NODES)
    }

    /// The processes `0..2 * NODES`, process `i` on node `node(i)`.
    fn start_on(
        cluster: &GaleraCluster,
        dir: &Path,
        key: &str,
        args: &[&str],
        node: fn(usize) -> usize,
    ) -> Result<Self, String> {
        let (mut children, mut files) = (Vec::new(), Vec::new());
        for i in 0..2 * NODES {
            let file = dir.join(format!("{key}-{i}.ids"));
            let child = loadgen(&cluster.url(node(i)), key, &file, args)
                .spawn()
                .map_err(|e| e.to_string())?;
            children.push(child);
            files.push(file);
        }
        Ok(Load { children, files })
    }

    /// Waits until the processes have committed some IDs.
    fn wait_for_ids(&self) -> Result<(), String> {
        wait_for(
            "200 IDs committed by the processes",
            Duration::from_secs(20),
            || read_ids(&self.files).len() >= 200,
        )
        .map(drop)
    }

    /// Waits for every process; the IDs they committed and their reconnects.
    fn finish(self) -> Result<(Vec<String>, u64), String> {
        let mut reconnects = 0;
        for (i, child) in self.children.into_iter().enumerate() {
            let out = child.wait_with_output().map_err(|e| e.to_string())?;
            let stdout = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() {
                return Err(format!(
                    "process {i} (node {}) exited with {}: {}",
                    i % NODES,
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            reconnects += report_field(&stdout, "reconnects");
        }
        Ok((read_ids(&self.files), reconnects))
    }
}

/// The load's IDs, checked: the summary line.
fn checked(load: Load, faults: &str) -> Result<String, String> {
    let (ids, reconnects) = load.finish()?;
    check_distinct(&ids)?;
    Ok(format!(
        "{} IDs by {} processes, {faults}, {reconnects} reconnects, 0 repeated",
        ids.len(),
        2 * NODES
    ))
}

fn writers_on_every_node(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    let load = Load::start(
        cluster,
        dir,
        "spread",
        &["--threads", "2", "--seconds", "3"],
    )?;
    checked(load, "no fault")
}

fn small_fixed_blocks(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    let args = [
        "--threads",
        "2",
        "--seconds",
        "3",
        "--fixed-batch",
        "--batch",
        "10",
    ];
    checked(Load::start(cluster, dir, "fixed", &args)?, "blocks of 10")
}

/// Gapless on one writer node per key, the way the guarantees recommend: its transactions
/// queue on the counter row's lock instead of failing certification. (Writers of one gapless
/// key on every node, with `--retry-conflicts`, hang on MariaDB 10.11: a session aborted by
/// another node's write while inside its transaction is left `Killed`, and its client waits
/// for a reply to its next statement forever.)
fn gapless_on_one_writer_node(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    let args = [
        "--mode",
        "gapless",
        "--insert",
        "--rollback",
        "0.1",
        "--retry-conflicts",
        "--threads",
        "2",
        "--seconds",
        "3",
    ];
    let (ids, _) = Load::start_on(cluster, dir, "gapless", &args, |_| 0)?.finish()?;
    let n = exactly_one_to_n(&ids)?;
    Ok(format!(
        "gapless on node 0: exactly 1..={n} committed by {} processes",
        2 * NODES
    ))
}

fn a_node_killed_and_rejoining(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    // A cluster aborts transactions when its membership changes: the app runs them again, as
    // on Galera it must.
    let args = [
        "--threads",
        "2",
        "--seconds",
        "6",
        "--insert",
        "--retry-conflicts",
    ];
    let load = Load::start(cluster, dir, "killed", &args)?;
    // And as users insert (`diesel_seqgen::insert_into`, bulks of 3, the default generator on
    // the pooled connection), on a key of their own, a thread per process.
    let mut through_insert = args.to_vec();
    through_insert.extend(["--via", "insert-into", "--bulk", "3"]);
    through_insert[1] = "1";
    let inserting = Load::start(cluster, dir, "killed_insert", &through_insert)?;
    load.wait_for_ids()?;
    cluster.kill(2);
    let down = Instant::now();
    cluster.restart(2);
    let faults = format!("node 2 killed (SIGKILL), back in {:?}", down.elapsed());
    let summary = checked(load, &faults)?;
    Ok(format!(
        "{summary}; through insert_into: {}",
        checked(inserting, "the same")?
    ))
}

fn a_rolling_restart(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    let load = Load::start(
        cluster,
        dir,
        "rolling",
        &["--threads", "2", "--seconds", "8"],
    )?;
    load.wait_for_ids()?;
    let started = Instant::now();
    for node in 0..NODES {
        cluster.stop(node);
        cluster.restart(node);
    }
    let faults = format!(
        "each node stopped and restarted in turn ({:?})",
        started.elapsed()
    );
    checked(load, &faults)
}

fn a_node_cut_off_and_healed(dir: &Path, cluster: &mut GaleraCluster) -> Result<String, String> {
    let load = Load::start(cluster, dir, "cut", &["--threads", "2", "--seconds", "5"])?;
    load.wait_for_ids()?;
    cluster.sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
    // The fault lasts 2 s, whatever the machine's speed (not a wait for a condition).
    std::thread::sleep(Duration::from_secs(2));
    cluster.sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
    cluster.wait_synced(2);
    checked(load, "node 2 cut off (gmcast.isolate) for 2 s, then healed")
}
