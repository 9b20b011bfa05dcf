//! The invariant of batched mode, on the defaults a user gets: one process, many threads,
//! then `release`, and the numbers handed out are exactly `1..=n`: none twice, none lost
//! while the process lived. Blocks grow (adaptive batches), the key's window is taken from by
//! every thread at once, and with a pool the next block is reserved ahead. Every way a user
//! holds a connection and a generator is here; any change to the allocator runs through it.
//! (The same for tasks: `async_suite.rs`; every interleaving of a small case: the loom model
//! in `src/generator/model_check.rs`.)

use crate::common;

use std::sync::{Arc, Barrier};
use std::thread;

use common::{TestConnection, TestDb};
use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::{Generator, Spec};

backend_tests!(
    the_default_generator_on_plain_connections,
    the_default_generator_with_a_pool_on_pooled_connections,
    a_generator_of_ones_own,
    a_generator_of_ones_own_with_a_pool,
    bulks_and_single_ids_together,
);

/// Threads, and IDs each: enough for blocks to grow from 100 to thousands.
const THREADS: usize = 16;
const IDS: usize = 500;

/// An undated spec with the defaults (batch 100, pad 6, adaptive blocks).
fn spec(db: &TestDb<impl TestConnection>, name: &str) -> Arc<Spec> {
    Arc::new(Spec::builder(db.key(name)).date("").build().unwrap())
}

/// The counter of an ID of [`spec`] (pad 6, no prefix).
fn number(id: &str) -> u64 {
    id.parse().unwrap()
}

/// Runs `THREADS` threads that each take `IDS` numbers with `take` on a connection of
/// `pool`, started together; returns every number handed out.
fn on_threads<C, F>(pool: &Pool<ConnectionManager<C>>, take: F) -> Vec<u64>
where
    C: TestConnection,
    F: Fn(&mut diesel::r2d2::PooledConnection<ConnectionManager<C>>) -> Vec<u64>
        + Send
        + Sync
        + 'static,
{
    let take = Arc::new(take);
    let start = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|_| {
            let (pool, take, start) = (pool.clone(), Arc::clone(&take), Arc::clone(&start));
            thread::spawn(move || {
                let mut conn = pool.get().unwrap();
                start.wait();
                take(&mut conn)
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect()
}

/// The numbers are exactly `1..=n`, and the counter ends at `n`.
fn assert_exact<C: TestConnection>(conn: &mut C, spec: &Spec, mut got: Vec<u64>) {
    got.sort_unstable();
    let n = got.len() as u64;
    let repeated = got.windows(2).filter(|w| w[0] == w[1]).count();
    let missing = (1..=n).filter(|x| got.binary_search(x).is_err()).count();
    assert!(
        repeated == 0 && missing == 0,
        "{}: {n} numbers, {repeated} repeated, {missing} of 1..={n} missing (last {:?})",
        C::NAME,
        got.last()
    );
    let last = diesel_seqgen::Generator::new()
        .last_value(conn, spec)
        .unwrap();
    assert_eq!(last, Some(n), "{}: the counter after release", C::NAME);
}

/// `diesel_seqgen::global::next_id(&mut *conn, ..)`: the process-wide default, told the database by one
/// query per call, no pool: the caller that finds a block empty reserves the next.
fn the_default_generator_on_plain_connections<C: TestConnection>(db: TestDb<C>) {
    // A database of its own: the default generator is per database, and another test here
    // gives its database's default a pool.
    let scratch = db.scratch("plain");
    let mut conn = scratch.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = spec(&db, "plain");
    let pool = scratch.pool(THREADS as u32);
    let s = Arc::clone(&spec);
    let got = on_threads(&pool, move |conn| {
        (0..IDS)
            .map(|_| number(&diesel_seqgen::global::next_id(&mut **conn, &s).unwrap()))
            .collect()
    });
    diesel_seqgen::global::release(&mut conn).unwrap();
    assert_exact(&mut conn, &spec, got);
}

/// `diesel_seqgen::global::use_pool` and pooled connections passed as they come: the next block is reserved
/// ahead on the pool (PostgreSQL, MySQL), and `release` gives back the spare too.
fn the_default_generator_with_a_pool_on_pooled_connections<C: TestConnection>(db: TestDb<C>) {
    let scratch = db.scratch("pooled");
    let mut conn = scratch.connect();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    let spec = spec(&db, "pooled");
    let pool = scratch.pool(THREADS as u32 + 2);
    diesel_seqgen::global::use_pool(pool.clone()).unwrap();
    let s = Arc::clone(&spec);
    let got = on_threads(&pool, move |conn| {
        (0..IDS)
            .map(|_| number(&diesel_seqgen::global::next_id(conn, &s).unwrap()))
            .collect()
    });
    diesel_seqgen::global::release(&mut conn).unwrap();
    assert_exact(&mut conn, &spec, got);
}

/// `Generator::new()` shared by the threads: the defaults of a generator of one's own.
fn a_generator_of_ones_own<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(THREADS as u32);
    on_ones_own(&db, "own", Generator::new(), &pool);
}

/// `Generator::builder().pool(..)`: blocks reserved ahead on the pool, which is the point here
/// (its twin on the defaults is [`a_generator_of_ones_own`]; the default generator's way to a
/// pool, `use_pool`, is [`the_default_generator_with_a_pool_on_pooled_connections`]).
fn a_generator_of_ones_own_with_a_pool<C: TestConnection>(db: TestDb<C>) {
    let pool = db.pool(THREADS as u32 + 2);
    let generator = Generator::builder().pool(pool.clone()).build();
    on_ones_own(&db, "own_pool", generator, &pool);
}

/// Threads of `pool` taking IDs of a new key `name` from `generator` on dereferenced
/// connections, then `release`: exactly `1..=n`.
fn on_ones_own<C: TestConnection>(
    db: &TestDb<C>,
    name: &str,
    generator: Generator,
    pool: &Pool<ConnectionManager<C>>,
) {
    let spec = spec(db, name);
    let (g, s) = (generator.clone(), Arc::clone(&spec));
    let got = on_threads(pool, move |conn| {
        (0..IDS)
            .map(|_| number(&g.next_id(&mut **conn, &s).unwrap()))
            .collect()
    });
    let mut conn = db.connect();
    generator.release(&mut conn).unwrap();
    assert_exact(&mut conn, &spec, got);
}

/// `next_ids(n)` (under the key's lock, across blocks) beside single IDs (from the window).
fn bulks_and_single_ids_together<C: TestConnection>(db: TestDb<C>) {
    let spec = spec(&db, "bulks");
    let generator = Generator::new();
    let pool = db.pool(THREADS as u32);
    let (g, s) = (generator.clone(), Arc::clone(&spec));
    let got = on_threads(&pool, move |conn| {
        let mut got = Vec::new();
        while got.len() < IDS {
            if got.len() % 7 == 0 {
                let ids = g.next_ids(&mut **conn, &s, 13).unwrap();
                got.extend(ids.iter().map(|id| number(id)));
            } else {
                got.push(number(&g.next_id(&mut **conn, &s).unwrap()));
            }
        }
        got
    });
    let mut conn = db.connect();
    generator.release(&mut conn).unwrap();
    assert_exact(&mut conn, &spec, got);
}
