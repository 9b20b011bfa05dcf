//! The run's network, in namespaces of its own: the database server's (`…db`, which holds a
//! bridge at [`DB_ADDRESS`]) and one per app process (`…a0`, `…a1`, …), each joined to the
//! bridge by a veth pair. Nothing is added to the machine's own namespace, so runs side by side
//! never meet. Faults are nftables rules and a qdisc in an app's namespace, on its one link to
//! the server:
//!
//! - a partition drops everything between the app and the server, both ways or one;
//! - loss drops a share of the app's packets at random (nftables' `numgen`);
//! - a slow link sends at 256 kbit/s through a token bucket (`tbf`), which queues the app's
//!   requests behind each other. This kernel has no `netem` (`CONFIG_NET_SCH_NETEM` is not
//!   set), so a fixed added latency cannot be made here.
//!
//! A TCP connection cut off silently gives up after about 10 s in an app's namespace
//! (`tcp_retries2`, `tcp_syn_retries` are per namespace), as a tuned app host would, instead of
//! the default 15 minutes.

use std::process::{Command, Output};

/// The server's address on the bridge.
pub const DB_ADDRESS: &str = "10.77.0.1";

/// Which way a partition drops packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Both ways.
    Both,
    /// The app's requests are lost; the server's packets still arrive.
    AppToServer,
    /// The server's answers are lost; the app's requests still arrive.
    ServerToApp,
}

/// The namespaces of one run, removed when dropped.
#[derive(Debug)]
pub struct Net {
    prefix: String,
    apps: usize,
}

impl Net {
    /// Creates the server's namespace and `apps` app namespaces, named after this process.
    pub fn create(apps: usize) -> Result<Self, String> {
        let net = Net {
            prefix: format!("sgn{}", std::process::id()),
            apps,
        };
        let db = net.db();
        ip(&["netns", "add", &db])?;
        in_ns(&db, &["ip", "link", "set", "lo", "up"])?;
        in_ns(&db, &["ip", "link", "add", "br0", "type", "bridge"])?;
        in_ns(
            &db,
            &[
                "ip",
                "addr",
                "add",
                &format!("{DB_ADDRESS}/24"),
                "dev",
                "br0",
            ],
        )?;
        in_ns(&db, &["ip", "link", "set", "br0", "up"])?;
        for app in 0..apps {
            let ns = net.app(app);
            let (inside, outside) = (format!("{}e{app}", net.prefix), format!("p{app}"));
            ip(&["netns", "add", &ns])?;
            ip(&[
                "link", "add", &inside, "netns", &ns, "type", "veth", "peer", "name", &outside,
                "netns", &db,
            ])?;
            in_ns(&ns, &["ip", "link", "set", &inside, "name", "eth0"])?;
            in_ns(
                &ns,
                &[
                    "ip",
                    "addr",
                    "add",
                    &format!("10.77.0.{}/24", 10 + app),
                    "dev",
                    "eth0",
                ],
            )?;
            in_ns(&ns, &["ip", "link", "set", "eth0", "up"])?;
            in_ns(&ns, &["ip", "link", "set", "lo", "up"])?;
            in_ns(&db, &["ip", "link", "set", &outside, "master", "br0"])?;
            in_ns(&db, &["ip", "link", "set", &outside, "up"])?;
            for (name, value) in [("tcp_retries2", "5"), ("tcp_syn_retries", "2")] {
                in_ns(&ns, &["sysctl", "-q", &format!("net.ipv4.{name}={value}")])?;
            }
            in_ns(&ns, &["nft", "add", "table", "inet", "nemesis"])?;
        }
        Ok(net)
    }

    /// The server's namespace.
    pub fn db(&self) -> String {
        format!("{}db", self.prefix)
    }

    /// App `app`'s namespace.
    pub fn app(&self, app: usize) -> String {
        format!("{}a{app}", self.prefix)
    }

    /// `program` run inside `ns`.
    pub fn command(ns: &str, program: &std::path::Path) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns]).arg(program);
        cmd
    }

    /// Cuts app `app` off from the server, `way`.
    pub fn partition(&self, app: usize, way: Way) -> Result<(), String> {
        let (out, into) = match way {
            Way::Both => (true, true),
            Way::AppToServer => (true, false),
            Way::ServerToApp => (false, true),
        };
        let mut rules = String::new();
        if out {
            rules.push_str(&format!(
                "add chain inet nemesis out {{ type filter hook output priority 0; }}\n\
                 add rule inet nemesis out ip daddr {DB_ADDRESS} drop\n"
            ));
        }
        if into {
            rules.push_str(&format!(
                "add chain inet nemesis in {{ type filter hook input priority 0; }}\n\
                 add rule inet nemesis in ip saddr {DB_ADDRESS} drop\n"
            ));
        }
        self.nft(app, &rules)
    }

    /// Drops `percent` of app `app`'s packets to and from the server, at random.
    pub fn lose(&self, app: usize, percent: u32) -> Result<(), String> {
        self.nft(
            app,
            &format!(
                "add chain inet nemesis out {{ type filter hook output priority 0; }}\n\
                 add rule inet nemesis out ip daddr {DB_ADDRESS} numgen random mod 100 < {percent} drop\n\
                 add chain inet nemesis in {{ type filter hook input priority 0; }}\n\
                 add rule inet nemesis in ip saddr {DB_ADDRESS} numgen random mod 100 < {percent} drop\n"
            ),
        )
    }

    /// Makes app `app`'s link slow: 256 kbit/s, requests queued behind each other.
    pub fn slow(&self, app: usize) -> Result<(), String> {
        in_ns(
            &self.app(app),
            &[
                "tc", "qdisc", "replace", "dev", "eth0", "root", "tbf", "rate", "256kbit", "burst",
                "4kb", "latency", "2s",
            ],
        )
    }

    /// Undoes every fault on app `app`'s link.
    pub fn heal(&self, app: usize) -> Result<(), String> {
        let ns = self.app(app);
        in_ns(&ns, &["nft", "flush", "table", "inet", "nemesis"])?;
        for chain in ["in", "out"] {
            // Absent unless a fault added it.
            let _ = run(Command::new("ip").args([
                "netns", "exec", &ns, "nft", "delete", "chain", "inet", "nemesis", chain,
            ]));
        }
        let _ = run(Command::new("ip").args([
            "netns", "exec", &ns, "tc", "qdisc", "del", "dev", "eth0", "root",
        ]));
        Ok(())
    }

    fn nft(&self, app: usize, rules: &str) -> Result<(), String> {
        use std::io::Write;
        let mut child = Command::new("ip")
            .args(["netns", "exec", &self.app(app), "nft", "-f", "-"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| format!("nft: {e}"))?;
        child
            .stdin
            .take()
            .expect("piped")
            .write_all(rules.as_bytes())
            .map_err(|e| format!("nft: {e}"))?;
        check(child.wait_with_output(), "nft -f")
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for app in 0..self.apps {
            let _ = ip(&["netns", "del", &self.app(app)]);
        }
        let _ = ip(&["netns", "del", &self.db()]);
    }
}

fn ip(args: &[&str]) -> Result<(), String> {
    run(Command::new("ip").args(args))
}

fn in_ns(ns: &str, args: &[&str]) -> Result<(), String> {
    run(Command::new("ip").args(["netns", "exec", ns]).args(args))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let what = format!("{cmd:?}");
    check(cmd.output(), &what)
}

fn check(output: std::io::Result<Output>, what: &str) -> Result<(), String> {
    let output = output.map_err(|e| format!("{what}: {e}"))?;
    match output.status.success() {
        true => Ok(()),
        false => Err(format!(
            "{what} exited with {}: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        )),
    }
}
