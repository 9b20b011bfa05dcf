//! A Patroni node as seqgen's tests run one: its configuration file and its crash. Shared by
//! the nemesis's cluster in network namespaces (`nemesis/server/patroni.rs`) and the failover
//! tests' cluster on loopback (`tests/support/patroni.rs`), which differ only in addresses and
//! timing.

use std::path::Path;
use std::process::{Child, Command};

/// Debian's `patroni`.
pub const PATRONI: &str = "/usr/bin/patroni";
/// Debian's `etcd-server`.
pub const ETCD: &str = "/usr/bin/etcd";

/// Patroni's timing, in seconds: how long the leader key lives, the loop, and how long a
/// request to etcd or PostgreSQL is retried (Patroni asks `loop_wait + 2 × retry_timeout <=
/// ttl`).
pub struct Timing {
    pub ttl: u32,
    pub loop_wait: u32,
    pub retry_timeout: u32,
}

/// One node of a cluster `scope`: where it listens and keeps its files.
pub struct NodeConfig<'a> {
    /// The cluster's name in etcd.
    pub scope: &'a str,
    pub name: &'a str,
    /// Patroni's REST API, `host:port`.
    pub rest: String,
    /// etcd's client address, `host:port`.
    pub etcd: String,
    /// Its PostgreSQL server, `host:port`.
    pub postgres: String,
    /// Its data directory.
    pub data: &'a Path,
    /// PostgreSQL's server programs.
    pub bin: &'a Path,
    /// Where its password file goes and its Unix socket listens.
    pub dir: &'a Path,
    /// The network its peers and clients connect from, for `pg_hba` (`127.0.0.1/32`).
    pub clients: &'a str,
    pub max_connections: u32,
    pub timing: Timing,
}

impl NodeConfig<'_> {
    /// Its YAML. Synchronous mode and `pg_rewind`, as a cluster that must lose no
    /// acknowledged commit is run; a node whose history cannot be rewound to the leader's
    /// ("could not find common ancestor", after many promotions) is cloned again
    /// (`remove_data_directory_on_*`), as an unattended cluster must be set up: without it,
    /// a 30-minute nemesis run ended with the leader alone.
    pub fn yaml(&self) -> String {
        let Timing {
            ttl,
            loop_wait,
            retry_timeout,
        } = self.timing;
        format!(
            r#"scope: {scope}
name: {name}
restapi:
  listen: {rest}
  connect_address: {rest}
etcd3:
  hosts: {etcd}
bootstrap:
  dcs:
    ttl: {ttl}
    loop_wait: {loop_wait}
    retry_timeout: {retry_timeout}
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      parameters:
        wal_log_hints: 'on'
        max_connections: {max_connections}
        shared_buffers: 16MB
  initdb:
  - encoding: UTF8
postgresql:
  listen: {postgres}
  connect_address: {postgres}
  data_dir: {data}
  bin_dir: {bin}
  pgpass: {dir}/{name}.pgpass
  remove_data_directory_on_rewind_failure: true
  remove_data_directory_on_diverged_timelines: true
  authentication:
    superuser: {{username: postgres, password: postgres}}
    replication: {{username: postgres, password: postgres}}
    rewind: {{username: postgres, password: postgres}}
  parameters:
    unix_socket_directories: '{dir}'
  pg_hba:
  - local all all trust
  - host all all {clients} trust
  - host replication all {clients} trust
"#,
            scope = self.scope,
            name = self.name,
            rest = self.rest,
            etcd = self.etcd,
            postgres = self.postgres,
            max_connections = self.max_connections,
            data = self.data.display(),
            bin = self.bin.display(),
            dir = self.dir.display(),
            clients = self.clients,
        )
    }
}

/// The node's crash, as when its machine dies: `SIGKILL` to the Patroni started with
/// `config` (found by its command line: `patroni` may be a child of `runuser`), to `patroni`
/// itself, to its postmaster (read from `data`'s pid file) and the postmaster's children.
/// Nothing when it is not running: a pid file left by an earlier crash names a process that
/// may no longer be the postmaster.
pub fn crash(patroni: Option<Child>, config: &Path, data: &Path) {
    let Some(mut patroni) = patroni else {
        return;
    };
    let _ = Command::new("pkill")
        .args(["-9", "-f"])
        .arg(config)
        .status();
    let _ = patroni.kill();
    let _ = patroni.wait();
    let pid = std::fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
    if let Some(pid) = pid.lines().next().map(str::trim).filter(|p| !p.is_empty()) {
        let _ = Command::new("pkill").args(["-9", "-P", pid]).status();
        let _ = Command::new("kill").args(["-9", pid]).status();
    }
}
