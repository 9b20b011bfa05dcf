//! The allocator's concurrency core, model-checked with loom: the key's window and lock, the
//! turn to reserve, the block reserved ahead on another thread, `release`, and a period that
//! ends, run by the real [`Engine`] over a fake database (`model_db.rs`: one counter per period
//! behind a lock, as a database row is). loom runs every interleaving of the threads up to a bound of
//! preemptions and fails on a deadlock (a caller left waiting for a turn that never ends).
//! After every interleaving the numbers handed out must be exactly `1..=n` per period once
//! the generator is released: none twice, none lost while the process lives. Run with
//! `SEQGEN_LOOM=1 cargo test --all-features -p diesel-seqgen --lib model_check -- --nocapture`;
//! `LOOM_MAX_PREEMPTIONS` (default 2 here) bounds the search, and CI runs the default.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{TimeDelta, TimeZone, Utc};
use loom::sync::Arc;

use super::model_db::{Conn, Db, Pool};
use super::{Engine, Settings};
use crate::clock::FixedClock;
use crate::driver::drive;
use crate::sync::loom_thread;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// A generator on a clock standing at 2026-11-24 10:00 UTC, with blocks of exactly the
/// spec's batch (the adaptive size depends on how long blocks last in real time, which
/// loom's replays must not: the model is about the threads, `batch.rs` tests the sizes),
/// and with the pool when `pool` is set.
fn generator(db: &Arc<Db>, pool: bool) -> (std::sync::Arc<FixedClock>, Engine) {
    let clock = std::sync::Arc::new(FixedClock::new(
        Utc.with_ymd_and_hms(2026, 11, 24, 10, 0, 0).unwrap(),
    ));
    let settings = Settings {
        clock: std::sync::Arc::clone(&clock) as _,
        pool: pool.then(|| std::sync::Arc::new(Pool(Arc::clone(db))) as _),
        batch: crate::batch::BatchPolicy::Fixed,
        ..Settings::default()
    };
    (clock, Engine::new(settings))
}

/// A daily spec with blocks of `batch`.
fn spec(batch: u32) -> std::sync::Arc<Spec> {
    std::sync::Arc::new(
        Spec::builder("model")
            .date("%d")
            .pad(4)
            .batch(batch)
            .build()
            .unwrap(),
    )
}

/// `n` IDs of `spec` as (period, number), taken one call at a time.
fn take(generator: &Engine, db: &Arc<Db>, spec: &Spec, n: usize) -> Vec<(String, u64)> {
    let mut got = Vec::new();
    for _ in 0..n {
        let mut conn = Conn(Arc::clone(db));
        drive(
            generator.take_on(&mut conn, spec.into(), 1, |period: &Period, numbers| {
                got.extend(numbers.map(|n| (period.text.clone(), n)));
                Ok(())
            }),
        )
        .unwrap();
    }
    got
}

/// Releases the generator, then checks that the numbers handed out are exactly `1..=n` in
/// each period, and that each period's counter ends at its `n`.
fn check_exact(generator: &Engine, db: &Arc<Db>, handed_out: Vec<(String, u64)>) {
    drive(generator.release_on(&mut Conn(Arc::clone(db)))).unwrap();
    let mut by_period: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for (period, number) in handed_out {
        by_period.entry(period).or_default().push(number);
    }
    for (period, mut numbers) in by_period {
        numbers.sort_unstable();
        let expected: Vec<u64> = (1..=numbers.len() as u64).collect();
        assert_eq!(numbers, expected, "period {period}: a number twice or lost");
        assert_eq!(db.counter(&period), numbers.len() as i64, "period {period}");
    }
}

/// Runs `model` under loom with the bound of preemptions, and prints how many interleavings
/// it explored.
fn explore(name: &str, model: impl Fn() + Sync + Send + 'static) {
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let mut builder = loom::model::Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(2);
    }
    let before = RUNS.load(Ordering::Relaxed);
    let model = std::sync::Arc::new(model);
    builder.check(move || {
        RUNS.fetch_add(1, Ordering::Relaxed);
        // On a thread of its own: the model's first thread has loom's small stack.
        let model = std::sync::Arc::clone(&model);
        loom_thread(move || model()).join().unwrap();
    });
    println!(
        "{name}: {} interleavings",
        RUNS.load(Ordering::Relaxed) - before
    );
}

/// Two threads empty blocks of 2 in turn: exactly one of them reserves each next block, the
/// other waits for it and serves from it.
#[test]
fn callers_share_the_turn_to_reserve() {
    explore("turn", || {
        let db = Arc::new(Db::default());
        let (_, generator) = generator(&db, false);
        let spec = spec(2);
        let other = {
            let (generator, db, spec) = (generator.clone(), Arc::clone(&db), spec.clone());
            loom_thread(move || take(&generator, &db, &spec, 1))
        };
        let mut handed_out = take(&generator, &db, &spec, 2);
        handed_out.extend(other.join().unwrap());
        check_exact(&generator, &db, handed_out);
    });
}

/// With a pool, the block after the first is reserved ahead on a thread of its own while the
/// caller goes on serving: the caller that empties the block waits for that reservation, the
/// spare is used before any later block, and `release` gives it back when it is left unused.
#[test]
fn the_block_reserved_ahead_is_used_or_given_back() {
    explore("ahead", || {
        let db = Arc::new(Db::default());
        let (_, generator) = generator(&db, true);
        let spec = spec(5);
        let handed_out = take(&generator, &db, &spec, 6);
        check_exact(&generator, &db, handed_out);
    });
}

/// `release` while another thread takes numbers: what it gives back is never served, and
/// what is served never goes back.
#[test]
fn release_while_serving() {
    explore("release", || {
        let db = Arc::new(Db::default());
        let (_, generator) = generator(&db, false);
        let spec = spec(2);
        // The first block is held before the race: `release` has something to give back.
        let mut handed_out = take(&generator, &db, &spec, 1);
        let taker = {
            let (generator, db, spec) = (generator.clone(), Arc::clone(&db), spec.clone());
            loom_thread(move || take(&generator, &db, &spec, 2))
        };
        drive(generator.release_on(&mut Conn(Arc::clone(&db)))).unwrap();
        handed_out.extend(taker.join().unwrap());
        check_exact(&generator, &db, handed_out);
    });
}

/// A day ends while another thread serves: numbers stay with the day they were reserved for,
/// and what the day left unused goes back to its counter.
#[test]
fn a_period_that_ends_leaves_nothing_stranded() {
    explore("period", || {
        let db = Arc::new(Db::default());
        let (clock, generator) = generator(&db, false);
        let spec = spec(3);
        let mut handed_out = take(&generator, &db, &spec, 1);
        let other = {
            let (generator, db, spec) = (generator.clone(), Arc::clone(&db), spec.clone());
            loom_thread(move || take(&generator, &db, &spec, 2))
        };
        clock.advance(TimeDelta::days(1));
        handed_out.extend(take(&generator, &db, &spec, 1));
        handed_out.extend(other.join().unwrap());
        check_exact(&generator, &db, handed_out);
    });
}
