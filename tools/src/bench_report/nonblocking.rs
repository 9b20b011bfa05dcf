//! The insert report on diesel-async (built with `async-postgres` / `async-mysql`): the
//! default generator's `diesel_seqgen::nonblocking::insert_into` on a plain async connection and on
//! deadpool's and bb8's connections passed as they come, each as a ratio to a plain
//! diesel-async insert of IDs computed in memory, rounds and slices interleaved as in
//! `inserts.rs`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diesel_async::pooled_connection::{bb8, deadpool, AsyncDieselConnectionManager};
use diesel_async::{AsyncConnection, RunQueryDsl};
use diesel_seqgen::nonblocking as sq;

use super::inserts::print_ratios;
use super::{Args, AsyncBb8Order, AsyncConnOrder, AsyncDeadpoolOrder, AsyncPlainOrder, BoxError};

/// Slices per round, as in `inserts.rs`.
const SLICES: usize = 10;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Plain,
    Conn,
    Deadpool,
    Bb8,
}

impl Path {
    const ALL: [Path; 4] = [Path::Plain, Path::Conn, Path::Deadpool, Path::Bb8];

    fn name(self) -> &'static str {
        match self {
            Path::Plain => "async: plain diesel-async insert (baseline)",
            Path::Conn => "async: default generator, a plain connection",
            Path::Deadpool => "async: default generator, deadpool's `&mut conn`",
            Path::Bb8 => "async: default generator, bb8's `&mut conn`",
        }
    }
}

/// `url` with PostgreSQL's sessions set as the blocking report sets its own
/// (`synchronous_commit = off`: round trips are compared, not the disk).
fn session_url(url: &str) -> String {
    if url.starts_with("postgres") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}options=-c%20synchronous_commit%3Doff")
    } else {
        url.to_owned()
    }
}

macro_rules! async_report {
    ($name:ident, $feature:literal, $conn:ty) => {
        /// The async insert table for one backend.
        #[cfg(feature = $feature)]
        pub(super) fn $name(args: &Args, url: &str, backend: &str) -> Result<(), BoxError> {
            type Conn = $conn;
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async {
                let url = session_url(url);
                let manager = || AsyncDieselConnectionManager::<Conn>::new(url.clone());
                let deadpool = deadpool::Pool::builder(manager()).max_size(8).build()?;
                let bb8 = bb8::Pool::builder().max_size(8).build(manager()).await?;
                let mut plain = Vec::new();
                for _ in 0..8 {
                    plain.push(Some(Conn::establish(&url).await?));
                }
                let counter = Arc::new(AtomicU64::new(0));
                println!(
                    "\n## {backend}, diesel-async: inserts, rows/s, ratio to the plain insert (median of {} rounds)",
                    args.rounds
                );
                println!("| rows per insert | tasks | path | rows/s (median) | ratio (median, range) |");
                println!("|---|---|---|---|---|");
                for rows_per_insert in [1usize, 100] {
                    for tasks in [1usize, 8] {
                        let mut rates: Vec<Vec<f64>> = vec![Vec::new(); Path::ALL.len()];
                        for round in 0..args.rounds as usize {
                            let mut done = vec![(0u64, 0f64); Path::ALL.len()];
                            for _ in 0..SLICES {
                                for i in (0..Path::ALL.len()).map(|i| (i + round) % Path::ALL.len()) {
                                    let seconds = args.seconds / SLICES as f64;
                                    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
                                    let started = Instant::now();
                                    let mut workers = Vec::new();
                                    for task in 0..tasks {
                                        let path = Path::ALL[i];
                                        let (deadpool, bb8) = (deadpool.clone(), bb8.clone());
                                        let (mut conn, counter) = (plain[task].take(), counter.clone());
                                        workers.push(tokio::spawn(async move {
                                            let mut rows = 0u64;
                                            match path {
                                                Path::Plain => {
                                                    let conn = conn.as_mut().expect("a connection per task");
                                                    let today = chrono::Utc::now().format("%Y%m%d").to_string();
                                                    while Instant::now() < deadline {
                                                        let mut batch = AsyncPlainOrder::unfilled(rows_per_insert);
                                                        for row in &mut batch {
                                                            let n = counter.fetch_add(1, Ordering::Relaxed) + 1;
                                                            row.id = format!("D{today}{n:012}");
                                                        }
                                                        rows += diesel::insert_into(super::bench_orders_async_plain::table)
                                                            .values(&batch)
                                                            .execute(conn)
                                                            .await? as u64;
                                                    }
                                                }
                                                Path::Conn => {
                                                    let conn = conn.as_mut().expect("a connection per task");
                                                    while Instant::now() < deadline {
                                                        let mut batch = AsyncConnOrder::unfilled(rows_per_insert);
                                                        rows += sq::insert_into(super::bench_orders_async_conn::table)
                                                            .values(&mut batch)
                                                            .execute(conn)
                                                            .await? as u64;
                                                    }
                                                }
                                                Path::Deadpool => {
                                                    let mut conn = deadpool.get().await?;
                                                    while Instant::now() < deadline {
                                                        let mut batch = AsyncDeadpoolOrder::unfilled(rows_per_insert);
                                                        rows += sq::insert_into(super::bench_orders_async_deadpool::table)
                                                            .values(&mut batch)
                                                            .execute(&mut conn)
                                                            .await? as u64;
                                                    }
                                                }
                                                Path::Bb8 => {
                                                    let mut conn = bb8.get().await?;
                                                    while Instant::now() < deadline {
                                                        let mut batch = AsyncBb8Order::unfilled(rows_per_insert);
                                                        rows += sq::insert_into(super::bench_orders_async_bb8::table)
                                                            .values(&mut batch)
                                                            .execute(&mut conn)
                                                            .await? as u64;
                                                    }
                                                }
                                            }
                                            Ok::<_, BoxError>((rows, conn))
                                        }));
                                    }
                                    let mut rows = 0;
                                    for (task, worker) in workers.into_iter().enumerate() {
                                        let (done_rows, conn) = worker.await??;
                                        rows += done_rows;
                                        plain[task] = conn;
                                    }
                                    done[i].0 += rows;
                                    done[i].1 += started.elapsed().as_secs_f64();
                                }
                            }
                            for (i, (rows, secs)) in done.into_iter().enumerate() {
                                rates[i].push(rows as f64 / secs);
                            }
                        }
                        let names = Path::ALL.map(Path::name);
                        print_ratios(backend, rows_per_insert, tasks, &names, &rates);
                    }
                }
                Ok::<(), BoxError>(())
            })
        }
    };
}

async_report!(postgres, "async-postgres", diesel_async::AsyncPgConnection);
async_report!(mysql, "async-mysql", diesel_async::AsyncMysqlConnection);
