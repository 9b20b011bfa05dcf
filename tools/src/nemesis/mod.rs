//! The nemesis: faults a kill does not make (partitions, lost packets, slow links, paused
//! processes, moved clocks) beside those it does (a killed app, a crashed server), on a
//! schedule drawn from a seed, under app processes that write down what they asked and what
//! they got; then a checker reads those histories and the tables (Jepsen's method, on one
//! machine: `net.rs` builds the network in namespaces).
//!
//! ```text
//! nemesis --setup postgres|mariadb|galera|patroni [--seed N] [--duration S] [--apps N] [--dir DIR]
//! ```
//!
//! It prints the schedule as it goes, then one JSON line: the faults injected by kind, and per
//! key the attempts, commits, unknown outcomes and everything wrong. It exits with 1 when the
//! checker found anything, or an app failed. Needs root (namespaces), nftables, and Debian's
//! `faketime`.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod apps;
pub mod check;
mod net;
pub mod schedule;
mod server;
mod tables;

use apps::{App, Kind};
use net::Net;
use schedule::Fault;
pub use server::{Setup, Target};

/// The nemesis's arguments.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "nemesis")]
pub struct Args {
    /// The servers to run against
    #[arg(long, value_enum)]
    pub setup: Setup,
    /// The schedule's seed (default: drawn, and printed)
    #[arg(long)]
    pub seed: Option<u64>,
    /// Seconds the apps run; faults stop at 85 % of it
    #[arg(long, default_value_t = 60.0)]
    pub duration: f64,
    /// App processes (their kinds take turns: batched, gapless, dated, deferred)
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(4..=20))]
    pub apps: u32,
    /// Where the server's data, the histories and the logs go (default: a temp dir, removed)
    #[arg(long)]
    pub dir: Option<std::path::PathBuf>,
}

/// What a run found, printed as one JSON line.
#[derive(Debug, serde::Serialize)]
pub struct Report {
    pub setup: Setup,
    pub seed: u64,
    pub seconds: f64,
    pub faults: BTreeMap<&'static str, usize>,
    pub keys: BTreeMap<String, check::Verdict>,
    /// Per key, the longest time (seconds) between two of its commits: how long a fault
    /// stopped it.
    pub longest_without_commit: BTreeMap<String, f64>,
    /// What the cluster had not mended a minute after the run (Patroni's replicas), if
    /// anything: its own state, not a finding against seqgen.
    pub cluster: Option<String>,
    /// Rows numbered after the run, which no follower had numbered yet.
    pub numbered_at_end: u64,
    pub app_failures: Vec<String>,
}

impl Report {
    /// Whether nothing went wrong.
    pub fn clean(&self) -> bool {
        self.app_failures.is_empty() && self.keys.values().all(|v| v.errors.is_empty())
    }
}

/// Runs the nemesis with command-line arguments (`--loadgen ARGS…` runs loadgen instead: the
/// app processes are this binary).
pub fn main_with(args: Vec<String>) -> ExitCode {
    if args.first().map(String::as_str) == Some("--loadgen") {
        crate::exit_at_once(crate::loadgen::status_with(args.into_iter().skip(1)));
    }
    use clap::Parser;
    let args = match Args::try_parse_from(std::iter::once("nemesis".to_owned()).chain(args)) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    match run(&args) {
        Ok(report) => {
            println!(
                "{}",
                serde_json::to_string(&report).expect("a report serializes")
            );
            match report.clean() {
                true => ExitCode::SUCCESS,
                false => ExitCode::FAILURE,
            }
        }
        Err(e) => {
            eprintln!("nemesis: {e}");
            ExitCode::FAILURE
        }
    }
}

/// One run: the network and server set up, the apps started, the schedule played, everything
/// healed, the apps waited for, the histories and tables checked.
pub fn run(args: &Args) -> Result<Report, String> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let apps = args.apps as usize;
    let clocked: Vec<usize> = (0..apps).filter(|&i| Kind::of(i) == Kind::Dated).collect();
    let steps = schedule::draw(seed, args.duration, args.setup, apps, &clocked);
    eprintln!(
        "nemesis: setup {:?}, seed {seed}, {} s, {apps} apps, {} faults (rerun with --seed {seed}):",
        args.setup,
        args.duration,
        steps.len()
    );
    for step in &steps {
        eprintln!("  {step}");
    }
    let temp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = args.dir.clone().unwrap_or_else(|| temp.path().to_owned());
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // The servers run as their own users (`postgres`, `mysql`), under this directory.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755))
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let net = Net::create(args.setup.nodes(), apps)?;
    let mut server = server::Server::start(args.setup, &net, &dir)?;
    let mut apps: Vec<App> = (0..apps)
        .map(|i| App::new(i, net.app(i), &dir, args.setup == Setup::Galera))
        .collect::<Result<_, _>>()?;
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(args.duration);
    for app in &mut apps {
        app.start(&server.app_url(app.turn()), deadline)?;
    }
    let mut faults = BTreeMap::new();
    for step in &steps {
        sleep_until(started, step.at);
        // A fault on "the leader" falls on the node that leads now, for all its length.
        let fault = step.fault.on(|target| server.resolve(target));
        match fault == step.fault {
            true => eprintln!("  {step}"),
            false => eprintln!("  {step} ({fault})"),
        }
        inject(fault, &net, &mut server, &mut apps, args.setup)?;
        sleep_until(started, step.at + step.hold);
        heal(fault, &net, &mut server, &mut apps, deadline)?;
        *faults.entry(step.fault.kind()).or_insert(0) += 1;
    }
    // Every app ends by its deadline, or soon after a stall; one that does not is stuck.
    let give_up = deadline + Duration::from_secs(120);
    while apps.iter_mut().any(App::running) && Instant::now() < give_up {
        std::thread::sleep(Duration::from_millis(200));
    }
    let mut app_failures = Vec::new();
    for app in &mut apps {
        if app.running() {
            app_failures.push(format!(
                "app{} still running 120 s after its deadline",
                app.index
            ));
            app.signal("KILL")?;
        }
        app_failures.append(&mut app.failures);
    }
    let cluster = server.wait_healed()?;
    // Rows committed after the followers' last round (they stop with their apps) are numbered
    // now, as a follower started later would.
    // Refused, it is a finding of the deferred key's (a number already in the table).
    let local_url = server.local_url()?;
    let (numbered_at_end, unnumbered) = match tables::number_the_rest(&local_url) {
        Ok(n) => (n, None),
        Err(e) => (
            0,
            Some(format!("numbering the rows left after the run failed: {e}")),
        ),
    };
    let tables = tables::read(&local_url)?;
    let mut keys = BTreeMap::new();
    let mut longest_without_commit = BTreeMap::new();
    for kind in Kind::ALL {
        let key = kind.key();
        let mut attempts = Vec::new();
        for app in apps.iter().filter(|app| app.kind == kind) {
            let text = std::fs::read_to_string(&app.history).unwrap_or_default();
            attempts.extend(crate::history::read(&text)?);
        }
        let mut verdict = check::check(&key, &attempts, &tables);
        if let Some(longest) = crate::history::longest_without_commit(&attempts) {
            longest_without_commit.insert(key.rows.clone(), longest);
        }
        if key.deferred {
            verdict.errors.extend(unnumbered.clone());
        }
        keys.insert(key.rows.clone(), verdict);
    }
    let report = Report {
        setup: args.setup,
        seed,
        seconds: started.elapsed().as_secs_f64(),
        faults,
        keys,
        longest_without_commit,
        cluster,
        numbered_at_end,
        app_failures,
    };
    if !report.clean() {
        eprintln!("nemesis: the servers' logs end:\n{}", server.logs());
    }
    Ok(report)
}

fn inject(
    fault: Fault,
    net: &Net,
    server: &mut server::Server,
    apps: &mut [App],
    setup: Setup,
) -> Result<(), String> {
    match fault {
        Fault::Partition(app, way) => net.partition(app, way),
        Fault::Loss(app, percent) => net.lose(app, percent),
        Fault::Slow(app) => net.slow(app),
        Fault::Pause(app) => apps[app].signal("STOP"),
        Fault::Clock(app, seconds) => apps[app].set_clock(seconds),
        Fault::Kill(app) => apps[app].signal("KILL"),
        // Stopped now, started again when the fault ends.
        Fault::Crash(target) => server.crash(node(target)),
        Fault::Isolate(target) => net.isolate(node(target)),
        Fault::CutFromDcs(target) => net.cut(node(target), setup.dcs().as_slice()),
        Fault::CutFromPeers(target) => {
            let peers: Vec<usize> = (0..setup.database_nodes())
                .filter(|&n| n != node(target))
                .collect();
            net.cut(node(target), &peers)
        }
        Fault::Split(target) => net.split(node(target)),
    }
}

fn heal(
    fault: Fault,
    net: &Net,
    server: &mut server::Server,
    apps: &mut [App],
    deadline: Instant,
) -> Result<(), String> {
    match fault {
        Fault::Partition(app, _) | Fault::Loss(app, _) | Fault::Slow(app) => net.heal(app),
        Fault::Pause(app) => apps[app].signal("CONT"),
        Fault::Clock(app, _) => apps[app].set_clock(0),
        Fault::Kill(app) => {
            let url = server.app_url(apps[app].turn());
            apps[app].start(&url, deadline)
        }
        Fault::Crash(target) => server.restart(node(target)),
        Fault::Isolate(target) | Fault::CutFromDcs(target) | Fault::CutFromPeers(target) => {
            net.rejoin(node(target))
        }
        Fault::Split(_) => net.unsplit(),
    }
}

/// A fault's node, once [`Fault::on`] named it.
fn node(target: Target) -> usize {
    match target {
        Target::Node(node) => node,
        Target::Leader => unreachable!("a fault's leader is named when it begins (Fault::on)"),
    }
}

fn sleep_until(started: Instant, seconds: f64) {
    let at = started + Duration::from_secs_f64(seconds);
    std::thread::sleep(at.saturating_duration_since(Instant::now()));
}
