//! The high-availability stack PostgreSQL users run, on loopback, for `tests/patroni.rs`: one
//! etcd, three Patroni nodes (each a PostgreSQL server of its own, `synchronous_mode` on) and
//! HAProxy routing to whichever node answers Patroni's `/primary` (checked every second).
//! Everything lives in a temporary directory on free ports and is stopped when dropped.
//!
//! The binaries come from Debian's packages (`patroni`, `etcd-server`, `haproxy`,
//! `postgresql`); without them the test is skipped with a printed line, except under
//! `CI=true`, where it fails. As root, Patroni and PostgreSQL run as `postgres`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use seqgen_tools::patroni::{crash, NodeConfig, Timing, ETCD, PATRONI};
use seqgen_tools::programs::postgres_bin;

use crate::own_servers::{as_root, free_port, print_logs, skip, wait_until};

const HAPROXY: &str = "/usr/sbin/haproxy";

/// Patroni's timing: its default loop (10 s: a new leader names its synchronous standby up to
/// a loop after its promotion, the window gapless users must not be refused in), a leader key
/// that lives 20 s instead of 30 (a crashed leader is replaced in about that), and a retry
/// timeout of 5 s so that `loop_wait + 2 × retry_timeout <= ttl` still holds.
const TTL: u32 = 20;
const LOOP_WAIT: u32 = 10;
const RETRY_TIMEOUT: u32 = 5;

/// One Patroni node: its ports, and its process while it runs.
pub struct Node {
    pub name: String,
    pub pg_port: u16,
    pub rest_port: u16,
    config: PathBuf,
    data: PathBuf,
    process: Option<Child>,
}

/// etcd, three Patroni nodes and HAProxy; stopped when dropped.
pub struct PatroniCluster {
    dir: tempfile::TempDir,
    as_postgres: bool,
    etcd: Child,
    haproxy: Option<Child>,
    pub nodes: Vec<Node>,
    /// HAProxy's port: the primary, whichever node it is.
    pub port: u16,
}

impl PatroniCluster {
    /// The cluster, its leader elected and both replicas streaming, or `None` (printed) where
    /// a binary is missing.
    pub fn start(test: &str) -> Option<Self> {
        let Some(bin) = postgres_bin() else {
            skip(test, "PostgreSQL's server binaries are");
            return None;
        };
        for (path, what) in [
            (PATRONI, "patroni is"),
            (ETCD, "etcd is"),
            (HAPROXY, "haproxy is"),
        ] {
            if !Path::new(path).exists() {
                skip(test, what);
                return None;
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = as_root();
        if as_postgres {
            chown(dir.path());
        }
        let (etcd_client, etcd_peer) = (free_port(), free_port());
        let etcd = Command::new(ETCD)
            .args(["--name", "e0", "--data-dir"])
            .arg(dir.path().join("etcd"))
            .arg(format!(
                "--listen-client-urls=http://127.0.0.1:{etcd_client}"
            ))
            .arg(format!(
                "--advertise-client-urls=http://127.0.0.1:{etcd_client}"
            ))
            .arg(format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer}"))
            .arg(format!(
                "--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}"
            ))
            .arg(format!("--initial-cluster=e0=http://127.0.0.1:{etcd_peer}"))
            .stdout(Stdio::null())
            .stderr(log(dir.path(), "etcd"))
            .spawn()
            .unwrap();
        wait_until("etcd listens", Duration::from_secs(20), || {
            http(etcd_client, "GET", "/health", "").is_some_and(|(status, _)| status == 200)
        });
        let nodes = (0..3)
            .map(|i| Node::configure(dir.path(), &bin, i, etcd_client))
            .collect();
        let mut cluster = PatroniCluster {
            dir,
            as_postgres,
            etcd,
            haproxy: None,
            nodes,
            port: free_port(),
        };
        // The first bootstraps the cluster; the others join it as replicas.
        cluster.start_node(0);
        cluster.wait_for_leader(Duration::from_secs(60));
        cluster.start_node(1);
        cluster.start_node(2);
        cluster.wait_for_replicas(2, Duration::from_secs(90));
        cluster.start_haproxy();
        Some(cluster)
    }

    /// Starts node `i`'s Patroni (and through it its PostgreSQL).
    pub fn start_node(&mut self, i: usize) {
        let node = &self.nodes[i];
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--", PATRONI]);
            command
        } else {
            Command::new(PATRONI)
        };
        // Patroni logs to its standard error.
        let child = command
            .arg(&node.config)
            .stdout(Stdio::null())
            .stderr(log(self.dir.path(), &node.name))
            .spawn()
            .unwrap();
        self.nodes[i].process = Some(child);
    }

    /// The leader's crash: its Patroni, postmaster and every backend killed at once
    /// (`SIGKILL`), as when its machine dies; no watchdog is set up.
    pub fn crash_node(&mut self, i: usize) {
        let node = &mut self.nodes[i];
        crash(node.process.take(), &node.config, &node.data);
    }

    /// The node Patroni's `/primary` answers 200 on, if any.
    pub fn leader(&self) -> Option<usize> {
        (0..self.nodes.len()).find(|&i| {
            self.nodes[i].process.is_some()
                && http(self.nodes[i].rest_port, "GET", "/primary", "")
                    .is_some_and(|(status, _)| status == 200)
        })
    }

    /// Waits for a leader: its index.
    pub fn wait_for_leader(&self, within: Duration) -> usize {
        let mut found = None;
        wait_until("a leader", within, || {
            found = self.leader();
            found.is_some()
        });
        found.unwrap()
    }

    /// Waits until `count` nodes answer Patroni's `/replica` (streaming from the leader).
    pub fn wait_for_replicas(&self, count: usize, within: Duration) {
        wait_until(&format!("{count} replicas"), within, || {
            let streaming = self.nodes.iter().filter(|node| {
                node.process.is_some()
                    && http(node.rest_port, "GET", "/replica", "")
                        .is_some_and(|(status, _)| status == 200)
            });
            streaming.count() >= count
        });
    }

    /// Waits until the leader names a synchronous standby (`/sync` answers 200 on one).
    pub fn wait_for_sync_standby(&self, within: Duration) {
        wait_until("a synchronous standby", within, || {
            self.nodes.iter().any(|node| {
                node.process.is_some()
                    && http(node.rest_port, "GET", "/sync", "")
                        .is_some_and(|(status, _)| status == 200)
            })
        });
    }

    /// A planned switchover from `leader` to any replica (Patroni's REST API).
    pub fn switchover(&self, leader: usize) -> Result<(), String> {
        let body = format!("{{\"leader\": \"{}\"}}", self.nodes[leader].name);
        match http(self.nodes[leader].rest_port, "POST", "/switchover", &body) {
            Some((200, _)) => Ok(()),
            other => Err(format!("switchover refused: {other:?}")),
        }
    }

    /// A URL through HAProxy: the primary, whichever node it is.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A URL straight to node `i`.
    pub fn node_url(&self, i: usize) -> String {
        format!(
            "postgres://postgres@127.0.0.1:{}/postgres",
            self.nodes[i].pg_port
        )
    }

    fn start_haproxy(&mut self) {
        let servers: String = self
            .nodes
            .iter()
            .map(|node| {
                format!(
                    "    server {} 127.0.0.1:{} check port {}\n",
                    node.name, node.pg_port, node.rest_port
                )
            })
            .collect();
        let config = self.dir.path().join("haproxy.cfg");
        std::fs::write(
            &config,
            format!(
                "global\n    maxconn 200\ndefaults\n    mode tcp\n    timeout connect 2s\n\
                 timeout client 30m\n    timeout server 30m\n    timeout check 1s\n\
                 listen primary\n    bind 127.0.0.1:{}\n    option httpchk GET /primary\n\
                 http-check expect status 200\n\
                 default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions\n\
                 {servers}",
                self.port
            ),
        )
        .unwrap();
        let haproxy = Command::new(HAPROXY)
            .args(["-db", "-f"])
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(log(self.dir.path(), "haproxy"))
            .spawn()
            .unwrap();
        self.haproxy = Some(haproxy);
        let url = self.url();
        wait_until(
            "HAProxy routes to the primary",
            Duration::from_secs(20),
            || {
                use diesel::Connection;
                diesel::PgConnection::establish(&url).is_ok()
            },
        );
    }
}

impl Node {
    /// Whether its Patroni runs (it was not crashed).
    pub fn running(&self) -> bool {
        self.process.is_some()
    }

    /// Node `i`'s configuration file (and the directory its data goes to).
    fn configure(dir: &Path, bin: &Path, i: usize, etcd: u16) -> Node {
        let (name, pg_port, rest_port) = (format!("node{i}"), free_port(), free_port());
        let data = dir.join(&name);
        let config = dir.join(format!("{name}.yml"));
        let yaml = NodeConfig {
            scope: "seqgen",
            name: &name,
            rest: format!("127.0.0.1:{rest_port}"),
            etcd: format!("127.0.0.1:{etcd}"),
            postgres: format!("127.0.0.1:{pg_port}"),
            data: &data,
            bin,
            dir,
            clients: "127.0.0.1/32",
            max_connections: 60,
            timing: Timing {
                ttl: TTL,
                loop_wait: LOOP_WAIT,
                retry_timeout: RETRY_TIMEOUT,
            },
        }
        .yaml();
        std::fs::write(&config, yaml).unwrap();
        Node {
            name,
            pg_port,
            rest_port,
            config,
            data,
            process: None,
        }
    }
}

impl PatroniCluster {
    /// The last lines of the logs of etcd, each node's Patroni (and its PostgreSQL) and HAProxy.
    pub fn print_logs(&self) {
        let names = std::iter::once("etcd")
            .chain(self.nodes.iter().map(|node| node.name.as_str()))
            .chain(["haproxy"]);
        let logs: Vec<(String, PathBuf)> = names
            .map(|name| (name.to_owned(), self.dir.path().join(format!("{name}.log"))))
            .collect();
        print_logs(
            logs.iter()
                .map(|(name, path)| (name.clone(), path.as_path())),
        );
    }
}

impl Drop for PatroniCluster {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.print_logs();
        }
        for i in 0..self.nodes.len() {
            self.crash_node(i);
        }
        if let Some(mut haproxy) = self.haproxy.take() {
            let _ = haproxy.kill();
            let _ = haproxy.wait();
        }
        let _ = self.etcd.kill();
        let _ = self.etcd.wait();
    }
}

fn chown(path: &Path) {
    let status = Command::new("chown")
        .args(["postgres:postgres"])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "chown of {path:?} failed");
}

/// A log file `name.log` in `dir` for a child's output.
fn log(dir: &Path, name: &str) -> std::fs::File {
    let file = std::fs::File::create(dir.join(format!("{name}.log"))).unwrap();
    if as_root() {
        chown(&dir.join(format!("{name}.log")));
    }
    file
}

/// A request to `127.0.0.1:port`: the status and body, or `None` when nothing answers.
fn http(port: u16, method: &str, path: &str, body: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    Some((status, body.to_owned()))
}
