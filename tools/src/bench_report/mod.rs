//! The performance figures of the README, each as a ratio to a baseline measured in the same
//! run, rounds interleaved so that a noisy machine slows every path alike.
//!
//! - **insert**: single-row autocommit inserts and bulks of 100 rows, at 1 and 8 threads,
//!   through `diesel_seqgen::insert_into` with the process-wide default generator and with an
//!   explicit `Generator`, against a plain `diesel::insert_into` of IDs computed in memory
//!   (the baseline) and the database's own sequence in a column `DEFAULT`; and the default
//!   generator on a dereferenced (`&mut *pooled`) connection and on a connection of no pool,
//!   which cannot remember their database. Connections come from an r2d2 pool and are passed
//!   as `PooledConnection`s, the way the README says to. The report ends with a summary of
//!   every form, backend, size and thread count (`bench_report/summary.rs`).
//! - **next_id latency**: p50, p99 and p99.9 of `Generator::next_id` with 8 threads and a
//!   batch of 100 (every 100th call needs a block).
//! - **gapless** (`--report gapless` or `all`): on PostgreSQL, gapless inserts in transactions
//!   and alone beside django-sequences 3.1 doing the same and pgbench's single-row
//!   `UPDATE … RETURNING` (`bench_report/gapless.rs`); on MySQL/MariaDB beside the same
//!   statements written by hand (`bench_report/gapless_mysql.rs`).
//!
//! The hot path (cached IDs against bare in-memory loops) is criterion's: `cargo bench -p
//! seqgen --features bundled-sqlite --bench cached_path`.
//!
//! On PostgreSQL every connection sets `synchronous_commit = off`, so round trips rather than
//! the disk are compared (seqgen's reservations still commit durably: that is their real cost;
//! so do its gapless transactions, and the gapless comparison makes the others do the same).

use diesel_seqgen::DistributedId;

mod connection;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod deferred;
#[cfg(feature = "postgres")]
mod gapless;
#[cfg(feature = "mysql")]
mod gapless_mysql;
#[cfg(any(feature = "postgres", feature = "mysql"))]
mod gapless_steps;
mod inserts;
mod latency;
#[cfg(any(feature = "async-postgres", feature = "async-mysql"))]
mod nonblocking;
mod plots;
mod processes;
mod rollover;
mod rounds;
mod scaling;
mod scopes;
mod summary;

pub use connection::BenchConnection;
use connection::Setup;
use inserts::report;

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
    /// Workers of the deferred comparison (`--report deferred`)
    #[arg(long, default_value_t = 8)]
    pub workers: usize,
    /// The Python with Django and django-sequences 3.1 (see tools/scripts/gapless_django.py)
    #[arg(long, default_value = "python3")]
    pub django_python: String,
    /// Where `--report scaling` writes its points (scaling.json) and their plots (SVG)
    #[arg(long, default_value = "benchmarks")]
    pub out: std::path::PathBuf,
    /// The active scopes of the scopes series (`--report scaling` or `scopes`)
    #[arg(long, value_delimiter = ',', default_values_t = [1, 100, 10_000, 1_000_000])]
    pub scopes: Vec<usize>,
    /// Untimed seconds of round-robin before each scopes point is timed, for every scope's
    /// blocks to grow to its demand (default: `--seconds`)
    #[arg(long)]
    pub ramp_seconds: Option<f64>,
    /// Prints what the scopes series' generator did in each 5 s of a round (reservations,
    /// their mean block and time, retries), from its first ID on
    #[arg(long)]
    pub timeline: bool,
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
    /// Gapless inside the transaction against after the commit, 20 ms transactions
    Deferred,
    /// How costs grow with active scopes, processes on one key, and a period's rollover
    Scaling,
    /// The active-scopes series of `scaling` alone, printed (`--scopes`, `--ramp-seconds`)
    Scopes,
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
                #[allow(dead_code, reason = "the async rows' only users need the async features")]
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
    bench_orders_conn, ConnOrder;
    bench_orders_explicit, ExplicitOrder;
    bench_orders_async_plain, AsyncPlainOrder;
    bench_orders_async_conn, AsyncConnOrder;
    bench_orders_async_deadpool, AsyncDeadpoolOrder;
    bench_orders_async_bb8, AsyncBb8Order;
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
    if matches!(args.report, Report::Scaling | Report::Scopes) {
        return scaling_report(args);
    }
    for url in &args.url {
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let mysql = url.starts_with("mysql://");
        let gapless = matches!(args.report, Report::Gapless | Report::Deferred);
        if !postgres && !mysql && gapless {
            eprintln!("{url}: the gapless comparisons run on PostgreSQL and MySQL");
            continue;
        }
        if postgres {
            #[cfg(feature = "postgres")]
            {
                if !gapless {
                    report::<diesel::PgConnection>(args, url, "postgres")?;
                }
                #[cfg(feature = "async-postgres")]
                if matches!(args.report, Report::Inserts | Report::All) {
                    nonblocking::postgres(args, url, "postgres")?;
                }
                if matches!(args.report, Report::Gapless | Report::All) {
                    gapless::report(args, url)?;
                }
                if matches!(args.report, Report::Deferred | Report::All) {
                    let notify = |conn: &mut diesel::PgConnection| {
                        Ok(diesel_seqgen::pending::notify_on_commit(
                            conn,
                            "bench_deferred",
                        )?)
                    };
                    deferred::report(args, url, &deferred::POSTGRES, notify)?;
                }
            }
            #[cfg(not(feature = "postgres"))]
            return Err("built without PostgreSQL: add --features postgres".into());
        } else if mysql {
            #[cfg(feature = "mysql")]
            if !gapless {
                report::<diesel::MysqlConnection>(args, url, "mysql")?;
            }
            #[cfg(feature = "async-mysql")]
            if matches!(args.report, Report::Inserts | Report::All) {
                nonblocking::mysql(args, url, "mysql")?;
            }
            #[cfg(feature = "mysql")]
            if matches!(args.report, Report::Gapless | Report::All) {
                gapless_mysql::report(args, url)?;
            }
            #[cfg(feature = "mysql")]
            if matches!(args.report, Report::Deferred | Report::All) {
                deferred::report::<diesel::MysqlConnection>(args, url, &deferred::MYSQL, |_| {
                    Ok(())
                })?;
            }
            #[cfg(not(feature = "mysql"))]
            return Err("built without MySQL: add --features mysql".into());
        } else {
            #[cfg(feature = "sqlite")]
            report::<diesel::SqliteConnection>(args, url, "sqlite")?;
            #[cfg(not(feature = "sqlite"))]
            return Err("built without SQLite: add --features sqlite".into());
        }
    }
    summary::print();
    Ok(())
}

/// `--report scaling` on every URL (PostgreSQL and MySQL), written to `--out`; or its scopes
/// series alone (`--report scopes`), printed only.
fn scaling_report(args: &Args) -> Result<(), BoxError> {
    let mut runs = Vec::new();
    for url in &args.url {
        if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            #[cfg(feature = "postgres")]
            runs.extend(scaling::run::<diesel::PgConnection>(args, url, "postgres")?);
            #[cfg(not(feature = "postgres"))]
            return Err("built without PostgreSQL: add --features postgres".into());
        } else if url.starts_with("mysql://") {
            #[cfg(feature = "mysql")]
            runs.extend(scaling::run::<diesel::MysqlConnection>(args, url, "mysql")?);
            #[cfg(not(feature = "mysql"))]
            return Err("built without MySQL: add --features mysql".into());
        } else {
            eprintln!("{url}: the scaling report runs on PostgreSQL and MySQL");
        }
    }
    if args.report == Report::Scopes {
        return Ok(());
    }
    plots::write(&args.out, &runs)
}
