//! The allocator's concurrency core, model-checked with loom: the key's window and lock, the
//! turn to reserve, the block reserved ahead on another thread, `release`, and a period that
//! ends, run by the real [`Engine`] over a fake database (one counter per period behind a
//! lock, as a database row is). loom runs every interleaving of the threads up to a bound of
//! preemptions and fails on a deadlock (a caller left waiting for a turn that never ends).
//! After every interleaving the numbers handed out must be exactly `1..=n` per period once
//! the generator is released: none twice, none lost while the process lives. Run with
//! `SEQGEN_LOOM=1 cargo test --all-features -p diesel-seqgen --lib model_check -- --nocapture`;
//! `LOOM_MAX_PREEMPTIONS` (default 2 here) bounds the search, and CI runs the default.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{TimeDelta, TimeZone, Utc};
use diesel::QueryResult;
use loom::sync::{Arc, Mutex};

use super::{Engine, Settings};
use crate::backend::{Counter, Found, Identified, Request};
use crate::batch::Batch;
use crate::clock::FixedClock;
use crate::driver::{drive, Driver};
use crate::reserve::pool::{PoolFuture, PoolReserve};
use crate::reserve::{identity::Identity, reserve_block, risks::Acceptance, Reserved};
use crate::sync::{loom_thread, EventListener, Listener};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// The database: each period's counter, and the key's shape.
#[derive(Default)]
struct Db {
    counters: Mutex<BTreeMap<String, i64>>,
    shape: Mutex<Option<String>>,
}

impl Db {
    /// `UPDATE … SET current_value = current_value + count WHERE current_value <= limit`.
    fn bump(&self, period: &str, count: i64, limit: i64) -> Option<i64> {
        let mut counters = self.counters.lock().unwrap();
        let value = counters.entry(period.to_owned()).or_insert(0);
        (*value <= limit).then(|| {
            *value += count;
            *value
        })
    }

    fn found(&self) -> Found {
        Found {
            fingerprint: "model".into(),
            durability: "1".into(),
            timeline: None,
            token: Some(1),
            batch: None,
            shape: self.shape.lock().unwrap().clone(),
        }
    }

    fn counter(&self, period: &str) -> i64 {
        *self.counters.lock().unwrap().get(period).unwrap_or(&0)
    }
}

/// A connection to the fake database, outside any transaction.
struct Conn(Arc<Db>);

impl Driver for Conn {
    type Backend = diesel::sqlite::Sqlite;

    const BLOCKING: bool = true;

    fn in_transaction(&mut self) -> bool {
        false
    }

    async fn reserve(
        &mut self,
        counter: Counter<'_>,
        count: i64,
        limit: i64,
        _: bool,
    ) -> QueryResult<Option<i64>> {
        Ok(self.0.bump(counter.period, count, limit))
    }

    async fn read(&mut self, counter: Counter<'_>) -> QueryResult<Option<i64>> {
        Ok(Some(self.0.counter(counter.period)))
    }

    async fn create_row(&mut self, _: Counter<'_>) -> QueryResult<()> {
        Ok(())
    }

    async fn replication(&mut self) -> QueryResult<crate::backend::Replication> {
        Ok(crate::backend::Replication::Waited)
    }

    async fn reserve_identified(
        &mut self,
        request: &Request<'_>,
    ) -> QueryResult<Option<Identified>> {
        let found = self.0.found();
        if found.shape.as_deref().is_some_and(|s| s != request.shape) {
            return Ok(None);
        }
        let count = request.need.max(request.batch);
        let last = self
            .0
            .bump(request.counter.period, count, request.largest - count);
        Ok(Some(Identified { found, count, last }))
    }

    async fn identify(&mut self, _: &str) -> QueryResult<Found> {
        Ok(self.0.found())
    }

    async fn create_token(&mut self, _: i64) -> QueryResult<()> {
        Ok(())
    }

    async fn mark_session(&mut self, _: &str) -> QueryResult<()> {
        Ok(())
    }

    async fn mark_timeline(&mut self, _: &str) -> QueryResult<()> {
        Ok(())
    }

    async fn claim_shape(&mut self, _: Counter<'_>, shape: &str) -> QueryResult<Option<String>> {
        let mut recorded = self.0.shape.lock().unwrap();
        Ok(Some(
            recorded.get_or_insert_with(|| shape.to_owned()).clone(),
        ))
    }

    async fn read_shape(&mut self, _: &str) -> QueryResult<Option<String>> {
        Ok(self.0.shape.lock().unwrap().clone())
    }

    async fn give_back(
        &mut self,
        counter: Counter<'_>,
        held_end: i64,
        value: i64,
    ) -> QueryResult<bool> {
        let mut counters = self.0.counters.lock().unwrap();
        let current = counters.entry(counter.period.to_owned()).or_insert(0);
        Ok(*current == held_end && {
            *current = value;
            true
        })
    }

    async fn lock_nowait(&mut self, _: Counter<'_>) -> QueryResult<()> {
        Ok(())
    }

    async fn wait(&mut self, ended: EventListener) {
        ended.wait();
    }

    async fn pause(_: Duration) {}
}

/// A pool of connections to the fake database: reserves ahead on a thread of its own.
struct Pool(Arc<Db>);

impl PoolReserve for Pool {
    fn blocking(&self) -> bool {
        true
    }

    fn reserves_ahead(&self) -> bool {
        true
    }

    #[allow(clippy::too_many_arguments)]
    fn reserve<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        need: u64,
        batch: Batch,
        non_durable: Acceptance,
        expected: &'a Found,
    ) -> PoolFuture<'a, Reserved> {
        let mut conn = Conn(Arc::clone(&self.0));
        Box::pin(async move {
            let expected = Some(expected);
            reserve_block(
                &mut conn,
                spec,
                scope,
                period,
                need,
                batch,
                non_durable,
                expected,
            )
            .await
        })
    }

    fn reserve_ahead<'a>(
        &'a self,
        spec: &'a Spec,
        scope: &'a str,
        period: &'a Period,
        batch: Batch,
        non_durable: Acceptance,
    ) -> PoolFuture<'a, Option<Reserved>> {
        let mut conn = Conn(Arc::clone(&self.0));
        Box::pin(async move {
            reserve_block(&mut conn, spec, scope, period, 1, batch, non_durable, None)
                .await
                .map(Some)
        })
    }

    fn create_row<'a>(&'a self, _: Counter<'a>) -> PoolFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn backend(&self) -> &'static str {
        "model"
    }

    fn check_shape<'a>(&'a self, _: &'a Spec) -> PoolFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn identify(&self) -> PoolFuture<'_, Identity> {
        Box::pin(async { Ok(Identity::new("model", 1)) })
    }
}

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
