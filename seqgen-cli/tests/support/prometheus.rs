//! A real Prometheus for the monitoring tests (Debian's `prometheus` package, which `.ci/run`
//! installs): started on free ports in a temporary directory, scraping the targets it is given
//! every second, stopped when dropped. Ports and waits are the fault tests' own
//! (`seqgen/tests/suite/own_servers.rs`, included by path beside this file).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::own_servers::wait_until;

/// `program`'s path, or `None` (printed) when it is not installed; under `CI=true` missing is a
/// failure.
pub fn installed(program: &str) -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(program))
            .find(|path| path.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{program} is not installed (Debian's `prometheus` package; a failure under CI=true)"
        );
        println!("skipping: {program} is not installed (apt-get install prometheus)");
    }
    found
}

/// A port nobody listens on now, below the kernel's ephemeral range (`own_servers.rs`).
pub use crate::own_servers::free_port;

/// Kills the child when dropped, so that a failed assertion leaves no server behind.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A Prometheus server of the test's own.
pub struct Prometheus {
    _server: Running,
    web: u16,
}

impl Prometheus {
    /// Starts Prometheus in `dir`, scraping each `(job, port)` on 127.0.0.1 every second;
    /// `None` when it is not installed.
    pub fn scraping(dir: &Path, targets: &[(&str, u16)]) -> Option<Self> {
        let prometheus = installed("prometheus")?;
        let web = free_port();
        let mut config = String::from(
            "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n",
        );
        for (job, port) in targets {
            config.push_str(&format!(
                "  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
            ));
        }
        let path = dir.join("prometheus.yml");
        std::fs::write(&path, config).unwrap();
        let server = Command::new(prometheus)
            .arg(format!("--config.file={}", path.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{web}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Some(Prometheus {
            _server: Running(server),
            web,
        })
    }

    /// Asks `query` of the HTTP API until `found` picks something from the result's series,
    /// for at most a minute (`own_servers::wait_until`): what it picked, and how long that took.
    pub fn wait_for<T>(
        &self,
        query: &str,
        found: impl Fn(&[serde_json::Value]) -> Option<T>,
    ) -> (T, Duration) {
        let url = format!("http://127.0.0.1:{}/api/v1/query?query={query}", self.web);
        let mut picked = None;
        let waited = wait_until(
            &format!("Prometheus to answer {query}"),
            Duration::from_secs(60),
            || {
                picked = ureq::get(&url)
                    .call()
                    .ok()
                    .and_then(|response| response.into_json::<serde_json::Value>().ok())
                    .and_then(|answer| answer["data"]["result"].as_array().and_then(|s| found(s)));
                picked.is_some()
            },
        );
        (picked.expect("wait_until returned: picked"), waited)
    }
}
