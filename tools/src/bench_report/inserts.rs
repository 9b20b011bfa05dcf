//! The insert report: every path's throughput, rounds interleaved, as a ratio to a plain
//! Diesel insert measured in the same round.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use diesel::r2d2::{ConnectionManager, Pool, PooledConnection};
use diesel_seqgen::Generator;

use super::latency::next_id_latency;
use super::{
    summary, Args, BenchConnection, BoxError, ConnOrder, DefaultOrder, DerefOrder, ExplicitOrder,
    NewSeqOrder, PlainOrder, Report, Setup, ORDER_TABLES,
};

/// A connection of the report's pool.
type Pooled<C> = PooledConnection<ConnectionManager<C>>;

/// Slices per round: see `report`.
const SLICES: usize = 10;

/// One way of inserting, measured as rows per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Plain,
    Default,
    DefaultDeref,
    DefaultConn,
    Explicit,
    Sequence,
}

impl Path {
    const ALL: [Path; 6] = [
        Path::Plain,
        Path::Default,
        Path::DefaultDeref,
        Path::DefaultConn,
        Path::Explicit,
        Path::Sequence,
    ];

    fn name(self) -> &'static str {
        match self {
            Path::Plain => "plain diesel::insert_into (baseline)",
            Path::Default => "diesel_seqgen::insert_into, default generator, `&mut pooled`",
            Path::DefaultDeref => "diesel_seqgen::insert_into, default generator, `&mut *pooled`",
            Path::DefaultConn => {
                "diesel_seqgen::insert_into, default generator, a plain connection"
            }
            Path::Explicit => "diesel_seqgen::insert_into(..).with_generator(&g)",
            Path::Sequence => "database's own (sequence DEFAULT; MySQL AUTO_INCREMENT)",
        }
    }
}

/// The report's pool of `size` connections on `url` (each set up by
/// [`BenchConnection::setup`]), with seqgen's migrations run.
pub(super) fn migrated_pool<C: BenchConnection>(
    url: &str,
    size: u32,
) -> Result<Pool<ConnectionManager<C>>, BoxError> {
    let url = url.strip_prefix("sqlite://").unwrap_or(url);
    let pool = Pool::builder()
        .max_size(size)
        .connection_customizer(Box::new(Setup))
        .build(ConnectionManager::<C>::new(url))?;
    diesel_seqgen::run_migrations(&mut *pool.get()?)?;
    Ok(pool)
}

pub(super) fn report<C: BenchConnection>(
    args: &Args,
    url: &str,
    backend: &str,
) -> Result<(), BoxError> {
    let pool = migrated_pool::<C>(url, 10)?;
    {
        let mut conn = pool.get()?;
        for table in ORDER_TABLES {
            conn.batch_execute(&format!(
                "DROP TABLE IF EXISTS {table}; \
                 CREATE TABLE {table} (id {} PRIMARY KEY, amount BIGINT NOT NULL);",
                C::ID_TYPE
            ))?;
        }
        conn.batch_execute(C::CREATE_SEQ)?;
        // Keys of earlier runs start over, so the IDs' length does not depend on history.
        conn.batch_execute("DELETE FROM db_key WHERE key_name LIKE 'bench_orders%'")?;
    }
    if args.report == Report::Latency {
        return next_id_latency::<C>(&pool, backend);
    }
    let explicit = Generator::builder().pool(pool.clone()).build();
    // A connection of no pool per thread, for the plain-connection form.
    let conns = (0..8)
        .map(|_| {
            let mut conn = C::establish(url.strip_prefix("sqlite://").unwrap_or(url))?;
            <C as BenchConnection>::setup(&mut conn)?;
            Ok(std::sync::Mutex::new(conn))
        })
        .collect::<Result<Vec<_>, BoxError>>()?;
    let plain_counter = AtomicU64::new(0);
    let today = chrono::Utc::now().format("%Y%m%d").to_string();

    println!(
        "\n## {backend}: inserts, rows/s, ratio to the plain insert (median of {} rounds)",
        args.rounds
    );
    println!("| rows per insert | threads | path | rows/s (median) | ratio (median, range) |");
    println!("|---|---|---|---|---|");
    for rows_per_insert in [1usize, 100] {
        for threads in [1usize, 8] {
            let insert =
                |path: Path, thread: usize, conn: &mut Pooled<C>| -> Result<u64, BoxError> {
                    match path {
                        Path::Plain => {
                            let mut rows = PlainOrder::unfilled(rows_per_insert);
                            for row in &mut rows {
                                let n = plain_counter.fetch_add(1, Ordering::Relaxed) + 1;
                                row.id = format!("D{today}{n:012}");
                            }
                            C::insert_plain(conn, &rows)?;
                        }
                        Path::Default => {
                            C::insert_default(conn, &mut DefaultOrder::unfilled(rows_per_insert))?;
                        }
                        Path::DefaultDeref => {
                            C::insert_deref(conn, &mut DerefOrder::unfilled(rows_per_insert))?;
                        }
                        Path::DefaultConn => {
                            let mut own = conns[thread].lock().unwrap_or_else(|e| e.into_inner());
                            C::insert_conn(&mut own, &mut ConnOrder::unfilled(rows_per_insert))?;
                        }
                        Path::Explicit => {
                            let mut rows = ExplicitOrder::unfilled(rows_per_insert);
                            C::insert_explicit(conn, &mut rows, &explicit)?;
                        }
                        Path::Sequence => {
                            let rows = vec![NewSeqOrder { amount: 1 }; rows_per_insert];
                            C::insert_sequence(conn, &rows)?;
                        }
                    }
                    Ok(rows_per_insert as u64)
                };
            let mut rates: Vec<Vec<f64>> = vec![Vec::new(); Path::ALL.len()];
            for round in 0..args.rounds as usize {
                // Each round is cut into slices, and every slice runs each path in turn (each
                // round starting with another path), so that a machine that speeds up or slows
                // down over a round does so for every path alike.
                let mut done = vec![(0u64, 0f64); Path::ALL.len()];
                for _ in 0..SLICES {
                    for i in (0..Path::ALL.len()).map(|i| (i + round) % Path::ALL.len()) {
                        let path = Path::ALL[i];
                        let (rows, secs) = measure(
                            args.seconds / SLICES as f64,
                            threads,
                            &pool,
                            |thread, conn| insert(path, thread, conn),
                        )?;
                        done[i].0 += rows;
                        done[i].1 += secs;
                    }
                }
                for (i, (rows, secs)) in done.into_iter().enumerate() {
                    rates[i].push(rows as f64 / secs);
                }
            }
            let names = Path::ALL.map(Path::name);
            print_ratios(backend, rows_per_insert, threads, &names, &rates);
        }
    }
    next_id_latency::<C>(&pool, backend)?;
    Ok(())
}

/// Runs `op` in `threads` threads for `seconds`, each on a pooled connection of its own held
/// for the whole run (a checkout per operation would add r2d2's validity query to every path
/// alike); returns the rows `op` reported and the seconds it took.
pub(super) fn measure<C, F>(
    seconds: f64,
    threads: usize,
    pool: &Pool<ConnectionManager<C>>,
    op: F,
) -> Result<(u64, f64), BoxError>
where
    C: BenchConnection,
    F: Fn(usize, &mut Pooled<C>) -> Result<u64, BoxError> + Sync,
{
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let done = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let op = &op;
                scope.spawn(move || -> Result<u64, BoxError> {
                    let mut conn = pool.get()?;
                    let mut rows = 0;
                    while Instant::now() < deadline {
                        rows += op(thread, &mut conn)?;
                    }
                    Ok(rows)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("a bench thread panicked"))
            .sum::<Result<u64, BoxError>>()
    })?;
    Ok((done, started.elapsed().as_secs_f64()))
}

/// One table row per path: its median rate, and its ratio to the first path's (the baseline)
/// round by round, median and range, recorded for the summary too.
pub(super) fn print_ratios(
    backend: &str,
    rows_per_insert: usize,
    threads: usize,
    names: &[&str],
    rates: &[Vec<f64>],
) {
    let baseline = &rates[0];
    for (name, rates) in names.iter().zip(rates) {
        let ratios: Vec<f64> = rates.iter().zip(baseline).map(|(r, b)| r / b).collect();
        let (lo, mid, hi) = spread(&ratios);
        let (_, rate, _) = spread(rates);
        summary::record(backend, rows_per_insert, threads, name, (lo, mid, hi));
        println!(
            "| {rows_per_insert} | {threads} | {name} | {rate:.0} | {mid:.2} ({lo:.2}–{hi:.2}) |"
        );
    }
}

/// Lowest, median and highest of `values`.
pub(super) fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
    )
}
