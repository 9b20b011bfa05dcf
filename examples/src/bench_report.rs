//! The performance figures of the README, each as a ratio to a baseline measured in the same
//! run, rounds interleaved so that a noisy machine slows every path alike.
//!
//! - **insert**: single-row autocommit inserts and bulks of 100 rows, at 1 and 8 threads,
//!   through `seqgen::insert_into` with the process-wide default generator and with an
//!   explicit `Generator`, against a plain `diesel::insert_into` of IDs computed in memory
//!   (the baseline) and the database's own sequence in a column `DEFAULT`; and the default
//!   generator on a dereferenced (`&mut *conn`) connection, which is identified per call.
//!   Connections come from an r2d2 pool and are passed as `PooledConnection`s, the way the
//!   README says to.
//! - **next_id latency**: p50, p99 and p99.9 of `Generator::next_id` with 8 threads and a
//!   batch of 100 (every 100th call needs a block).
//! - **gapless** (`--report gapless` or `all`, PostgreSQL): gapless inserts in transactions
//!   beside django-sequences 3.1 doing the same and pgbench's single-row `UPDATE … RETURNING`;
//!   see `bench_report/gapless.rs`.
//!
//! The hot path (cached IDs against bare in-memory loops) is criterion's: `cargo bench -p
//! seqgen --features bundled-sqlite --bench cached_path`.
//!
//! On PostgreSQL every connection sets `synchronous_commit = off`, so round trips rather than
//! the disk are compared (seqgen's reservations still commit durably: that is their real cost;
//! so do its gapless transactions, and the gapless comparison makes the others do the same).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use diesel::connection::{LoadConnection, SimpleConnection};
use diesel::r2d2::{ConnectionManager, Pool, PooledConnection, R2D2Connection};
use diesel::result::Error as DieselError;
use diesel::RunQueryDsl;
use diesel_migrations::MigrationHarness;
use hdrhistogram::Histogram;
use seqgen::{DistributedId, Generator, Spec};

#[cfg(feature = "postgres")]
mod gapless;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Prints the insert and latency figures of the README's performance table in one run.
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "bench-report")]
pub struct Args {
    /// postgres://... or mysql://... (repeat for several); a SQLite file path works too
    #[arg(long, required = true)]
    pub url: Vec<String>,
    /// Seconds per path per round
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
    /// Interleaved rounds; ratios are medians over them
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub rounds: u32,
    /// Which figures: the insert table and next_id latency, the gapless comparison
    /// (PostgreSQL only), both, or next_id latency alone
    #[arg(long, value_enum, default_value_t = Report::Inserts)]
    pub report: Report,
    /// Seconds per side per round of the gapless comparison
    #[arg(long, default_value_t = 3.0)]
    pub gapless_seconds: f64,
    /// The Python with Django and django-sequences 3.1 (see examples/scripts/gapless_django.py)
    #[arg(long, default_value = "python3")]
    pub django_python: String,
}

/// The figures `bench-report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Report {
    /// Inserts against a plain insert, and next_id latency
    Inserts,
    /// Gapless mode against django-sequences and pgbench (PostgreSQL)
    Gapless,
    /// next_id latency only
    Latency,
    /// Both
    All,
}

/// A table of its own for each path, each path's IDs increasing in it: in one shared table,
/// PostgreSQL's B-tree inserts the highest key on the rightmost leaf by a fast path, so the
/// path whose IDs sort last would be measured faster for that alone. Each path's key is its
/// table's name (the derive's default).
macro_rules! orders {
    ($($table:ident, $row:ident;)*) => {
        $(
            diesel::table! {
                /// Orders keyed by a seqgen ID (the baseline's computed in memory).
                $table (id) {
                    id -> Text,
                    amount -> BigInt,
                }
            }

            /// A row with a seqgen ID (batch 1000, as the performance goal says).
            #[derive(Debug, Clone, diesel::Insertable, DistributedId)]
            #[diesel(table_name = $table)]
            pub struct $row {
                #[distributed_id(prefix = "D", date = "%Y%m%d", pad = 12, batch = 1000)]
                id: String,
                amount: i64,
            }

            impl $row {
                /// Rows whose IDs are still to be filled.
                fn unfilled(n: usize) -> Vec<Self> {
                    vec![$row { id: String::new(), amount: 1 }; n]
                }
            }
        )*

        /// The tables of the ID paths, created empty by the report.
        const ORDER_TABLES: &[&str] = &[$(stringify!($table)),*];
    };
}

orders! {
    bench_orders_plain, PlainOrder;
    bench_orders_default, DefaultOrder;
    bench_orders_deref, DerefOrder;
    bench_orders_explicit, ExplicitOrder;
}

diesel::table! {
    /// Inserted with the ID from the database's own sequence (a column `DEFAULT`).
    bench_orders_seq (id) {
        id -> BigInt,
        amount -> BigInt,
    }
}

#[derive(Debug, Clone, diesel::Insertable)]
#[diesel(table_name = bench_orders_seq)]
pub struct NewSeqOrder {
    amount: i64,
}

/// A connection type the report runs on: what differs per backend.
pub trait BenchConnection:
    R2D2Connection + LoadConnection<Backend = Self::B> + MigrationHarness<Self::B> + Send + 'static
{
    /// The backend, restated so that `seqgen::Backend` is known to hold for it.
    type B: seqgen::Backend;
    /// The type of the ID columns.
    const ID_TYPE: &'static str;
    /// Creates the sequence table (and its sequence) empty.
    const CREATE_SEQ: &'static str;
    /// Per-connection setup.
    fn setup(conn: &mut Self) -> Result<(), DieselError>;
    /// A plain Diesel insert of rows whose IDs are already set.
    fn insert_plain(conn: &mut Self, rows: &[PlainOrder]) -> Result<usize, DieselError>;
    /// `seqgen::insert_into` with the default generator on a pooled connection.
    fn insert_default(
        conn: &mut PooledConnection<ConnectionManager<Self>>,
        rows: &mut Vec<DefaultOrder>,
    ) -> seqgen::Result<usize>;
    /// `seqgen::insert_into` with the default generator on a plain connection.
    fn insert_deref(conn: &mut Self, rows: &mut Vec<DerefOrder>) -> seqgen::Result<usize>;
    /// `seqgen::insert_into(..).with_generator(generator)`.
    fn insert_explicit(
        conn: &mut Self,
        rows: &mut Vec<ExplicitOrder>,
        generator: &Generator,
    ) -> seqgen::Result<usize>;
    /// An insert whose IDs come from the database's sequence.
    fn insert_sequence(conn: &mut Self, rows: &[NewSeqOrder]) -> Result<usize, DieselError>;
}

macro_rules! inserts {
    () => {
        fn insert_plain(conn: &mut Self, rows: &[PlainOrder]) -> Result<usize, DieselError> {
            diesel::insert_into(bench_orders_plain::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_default(
            conn: &mut PooledConnection<ConnectionManager<Self>>,
            rows: &mut Vec<DefaultOrder>,
        ) -> seqgen::Result<usize> {
            seqgen::insert_into(bench_orders_default::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_deref(conn: &mut Self, rows: &mut Vec<DerefOrder>) -> seqgen::Result<usize> {
            seqgen::insert_into(bench_orders_deref::table)
                .values(rows)
                .execute(conn)
        }
        fn insert_explicit(
            conn: &mut Self,
            rows: &mut Vec<ExplicitOrder>,
            generator: &Generator,
        ) -> seqgen::Result<usize> {
            seqgen::insert_into(bench_orders_explicit::table)
                .values(rows)
                .with_generator(generator)
                .execute(conn)
        }
        fn insert_sequence(conn: &mut Self, rows: &[NewSeqOrder]) -> Result<usize, DieselError> {
            diesel::insert_into(bench_orders_seq::table)
                .values(rows)
                .execute(conn)
        }
    };
}

#[cfg(feature = "postgres")]
impl BenchConnection for diesel::PgConnection {
    type B = diesel::pg::Pg;
    const ID_TYPE: &'static str = "VARCHAR(40)";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        DROP SEQUENCE IF EXISTS bench_seq; \
        CREATE SEQUENCE bench_seq; \
        CREATE TABLE bench_orders_seq (id BIGINT PRIMARY KEY DEFAULT nextval('bench_seq'), \
            amount BIGINT NOT NULL);";
    fn setup(conn: &mut Self) -> Result<(), DieselError> {
        conn.batch_execute("SET synchronous_commit = off")
    }
    inserts!();
}

#[cfg(feature = "mysql")]
impl BenchConnection for diesel::MysqlConnection {
    type B = diesel::mysql::Mysql;
    // AUTO_INCREMENT: MariaDB 10.11 crashed (signal 11) here under concurrent prepared inserts
    // into a column `DEFAULT (NEXT VALUE FOR seq)`.
    const ID_TYPE: &'static str = "VARCHAR(40)";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        CREATE TABLE bench_orders_seq (id BIGINT PRIMARY KEY AUTO_INCREMENT, \
            amount BIGINT NOT NULL);";
    fn setup(_: &mut Self) -> Result<(), DieselError> {
        Ok(())
    }
    inserts!();
}

#[cfg(feature = "sqlite")]
impl BenchConnection for diesel::SqliteConnection {
    type B = diesel::sqlite::Sqlite;
    const ID_TYPE: &'static str = "TEXT";
    const CREATE_SEQ: &'static str = "DROP TABLE IF EXISTS bench_orders_seq; \
        CREATE TABLE bench_orders_seq (id INTEGER PRIMARY KEY AUTOINCREMENT, \
            amount BIGINT NOT NULL);";
    fn setup(conn: &mut Self) -> Result<(), DieselError> {
        seqgen::sqlite::configure(conn)
    }
    inserts!();
}

#[derive(Debug)]
struct Setup;

impl<C: BenchConnection> diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for Setup {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        C::setup(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

/// Runs the report with command-line arguments.
pub fn main_with(args: impl IntoIterator<Item = String>) -> std::process::ExitCode {
    let args = match <Args as clap::Parser>::try_parse_from(
        std::iter::once("bench-report".to_owned()).chain(args),
    ) {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return std::process::ExitCode::from(e.exit_code() as u8);
        }
    };
    match run(&args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench-report: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Prints the report for every URL.
pub fn run(args: &Args) -> Result<(), BoxError> {
    for url in &args.url {
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        if !postgres && args.report == Report::Gapless {
            eprintln!("{url}: the gapless comparison runs on PostgreSQL only");
            continue;
        }
        if postgres {
            #[cfg(feature = "postgres")]
            {
                if args.report != Report::Gapless {
                    report::<diesel::PgConnection>(args, url, "postgres")?;
                }
                if matches!(args.report, Report::Gapless | Report::All) {
                    gapless::report(args, url)?;
                }
            }
            #[cfg(not(feature = "postgres"))]
            return Err("built without PostgreSQL: add --features postgres".into());
        } else if url.starts_with("mysql://") {
            #[cfg(feature = "mysql")]
            report::<diesel::MysqlConnection>(args, url, "mysql")?;
            #[cfg(not(feature = "mysql"))]
            return Err("built without MySQL: add --features mysql".into());
        } else {
            #[cfg(feature = "sqlite")]
            report::<diesel::SqliteConnection>(args, url, "sqlite")?;
            #[cfg(not(feature = "sqlite"))]
            return Err("built without SQLite: add --features sqlite".into());
        }
    }
    Ok(())
}

/// A connection of the report's pool.
type Pooled<C> = PooledConnection<ConnectionManager<C>>;

/// Slices per round: see `report`.
const SLICES: usize = 10;

/// One way of inserting, measured as rows per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    Plain,
    Default,
    DefaultPlain,
    Explicit,
    Sequence,
}

impl Path {
    const ALL: [Path; 5] = [
        Path::Plain,
        Path::Default,
        Path::DefaultPlain,
        Path::Explicit,
        Path::Sequence,
    ];

    fn name(self) -> &'static str {
        match self {
            Path::Plain => "plain diesel::insert_into (baseline)",
            Path::Default => "seqgen::insert_into, default generator",
            Path::DefaultPlain => "seqgen::insert_into, default generator, `&mut *conn`",
            Path::Explicit => "seqgen::insert_into(..).with_generator(&g)",
            Path::Sequence => "database's own (sequence DEFAULT; MySQL AUTO_INCREMENT)",
        }
    }
}

/// The report's pool on `url` (each connection set up by [`BenchConnection::setup`]), with
/// seqgen's migrations run.
fn migrated_pool<C: BenchConnection>(url: &str) -> Result<Pool<ConnectionManager<C>>, BoxError> {
    let url = url.strip_prefix("sqlite://").unwrap_or(url);
    let pool = Pool::builder()
        .max_size(10)
        .connection_customizer(Box::new(Setup))
        .build(ConnectionManager::<C>::new(url))?;
    seqgen::run_migrations(&mut *pool.get()?)?;
    Ok(pool)
}

fn report<C: BenchConnection>(args: &Args, url: &str, backend: &str) -> Result<(), BoxError> {
    let pool = migrated_pool::<C>(url)?;
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
            let insert = |path: Path, conn: &mut Pooled<C>| -> Result<u64, BoxError> {
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
                    Path::DefaultPlain => {
                        C::insert_deref(conn, &mut DerefOrder::unfilled(rows_per_insert))?;
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
                        let (rows, secs) =
                            measure(args.seconds / SLICES as f64, threads, &pool, |conn| {
                                insert(path, conn)
                            })?;
                        done[i].0 += rows;
                        done[i].1 += secs;
                    }
                }
                for (i, (rows, secs)) in done.into_iter().enumerate() {
                    rates[i].push(rows as f64 / secs);
                }
            }
            let baseline = &rates[0];
            for (i, path) in Path::ALL.into_iter().enumerate() {
                let ratios: Vec<f64> = rates[i].iter().zip(baseline).map(|(r, b)| r / b).collect();
                let (lo, mid, hi) = spread(&ratios);
                let (_, rate, _) = spread(&rates[i]);
                println!(
                    "| {rows_per_insert} | {threads} | {} | {rate:.0} | {mid:.2} ({lo:.2}–{hi:.2}) |",
                    path.name()
                );
            }
        }
    }
    next_id_latency::<C>(&pool, backend)?;
    Ok(())
}

/// Runs `op` in `threads` threads for `seconds`, each on a pooled connection of its own held
/// for the whole run (a checkout per operation would add r2d2's validity query to every path
/// alike); returns the rows `op` reported and the seconds it took.
fn measure<C, F>(
    seconds: f64,
    threads: usize,
    pool: &Pool<ConnectionManager<C>>,
    op: F,
) -> Result<(u64, f64), BoxError>
where
    C: BenchConnection,
    F: Fn(&mut Pooled<C>) -> Result<u64, BoxError> + Sync,
{
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let started = Instant::now();
    let done = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let op = &op;
                scope.spawn(move || -> Result<u64, BoxError> {
                    let mut conn = pool.get()?;
                    let mut rows = 0;
                    while Instant::now() < deadline {
                        rows += op(&mut conn)?;
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

/// Lowest, median and highest of `values`.
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (
        sorted[0],
        sorted[sorted.len() / 2],
        sorted[sorted.len() - 1],
    )
}

/// p50, p99 and p99.9 of `next_id` with 8 threads on one key, batch 100, each thread on its
/// own pooled connection.
fn next_id_latency<C: BenchConnection>(
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
