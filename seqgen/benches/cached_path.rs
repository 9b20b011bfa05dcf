//! The cached path: IDs served from a block already reserved, on a real SQLite database,
//! beside `Uuid::now_v7().to_string()` measured in the same run.
//!
//! `cargo bench -p seqgen --features bundled-sqlite --bench cached_path`

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use diesel::{Connection, SqliteConnection};
use seqgen::{Generator, Spec};

fn cached_path(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut conn =
        SqliteConnection::establish(dir.path().join("bench.db").to_str().unwrap()).unwrap();
    seqgen::sqlite::configure(&mut conn).unwrap();
    seqgen::run_migrations(&mut conn).unwrap();
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
    group.bench_function("uuid now_v7 to_string", |b| {
        b.iter(|| black_box(uuid::Uuid::now_v7().to_string()))
    });
    group.finish();
}

criterion_group!(benches, cached_path);
criterion_main!(benches);
