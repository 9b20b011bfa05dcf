//! The processes series of `--report scaling`: 1 to 16 loadgen processes (the release build
//! beside this one) on one key, 4 threads each, alternated round by round: IDs/s in all,
//! reservations/s on the key's row, and the worst process's p99 and p99.9 of `next_id`.

use std::process::{Command, Stdio};

use serde::Serialize;

use super::rounds::Measured;
use super::{Args, BoxError};

/// The numbers of processes measured.
pub(super) const PROCESSES: [usize; 5] = [1, 2, 4, 8, 16];
/// Threads per process.
const THREADS: usize = 4;

/// One median point of the processes series, with the range of its rounds.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessPoint {
    pub processes: usize,
    pub ids_per_second: Measured,
    pub reservations_per_second: Measured,
    pub p99_us: Measured,
    pub p999_us: Measured,
}

/// What one loadgen process printed.
#[derive(serde::Deserialize)]
struct Report {
    ids: u64,
    seconds: f64,
    reservations: u64,
    p99_us: u64,
    p999_us: u64,
}

/// The series on `url`.
pub(super) fn processes(
    url: &str,
    args: &Args,
    backend: &str,
) -> Result<Vec<ProcessPoint>, BoxError> {
    let loadgen = std::env::current_exe()?.with_file_name("loadgen");
    if !loadgen.exists() {
        return Err(format!(
            "{} is missing: build it beside bench-report",
            loadgen.display()
        )
        .into());
    }
    let mut rounds: Vec<Vec<[f64; 4]>> = PROCESSES.iter().map(|_| Vec::new()).collect();
    for round in 0..args.rounds {
        for (i, &processes) in PROCESSES.iter().enumerate() {
            let key = format!("scaling_procs_{processes}_{round}_{}", std::process::id());
            let seconds = args.seconds.max(1.0).to_string();
            let threads = THREADS.to_string();
            let children = (0..processes)
                .map(|_| {
                    Command::new(&loadgen)
                        .args(["--url", url, "--key", &key, "--threads", &threads])
                        .args(["--seconds", &seconds])
                        .stdout(Stdio::piped())
                        .spawn()
                })
                .collect::<Result<Vec<_>, _>>()?;
            let mut reports = Vec::new();
            for child in children {
                let output = child.wait_with_output()?;
                if !output.status.success() {
                    return Err(format!("loadgen exited with {}", output.status).into());
                }
                let line = String::from_utf8(output.stdout)?;
                reports.push(serde_json::from_str::<Report>(line.trim())?);
            }
            let seconds = reports.iter().map(|r| r.seconds).fold(0.0, f64::max);
            rounds[i].push([
                reports.iter().map(|r| r.ids).sum::<u64>() as f64 / seconds,
                reports.iter().map(|r| r.reservations).sum::<u64>() as f64 / seconds,
                reports.iter().map(|r| r.p99_us).max().unwrap_or(0) as f64,
                reports.iter().map(|r| r.p999_us).max().unwrap_or(0) as f64,
            ]);
        }
    }
    let points: Vec<ProcessPoint> = PROCESSES
        .iter()
        .zip(rounds)
        .map(|(&processes, rounds)| {
            let of = |i: usize| Measured::of(rounds.iter().map(|r| r[i]).collect());
            ProcessPoint {
                processes,
                ids_per_second: of(0),
                reservations_per_second: of(1),
                p99_us: of(2),
                p999_us: of(3),
            }
        })
        .collect();
    println!(
        "\n## {backend}: loadgen processes on one key, {THREADS} threads each (median and range \
         of {} rounds of {} s)\n",
        args.rounds,
        args.seconds.max(1.0)
    );
    println!("| processes | IDs/s in all | reservations/s on the key's row | p99 of next_id, µs | p99.9, µs |");
    println!("|---|---|---|---|---|");
    for p in &points {
        println!(
            "| {} | {} | {} | {} | {} |",
            p.processes,
            p.ids_per_second,
            p.reservations_per_second,
            whole_micros(&p.p99_us),
            whole_micros(&p.p999_us)
        );
    }
    Ok(points)
}

/// A latency loadgen reports in whole microseconds: 0 is under one.
fn whole_micros(m: &Measured) -> String {
    if m.max < 1.0 {
        "< 1".to_owned()
    } else {
        m.to_string()
    }
}
