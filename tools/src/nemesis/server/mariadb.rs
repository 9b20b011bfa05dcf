//! A MariaDB node of the run's own (`mariadb-install-db`, no grant tables), in its namespace:
//! alone, or one of a Galera cluster's (rsync state transfer, every node at its own address).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::wait_for;
use crate::nemesis::net::{node_address, Net};
use crate::programs::{find_program, run};

/// The Galera library, as Debian's `galera-4` installs it.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// A node's place in a Galera cluster.
#[derive(Debug, Clone, Copy)]
pub struct Galera {
    pub node: usize,
    pub nodes: usize,
}

pub struct Node {
    ns: String,
    dir: PathBuf,
    address: String,
    galera: Option<Galera>,
    child: Option<Child>,
}

impl Node {
    /// Installs a node in `dir/node<i>` and starts it in `ns`: a Galera cluster's first node
    /// starts the cluster, the others join it; each is synced when this returns.
    pub fn start(ns: &str, dir: &Path, galera: Option<Galera>) -> Result<Self, String> {
        let index = galera.map_or(0, |g| g.node);
        let dir = dir.join(format!("node{index}"));
        if galera.is_some() && !Path::new(PROVIDER).exists() {
            return Err(format!("{PROVIDER} is missing: install galera-4"));
        }
        // As the `mysql` user: rsync's daemon, which a joining Galera node receives its state
        // through, runs as `nobody` when started by root, and could not write the data.
        std::fs::create_dir_all(dir.join("data")).map_err(|e| e.to_string())?;
        run(Command::new("chown").args(["-R", "mysql:mysql"]).arg(&dir))?;
        let install_db =
            find_program("mariadb-install-db").ok_or("mariadb-install-db is not installed")?;
        run(Command::new(install_db)
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .args([
                "--skip-test-db",
                "--auth-root-authentication-method=normal",
                "--user=mysql",
            ]))?;
        let mut node = Node {
            ns: ns.to_owned(),
            dir,
            address: node_address(index),
            galera,
            child: None,
        };
        node.boot(index == 0)?;
        if index == 0 {
            node.sql("CREATE DATABASE IF NOT EXISTS nemesis")?;
        }
        node.wait_synced()?;
        Ok(node)
    }

    pub fn app_url(&self) -> String {
        format!("mysql://root@{}:3306/nemesis", self.address)
    }

    pub fn local_url(&self) -> String {
        let socket = self.dir.join("sock");
        format!(
            "mysql://root@localhost:3306/nemesis?unix_socket={}",
            socket.display()
        )
    }

    /// Starts the node again after [`stop`](Self::stop): a Galera node joins its cluster
    /// (never starts a new one).
    pub fn restart(&mut self) -> Result<(), String> {
        self.boot(false)?;
        if self.galera.is_none() {
            return Ok(());
        }
        self.wait_synced()
    }

    /// Starts the server; `first` starts a new Galera cluster.
    fn boot(&mut self, first: bool) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.join("error.log"))
            .map_err(|e| e.to_string())?;
        let mut cmd = Net::command(&self.ns, Path::new("/usr/sbin/mariadbd"));
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.dir.join("data").display()))
            .arg(format!("--socket={}", self.dir.join("sock").display()))
            .arg(format!("--bind-address={}", self.address))
            .args([
                "--port=3306",
                "--skip-grant-tables",
                "--innodb-buffer-pool-size=32M",
                "--innodb-flush-log-at-trx-commit=1",
                "--max-connections=200",
                "--user=mysql",
            ])
            .stdout(Stdio::null())
            .stderr(log);
        if let Some(g) = self.galera {
            let members: Vec<String> = (0..g.nodes).map(node_address).collect();
            let a = &self.address;
            cmd.args([
                "--wsrep-on=ON",
                "--binlog-format=ROW",
                "--innodb-autoinc-lock-mode=2",
                "--wsrep-cluster-name=nemesis",
                "--wsrep-sst-method=rsync",
            ])
            .arg(format!("--wsrep-provider={PROVIDER}"))
            .arg(format!(
                "--wsrep-cluster-address=gcomm://{}",
                members.join(",")
            ))
            .arg(format!("--wsrep-node-address={a}"))
            .arg(format!("--wsrep-node-name=node{}", g.node))
            .arg(format!("--wsrep-sst-receive-address={a}:4444"))
            .arg(format!("--wsrep-provider-options=ist.recv_addr={a}:4568"));
            if first {
                cmd.arg("--wsrep-new-cluster");
            }
        }
        self.child = Some(cmd.spawn().map_err(|e| format!("mariadbd: {e}"))?);
        wait_for(
            "mariadbd to take connections",
            Duration::from_secs(120),
            || self.sql("SELECT 1").is_ok(),
        )
    }

    /// Waits until the node serves (a Galera node: synced with its cluster).
    pub fn wait_synced(&self) -> Result<(), String> {
        if self.galera.is_none() {
            return Ok(());
        }
        wait_for(
            "a Galera node to be synced",
            Duration::from_secs(180),
            || {
                self.sql("SHOW STATUS LIKE 'wsrep_local_state_comment'")
                    .is_ok_and(|out| out.contains("Synced"))
            },
        )
    }

    /// Runs `sql` through the node's socket: what it printed.
    fn sql(&self, sql: &str) -> Result<String, String> {
        let output = Command::new("mariadb")
            .arg(format!("--socket={}", self.dir.join("sock").display()))
            .args(["-u", "root", "-N", "-e", sql])
            .output()
            .map_err(|e| e.to_string())?;
        match output.status.success() {
            true => Ok(String::from_utf8_lossy(&output.stdout).into_owned()),
            false => Err(String::from_utf8_lossy(&output.stderr).into_owned()),
        }
    }

    /// SIGKILL: nothing is flushed that InnoDB had not flushed at commit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("error.log")).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.stop();
    }
}
