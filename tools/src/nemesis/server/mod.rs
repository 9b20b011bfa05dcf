//! The run's database servers, of its own, each node in its namespace: one PostgreSQL cluster
//! (`postgres.rs`), one MariaDB server, three MariaDB nodes in a Galera cluster
//! (`mariadb.rs`), or three PostgreSQL nodes under Patroni with etcd (`patroni.rs`). All commit
//! durably, as their defaults do: a crash loses nothing committed. The apps reach a node at
//! its [`node_address`](super::net::node_address); the checker through a Unix socket, which no
//! partition cuts (node 0's; under Patroni, the leader's). Stopped when dropped.

use std::path::Path;
use std::time::{Duration, Instant};

use super::net::Net;

mod mariadb;
mod patroni;
mod postgres;

/// The database node a fault falls on: one by its index, or whichever leads when the fault
/// begins (Patroni's leader, found then: the schedule cannot know it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Node(usize),
    Leader,
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Node(node) => write!(f, "node{node}"),
            Target::Leader => write!(f, "the leader"),
        }
    }
}

/// Which servers a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Setup {
    /// One PostgreSQL server.
    Postgres,
    /// One MariaDB server.
    Mariadb,
    /// Three MariaDB nodes in a Galera cluster; app `i` talks to node `i % 3`.
    Galera,
    /// Three PostgreSQL nodes under Patroni (synchronous mode) and one etcd; the apps talk to
    /// whichever node takes writes.
    Patroni,
}

impl Setup {
    /// How many database nodes it has.
    pub fn database_nodes(self) -> usize {
        match self {
            Setup::Postgres | Setup::Mariadb => 1,
            Setup::Galera => 3,
            Setup::Patroni => patroni::NODES,
        }
    }

    /// How many namespaces its servers take: the database nodes, and Patroni's etcd.
    pub fn nodes(self) -> usize {
        match self {
            Setup::Patroni => patroni::DCS + 1,
            _ => self.database_nodes(),
        }
    }

    /// The namespace of the server a database node's peers coordinate through (etcd), if any.
    pub fn dcs(self) -> Option<usize> {
        (self == Setup::Patroni).then_some(patroni::DCS)
    }
}

/// The servers of a run.
pub enum Server {
    Postgres(postgres::Postgres),
    Mariadb(Vec<mariadb::Node>),
    Patroni(patroni::Patroni),
}

impl Server {
    /// Creates and starts `setup`'s servers in `dir`, each node in its namespace of `net`.
    pub fn start(setup: Setup, net: &Net, dir: &Path) -> Result<Self, String> {
        match setup {
            Setup::Postgres => Ok(Server::Postgres(postgres::Postgres::start(
                &net.node(0),
                dir,
            )?)),
            Setup::Mariadb | Setup::Galera => {
                let nodes = setup.nodes();
                let mut started = Vec::new();
                for node in 0..nodes {
                    let galera = (nodes > 1).then_some(mariadb::Galera { node, nodes });
                    started.push(mariadb::Node::start(&net.node(node), dir, galera)?);
                }
                Ok(Server::Mariadb(started))
            }
            Setup::Patroni => Ok(Server::Patroni(patroni::Patroni::start(net, dir)?)),
        }
    }

    /// The node `target` names now: under Patroni, the leader is whichever node takes writes
    /// (node 0 while none does); elsewhere node 0 leads.
    pub fn resolve(&self, target: Target) -> usize {
        match (target, self) {
            (Target::Node(node), _) => node,
            (Target::Leader, Server::Patroni(patroni)) => patroni.leader().unwrap_or(0),
            (Target::Leader, _) => 0,
        }
    }

    /// The URL an app whose turn is `turn` connects to (a Galera cluster's nodes take turns:
    /// `App::turn`).
    pub fn app_url(&self, turn: usize) -> String {
        match self {
            Server::Postgres(pg) => pg.app_url(),
            Server::Mariadb(nodes) => nodes[turn % nodes.len()].app_url(),
            Server::Patroni(patroni) => patroni.app_url(),
        }
    }

    /// The URL the checker connects to: node 0's Unix socket (the leader's under Patroni).
    pub fn local_url(&self) -> Result<String, String> {
        match self {
            Server::Postgres(pg) => Ok(pg.local_url()),
            Server::Mariadb(nodes) => Ok(nodes[0].local_url()),
            Server::Patroni(patroni) => patroni.local_url(),
        }
    }

    /// Stops node `node` the way a power cut would.
    pub fn crash(&mut self, node: usize) -> Result<(), String> {
        match self {
            Server::Postgres(pg) => pg.stop(),
            Server::Mariadb(nodes) => nodes[node].stop(),
            Server::Patroni(patroni) => patroni.crash(node),
        }
        Ok(())
    }

    /// Starts node `node` again after [`crash`](Self::crash) (a Galera node rejoins its
    /// cluster, and is synced when this returns).
    pub fn restart(&mut self, node: usize) -> Result<(), String> {
        match self {
            Server::Postgres(pg) => pg.boot(),
            Server::Mariadb(nodes) => nodes[node].restart(),
            Server::Patroni(patroni) => patroni.restart(node),
        }
    }

    /// Waits until every node serves again after the run (a Galera node synced with the
    /// others; under Patroni, a leader, and its replicas for a minute): what the cluster did
    /// not mend by then, for the report.
    pub fn wait_healed(&self) -> Result<Option<String>, String> {
        match self {
            Server::Postgres(_) => Ok(None),
            Server::Mariadb(nodes) => {
                nodes.iter().try_for_each(mariadb::Node::wait_synced)?;
                Ok(None)
            }
            Server::Patroni(patroni) => patroni.wait_healed(),
        }
    }

    /// The end of each node's log, for a failed run.
    pub fn logs(&self) -> String {
        match self {
            Server::Postgres(pg) => tail(&pg.log(), 30),
            Server::Mariadb(nodes) => {
                let logs = nodes.iter().enumerate();
                logs.map(|(i, n)| format!("-- node {i}:\n{}", tail(&n.log(), 30)))
                    .collect::<Vec<_>>()
                    .join("\n")
            }
            Server::Patroni(patroni) => patroni.logs(),
        }
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// Calls `ready` every 100 ms until it says so, for at most `within`.
pub fn wait_for(
    what: &str,
    within: Duration,
    mut ready: impl FnMut() -> bool,
) -> Result<(), String> {
    let start = Instant::now();
    while !ready() {
        if start.elapsed() > within {
            return Err(format!("waited {within:?} for {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}
