//! A MariaDB Galera cluster of a test's own: three nodes on free ports of 127.0.0.1, each
//! with its data directory in one temporary directory, joined by rsync state transfer, and
//! stopped when dropped. The shared MariaDB server is never touched.
//!
//! Needs Debian's `mariadb-server` and `galera-4` (with `rsync`, as CI installs them).
//! Without them the test is skipped with a printed line, except under `CI=true`, where that
//! fails it. As root, the servers run as the `mysql` user.
//!
//! Shared with `tools/tests/galera_faults.rs` (by `#[path]`, with `own_servers.rs`), which
//! also crashes and restarts nodes under load.
#![allow(dead_code)] // each user needs only part of it

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::own_servers::{as_root, free_port, print_logs, skip, wait_for, Watchdog};

const SERVER: &str = "/usr/sbin/mariadbd";
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// One node's ports: clients, group communication, incremental and full state transfer.
struct Ports {
    sql: u16,
    group: u16,
    ist: u16,
    sst: u16,
}

/// A running cluster; its nodes are stopped when it is dropped.
pub struct GaleraCluster {
    dir: tempfile::TempDir,
    ports: Vec<Ports>,
    nodes: Vec<Option<Child>>,
    as_mysql: bool,
}

impl GaleraCluster {
    /// Starts `nodes` nodes and waits until all are synced, or returns `None` (after printing
    /// why) without the server or the Galera library. The database `seqgen` is created.
    pub fn start(test: &str, nodes: usize) -> Option<Self> {
        if !Path::new(SERVER).exists() || !Path::new(PROVIDER).exists() {
            skip(test, "mariadb-server and galera-4 are");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let as_mysql = as_root();
        let ports = (0..nodes)
            .map(|_| Ports {
                sql: free_port(),
                group: free_port(),
                ist: free_port(),
                sst: free_port(),
            })
            .collect();
        let mut cluster = GaleraCluster {
            dir,
            ports,
            nodes: (0..nodes).map(|_| None).collect(),
            as_mysql,
        };
        for node in 0..nodes {
            std::fs::create_dir_all(cluster.node_dir(node).join("data")).unwrap();
        }
        if as_mysql {
            run(Command::new("chown")
                .args(["-R", "mysql:mysql"])
                .arg(cluster.dir.path()));
        }
        for node in 0..nodes {
            cluster.install(node);
        }
        let started = Instant::now();
        cluster.start_node(0, true);
        cluster.wait_synced(0);
        for node in 1..nodes {
            cluster.start_node(node, false);
        }
        for node in 1..nodes {
            cluster.wait_synced(node);
        }
        cluster.sql(0, "CREATE DATABASE seqgen");
        // Node 0 returns once it made the database; the others apply it a moment later (a
        // connection to node 2 at once was refused: "Unknown database 'seqgen'").
        for node in 1..nodes {
            let applied = wait_for(
                &format!("Galera node {node} to have database seqgen"),
                Duration::from_secs(30),
                || {
                    cluster
                        .try_sql(node, "SHOW DATABASES LIKE 'seqgen'")
                        .is_some_and(|out| out.contains("seqgen"))
                },
            );
            if let Err(e) = applied {
                cluster.print_logs();
                panic!("{e}");
            }
        }
        println!(
            "{test}: {nodes} Galera nodes synced in {:?}",
            started.elapsed()
        );
        Some(cluster)
    }

    /// The URL of database `seqgen` on `node`.
    pub fn url(&self, node: usize) -> String {
        format!("mysql://root@127.0.0.1:{}/seqgen", self.ports[node].sql)
    }

    fn node_dir(&self, node: usize) -> PathBuf {
        self.dir.path().join(format!("node{node}"))
    }

    fn install(&self, node: usize) {
        let data = self.node_dir(node).join("data");
        let mut install = Command::new("mariadb-install-db");
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--auth-root-authentication-method=normal", "--skip-test-db"]);
        if self.as_mysql {
            install.arg("--user=mysql");
        }
        run(&mut install);
    }

    /// Starts `node`, as the first of a new cluster or joining the others.
    fn start_node(&mut self, node: usize, new_cluster: bool) {
        let dir = self.node_dir(node);
        let p = &self.ports[node];
        let members: Vec<String> = self
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{}", p.group))
            .collect();
        let mut server = Command::new(SERVER);
        server
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--socket={}", dir.join("sock").display()))
            .arg(format!("--pid-file={}", dir.join("pid").display()))
            .arg(format!("--log-error={}", dir.join("error.log").display()))
            .arg(format!("--port={}", p.sql))
            .args([
                "--bind-address=127.0.0.1",
                "--binlog-format=ROW",
                "--innodb-autoinc-lock-mode=2",
                "--innodb-flush-log-at-trx-commit=1",
                "--wsrep-on=ON",
                "--wsrep-cluster-name=seqgen_test",
                "--wsrep-sst-method=rsync",
            ])
            .arg(format!("--wsrep-provider={PROVIDER}"))
            .arg(format!("--wsrep-cluster-address=gcomm://{}", members.join(",")))
            .arg(format!("--wsrep-node-address=127.0.0.1:{}", p.group))
            .arg(format!("--wsrep-node-name=node{node}"))
            .arg(format!(
                "--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:{};ist.recv_addr=127.0.0.1:{}",
                p.group, p.ist
            ))
            .arg(format!("--wsrep-sst-receive-address=127.0.0.1:{}", p.sst))
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if self.as_mysql {
            server.arg("--user=mysql");
        }
        if new_cluster {
            server.arg("--wsrep-new-cluster");
        }
        self.nodes[node] = Some(server.spawn().unwrap());
    }

    /// Kills `node` at once (SIGKILL), as a crash would.
    pub fn kill(&mut self, node: usize) {
        if let Some(mut child) = self.nodes[node].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops `node` cleanly (SIGTERM) and waits until it has.
    pub fn stop(&mut self, node: usize) {
        if let Some(mut child) = self.nodes[node].take() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
            let _ = child.wait();
        }
    }

    /// Starts the stopped or killed `node` again, joining the others, and waits until it is
    /// synced (a state transfer from another node).
    pub fn restart(&mut self, node: usize) {
        self.start_node(node, false);
        self.wait_synced(node);
    }

    /// Waits (at most a minute) until `node` says it is synced with the cluster.
    pub fn wait_synced(&self, node: usize) {
        let synced = wait_for(
            &format!("Galera node {node} to be synced"),
            Duration::from_secs(60),
            || {
                self.try_sql(node, "SHOW STATUS LIKE 'wsrep_local_state_comment'")
                    .is_some_and(|out| out.contains("Synced"))
            },
        );
        if let Err(e) = synced {
            self.print_logs();
            panic!("{e}");
        }
    }

    /// The last lines of every node's error log.
    pub fn print_logs(&self) {
        let logs: Vec<(String, PathBuf)> = (0..self.ports.len())
            .map(|node| {
                (
                    format!("Galera node {node}"),
                    self.node_dir(node).join("error.log"),
                )
            })
            .collect();
        print_logs(
            logs.iter()
                .map(|(name, path)| (name.clone(), path.as_path())),
        );
    }

    /// Runs `sql` on `node` with the `mariadb` client: its output, or `None` if it failed.
    pub fn try_sql(&self, node: usize, sql: &str) -> Option<String> {
        sql_on(self.ports[node].sql, sql)
    }

    /// A watchdog for a test on this cluster (see [`Watchdog`]): past `limit` it prints each
    /// node's state, sessions and log, stops the nodes, and fails the test.
    pub fn watchdog(&self, test: &str, limit: Duration) -> Watchdog {
        let ports: Vec<u16> = self.ports.iter().map(|p| p.sql).collect();
        let logs: Vec<(String, PathBuf)> = (0..ports.len())
            .map(|node| {
                (
                    format!("Galera node {node}"),
                    self.node_dir(node).join("error.log"),
                )
            })
            .collect();
        let dir = self.dir.path().to_owned();
        Watchdog::arm(test, limit, move || {
            for (node, port) in ports.iter().enumerate() {
                for sql in [
                    "SHOW STATUS LIKE 'wsrep_local_state_comment'",
                    "SHOW FULL PROCESSLIST",
                ] {
                    let out = sql_on(*port, sql).unwrap_or_else(|| "(no answer)".to_owned());
                    println!("---- Galera node {node}: {sql}\n{out}");
                }
            }
            print_logs(
                logs.iter()
                    .map(|(name, path)| (name.clone(), path.as_path())),
            );
            // The process ends without dropping the cluster: its nodes are stopped here.
            let _ = Command::new("pkill")
                .args(["-f", "--"])
                .arg(format!("--datadir={}", dir.display()))
                .status();
        })
    }

    /// Runs `sql` on `node`; panics if it fails.
    pub fn sql(&self, node: usize, sql: &str) -> String {
        self.try_sql(node, sql)
            .unwrap_or_else(|| panic!("`{sql}` failed on Galera node {node}"))
    }
}

impl Drop for GaleraCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.print_logs();
        }
        // SIGTERM: a clean shutdown, all nodes at once; then wait for each.
        for child in self.nodes.iter().flatten() {
            let _ = Command::new("kill").arg(child.id().to_string()).status();
        }
        for mut child in self.nodes.drain(..).flatten() {
            let _ = child.wait();
        }
    }
}

/// Runs `sql` with the `mariadb` client on the node listening on `port`: its output, or
/// `None` if it failed.
fn sql_on(port: u16, sql: &str) -> Option<String> {
    let out = Command::new("mariadb")
        .args(["--protocol=tcp", "-h127.0.0.1", "-uroot", "-N", "-e", sql])
        .arg(format!("-P{port}"))
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
