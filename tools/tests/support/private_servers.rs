//! The database servers `crash.rs` crashes, of the test's own: a PostgreSQL cluster
//! (`initdb` into a temp dir, another port, commits not flushed) and a MariaDB server
//! (`mariadb-install-db`, no grant tables), never the shared servers. Each is stopped when
//! dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::own_servers::{as_root, free_port, wait_for};
use seqgen_tools::programs::{append, run};
pub use seqgen_tools::programs::{find_program, postgres_bin};

/// A PostgreSQL cluster in a temp dir, on its own port.
pub struct PrivatePostgres {
    bin: PathBuf,
    data: PathBuf,
    pub log: PathBuf,
    port: u16,
    /// PostgreSQL refuses to run as root: as root, its tools run as the `postgres` user.
    as_postgres: bool,
}

impl PrivatePostgres {
    pub fn start(dir: &Path, bin: &Path) -> Result<Self, String> {
        let as_postgres = as_root();
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(dir))?;
        }
        let server = PrivatePostgres {
            bin: bin.to_owned(),
            data: dir.join("data"),
            log: dir.join("postgres.log"),
            port: free_port(),
            as_postgres,
        };
        run(server.tool("initdb").arg("-D").arg(&server.data).args([
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        ]))?;
        // A crash loses every commit that did not wait for its WAL: with the WAL writer at its
        // slowest, up to the last ~10 s of them.
        let settings = format!(
            "\nport = {}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{}'\n\
             synchronous_commit = off\nwal_writer_delay = 10000ms\nfsync = on\n\
             max_connections = 60\n",
            server.port,
            dir.display()
        );
        append(&server.data.join("postgresql.conf"), &settings)?;
        server.pg_ctl_start()?;
        Ok(server)
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut cmd = Command::new("runuser");
            cmd.args(["-u", "postgres", "--"]).arg(path);
            cmd
        } else {
            Command::new(path)
        }
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        run(self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&self.log)
            .args(["-w", "-t", "60", "start"]))
    }

    /// Stops the server the way a power cut would (no checkpoint, no WAL flush), then starts
    /// it again, which replays what reached the WAL on disk.
    pub fn crash_and_restart(&self) -> Result<(), String> {
        run(self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"]))?;
        self.pg_ctl_start()
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self
            .tool("pg_ctl")
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}

/// A MariaDB server in a temp dir, on its own port, without grant tables (no password).
pub struct PrivateMariadb {
    bin: PathBuf,
    data: PathBuf,
    socket: PathBuf,
    pub log: PathBuf,
    port: u16,
    server: Option<Child>,
}

impl PrivateMariadb {
    pub fn install(dir: &Path, install_db: &Path, bin: &Path) -> Result<Self, String> {
        let data = dir.join("mariadb");
        let mut install = Command::new(install_db);
        install
            .arg("--no-defaults")
            .arg(format!("--datadir={}", data.display()))
            .args(["--skip-test-db", "--auth-root-authentication-method=normal"]);
        if as_root() {
            install.arg("--user=root");
        }
        run(&mut install)?;
        Ok(PrivateMariadb {
            bin: bin.to_owned(),
            socket: dir.join("mariadb.sock"),
            log: dir.join("mariadb.log"),
            data,
            port: free_port(),
            server: None,
        })
    }

    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/crash", self.port)
    }

    pub fn start(&mut self, extra: &[&str]) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| e.to_string())?;
        let mut cmd = Command::new(&self.bin);
        cmd.arg("--no-defaults")
            .arg(format!("--datadir={}", self.data.display()))
            .arg(format!("--socket={}", self.socket.display()))
            .arg(format!("--port={}", self.port))
            .args([
                "--bind-address=127.0.0.1",
                "--skip-grant-tables",
                "--innodb-buffer-pool-size=32M",
                "--max-connections=100",
            ])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(log);
        if as_root() {
            cmd.arg("--user=root");
        }
        self.server = Some(cmd.spawn().map_err(|e| format!("mariadbd: {e}"))?);
        let mut exited = None;
        wait_for(
            "mariadbd to accept connections (and the database `crash`)",
            Duration::from_secs(60),
            || {
                if let Some(Ok(Some(status))) = self.server.as_mut().map(Child::try_wait) {
                    exited = Some(status);
                    return true;
                }
                Command::new("mariadb")
                    .args(["--protocol=tcp", "-h", "127.0.0.1", "-u", "root"])
                    .arg(format!("-P{}", self.port))
                    .args(["-e", "CREATE DATABASE IF NOT EXISTS crash"])
                    .output()
                    .is_ok_and(|o| o.status.success())
            },
        )?;
        match exited {
            Some(status) => Err(format!(
                "mariadbd exited with {status} (its log is printed)"
            )),
            None => Ok(()),
        }
    }

    /// SIGKILL: nothing is flushed that InnoDB had not flushed at commit.
    pub fn kill(&mut self) -> Result<(), String> {
        if let Some(mut server) = self.server.take() {
            server.kill().map_err(|e| e.to_string())?;
            server.wait().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

impl Drop for PrivateMariadb {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}
