//! PostgreSQL under Patroni, as its users run it: three nodes (each a Patroni and the
//! PostgreSQL server it manages, `synchronous_mode` on) in namespaces of their own, and one
//! etcd in a fourth ([`DCS`]). The apps reach whichever node takes writes through libpq's
//! list of hosts (`target_session_attrs=read-write`), so an old leader cut off from etcd but
//! still writable is where some of them go, as they would behind a DNS name or a stale proxy.
//!
//! Each node's configuration is [`crate::patroni`]'s, which has a node whose history
//! `pg_rewind` cannot join to the leader's cloned again: without it, a 30-minute run ended
//! with the leader alone, its two former peers stuck.
//!
//! Patroni's timing is a tuned deployment's: a leader key that lives 10 s, a loop of 2 s and a
//! retry timeout of 3 s (`loop_wait + 2 × retry_timeout <= ttl`), so that a leader cut off
//! from etcd demotes itself within seconds and a standby takes over after the key expires.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wait_for;
use crate::nemesis::net::{node_address, Net};
use crate::patroni::{crash, NodeConfig, Timing, ETCD, PATRONI};
use crate::programs::{postgres_bin, run};

/// The index etcd's namespace has among the run's nodes: after the three database nodes.
pub const DCS: usize = 3;

/// The database nodes.
pub const NODES: usize = 3;

pub struct Patroni {
    dir: PathBuf,
    etcd: Child,
    nodes: Vec<Node>,
}

struct Node {
    ns: String,
    /// Its configuration, data, socket and log.
    dir: PathBuf,
    process: Option<Child>,
}

impl Patroni {
    /// Starts etcd, then the first node (which bootstraps the cluster), then the others as
    /// its replicas: returns once both stream from the leader.
    pub fn start(net: &Net, dir: &Path) -> Result<Self, String> {
        for program in [PATRONI, ETCD] {
            if !Path::new(program).exists() {
                return Err(format!(
                    "{program} is missing: install patroni and etcd-server"
                ));
            }
        }
        let bin = postgres_bin().ok_or("no PostgreSQL server programs (initdb, pg_ctl)")?;
        let dir = dir.join("patroni");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let etcd_address = node_address(DCS);
        let etcd = Net::command(&net.node(DCS), Path::new(ETCD))
            .args(["--name", "e0", "--data-dir"])
            .arg(dir.join("etcd"))
            .arg(format!("--listen-client-urls=http://{etcd_address}:2379"))
            .arg(format!(
                "--advertise-client-urls=http://{etcd_address}:2379"
            ))
            .args([
                "--listen-peer-urls=http://127.0.0.1:2380",
                "--initial-advertise-peer-urls=http://127.0.0.1:2380",
                "--initial-cluster=e0=http://127.0.0.1:2380",
            ])
            .stdout(Stdio::null())
            .stderr(log_file(&dir.join("etcd.log"))?)
            .spawn()
            .map_err(|e| format!("etcd: {e}"))?;
        // Built first, so that a failure below stops etcd (and any node started) on drop.
        let mut patroni = Patroni {
            dir,
            etcd,
            nodes: Vec::new(),
        };
        for i in 0..NODES {
            let node = Node::configure(&net.node(i), &patroni.dir, &bin, i)?;
            patroni.nodes.push(node);
        }
        patroni.nodes[0].start()?;
        wait_for("Patroni's first leader", Duration::from_secs(90), || {
            patroni.leader().is_some()
        })?;
        for node in &mut patroni.nodes[1..] {
            node.start()?;
        }
        patroni.wait_ready()?;
        Ok(patroni)
    }

    /// Every node's address: libpq tries them in turn and keeps the one that takes writes.
    pub fn app_url(&self) -> String {
        let hosts: Vec<String> = (0..NODES)
            .map(|i| format!("{}:5432", node_address(i)))
            .collect();
        format!(
            "postgres://postgres@{}/postgres?target_session_attrs=read-write&connect_timeout=5\
             &keepalives_idle=2&keepalives_interval=1&keepalives_count=3&tcp_user_timeout=8000",
            hosts.join(",")
        )
    }

    /// The leader's Unix socket (call after [`wait_healed`](Self::wait_healed)).
    pub fn local_url(&self) -> Result<String, String> {
        let leader = self.leader().ok_or("no node takes writes")?;
        Ok(self.nodes[leader].socket_url())
    }

    /// The node whose server takes writes, if one does (the first, should two: an old leader
    /// not demoted yet).
    pub fn leader(&self) -> Option<usize> {
        (0..NODES).find(|&i| self.nodes[i].sql("SELECT pg_is_in_recovery()").as_deref() == Ok("f"))
    }

    /// Kills node `node`'s Patroni and its PostgreSQL at once (`SIGKILL`), as when its
    /// machine dies.
    pub fn crash(&mut self, node: usize) {
        self.nodes[node].kill();
    }

    /// Starts node `node`'s Patroni again: it rejoins, as a replica if another node leads
    /// (rewound with `pg_rewind` where its history went further).
    pub fn restart(&mut self, node: usize) -> Result<(), String> {
        self.nodes[node].start()
    }

    /// Waits until one node leads and the other two stream from it, one of them the
    /// synchronous standby: the cluster as it starts.
    fn wait_ready(&self) -> Result<(), String> {
        wait_for(
            "a Patroni leader, two streaming replicas and a synchronous standby",
            Duration::from_secs(180),
            || {
                self.replicas_missing()
                    .is_some_and(|missing| missing.is_empty())
            },
        )
    }

    /// Waits until a node takes writes (the checker reads the leader's tables), then up to a
    /// minute for the others to stream from it: what Patroni has not mended by then is the
    /// cluster's state for the report (`Some`), not a reason to skip the check.
    pub fn wait_healed(&self) -> Result<Option<String>, String> {
        wait_for("a Patroni leader", Duration::from_secs(180), || {
            self.leader().is_some()
        })?;
        let healed = wait_for(
            "two streaming replicas and a synchronous standby",
            Duration::from_secs(60),
            || {
                self.replicas_missing()
                    .is_some_and(|missing| missing.is_empty())
            },
        );
        Ok(healed.err().map(|_| {
            let missing = self.replicas_missing().unwrap_or_default();
            format!(
                "a minute after the run, not streaming from the leader (node{:?}): {missing} \
                 (Patroni's state, not seqgen's: their logs are in the run's directory)",
                self.leader()
            )
        }))
    }

    /// What the cluster lacks: `None` without a leader, else the nodes that do not stream
    /// from it and whether no synchronous standby is named (empty: nothing lacks).
    fn replicas_missing(&self) -> Option<String> {
        let leader = self.leader()?;
        let streaming = self.nodes[leader]
            .sql(
                "SELECT string_agg(application_name || ':' || sync_state, ',') \
                 FROM pg_stat_replication WHERE state = 'streaming'",
            )
            .unwrap_or_default();
        let mut missing: Vec<String> = (0..NODES)
            .filter(|&i| i != leader)
            .map(|i| format!("node{i}"))
            .filter(|name| !streaming.contains(&format!("{name}:")))
            .collect();
        if !streaming.contains(":sync") {
            missing.push("no synchronous standby".into());
        }
        Some(missing.join(", "))
    }

    /// The end of etcd's log and each node's (Patroni's, which holds its server's).
    pub fn logs(&self) -> String {
        let mut logs = vec![("etcd".to_owned(), self.dir.join("etcd.log"))];
        for (i, node) in self.nodes.iter().enumerate() {
            logs.push((format!("node {i}"), node.dir.join("patroni.log")));
        }
        logs.iter()
            .map(|(name, path)| {
                let text = std::fs::read_to_string(path).unwrap_or_default();
                format!("-- {name}:\n{}", super::tail(&text, 30))
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

impl Node {
    /// Writes node `i`'s Patroni configuration in `dir/node<i>`.
    fn configure(ns: &str, dir: &Path, bin: &Path, i: usize) -> Result<Node, String> {
        let dir = dir.join(format!("node{i}"));
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let (address, etcd) = (node_address(i), node_address(DCS));
        let yaml = NodeConfig {
            scope: "nemesis",
            name: &format!("node{i}"),
            rest: format!("{address}:8008"),
            etcd: format!("{etcd}:2379"),
            postgres: format!("{address}:5432"),
            data: &dir.join("data"),
            bin,
            dir: &dir,
            clients: "10.77.0.0/24",
            max_connections: 100,
            timing: Timing {
                ttl: 10,
                loop_wait: 2,
                retry_timeout: 3,
            },
        }
        .yaml();
        std::fs::write(dir.join("patroni.yml"), yaml).map_err(|e| e.to_string())?;
        run(Command::new("chown")
            .args(["-R", "postgres:postgres"])
            .arg(&dir))?;
        Ok(Node {
            ns: ns.to_owned(),
            dir,
            process: None,
        })
    }

    /// Starts its Patroni, as the `postgres` user, in its namespace.
    fn start(&mut self) -> Result<(), String> {
        let child = Net::command(&self.ns, Path::new("runuser"))
            .args(["-u", "postgres", "--", PATRONI])
            .arg(self.dir.join("patroni.yml"))
            .stdout(Stdio::null())
            .stderr(log_file(&self.dir.join("patroni.log"))?)
            .spawn()
            .map_err(|e| format!("patroni: {e}"))?;
        self.process = Some(child);
        Ok(())
    }

    /// `SIGKILL` to its Patroni, its postmaster and the postmaster's children.
    fn kill(&mut self) {
        let (config, data) = (self.dir.join("patroni.yml"), self.dir.join("data"));
        crash(self.process.take(), &config, &data);
    }

    fn socket_url(&self) -> String {
        format!(
            "postgres://postgres@/postgres?host={}&port=5432",
            self.dir.display()
        )
    }

    /// Runs `sql` through its Unix socket (which no partition cuts): what it printed.
    fn sql(&self, sql: &str) -> Result<String, String> {
        let output = Command::new("psql")
            .arg("-h")
            .arg(&self.dir)
            .args(["-U", "postgres", "-d", "postgres", "-Atc", sql])
            .env("PGCONNECT_TIMEOUT", "2")
            .output()
            .map_err(|e| e.to_string())?;
        match output.status.success() {
            true => Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned()),
            false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        }
    }
}

impl Drop for Patroni {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
    }
}

fn log_file(path: &Path) -> Result<std::fs::File, String> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // Patroni runs as `postgres` and writes its log through this descriptor: nothing to chown.
    Ok(file)
}
