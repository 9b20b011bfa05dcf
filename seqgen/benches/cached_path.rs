//! The cached path: IDs served from a block already reserved, on a real SQLite database,
//! beside baselines measured in the same run, so each ratio is read from one run:
//! `Uuid::now_v7().to_string()`, a bare `AtomicU64` + `U%Y%m%d` + zero-pad into a new
//! `String` (the floor for String IDs), and a bare `Mutex<u64>` increment (for i64 IDs).
//! `contended` runs 8 threads on one key and one generator: its throughput is the aggregate.
//! A scoped spec taking IDs in 20 scopes in turn shows what finding a scope's block costs.
//!
//! `cargo bench -p diesel-seqgen --features bundled-sqlite --bench cached_path`

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use diesel::{Connection, SqliteConnection};
use diesel_seqgen::{Generator, Spec};

fn cached_path(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut conn =
        SqliteConnection::establish(dir.path().join("bench.db").to_str().unwrap()).unwrap();
    diesel_seqgen::sqlite::configure(&mut conn).unwrap();
    diesel_seqgen::run_migrations(&mut conn).unwrap();
    // A batch so large that a reservation (one per 10 M IDs) does not show in the figures.
    let formatted = Spec::builder("bench_users")
        .prefix("U")
        .date("%Y%m%d")
        .pad(12)
        .batch(10_000_000)
        .build()
        .unwrap();
    let numeric = Spec::builder("bench_numbers")
        .date("%Y%m%d")
        .pad(10)
        .batch(10_000_000)
        .build()
        .unwrap();
    let generator = Generator::new();

    let mut group = c.benchmark_group("cached_path");
    group.throughput(Throughput::Elements(1));
    group.bench_function("seqgen String U%Y%m%d+12", |b| {
        b.iter(|| black_box(generator.next_id(&mut conn, &formatted).unwrap()))
    });
    group.bench_function("seqgen i64 %Y%m%d+10", |b| {
        b.iter(|| black_box(generator.next_number(&mut conn, &numeric).unwrap()))
    });
    // The same IDs counted per scope (20 companies in turn): the scope's state is found in
    // the generator's map of scopes by its text, where an unscoped spec keeps it at hand.
    let scoped = Spec::builder("bench_scoped")
        .prefix("U")
        .date("%Y%m%d")
        .pad(12)
        .batch(1_000_000)
        .scoped()
        .build()
        .unwrap();
    let companies: Vec<String> = (0..20).map(|i| format!("company-{i}")).collect();
    let mut turn = 0;
    group.bench_function("seqgen String U%Y%m%d+12, 20 scopes", |b| {
        b.iter(|| {
            turn = (turn + 1) % companies.len();
            black_box(
                generator
                    .next_id(&mut conn, scoped.scope(&companies[turn]))
                    .unwrap(),
            )
        })
    });
    group.bench_function("uuid now_v7 to_string", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7().to_string()))
    });
    let counter = AtomicU64::new(1);
    let today = chrono::Utc::now().format("%Y%m%d").to_string();
    group.bench_function("baseline AtomicU64 + U%Y%m%d + pad 12", |b| {
        b.iter(|| {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            black_box(format!("U{today}{n:012}"))
        })
    });
    let locked = Mutex::new(0u64);
    group.bench_function("baseline Mutex<u64> increment", |b| {
        b.iter(|| {
            let mut n = locked.lock().unwrap();
            *n += 1;
            black_box(*n)
        })
    });
    group.finish();

    // 8 threads, one key, one generator: wall time for `iters` IDs in all.
    let mut contended = c.benchmark_group("contended");
    contended.throughput(Throughput::Elements(1));
    const THREADS: u64 = 8;
    let path = dir.path().join("bench.db");
    let mut conns: Vec<SqliteConnection> = (0..THREADS)
        .map(|_| SqliteConnection::establish(path.to_str().unwrap()).unwrap())
        .collect();
    for conn in &mut conns {
        diesel_seqgen::sqlite::configure(conn).unwrap();
    }
    let conns: Vec<Mutex<SqliteConnection>> = conns.into_iter().map(Mutex::new).collect();
    contended.bench_function("seqgen String, 8 threads, one key", |b| {
        b.iter_custom(|iters| {
            let per_thread = iters.div_ceil(THREADS);
            let started = std::time::Instant::now();
            std::thread::scope(|scope| {
                for conn in &conns {
                    let (generator, formatted) = (&generator, &formatted);
                    scope.spawn(move || {
                        let mut conn = conn.lock().unwrap();
                        for _ in 0..per_thread {
                            black_box(generator.next_id(&mut *conn, formatted).unwrap());
                        }
                    });
                }
            });
            started.elapsed()
        })
    });
    contended.finish();
}

criterion_group!(benches, cached_path);
criterion_main!(benches);
