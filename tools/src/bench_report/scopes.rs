//! The active-scopes series of `--report scaling`: 1 to 1,000,000 scopes of one key, served
//! round-robin by `THREADS` threads through one `Generator::new()`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::stats::KeyStats;
use diesel_seqgen::{Generator, Spec};
use serde::Serialize;

use super::rounds::{on_threads, Measured, THREADS};
use super::{Args, BenchConnection, BoxError};

/// The first scopes a round touches once before it is timed: the warm-up of a real service,
/// bounded (a million first IDs would take minutes of reservations).
const WARM_SCOPES: usize = 20_000;

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
    let ramp = args.ramp_seconds.unwrap_or(args.seconds);
    let mut rounds: Vec<Vec<ScopeRound>> = args.scopes.iter().map(|_| Vec::new()).collect();
    for round in 0..args.rounds {
        for (i, &scopes) in args.scopes.iter().enumerate() {
            let key = format!("scaling_{scopes}_{round}_{}", std::process::id());
            let timeline = args.timeline.then(|| Timeline::new(&key));
            let round = scope_round(pool, &key, scopes, ramp, args.seconds, timeline.as_ref());
            rounds[i].push(round?);
        }
    }
    let points: Vec<ScopePoint> = args
        .scopes
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
         `Generator::new()` (median and range of {} rounds of {} s, each after {ramp} s untimed)\n",
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
            // A few scopes' states are smaller than the pages resident memory counts in.
            if p.scopes < 10_000 {
                "–".to_owned()
            } else {
                p.bytes_per_scope.to_string()
            },
            p.numbers_held
        );
    }
    Ok(points)
}

/// One round: a new generator and key; the first `WARM_SCOPES` scopes touched once (timed as
/// first IDs), then `ramp` seconds of round-robin by `THREADS` threads untimed and `seconds`
/// timed.
fn scope_round<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    key: &str,
    scopes: usize,
    ramp: f64,
    seconds: f64,
    timeline: Option<&Timeline>,
) -> Result<ScopeRound, BoxError> {
    let spec = Spec::builder(key)
        .prefix("S")
        .date("")
        .pad(12)
        .scoped()
        .build()?;
    let generator = Generator::new();
    let warm = scopes.min(WARM_SCOPES);
    // Memory is read after half the scopes and after all: the second half's share is what a
    // scope costs, without what the first calls of a thread cost (its allocator's arena).
    let started = Instant::now();
    let half = warm / 2;
    first_ids(pool, &generator, &spec, 0..half)?;
    let resident_half = resident_bytes();
    first_ids(pool, &generator, &spec, half..warm)?;
    let first_id_ms = started.elapsed().as_secs_f64() * 1e3 * THREADS as f64 / warm as f64;
    let bytes_per_scope =
        resident_bytes().saturating_sub(resident_half) as f64 / (warm - half).max(1) as f64;
    // Untimed, for the blocks to grow to each scope's demand: the steady state is what is
    // measured (MariaDB at 10,000 scopes takes about 50 s to reach it).
    let ramp = round_robin(pool, &generator, &spec, scopes, ramp, timeline)?;
    let reservations_before = generator.reservations();
    let started = Instant::now();
    let ids = round_robin(pool, &generator, &spec, scopes, seconds, timeline)?;
    let elapsed = started.elapsed().as_secs_f64();
    let ids = ids.max(1) as f64;
    let reservations = (generator.reservations() - reservations_before) as f64;
    // What the generator holds now, unserved: reserved, less the IDs this round took and what
    // went back or was dropped.
    let served = warm as u64 + ramp + ids as u64;
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

/// The first ID of each scope in `scopes`, on `THREADS` threads.
fn first_ids<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    generator: &Generator,
    spec: &Spec,
    scopes: std::ops::Range<usize>,
) -> Result<(), BoxError> {
    on_threads(pool, |conn, thread| {
        for scope in scopes.clone().skip(thread).step_by(THREADS) {
            generator.next_id(conn, spec.scope(&scope.to_string()))?;
        }
        Ok(())
    })
}

/// Serves `scopes` scopes of `spec` round-robin on `THREADS` threads for `seconds`; the IDs
/// taken.
fn round_robin<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    generator: &Generator,
    spec: &Spec,
    scopes: usize,
    seconds: f64,
    timeline: Option<&Timeline>,
) -> Result<u64, BoxError> {
    let (ids, stop) = (AtomicU64::new(0), AtomicBool::new(false));
    std::thread::scope(|s| -> Result<(), BoxError> {
        let timer = s.spawn(|| {
            let until = Instant::now() + Duration::from_secs_f64(seconds);
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                std::thread::sleep(left.min(Timeline::EVERY));
                if let Some(timeline) = timeline {
                    timeline.print(generator);
                }
            }
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
    Ok(ids.load(Ordering::Relaxed))
}
/// `--timeline`: what a round's generator did since the last line, printed at most every
/// [`Timeline::EVERY`].
struct Timeline {
    key: String,
    started: Instant,
    last: std::sync::Mutex<(Instant, KeyStats)>,
}

impl Timeline {
    const EVERY: Duration = Duration::from_secs(5);

    fn new(key: &str) -> Self {
        println!("\n{key}: s, IDs, reservations per 1,000 IDs, mean block, mean reservation ms, numbers dropped, retries, conflicts");
        let now = Instant::now();
        Timeline {
            key: key.to_owned(),
            started: now,
            last: std::sync::Mutex::new((now, KeyStats::default())),
        }
    }

    fn print(&self, generator: &Generator) {
        let mut last = self
            .last
            .lock()
            .expect("the timeline's lock is not poisoned");
        let now = Instant::now();
        if now.duration_since(last.0) < Self::EVERY {
            return;
        }
        let Some(stats) = generator.stats().into_iter().find(|s| s.key == self.key) else {
            return;
        };
        let was = &last.1;
        let reservations = stats.reservations - was.reservations;
        // The first IDs of a block are served by the reservation that took it.
        let ids = stats.served_from_memory - was.served_from_memory + reservations;
        let timed = stats.reservation_time.count - was.reservation_time.count;
        let took = stats.reservation_time.total - was.reservation_time.total;
        println!(
            "{:.0}, {ids}, {:.1}, {:.0}, {:.2}, {}, {}, {}",
            now.duration_since(self.started).as_secs_f64(),
            reservations as f64 * 1000.0 / ids.max(1) as f64,
            (stats.numbers_reserved - was.numbers_reserved) as f64 / reservations.max(1) as f64,
            took.as_secs_f64() * 1e3 / timed.max(1) as f64,
            stats.numbers_abandoned - was.numbers_abandoned,
            stats.retries - was.retries,
            stats.conflicts - was.conflicts,
        );
        *last = (now, stats);
    }
}

/// This process's resident memory, in bytes (Linux's `/proc/self/statm`; 0 elsewhere).
fn resident_bytes() -> u64 {
    let pages = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|statm| statm.split_whitespace().nth(1)?.parse::<u64>().ok())
        .unwrap_or(0);
    pages * 4096
}
