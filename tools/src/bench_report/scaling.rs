//! `--report scaling`: how seqgen's cost grows along what its users have more of, each point a
//! median of rounds alternated with the other points, with its range:
//!
//! - **active scopes** (1, 100, 10,000, 1,000,000), served round-robin by 8 threads through one
//!   `Generator::new()`: ns per ID, reservations per 1,000 IDs, resident memory per scope kept,
//!   and the numbers held (lost if the process were killed there);
//! - **processes** (1, 2, 4, 8, 16) of loadgen on one key, 4 threads each: IDs/s in all,
//!   reservations/s on the key's row, the worst process's p99 and p99.9 of `next_id`;
//! - **a day's rollover** under 8 threads: the latency of the first IDs of the new period, and
//!   how long it stays above the old period's p99 (`rollover.rs`).
//!
//! The points go to `--out` as JSON, and are drawn there as SVG (`plots.rs`).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::{Generator, Spec};
use serde::Serialize;

use super::{Args, BenchConnection, BoxError};

/// The active scopes measured.
const SCOPES: [usize; 4] = [1, 100, 10_000, 1_000_000];
/// Threads serving them.
const THREADS: usize = 8;
/// The first scopes a round touches once before it is timed: the warm-up of a real service,
/// bounded (a million first IDs would take minutes of reservations).
const WARM_SCOPES: usize = 20_000;

/// Every series on `url`, and the simulation at the rate and reservation latency measured.
pub(super) fn run<C: BenchConnection>(
    args: &Args,
    url: &str,
    backend: &str,
) -> Result<super::plots::Scaling, BoxError> {
    let pool = Pool::builder()
        .max_size(THREADS as u32 + 2)
        .connection_customizer(Box::new(super::Setup))
        .build(ConnectionManager::<C>::new(url))?;
    diesel_seqgen::run_migrations(&mut *pool.get()?)?;
    let reservation_ms = reservation_ms(&pool)?;
    let scopes = scopes(&pool, args, backend)?;
    let processes = super::processes::processes(url, args, backend)?;
    let rollover = super::rollover::rollover(&pool, args, backend)?;
    // The rate of one process alone, and the row's service time, as the model's.
    let rate = processes[0].ids_per_second.median;
    let simulate = |instances| {
        crate::simulate::simulate(crate::simulate::Setup {
            instances,
            rate,
            reservation: reservation_ms / 1e3,
            seconds: 120.0,
        })
    };
    let simulated: Vec<_> = super::processes::PROCESSES
        .iter()
        .map(|&n| simulate(n))
        .collect();
    let simulated_at_scale: Vec<_> = [10, 30, 100, 300, 1_000, 3_000, 10_000]
        .into_iter()
        .map(simulate)
        .collect();
    println!(
        "\n## {backend}: the simulation at {rate:.0} IDs/s per instance, {reservation_ms:.2} ms a reservation\n"
    );
    println!("| instances | IDs/s in all | reservations/s on the row | mean block | holes if all were killed |");
    println!("|---|---|---|---|---|");
    for o in simulated.iter().chain(&simulated_at_scale) {
        println!(
            "| {} | {:.0} | {:.0} | {:.0} | {:.0} |",
            o.instances, o.ids_per_second, o.reservations_per_second, o.mean_block, o.holes
        );
    }
    Ok(super::plots::Scaling {
        backend: backend.to_owned(),
        reservation_ms,
        scopes,
        processes,
        rollover,
        simulated,
        simulated_at_scale,
    })
}

/// One uncontended reservation, ms: the median of 200 blocks of one number on one connection.
fn reservation_ms<C: BenchConnection>(pool: &Pool<ConnectionManager<C>>) -> Result<f64, BoxError> {
    let key = format!("scaling_latency_{}", std::process::id());
    let spec = Spec::builder(key)
        .prefix("T")
        .date("")
        .pad(12)
        .batch(1)
        .build()?;
    let generator = Generator::builder().fixed_batch().build();
    let mut conn = pool.get()?;
    let mut times = Vec::new();
    for _ in 0..200 {
        let started = Instant::now();
        generator.next_id(&mut *conn, &spec)?;
        times.push(started.elapsed().as_secs_f64() * 1e3);
    }
    Ok(Measured::of(times).median)
}

/// One median point of the scopes series, with the range of its rounds.
#[derive(Debug, Clone, Serialize)]
pub struct ScopePoint {
    pub scopes: usize,
    pub ns_per_id: Measured,
    pub reservations_per_1000_ids: Measured,
    pub bytes_per_scope: Measured,
    pub numbers_held: Measured,
    pub first_id_ms: Measured,
}

/// A median and the range of the rounds it comes from.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Measured {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Measured {
    pub(super) fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        let median = values[values.len() / 2];
        Measured {
            median,
            min: values[0],
            max: values[values.len() - 1],
        }
    }
}

impl std::fmt::Display for Measured {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let figure = |v: f64| match v {
            v if v >= 100.0 => format!("{v:.0}"),
            v if v >= 1.0 => format!("{v:.1}"),
            v => format!("{v:.3}"),
        };
        write!(
            f,
            "{} ({}–{})",
            figure(self.median),
            figure(self.min),
            figure(self.max)
        )
    }
}

/// One round of one scopes point.
struct ScopeRound {
    ns_per_id: f64,
    reservations_per_1000_ids: f64,
    bytes_per_scope: f64,
    numbers_held: f64,
    first_id_ms: f64,
}

/// The scopes series: every point, `args.rounds` times, alternated.
pub(super) fn scopes<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    args: &Args,
    backend: &str,
) -> Result<Vec<ScopePoint>, BoxError> {
    let mut rounds: Vec<Vec<ScopeRound>> = SCOPES.iter().map(|_| Vec::new()).collect();
    for round in 0..args.rounds {
        for (i, &scopes) in SCOPES.iter().enumerate() {
            let key = format!("scaling_{scopes}_{round}_{}", std::process::id());
            rounds[i].push(scope_round(pool, &key, scopes, args.seconds)?);
        }
    }
    let points: Vec<ScopePoint> = SCOPES
        .iter()
        .zip(rounds)
        .map(|(&scopes, rounds)| {
            let of = |f: fn(&ScopeRound) -> f64| Measured::of(rounds.iter().map(f).collect());
            ScopePoint {
                scopes,
                ns_per_id: of(|r| r.ns_per_id),
                reservations_per_1000_ids: of(|r| r.reservations_per_1000_ids),
                bytes_per_scope: of(|r| r.bytes_per_scope),
                numbers_held: of(|r| r.numbers_held),
                first_id_ms: of(|r| r.first_id_ms),
            }
        })
        .collect();
    println!(
        "\n## {backend}: active scopes served round-robin by {THREADS} threads, one \
         `Generator::new()` (median and range of {} rounds of {} s)\n",
        args.rounds, args.seconds
    );
    println!("| scopes | first ID of a scope, ms | ns per ID | reservations per 1,000 IDs | bytes per scope kept | numbers held (lost if killed) |");
    println!("|---|---|---|---|---|---|");
    for p in &points {
        println!(
            "| {} | {} | {} | {} | {} | {} |",
            p.scopes,
            p.first_id_ms,
            p.ns_per_id,
            p.reservations_per_1000_ids,
            p.bytes_per_scope,
            p.numbers_held
        );
    }
    Ok(points)
}

/// One round: a new generator and key; the first `WARM_SCOPES` scopes touched once (timed as
/// first IDs), then `seconds` of round-robin by `THREADS` threads.
fn scope_round<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    key: &str,
    scopes: usize,
    seconds: f64,
) -> Result<ScopeRound, BoxError> {
    let spec = Spec::builder(key)
        .prefix("S")
        .date("")
        .pad(12)
        .scoped()
        .build()?;
    let generator = Generator::new();
    let resident_before = resident_bytes();
    let warm = scopes.min(WARM_SCOPES);
    let started = Instant::now();
    on_threads(pool, |conn, thread| {
        for scope in (thread..warm).step_by(THREADS) {
            generator.next_id(conn, spec.scope(&scope.to_string()))?;
        }
        Ok(())
    })?;
    let first_id_ms = started.elapsed().as_secs_f64() * 1e3 * THREADS as f64 / warm as f64;
    let kept = warm.min(65_536);
    let bytes_per_scope = resident_bytes().saturating_sub(resident_before) as f64 / kept as f64;
    let (reservations_before, ids) = (generator.reservations(), AtomicU64::new(0));
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|s| -> Result<(), BoxError> {
        let timer = s.spawn(|| {
            std::thread::sleep(Duration::from_secs_f64(seconds));
            stop.store(true, Ordering::Relaxed);
        });
        on_threads(pool, |conn, thread| {
            let mut scope = thread;
            let mut taken = 0;
            while !stop.load(Ordering::Relaxed) {
                generator.next_id(conn, spec.scope(&scope.to_string()))?;
                scope = (scope + THREADS) % scopes.max(1);
                taken += 1;
            }
            ids.fetch_add(taken, Ordering::Relaxed);
            Ok(())
        })?;
        timer.join().expect("the timer does not panic");
        Ok(())
    })?;
    let elapsed = started.elapsed().as_secs_f64();
    let ids = ids.load(Ordering::Relaxed).max(1) as f64;
    let reservations = (generator.reservations() - reservations_before) as f64;
    // What the generator holds now, unserved: reserved, less the IDs this round took and what
    // went back or was dropped.
    let served = warm as u64 + ids as u64;
    let numbers_held = generator.stats().iter().fold(0u64, |held, s| {
        held + s
            .numbers_reserved
            .saturating_sub(s.numbers_given_back + s.numbers_abandoned)
    });
    let numbers_held = numbers_held.saturating_sub(served);
    generator.release(&mut pool.get()?)?;
    Ok(ScopeRound {
        ns_per_id: elapsed * 1e9 * THREADS as f64 / ids,
        reservations_per_1000_ids: reservations * 1000.0 / ids,
        bytes_per_scope,
        numbers_held: numbers_held as f64,
        first_id_ms,
    })
}

/// Runs `work(conn, thread)` on `THREADS` threads, each with a pooled connection.
pub(super) fn on_threads<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    work: impl Fn(&mut C, usize) -> Result<(), BoxError> + Sync,
) -> Result<(), BoxError> {
    std::thread::scope(|s| {
        let threads: Vec<_> = (0..THREADS)
            .map(|thread| {
                let work = &work;
                s.spawn(move || -> Result<(), BoxError> {
                    let mut conn = pool.get()?;
                    work(&mut conn, thread)
                })
            })
            .collect();
        threads
            .into_iter()
            .try_for_each(|t| t.join().expect("a worker thread panicked"))
    })
}

/// This process's resident memory, in bytes (Linux's `/proc/self/statm`; 0 elsewhere).
fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    pages * 4096
}
