//! A PostgreSQL cluster of the run's own (`initdb`, its tools run as the `postgres` user), in
//! its namespace.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::nemesis::net::{node_address, Net};
use crate::programs::{append, postgres_bin, run};

pub struct Postgres {
    ns: String,
    dir: PathBuf,
}

impl Postgres {
    /// Creates a cluster in `dir/postgres` and starts it in `ns`.
    pub fn start(ns: &str, dir: &Path) -> Result<Self, String> {
        let dir = dir.join("postgres");
        std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        run(Command::new("chown").arg("postgres").arg(&dir))?;
        let pg = Postgres {
            ns: ns.to_owned(),
            dir,
        };
        run(pg.tool("initdb")?.arg("-D").arg(pg.dir.join("data")).args([
            "-U",
            "postgres",
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
        ]))?;
        let conf = format!(
            "\nlisten_addresses = '{}'\nunix_socket_directories = '{}'\nmax_connections = 100\n",
            node_address(0),
            pg.dir.display()
        );
        append(&pg.dir.join("data/postgresql.conf"), &conf)?;
        append(
            &pg.dir.join("data/pg_hba.conf"),
            "\nhost all all 10.77.0.0/24 trust\n",
        )?;
        pg.boot()?;
        Ok(pg)
    }

    /// The URL the apps connect to: a cut connection is noticed within seconds (libpq's
    /// keepalives and timeouts).
    pub fn app_url(&self) -> String {
        format!(
            "postgres://postgres@{}:5432/postgres?connect_timeout=5&keepalives_idle=2\
             &keepalives_interval=1&keepalives_count=3&tcp_user_timeout=8000",
            node_address(0)
        )
    }

    pub fn local_url(&self) -> String {
        format!(
            "postgres://postgres@/postgres?host={}&port=5432",
            self.dir.display()
        )
    }

    /// Starts the server (again, after [`stop`](Self::stop): it replays its WAL).
    pub fn boot(&self) -> Result<(), String> {
        run(self
            .tool("pg_ctl")?
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-l")
            .arg(self.dir.join("postgres.log"))
            .args(["-w", "-t", "60", "start"]))
    }

    /// Stops the server the way a power cut would (no checkpoint).
    pub fn stop(&self) {
        if let Ok(mut pg_ctl) = self.tool("pg_ctl") {
            let data = self.dir.join("data");
            let _ = pg_ctl
                .arg("-D")
                .arg(data)
                .args(["-m", "immediate", "-w", "stop"])
                .output();
        }
    }

    /// A PostgreSQL tool, run in the server's namespace as the `postgres` user.
    fn tool(&self, name: &str) -> Result<Command, String> {
        let bin = postgres_bin().ok_or("no PostgreSQL server programs (initdb, pg_ctl)")?;
        let mut cmd = Net::command(&self.ns, Path::new("runuser"));
        cmd.args(["-u", "postgres", "--"]).arg(bin.join(name));
        Ok(cmd)
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("postgres.log")).unwrap_or_default()
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
