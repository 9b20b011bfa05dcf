//! The run's database server, of its own, in the server's namespace: a PostgreSQL cluster
//! (`initdb`, as the `postgres` user when run as root) or a MariaDB server
//! (`mariadb-install-db`, no grant tables). Both commit durably, as their defaults do: a crash
//! loses nothing that was committed. The apps reach it at [`DB_ADDRESS`]; the checker through
//! its Unix socket, which no partition cuts. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::net::{Net, DB_ADDRESS};

/// Which server a run starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Setup {
    /// One PostgreSQL server.
    Postgres,
    /// One MariaDB server.
    Mariadb,
}

/// A server of the run's own.
pub struct Server {
    setup: Setup,
    ns: String,
    dir: PathBuf,
    /// MariaDB's process (PostgreSQL's is `pg_ctl`'s).
    child: Option<Child>,
}

impl Server {
    /// Creates and starts a `setup` server in `dir`, inside `ns`.
    pub fn start(setup: Setup, ns: &str, dir: &Path) -> Result<Self, String> {
        let mut server = Server {
            setup,
            ns: ns.to_owned(),
            dir: dir.to_owned(),
            child: None,
        };
        match setup {
            Setup::Postgres => {
                run(Command::new("chown").arg("postgres").arg(dir))?;
                run(server
                    .postgres_tool("initdb")?
                    .arg("-D")
                    .arg(dir.join("data"))
                    .args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"]))?;
                let conf = format!(
                    "\nlisten_addresses = '{DB_ADDRESS}'\nunix_socket_directories = '{}'\n\
                     max_connections = 100\n",
                    dir.display()
                );
                append(&dir.join("data/postgresql.conf"), &conf)?;
                append(
                    &dir.join("data/pg_hba.conf"),
                    "\nhost all all 10.77.0.0/24 trust\n",
                )?;
            }
            Setup::Mariadb => {
                let install = find("mariadb-install-db")?;
                run(Command::new(install)
                    .arg("--no-defaults")
                    .arg(format!("--datadir={}", dir.join("mariadb").display()))
                    .args(["--skip-test-db", "--auth-root-authentication-method=normal"])
                    .arg("--user=root"))?;
            }
        }
        server.boot()?;
        Ok(server)
    }

    /// The URL the apps connect to.
    pub fn app_url(&self) -> String {
        match self.setup {
            // A cut connection is noticed within seconds: libpq's keepalives and timeouts.
            Setup::Postgres => format!(
                "postgres://postgres@{DB_ADDRESS}:5432/postgres?connect_timeout=5\
                 &keepalives_idle=2&keepalives_interval=1&keepalives_count=3&tcp_user_timeout=8000"
            ),
            Setup::Mariadb => format!("mysql://root@{DB_ADDRESS}:3306/nemesis"),
        }
    }

    /// The URL the checker connects to, through the Unix socket.
    pub fn local_url(&self) -> String {
        let dir = self.dir.display();
        match self.setup {
            Setup::Postgres => format!("postgres://postgres@/postgres?host={dir}&port=5432"),
            Setup::Mariadb => {
                format!("mysql://root@localhost:3306/nemesis?unix_socket={dir}/mariadb.sock")
            }
        }
    }

    /// Stops the server the way a power cut would, then starts it again.
    pub fn crash_and_restart(&mut self) -> Result<(), String> {
        self.stop();
        self.boot()
    }

    fn boot(&mut self) -> Result<(), String> {
        match self.setup {
            Setup::Postgres => run(self
                .postgres_tool("pg_ctl")?
                .arg("-D")
                .arg(self.dir.join("data"))
                .arg("-l")
                .arg(self.dir.join("postgres.log"))
                .args(["-w", "-t", "60", "start"])),
            Setup::Mariadb => {
                let log = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.dir.join("mariadb.log"))
                    .map_err(|e| e.to_string())?;
                let mut cmd = Net::command(&self.ns, Path::new("/usr/sbin/mariadbd"));
                cmd.arg("--no-defaults")
                    .arg(format!("--datadir={}", self.dir.join("mariadb").display()))
                    .arg(format!(
                        "--socket={}",
                        self.dir.join("mariadb.sock").display()
                    ))
                    .arg(format!("--bind-address={DB_ADDRESS}"))
                    .args([
                        "--port=3306",
                        "--skip-grant-tables",
                        "--innodb-buffer-pool-size=32M",
                        "--max-connections=200",
                        "--user=root",
                    ])
                    .stdout(Stdio::null())
                    .stderr(log);
                self.child = Some(cmd.spawn().map_err(|e| format!("mariadbd: {e}"))?);
                let socket = self.dir.join("mariadb.sock");
                wait_for(
                    "mariadbd to take connections",
                    Duration::from_secs(60),
                    || {
                        Command::new("mariadb")
                            .arg(format!("--socket={}", socket.display()))
                            .args(["-u", "root", "-e", "CREATE DATABASE IF NOT EXISTS nemesis"])
                            .output()
                            .is_ok_and(|o| o.status.success())
                    },
                )
            }
        }
    }

    fn stop(&mut self) {
        match self.setup {
            Setup::Postgres => {
                if let Ok(mut pg_ctl) = self.postgres_tool("pg_ctl") {
                    let _ = pg_ctl
                        .arg("-D")
                        .arg(self.dir.join("data"))
                        .args(["-m", "immediate", "-w", "stop"])
                        .output();
                }
            }
            Setup::Mariadb => {
                if let Some(mut child) = self.child.take() {
                    let _ = child.kill();
                    let _ = child.wait();
                }
            }
        }
    }

    /// A PostgreSQL tool, run in the server's namespace as the `postgres` user.
    fn postgres_tool(&self, name: &str) -> Result<Command, String> {
        let bin = postgres_bin().ok_or("no PostgreSQL server programs (initdb, pg_ctl)")?;
        let mut cmd = Net::command(&self.ns, Path::new("runuser"));
        cmd.args(["-u", "postgres", "--"]).arg(bin.join(name));
        Ok(cmd)
    }

    /// The server's log, for a failed run.
    pub fn log(&self) -> String {
        let name = match self.setup {
            Setup::Postgres => "postgres.log",
            Setup::Mariadb => "mariadb.log",
        };
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The newest `/usr/lib/postgresql/<version>/bin` (Debian's layout).
fn postgres_bin() -> Option<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin)
}

/// `name` on the `PATH`.
fn find(name: &str) -> Result<PathBuf, String> {
    std::env::var_os("PATH")
        .and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|dir| dir.join(name))
                .find(|path| path.exists())
        })
        .ok_or_else(|| format!("{name} is not installed"))
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

fn run(cmd: &mut Command) -> Result<(), String> {
    let output = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(format!(
            "{cmd:?} exited with {}: {}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )),
    }
}

fn append(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("{}: {e}", path.display()))
}
