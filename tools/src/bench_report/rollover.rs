//! The rollover point of `--report scaling`: 8 threads take IDs of a daily key on a clock that
//! reaches midnight two seconds into the run (`OffsetClock`), each ID timed; the first IDs of
//! the new day wait for its first block. Reported per round: the p99 of the second before
//! midnight, the worst latency after it, and how long after midnight some IDs still took
//! longer than any of the second before (the end of the last 50 ms slice that had one).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chrono::{TimeDelta, Timelike, Utc};
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::clock::OffsetClock;
use diesel_seqgen::{Generator, Spec};
use serde::Serialize;

use super::rounds::{on_threads, Measured};
use super::{Args, BenchConnection, BoxError};

/// The rollover, median and range of the rounds.
#[derive(Debug, Clone, Serialize)]
pub struct RolloverPoint {
    pub p99_before_us: Measured,
    pub worst_after_us: Measured,
    pub spike_ms: Measured,
    /// The slowest ID of each 50 ms slice (µs) around midnight in the median round:
    /// milliseconds from midnight, and the value.
    pub timeline: Vec<(f64, f64)>,
}

const SLICE: Duration = Duration::from_millis(50);

/// The series on `pool`.
pub(super) fn rollover<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    args: &Args,
    backend: &str,
) -> Result<RolloverPoint, BoxError> {
    let mut rounds = Vec::new();
    for round in 0..args.rounds {
        rounds.push(rollover_round(pool, round)?);
    }
    rounds.sort_by(|a, b| a.2.total_cmp(&b.2));
    let median_timeline = rounds[rounds.len() / 2].3.clone();
    let point = RolloverPoint {
        p99_before_us: Measured::of(rounds.iter().map(|r| r.0).collect()),
        worst_after_us: Measured::of(rounds.iter().map(|r| r.1).collect()),
        spike_ms: Measured::of(rounds.iter().map(|r| r.2).collect()),
        timeline: median_timeline,
    };
    println!(
        "\n## {backend}: a day's rollover under 8 threads (median and range of {} rounds)\n",
        args.rounds
    );
    println!("| p99 the second before midnight, µs | worst latency after it, µs | IDs slower than any before it until, ms after midnight |");
    println!("|---|---|---|");
    println!(
        "| {} | {} | {} |",
        point.p99_before_us, point.worst_after_us, point.spike_ms
    );
    Ok(point)
}

/// One round's figures: the p99 before, the worst after, the spike's length in ms, and the
/// timeline of each slice's slowest ID.
type Round = (f64, f64, f64, Vec<(f64, f64)>);

/// One round.
fn rollover_round<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    round: u32,
) -> Result<Round, BoxError> {
    let spec = Spec::builder(format!("scaling_rollover_{round}_{}", std::process::id()))
        .prefix("R")
        .date("%Y%m%d")
        .pad(10)
        .build()?;
    // A clock at 23:59:58 now, so midnight comes two seconds in.
    let now = Utc::now();
    let to_midnight = 86_400 - i64::from(now.num_seconds_from_midnight());
    let offset =
        TimeDelta::seconds(to_midnight - 2) - TimeDelta::nanoseconds(i64::from(now.nanosecond()));
    let generator = Generator::builder().clock(OffsetClock(offset)).build();
    let started = Instant::now();
    let midnight = started + Duration::from_secs(2);
    let samples = Mutex::new(Vec::new());
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| -> Result<(), BoxError> {
        let timer = s.spawn(|| {
            std::thread::sleep(Duration::from_secs(4));
            stop.store(true, Ordering::Relaxed);
        });
        on_threads(pool, |conn, _| {
            let mut local = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let t0 = Instant::now();
                generator.next_id(conn, &spec)?;
                local.push((t0, t0.elapsed()));
            }
            samples
                .lock()
                .expect("no thread panics holding it")
                .extend(local);
            Ok(())
        })?;
        timer.join().expect("the timer does not panic");
        Ok(())
    })?;
    let samples = samples.into_inner().expect("no thread panicked holding it");
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let p99 = |mut v: Vec<f64>| -> f64 {
        v.sort_by(f64::total_cmp);
        v.get(v.len() * 99 / 100).copied().unwrap_or(0.0)
    };
    let before: Vec<f64> = samples
        .iter()
        .filter(|(at, _)| *at >= midnight - Duration::from_secs(1) && *at < midnight)
        .map(|(_, took)| micros(*took))
        .collect();
    let worst_before = before.iter().copied().fold(0.0, f64::max);
    let p99_before = p99(before);
    let worst_after = samples
        .iter()
        .filter(|(at, _)| *at >= midnight)
        .map(|(_, took)| micros(*took))
        .fold(0.0, f64::max);
    // The slowest ID of each 50 ms slice, from a second before midnight to the end.
    let mut timeline = Vec::new();
    let mut slice_start = midnight - Duration::from_secs(1);
    while slice_start < started + Duration::from_secs(4) {
        let slice: Vec<f64> = samples
            .iter()
            .filter(|(at, _)| *at >= slice_start && *at < slice_start + SLICE)
            .map(|(_, took)| micros(*took))
            .collect();
        let from_midnight = if slice_start >= midnight {
            (slice_start - midnight).as_secs_f64() * 1e3
        } else {
            -((midnight - slice_start).as_secs_f64() * 1e3)
        };
        if let Some(slowest) = slice.into_iter().reduce(f64::max) {
            timeline.push((from_midnight, slowest));
        }
        slice_start += SLICE;
    }
    // From midnight to the end of the last slice with an ID slower than any before it.
    let spike_ms = timeline
        .iter()
        .filter(|(ms, slowest)| *ms >= 0.0 && *slowest > worst_before)
        .map(|(ms, _)| ms + SLICE.as_secs_f64() * 1e3)
        .fold(0.0, f64::max);
    Ok((p99_before, worst_after, spike_ms, timeline))
}
