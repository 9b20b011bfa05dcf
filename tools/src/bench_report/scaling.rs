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
//! Each series has its file (`scopes.rs`, `processes.rs`, `rollover.rs`, sharing `rounds.rs`);
//! this one runs them. The points go to `--out` as JSON, and are drawn there as SVG (`plots.rs`).

use std::time::Instant;

use diesel::r2d2::{ConnectionManager, Pool};
use diesel_seqgen::{Generator, Spec};

use super::plots::Scaling;
use super::rounds::{Measured, THREADS};
use super::{processes, rollover, scopes};
use super::{Args, BenchConnection, BoxError, Report};

/// The pool every series on `url` takes its connections from: one per thread, and two more.
/// The counters of earlier runs' keys (all named `scaling_…`) go first: a million-scope run
/// leaves 20,000 rows and more, which would otherwise gather run after run.
fn pool_on<C: BenchConnection>(url: &str) -> Result<Pool<ConnectionManager<C>>, BoxError> {
    use diesel::connection::SimpleConnection;
    let pool = super::inserts::migrated_pool::<C>(url, THREADS as u32 + 2)?;
    pool.get()?
        .batch_execute("DELETE FROM db_key WHERE key_name LIKE 'scaling%'")?;
    Ok(pool)
}

/// Every series on `url`, and the simulation at the rate and reservation latency measured; the
/// scopes series alone, printed, for `--report scopes` (`None`).
pub(super) fn run<C: BenchConnection>(
    args: &Args,
    url: &str,
    backend: &str,
) -> Result<Option<Scaling>, BoxError> {
    let pool = pool_on::<C>(url)?;
    if args.report == Report::Scopes {
        return scopes::scopes(&pool, args, backend).map(|_| None);
    }
    let reservation_ms = reservation_ms(&pool)?;
    let scopes = scopes::scopes(&pool, args, backend)?;
    let processes = processes::processes(url, args, backend)?;
    let rollover = rollover::rollover(&pool, args, backend)?;
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
    let simulated: Vec<_> = processes::PROCESSES.iter().map(|&n| simulate(n)).collect();
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
    Ok(Some(Scaling {
        backend: backend.to_owned(),
        reservation_ms,
        scopes,
        processes,
        rollover,
        simulated,
        simulated_at_scale,
    }))
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
