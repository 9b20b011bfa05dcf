//! The faults a run injects, drawn from a seed: the same seed, duration and apps give the same
//! schedule, printed line by line, so a failure reruns exactly (as far as the machine's timing
//! allows).

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::net::Way;
use super::server::{Setup, Target};

/// One fault, held for a while and then undone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// App `app` cut off from the server, `Way`.
    Partition(usize, Way),
    /// A share (percent) of app `app`'s packets lost.
    Loss(usize, u32),
    /// App `app`'s link slowed down.
    Slow(usize),
    /// App `app`'s process stopped (SIGSTOP) and resumed (SIGCONT) when the fault ends: a stall
    /// while it holds a block, a row lock or a transaction.
    Pause(usize),
    /// App `app`'s clock moved by this many seconds (back when negative), then back to true.
    Clock(usize, i64),
    /// App `app`'s process killed (SIGKILL) and started again when the fault ends.
    Kill(usize),
    /// A database node stopped as by a power cut, and started again when the fault ends.
    Crash(Target),
    /// A database node cut off from the other nodes (a Galera node alone, the others a
    /// majority; a Patroni node from etcd and its peers), its clients still reaching it.
    Isolate(Target),
    /// A Patroni node cut off from etcd alone: a leader that cannot renew its key but still
    /// streams to its standbys and takes writes.
    CutFromDcs(Target),
    /// A Patroni node cut off from the other database nodes alone: a leader whose synchronous
    /// standby no longer answers, still holding its key in etcd.
    CutFromPeers(Target),
    /// A database node cut off from half the apps (the even ones), both ways.
    Split(Target),
}

impl Fault {
    /// Its kind, for the report's counts.
    pub fn kind(self) -> &'static str {
        match self {
            Fault::Partition(_, Way::Both) => "partition",
            Fault::Partition(..) => "one-way partition",
            Fault::Loss(..) => "loss",
            Fault::Slow(_) => "slow link",
            Fault::Pause(_) => "pause",
            Fault::Clock(..) => "clock jump",
            Fault::Kill(_) => "kill",
            Fault::Crash(_) => "server crash",
            Fault::Isolate(_) => "node isolated",
            Fault::CutFromDcs(_) => "node cut from etcd",
            Fault::CutFromPeers(_) => "node cut from its peers",
            Fault::Split(_) => "node cut from some apps",
        }
    }

    /// The same fault, its target named by `resolve` (the leader's index, when it begins).
    pub fn on(self, resolve: impl FnOnce(Target) -> usize) -> Fault {
        let node = |target| Target::Node(resolve(target));
        match self {
            Fault::Crash(target) => Fault::Crash(node(target)),
            Fault::Isolate(target) => Fault::Isolate(node(target)),
            Fault::CutFromDcs(target) => Fault::CutFromDcs(node(target)),
            Fault::CutFromPeers(target) => Fault::CutFromPeers(node(target)),
            Fault::Split(target) => Fault::Split(node(target)),
            other => other,
        }
    }
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::Partition(app, way) => write!(f, "partition app{app} {way:?}"),
            Fault::Loss(app, percent) => write!(f, "loss app{app} {percent}%"),
            Fault::Slow(app) => write!(f, "slow link app{app}"),
            Fault::Pause(app) => write!(f, "pause app{app}"),
            Fault::Clock(app, seconds) => write!(f, "clock app{app} {seconds:+}s"),
            Fault::Kill(app) => write!(f, "kill app{app}"),
            Fault::Crash(node) => write!(f, "crash {node}"),
            Fault::Isolate(node) => write!(f, "isolate {node} from the other nodes"),
            Fault::CutFromDcs(node) => write!(f, "cut {node} from etcd"),
            Fault::CutFromPeers(node) => write!(f, "cut {node} from the other database nodes"),
            Fault::Split(node) => write!(f, "cut {node} from the even apps"),
        }
    }
}

/// A fault at a time into the run, held for a while.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Step {
    /// Seconds after the start.
    pub at: f64,
    pub fault: Fault,
    /// Seconds it lasts.
    pub hold: f64,
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "t={:6.1}s  {} for {:.1}s",
            self.at, self.fault, self.hold
        )
    }
}

/// The schedule of a run of `seconds` of `setup` over `apps` apps: one fault at a time, a
/// quiet spell between two, none in the last 15 % (the apps finish on a healed network), and
/// at least one of each kind when the run is long enough to hold them (30 s is; Galera's
/// isolated node needs 35 s; Patroni's four node faults up to 120 s, 80 s on seed 59).
/// Clocks move on the `clocked` apps only (not empty); with more than one database node, one
/// may be isolated; under Patroni, a node (the leader two times in three) may also be cut
/// from etcd, from its peers or from some apps, and an isolation or a cut from etcd lasts
/// 6–20 s: past the leader key's 10 s, so that a standby takes over while the old leader
/// still answers some apps.
pub fn draw(seed: u64, seconds: f64, setup: Setup, apps: usize, clocked: &[usize]) -> Vec<Step> {
    let nodes = setup.database_nodes();
    let patroni = setup == Setup::Patroni;
    let kinds = match (patroni, nodes > 1) {
        (true, _) => KINDS + 4,
        (false, true) => KINDS + 1,
        (false, false) => KINDS,
    };
    let mut rng = StdRng::seed_from_u64(seed);
    let end = seconds * 0.85;
    let mut steps = Vec::new();
    let mut at = 2.0;
    let mut turn = 0usize;
    let scale = (seconds / 300.0).clamp(0.1, 1.0);
    while at < end {
        // Round robin over the kinds first, so that a short run meets each; then at random.
        let kind = match turn < kinds {
            true => turn,
            false => rng.random_range(0..kinds),
        };
        turn += 1;
        let app = rng.random_range(0..apps);
        let fault = match kind {
            0 => Fault::Partition(app, Way::Both),
            1 => Fault::Partition(
                app,
                match rng.random_bool(0.5) {
                    true => Way::AppToServer,
                    false => Way::ServerToApp,
                },
            ),
            2 => Fault::Loss(app, rng.random_range(5..=40)),
            3 => Fault::Slow(app),
            4 => Fault::Pause(app),
            5 => {
                // On an app whose IDs print the hour: the one kind a clock decides anything for.
                let dated = clocked[rng.random_range(0..clocked.len())];
                let hours = rng.random_range(1..=6i64);
                let sign = if rng.random_bool(0.5) { 1 } else { -1 };
                Fault::Clock(dated, hours * 3600 * sign)
            }
            6 => Fault::Kill(app),
            7 => Fault::Crash(target(&mut rng, nodes, patroni)),
            8 => Fault::Isolate(target(&mut rng, nodes, patroni)),
            9 => Fault::CutFromDcs(target(&mut rng, nodes, patroni)),
            10 => Fault::CutFromPeers(target(&mut rng, nodes, patroni)),
            _ => Fault::Split(target(&mut rng, nodes, patroni)),
        };
        // Partitions and pauses up to 20 s in a run of 5 minutes or more: past the apps' TCP
        // timeouts (about 10 s), so that some connections are given up for dead while their
        // server still holds their work. Shorter runs hold each fault for less, to meet them all,
        // but for a Patroni leader's isolation, which outlasts its key whatever the run's length.
        let hold: f64 = match fault {
            Fault::Isolate(_) | Fault::CutFromDcs(_) if patroni => rng.random_range(6.0..20.0),
            Fault::Crash(_) | Fault::Kill(_) => rng.random_range(0.5..2.0),
            Fault::Partition(..)
            | Fault::Pause(_)
            | Fault::Isolate(_)
            | Fault::CutFromPeers(_)
            | Fault::Split(_) => rng.random_range(1.0..1.0 + 19.0 * scale),
            _ => rng.random_range(1.0..1.0 + 7.0 * scale),
        };
        let hold = hold.min((end - at).max(0.5));
        steps.push(Step { at, fault, hold });
        at += hold + rng.random_range(1.0..1.0 + 3.0 * scale);
    }
    steps
}

/// How many kinds [`draw`] picks from with one database node (with more: one more, isolating
/// a node; under Patroni, four more).
const KINDS: usize = 8;

/// A node fault's target: with one node, it; under Patroni, the leader two times in three;
/// else a node at random.
fn target(rng: &mut StdRng, nodes: usize, patroni: bool) -> Target {
    if patroni && rng.random_bool(2.0 / 3.0) {
        return Target::Leader;
    }
    Target::Node(rng.random_range(0..nodes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_gives_one_schedule() {
        let a = draw(7, 120.0, Setup::Postgres, 3, &[2]);
        assert_eq!(a, draw(7, 120.0, Setup::Postgres, 3, &[2]));
        assert_ne!(a, draw(8, 120.0, Setup::Postgres, 3, &[2]));
        // A short run meets every kind: 8 with one node, an isolated node with three, and
        // Patroni's four node faults in a longer one.
        for seed in 0..50 {
            for (setup, seconds, count) in [
                (Setup::Postgres, 45.0, 8),
                (Setup::Galera, 45.0, 9),
                (Setup::Patroni, 120.0, 12),
            ] {
                let kinds: std::collections::HashSet<_> = draw(seed, seconds, setup, 8, &[2, 6])
                    .iter()
                    .map(|s| s.fault.kind())
                    .collect();
                assert_eq!(kinds.len(), count, "seed {seed}: {kinds:?}");
            }
        }
        for pair in a.windows(2) {
            assert!(pair[0].at + pair[0].hold < pair[1].at, "one at a time");
        }
        let last = a.last().unwrap();
        assert!(last.at + last.hold <= 120.0 * 0.85 + 0.5);
    }
}
