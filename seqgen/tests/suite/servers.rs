//! Database servers of a test's own, for what the shared ones must never go through: a
//! PostgreSQL primary with a standby of it, crashed, promoted and restarted; pgbouncer in
//! front of one. Each lives in a temporary directory on a free port of 127.0.0.1 and is
//! stopped when dropped.
//!
//! The server binaries come from `/usr/lib/postgresql/<version>/bin` (Debian's packages, as
//! CI installs them). Without them the test is skipped with a printed line, except under
//! `CI=true`, where that fails it. As root, the servers run as the `postgres` user (PostgreSQL
//! refuses to run as root).
//!
//! Shared with `tools/tests/pg_failover.rs` (by `#[path]`, with `own_servers.rs`).
#![allow(dead_code)] // each user needs only part of it

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::own_servers::{as_root, free_port, print_logs_if_failing, skip, wait_for};

const PGBOUNCER: &str = "/usr/sbin/pgbouncer";

/// The directory of PostgreSQL's server binaries, the newest version installed.
fn bin_dir() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// Where the servers of one test live.
pub struct PgCluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    /// Run the binaries as `postgres` (we are root).
    as_postgres: bool,
}

impl PgCluster {
    /// A place for servers, or `None` (after printing why) without PostgreSQL's binaries.
    pub fn new(test: &str) -> Option<Self> {
        let Some(bin) = bin_dir() else {
            skip(test, "PostgreSQL's server binaries are");
            return None;
        };
        let dir = tempfile::tempdir().unwrap();
        let as_postgres = as_root();
        if as_postgres {
            let status = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .status()
                .unwrap();
            assert!(status.success(), "chown of {:?} failed", dir.path());
        }
        Some(PgCluster {
            bin,
            dir,
            as_postgres,
        })
    }

    /// `program` of the server binaries, to run as the servers' user.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(program);
            command
        } else {
            Command::new(program)
        }
    }

    fn run(&self, program: &str, args: &[&str]) {
        let out = self.command(program).args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// A new primary, started: durable commits (`fsync = on`), WAL for standbys, and with
    /// `synchronous` every commit waits for a standby.
    pub fn primary(&self, name: &str, synchronous: bool) -> PgServer<'_> {
        let server = self.server(name);
        let data = server.data.to_str().unwrap();
        self.run(
            "initdb",
            &["-D", data, "-U", "postgres", "-A", "trust", "-N"],
        );
        server.configure(&format!(
            "listen_addresses = '127.0.0.1'\nmax_connections = 40\nshared_buffers = 16MB\n\
             synchronous_standby_names = '{}'\n",
            if synchronous { "*" } else { "" }
        ));
        server.start();
        server
    }

    /// A standby of `primary`, streaming from it, started.
    pub fn standby(&self, name: &str, primary: &PgServer<'_>) -> PgServer<'_> {
        let server = self.server(name);
        let port = primary.port.to_string();
        let data = server.data.to_str().unwrap();
        self.run(
            "pg_basebackup",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "postgres",
                "-D",
                data,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
            ],
        );
        // A standby promoted with the primary's `synchronous_standby_names` would wait for a
        // standby of its own at every commit.
        server.configure("synchronous_standby_names = ''\n");
        server.start();
        server
    }

    /// pgbouncer in front of `server`, in transaction pooling with two server connections
    /// for all its clients (so that clients share them), started; or `None` (after printing
    /// why) where pgbouncer is not installed (a failure under `CI=true`).
    pub fn pgbouncer(&self, server: &PgServer<'_>) -> Option<Pgbouncer<'_>> {
        if !Path::new(PGBOUNCER).exists() {
            skip("the pgbouncer test", "pgbouncer is");
            return None;
        }
        let (dir, port) = (self.dir.path(), free_port());
        let config = dir.join("pgbouncer.ini");
        std::fs::write(dir.join("userlist.txt"), "\"postgres\" \"\"\n").unwrap();
        std::fs::write(
            &config,
            format!(
                "[databases]\npostgres = host=127.0.0.1 port={} dbname=postgres\n\
                 [pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
                 auth_type = trust\nauth_file = {dir}/userlist.txt\npool_mode = transaction\n\
                 default_pool_size = 2\nmax_client_conn = 50\n\
                 logfile = {dir}/pgbouncer.log\npidfile = {dir}/pgbouncer.pid\n",
                server.port,
                dir = dir.display()
            ),
        )
        .unwrap();
        // pgbouncer refuses to run as root: as the servers' user, like them.
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--", PGBOUNCER]);
            command
        } else {
            Command::new(PGBOUNCER)
        };
        let out = command.arg("-d").arg(&config).output().unwrap();
        assert!(
            out.status.success(),
            "pgbouncer failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Daemonized: wait until it listens.
        wait_for(
            &format!("pgbouncer to listen on port {port}"),
            std::time::Duration::from_secs(10),
            || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        )
        .unwrap_or_else(|e| {
            crate::own_servers::print_logs([(
                "pgbouncer".to_owned(),
                dir.join("pgbouncer.log").as_path(),
            )]);
            panic!("{e}")
        });
        Some(Pgbouncer {
            cluster: self,
            port,
        })
    }

    fn server(&self, name: &str) -> PgServer<'_> {
        PgServer {
            cluster: self,
            data: self.dir.path().join(name),
            port: free_port(),
            running: std::cell::Cell::new(false),
        }
    }

    fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// The last lines of the logs of every server (and pgbouncer) it started.
    pub fn print_logs(&self) {
        let mut logs: Vec<(String, PathBuf)> = std::fs::read_dir(self.dir.path())
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| {
                let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                name.starts_with("log-") || name == "pgbouncer.log"
            })
            .map(|path| {
                (
                    path.file_name().unwrap().to_string_lossy().into_owned(),
                    path,
                )
            })
            .collect();
        logs.sort();
        crate::own_servers::print_logs(
            logs.iter()
                .map(|(name, path)| (name.clone(), path.as_path())),
        );
    }
}

/// pgbouncer of a [`PgCluster`]; stopped when dropped.
pub struct Pgbouncer<'a> {
    cluster: &'a PgCluster,
    pub port: u16,
}

impl Drop for Pgbouncer<'_> {
    fn drop(&mut self) {
        let log = self.cluster.dir.path().join("pgbouncer.log");
        print_logs_if_failing([("pgbouncer".to_owned(), log.as_path())]);
        let pid = self.cluster.dir.path().join("pgbouncer.pid");
        if let Ok(pid) = std::fs::read_to_string(pid) {
            let _ = Command::new("kill").arg(pid.trim()).status();
        }
    }
}

/// One server of a [`PgCluster`]; stopped when dropped.
pub struct PgServer<'a> {
    cluster: &'a PgCluster,
    data: PathBuf,
    pub port: u16,
    running: std::cell::Cell<bool>,
}

impl PgServer<'_> {
    /// Appends `settings` to its configuration (read at the next start).
    pub fn configure(&self, settings: &str) {
        let path = self.data.join("postgresql.conf");
        let mut conf = std::fs::read_to_string(&path).unwrap();
        conf.push_str(&format!(
            "port = {}\nunix_socket_directories = '{}'\n{settings}",
            self.port,
            self.cluster.socket_dir().display()
        ));
        std::fs::write(&path, conf).unwrap();
    }

    /// Starts it and waits until it accepts connections.
    pub fn start(&self) {
        let (data, log) = (self.data.to_str().unwrap(), self.log());
        self.running.set(true); // from here on, a failure prints its log
        self.cluster.run(
            "pg_ctl",
            &[
                "-D",
                data,
                "-l",
                log.to_str().unwrap(),
                "-w",
                "-t",
                "60",
                "start",
            ],
        );
    }

    /// Its server log.
    fn log(&self) -> PathBuf {
        self.cluster.dir.path().join(format!("log-{}", self.port))
    }

    /// Stops it at once, as a crash would (`immediate`: no checkpoint, crash recovery at the
    /// next start).
    pub fn crash(&self) {
        let data = self.data.to_str().unwrap();
        self.cluster
            .run("pg_ctl", &["-D", data, "-m", "immediate", "-w", "stop"]);
        self.running.set(false);
    }

    /// Promotes this standby and waits until it accepts writes.
    pub fn promote(&self) {
        let data = self.data.to_str().unwrap();
        self.cluster.run("pg_ctl", &["-D", data, "-w", "promote"]);
    }
}

impl Drop for PgServer<'_> {
    fn drop(&mut self) {
        let name = format!("the PostgreSQL server on port {}", self.port);
        print_logs_if_failing([(name, self.log().as_path())]);
        if self.running.get() {
            // Not `run`: a failure here must not panic during another panic.
            let _ = self
                .cluster
                .command("pg_ctl")
                .arg("-D")
                .arg(&self.data)
                .args(["-m", "immediate", "stop"])
                .output();
        }
    }
}
