//! The run's network, in namespaces of its own: a hub (`…hub`, holding only a bridge), one
//! per database node (`…n0`, `…n1`, …, at [`node_address`]) and one per app process (`…a0`,
//! `…a1`, …), each joined to the bridge by a veth pair. Nothing is added to the machine's own
//! namespace, so runs side by side never meet; namespaces a killed run left behind are removed
//! by the next. Faults are nftables rules and a qdisc in a namespace:
//!
//! - a partition drops everything between an app and the database nodes, both ways or one;
//!   an isolated node loses its peers (a Galera node cut off from the others, its clients
//!   still reaching it); a node can be cut off from some nodes only (a Patroni node from etcd,
//!   or from its peers) or from some apps only;
//! - loss drops a share of an app's packets at random (nftables' `numgen`);
//! - a slow link sends at 256 kbit/s through a token bucket (`tbf`), which queues the app's
//!   requests behind each other. This kernel has no `netem` (`CONFIG_NET_SCH_NETEM` is not
//!   set), so a fixed added latency cannot be made here.
//!
//! A TCP connection cut off silently gives up after about 10 s in an app's namespace
//! (`tcp_retries2`, `tcp_syn_retries` are per namespace), as a tuned app host would, instead of
//! the default 15 minutes.

use std::process::{Command, Output};

/// Database node `node`'s address on the bridge.
pub fn node_address(node: usize) -> String {
    format!("10.77.0.{}", 1 + node)
}

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
    nodes: usize,
    apps: usize,
}

impl Net {
    /// Creates the hub, `nodes` database namespaces and `apps` app namespaces, named after
    /// this process.
    pub fn create(nodes: usize, apps: usize) -> Result<Self, String> {
        remove_stale();
        let net = Net {
            prefix: format!("sgn{}", std::process::id()),
            nodes,
            apps,
        };
        let hub = net.hub();
        ip(&["netns", "add", &hub])?;
        in_ns(&hub, &["ip", "link", "add", "br0", "type", "bridge"])?;
        in_ns(&hub, &["ip", "link", "set", "br0", "up"])?;
        for node in 0..nodes {
            net.join(&net.node(node), &node_address(node), &format!("n{node}"))?;
        }
        for app in 0..apps {
            let ns = net.app(app);
            net.join(&ns, &format!("10.77.0.{}", 10 + app), &format!("a{app}"))?;
            for (name, value) in [("tcp_retries2", "5"), ("tcp_syn_retries", "2")] {
                in_ns(&ns, &["sysctl", "-q", &format!("net.ipv4.{name}={value}")])?;
            }
        }
        Ok(net)
    }

    /// Creates `ns`, joined to the hub's bridge as `address` (its end there named `port`).
    fn join(&self, ns: &str, address: &str, port: &str) -> Result<(), String> {
        let (hub, inside) = (self.hub(), format!("{}{port}", self.prefix));
        ip(&["netns", "add", ns])?;
        ip(&[
            "link", "add", &inside, "netns", ns, "type", "veth", "peer", "name", port, "netns",
            &hub,
        ])?;
        in_ns(ns, &["ip", "link", "set", &inside, "name", "eth0"])?;
        in_ns(
            ns,
            &["ip", "addr", "add", &format!("{address}/24"), "dev", "eth0"],
        )?;
        in_ns(ns, &["ip", "link", "set", "eth0", "up"])?;
        in_ns(ns, &["ip", "link", "set", "lo", "up"])?;
        in_ns(&hub, &["ip", "link", "set", port, "master", "br0"])?;
        in_ns(&hub, &["ip", "link", "set", port, "up"])?;
        in_ns(ns, &["nft", "add", "table", "inet", "nemesis"])
    }

    fn hub(&self) -> String {
        format!("{}hub", self.prefix)
    }

    /// Database node `node`'s namespace.
    pub fn node(&self, node: usize) -> String {
        format!("{}n{node}", self.prefix)
    }

    /// App `app`'s namespace.
    pub fn app(&self, app: usize) -> String {
        format!("{}a{app}", self.prefix)
    }

    /// Every database node's address, as an nftables set.
    fn nodes_set(&self) -> String {
        let all: Vec<String> = (0..self.nodes).map(node_address).collect();
        format!("{{ {} }}", all.join(", "))
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
        self.drop_between(&self.app(app), &self.nodes_set(), (out, into))
    }

    /// Cuts database node `node` off from the other nodes, both ways; apps still reach it.
    pub fn isolate(&self, node: usize) -> Result<(), String> {
        let others: Vec<usize> = (0..self.nodes).filter(|&n| n != node).collect();
        self.cut(node, &others)
    }

    /// Cuts database node `node` off from the nodes `from` (etcd, or its peers), both ways.
    pub fn cut(&self, node: usize, from: &[usize]) -> Result<(), String> {
        let from: Vec<String> = from.iter().map(|&n| node_address(n)).collect();
        let from = format!("{{ {} }}", from.join(", "));
        self.drop_between(&self.node(node), &from, (true, true))
    }

    /// Undoes [`isolate`](Self::isolate) and [`cut`](Self::cut).
    pub fn rejoin(&self, node: usize) -> Result<(), String> {
        heal_ns(&self.node(node))
    }

    /// Cuts database node `node` off from the even apps (0, 2, …), both ways.
    pub fn split(&self, node: usize) -> Result<(), String> {
        let address = format!("{{ {} }}", node_address(node));
        (0..self.apps)
            .step_by(2)
            .try_for_each(|app| self.drop_between(&self.app(app), &address, (true, true)))
    }

    /// Undoes [`split`](Self::split).
    pub fn unsplit(&self) -> Result<(), String> {
        (0..self.apps)
            .step_by(2)
            .try_for_each(|app| heal_ns(&self.app(app)))
    }

    /// Drops packets from `ns` to `peers` (`out`) and from them to `ns` (`into`).
    fn drop_between(&self, ns: &str, peers: &str, (out, into): (bool, bool)) -> Result<(), String> {
        let mut rules = String::new();
        if out {
            rules.push_str(&format!(
                "add chain inet nemesis out {{ type filter hook output priority 0; }}\n\
                 add rule inet nemesis out ip daddr {peers} drop\n"
            ));
        }
        if into {
            rules.push_str(&format!(
                "add chain inet nemesis in {{ type filter hook input priority 0; }}\n\
                 add rule inet nemesis in ip saddr {peers} drop\n"
            ));
        }
        nft(ns, &rules)
    }

    /// Drops `percent` of app `app`'s packets to and from the server, at random.
    pub fn lose(&self, app: usize, percent: u32) -> Result<(), String> {
        let peers = self.nodes_set();
        nft(
            &self.app(app),
            &format!(
                "add chain inet nemesis out {{ type filter hook output priority 0; }}\n\
                 add rule inet nemesis out ip daddr {peers} numgen random mod 100 < {percent} drop\n\
                 add chain inet nemesis in {{ type filter hook input priority 0; }}\n\
                 add rule inet nemesis in ip saddr {peers} numgen random mod 100 < {percent} drop\n"
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
        heal_ns(&self.app(app))
    }
}

/// Undoes every fault in namespace `ns`: its rules and its link's qdisc.
fn heal_ns(ns: &str) -> Result<(), String> {
    in_ns(ns, &["nft", "flush", "table", "inet", "nemesis"])?;
    for chain in ["in", "out"] {
        // Absent unless a fault added it.
        let _ = in_ns(ns, &["nft", "delete", "chain", "inet", "nemesis", chain]);
    }
    let _ = in_ns(ns, &["tc", "qdisc", "del", "dev", "eth0", "root"]);
    Ok(())
}

/// Loads nftables `rules` in namespace `ns`.
fn nft(ns: &str, rules: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new("ip")
        .args(["netns", "exec", ns, "nft", "-f", "-"])
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

/// Removes the namespaces of runs whose process is gone (killed before it could), and the
/// processes still in them (their servers and apps).
fn remove_stale() {
    let Ok(list) = Command::new("ip").args(["netns", "list"]).output() else {
        return;
    };
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let ns = line.split_whitespace().next().unwrap_or_default();
        let Some(rest) = ns.strip_prefix("sgn") else {
            continue;
        };
        let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
        if pid.is_empty() || std::path::Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        if let Ok(pids) = Command::new("ip").args(["netns", "pids", ns]).output() {
            for pid in String::from_utf8_lossy(&pids.stdout).split_whitespace() {
                let _ = Command::new("kill").args(["-KILL", pid]).status();
            }
        }
        let _ = ip(&["netns", "del", ns]);
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        let names = (0..self.apps).map(|a| self.app(a));
        for ns in names.chain((0..self.nodes).map(|n| self.node(n))) {
            let _ = ip(&["netns", "del", &ns]);
        }
        let _ = ip(&["netns", "del", &self.hub()]);
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
