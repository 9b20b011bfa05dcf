//! `next_id`'s latency with 8 threads on one key.

use std::sync::Mutex;
use std::time::Instant;

use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::{Generator, Spec};
use hdrhistogram::Histogram;

use super::{BenchConnection, BoxError};

/// p50, p99 and p99.9 of `next_id` with 8 threads on one key, batch 100, each thread on its
/// own pooled connection.
pub(super) fn next_id_latency<C: BenchConnection>(
    pool: &Pool<ConnectionManager<C>>,
    backend: &str,
) -> Result<(), BoxError> {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 20_000;
    let spec = Spec::builder("bench_orders_latency")
        .prefix("L")
        .date("")
        .pad(12)
        .batch(100)
        .build()?;
    let generator = Generator::builder().pool(pool.clone()).build();
    let histogram = Mutex::new(Histogram::<u64>::new(3)?);
    std::thread::scope(|scope| -> Result<(), BoxError> {
        let workers: Vec<_> = (0..THREADS)
            .map(|_| {
                let (generator, spec, histogram) = (&generator, &spec, &histogram);
                scope.spawn(move || -> Result<(), BoxError> {
                    let mut conn = pool.get()?;
                    let mut local = Histogram::<u64>::new(3)?;
                    for _ in 0..PER_THREAD {
                        let started = Instant::now();
                        std::hint::black_box(generator.next_id(&mut conn, spec)?);
                        local.record(started.elapsed().as_nanos() as u64)?;
                    }
                    histogram
                        .lock()
                        .expect("no thread panics holding it")
                        .add(&local)?;
                    Ok(())
                })
            })
            .collect();
        for worker in workers {
            worker.join().expect("a latency thread panicked")?;
        }
        Ok(())
    })?;
    let h = histogram
        .into_inner()
        .expect("no thread panicked holding it");
    let (p50, p99, p999) = (
        h.value_at_quantile(0.5),
        h.value_at_quantile(0.99),
        h.value_at_quantile(0.999),
    );
    println!(
        "\n{backend}: next_id, {THREADS} threads, batch 100, {} calls: p50 {p50} ns, p99 {p99} ns, \
         p99.9 {p999} ns, p99.9/p50 {:.1}; {} reservations",
        h.len(),
        p999 as f64 / p50.max(1) as f64,
        generator.reservations()
    );
    Ok(())
}
