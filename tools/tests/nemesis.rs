//! The nemesis in CI: a short run per setup on a fixed seed, whose schedule meets every fault
//! (partitions both ways and one way, lost packets, a slow link, a paused app, a moved clock,
//! a killed app, a crashed server, on Galera a node cut off from its peers; under Patroni a
//! node, the leader mostly, cut off from everything but its apps, from etcd, from its peers or
//! from some apps), checked by its histories. Longer runs on random seeds:
//! `cargo run --release -p seqgen-tools --features postgres,mysql --bin nemesis -- --setup
//! postgres --duration 1800` (`BENCHMARKS.md`, "Reliability").

use std::process::Command;

/// Runs the nemesis binary on `setup`, seed 59, for `seconds`: its report, or why it failed.
/// The schedule meets every kind of fault in 30 s, Galera's isolated node in 35 s, and
/// Patroni's four node faults (two of them past the leader key's 10 s) in 80 s.
fn nemesis(setup: &str, seconds: &str) {
    // Network namespaces need root; CI runs as root, as every session's machine does.
    let uid = Command::new("id").arg("-u").output().expect("id -u");
    if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
        println!("skipped: the nemesis needs root (network namespaces)");
        return;
    }
    let output = Command::new(env!("CARGO_BIN_EXE_nemesis"))
        .args(["--setup", setup, "--seed", "59", "--duration", seconds])
        .output()
        .expect("the nemesis runs");
    let report = String::from_utf8_lossy(&output.stdout);
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{report}\n{log}");
    println!("{log}{report}");
    // Each key took numbers, through every door the apps use. Few on a busy machine: Galera's
    // gapless key committed 88 in 35 s beside a 30-minute run of the nemesis.
    let json: serde_json::Value = serde_json::from_str(report.trim()).expect("a JSON report");
    for key in ["batched", "gapless", "dated", "deferred"] {
        let verdict = &json["keys"][format!("nemesis_{key}")];
        assert!(verdict["committed"].as_u64() > Some(20), "{key}: {verdict}");
    }
    // The short schedule meets every kind of fault.
    for kind in [
        "\"partition\"",
        "one-way partition",
        "\"loss\"",
        "slow link",
        "pause",
        "clock jump",
        "kill",
        "server crash",
    ] {
        assert!(report.contains(kind), "no {kind} in {report}");
    }
    let nodes: &[&str] = match setup {
        "galera" => &["node isolated"],
        "patroni" => &[
            "node isolated",
            "node cut from etcd",
            "node cut from its peers",
            "node cut from some apps",
        ],
        _ => &[],
    };
    for kind in nodes {
        assert!(report.contains(kind), "no {kind} in {report}");
    }
}

#[test]
fn nemesis_on_postgres() {
    nemesis("postgres", "30");
}

#[test]
fn nemesis_on_mariadb() {
    nemesis("mariadb", "30");
}

#[test]
fn nemesis_on_galera() {
    nemesis("galera", "35");
}

#[test]
fn nemesis_on_patroni() {
    nemesis("patroni", "80");
}
