//! The run's database servers, of its own, each node in its namespace: one PostgreSQL cluster
//! (`postgres.rs`), one MariaDB server, or three MariaDB nodes in a Galera cluster
//! (`mariadb.rs`). All commit durably, as their defaults do: a crash loses nothing committed.
//! The apps reach a node at its [`node_address`](super::net::node_address); the checker
//! through node 0's Unix socket, which no partition cuts. Stopped when dropped.

use std::path::Path;
use std::time::{Duration, Instant};

use super::net::Net;

mod mariadb;
mod postgres;

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
}

impl Setup {
    /// How many database nodes it has.
    pub fn nodes(self) -> usize {
        match self {
            Setup::Postgres | Setup::Mariadb => 1,
            Setup::Galera => 3,
        }
    }
}

/// The servers of a run.
pub enum Server {
    Postgres(postgres::Postgres),
    Mariadb(Vec<mariadb::Node>),
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
        }
    }

    /// The URL an app whose turn is `turn` connects to (a Galera cluster's nodes take turns:
    /// `App::turn`).
    pub fn app_url(&self, turn: usize) -> String {
        match self {
            Server::Postgres(pg) => pg.app_url(),
            Server::Mariadb(nodes) => nodes[turn % nodes.len()].app_url(),
        }
    }

    /// The URL the checker connects to: node 0's Unix socket.
    pub fn local_url(&self) -> String {
        match self {
            Server::Postgres(pg) => pg.local_url(),
            Server::Mariadb(nodes) => nodes[0].local_url(),
        }
    }

    /// Stops node `node` the way a power cut would.
    pub fn crash(&mut self, node: usize) -> Result<(), String> {
        match self {
            Server::Postgres(pg) => pg.stop(),
            Server::Mariadb(nodes) => nodes[node].stop(),
        }
        Ok(())
    }

    /// Starts node `node` again after [`crash`](Self::crash) (a Galera node rejoins its
    /// cluster, and is synced when this returns).
    pub fn restart(&mut self, node: usize) -> Result<(), String> {
        match self {
            Server::Postgres(pg) => pg.boot(),
            Server::Mariadb(nodes) => nodes[node].restart(),
        }
    }

    /// Waits until every node serves again (a Galera node synced with the others).
    pub fn wait_ready(&self) -> Result<(), String> {
        match self {
            Server::Postgres(_) => Ok(()),
            Server::Mariadb(nodes) => nodes.iter().try_for_each(mariadb::Node::wait_synced),
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
