//! The load generator behind `examples/loadgen.rs` and the multi-process tests.
//!
//! Threads share one `seqgen::Generator` (one app instance per process) and an
//! r2d2 pool; each takes IDs `L` + 12-digit counter (optionally with a date part), optionally
//! inserting each into `loadgen_rows` (primary key: key and ID) inside a transaction and rolling back a fraction. At the
//! end it prints one JSON line.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::{BlockingRetryable, ExponentialBuilder};
use chrono::TimeDelta;
use diesel::connection::LoadConnection;
use diesel::r2d2::{ConnectionManager, Pool, R2D2Connection};
use diesel::result::Error as DieselError;
use diesel::{ExpressionMethods, RunQueryDsl};
use diesel_migrations::MigrationHarness;
use seqgen::clock::OffsetClock;
use seqgen::{Generator, Spec};

/// Numbering modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Blocks of `batch` numbers, served from memory.
    Batched,
    /// Numbers taken in the inserting transaction.
    Gapless,
}

/// Takes IDs from seqgen in many threads and prints what it measured as one JSON line.
#[derive(Debug, Clone, clap::Parser)]
#[command(
    name = "loadgen",
    after_help = "A dropped connection (a database restart, a network cut) is retried on a new \
                  connection with bounded exponential backoff; the run fails when the database \
                  stays away for about a minute."
)]
pub struct Args {
    /// A SQLite file path, postgres://... or mysql://... (the scheme picks the backend)
    #[arg(long)]
    pub url: String,
    /// db_key counter name
    #[arg(long, default_value = "loadgen")]
    pub key: String,
    /// Worker threads
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    pub threads: u32,
    /// IDs to take in all
    #[arg(long, default_value_t = 100_000, conflicts_with = "seconds")]
    pub ids: u64,
    /// Run for S seconds instead of taking --ids
    #[arg(long, value_name = "S", value_parser = positive_seconds)]
    pub seconds: Option<f64>,
    /// Numbers reserved per round trip
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub batch: u32,
    /// Reserve exactly --batch numbers each time, however busy the key (by default blocks
    /// grow while they last under a second)
    #[arg(long)]
    pub fixed_batch: bool,
    /// Numbering mode
    #[arg(long, value_enum, default_value_t = Mode::Batched)]
    pub mode: Mode,
    /// Insert each ID into loadgen_rows inside a transaction
    #[arg(long)]
    pub insert: bool,
    /// Roll back that fraction (0..=1) of the inserts, after the ID was taken
    #[arg(long, value_name = "P", default_value_t = 0.0, requires = "insert", value_parser = fraction)]
    pub rollback: f64,
    /// Shift this process's clock by S seconds (may be negative)
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0,
        allow_negative_numbers = true
    )]
    pub clock_offset_secs: i64,
    /// A date part for the IDs, e.g. %Y%m%d (default: none)
    #[arg(long, value_name = "PATTERN", default_value = "")]
    pub date: String,
    /// Series codes, comma-separated (e.g. A,B,C): the run ends when the last is full
    #[arg(
        long,
        value_name = "CODES",
        value_delimiter = ',',
        requires = "series_max"
    )]
    pub series: Vec<String>,
    /// Numbers per series (with --series)
    #[arg(long, value_name = "N", default_value_t = 0, requires = "series")]
    pub series_max: u64,
    /// Append every committed ID to FILE, one per line
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Reserve even where the server does not commit durably (a crash can then repeat
    /// numbers; for development databases only)
    #[arg(long)]
    pub accept_non_durable_server: bool,
    /// Count per scope: each ID is taken in one of N scopes (`s0` … `sN-1`, picked at random),
    /// each with its own counter; `--out` lines are then `SCOPE ID`. 0: one counter
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub scopes: u32,
    /// At the end, give the numbers this process still holds back to the counter
    /// (`Generator::release`), so the next run continues without a hole when none reserved
    /// after it
    #[arg(long)]
    pub release_on_exit: bool,
    /// Run --threads tasks (not threads) on a Tokio runtime, each ID on a diesel-async
    /// connection checked out of a deadpool pool of --connections (`seqgen::nonblocking`; build
    /// with an `async-*` feature). A dropped connection fails the run instead of being retried
    #[arg(long = "async")]
    pub run_async: bool,
    /// With --async: the pool's connections for the tasks (the generator has a pool of 2)
    #[arg(long, value_name = "N", default_value_t = 8, requires = "run_async",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub connections: u32,
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Ok(s),
        _ => Err(format!("a positive number of seconds, got {text:?}")),
    }
}

fn fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("a fraction between 0 and 1, got {text:?}")),
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, clap::Error> {
    use clap::Parser;
    Args::try_parse_from(std::iter::once("loadgen".to_owned()).chain(args))
}

/// What a run measured.
#[derive(Debug, Clone)]
pub struct Report {
    /// `sqlite`, `postgres` or `mysql`.
    pub backend: &'static str,
    /// The arguments it ran with.
    pub args: Args,
    /// IDs taken.
    pub ids: u64,
    /// IDs whose transaction committed (all of them without `--insert`).
    pub committed: u64,
    /// Wall time.
    pub seconds: f64,
    /// Reservations made by this process.
    pub reservations: u64,
    /// Operations tried again on a new connection after the database went away.
    pub reconnects: u64,
    /// Numbers given back to the counter at the end (`--release-on-exit`).
    pub released: u64,
    /// Latency percentiles of one ID (with its insert), in microseconds.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
}

/// The JSON line, field by field in this order (the README documents it).
#[derive(serde::Serialize)]
struct JsonLine<'a> {
    backend: &'a str,
    mode: Mode,
    threads: u32,
    batch: u32,
    ids: u64,
    committed: u64,
    seconds: f64,
    ids_per_sec: u64,
    reservations: u64,
    reconnects: u64,
    released: u64,
    p50_us: u64,
    p99_us: u64,
    p999_us: u64,
}

impl Report {
    /// The one JSON line loadgen prints.
    pub fn json(&self) -> String {
        let line = JsonLine {
            backend: self.backend,
            mode: self.args.mode,
            threads: self.args.threads,
            batch: self.args.batch,
            ids: self.ids,
            committed: self.committed,
            seconds: (self.seconds * 1000.0).round() / 1000.0,
            ids_per_sec: (self.committed as f64 / self.seconds.max(1e-9)).round() as u64,
            reservations: self.reservations,
            reconnects: self.reconnects,
            released: self.released,
            p50_us: self.p50_us,
            p99_us: self.p99_us,
            p999_us: self.p999_us,
        };
        serde_json::to_string(&line).expect("a struct of numbers and strings serializes")
    }
}

/// Runs loadgen with command-line arguments: exit code 2 and the usage on bad arguments,
/// 1 on a failed run, 0 after printing the JSON line.
pub fn main_with(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args = match parse(args) {
        Ok(args) => args,
        Err(e) => {
            // Usage errors exit with 2; --help and --version print and exit with 0.
            let _ = e.print();
            return ExitCode::from(e.exit_code() as u8);
        }
    };
    match run(&args) {
        Ok(report) => {
            println!("{}", report.json());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Runs a load against the database the URL names.
pub fn run(args: &Args) -> Result<Report, BoxError> {
    if args.run_async {
        #[cfg(any(
            feature = "async-sqlite",
            feature = "async-postgres",
            feature = "async-mysql"
        ))]
        return nonblocking::run(args);
        #[cfg(not(any(
            feature = "async-sqlite",
            feature = "async-postgres",
            feature = "async-mysql"
        )))]
        return Err("built without an async backend: add --features async-sqlite (or async-postgres, async-mysql)".into());
    }
    let url = args.url.as_str();
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        #[cfg(feature = "postgres")]
        return run_on::<diesel::PgConnection>(args, "postgres");
        #[cfg(not(feature = "postgres"))]
        return Err("built without PostgreSQL: add --features postgres".into());
    }
    if url.starts_with("mysql://") {
        #[cfg(feature = "mysql")]
        return run_on::<diesel::MysqlConnection>(args, "mysql");
        #[cfg(not(feature = "mysql"))]
        return Err("built without MySQL: add --features mysql".into());
    }
    #[cfg(feature = "sqlite")]
    return run_on::<diesel::SqliteConnection>(args, "sqlite");
    #[cfg(not(feature = "sqlite"))]
    Err("built without SQLite: add --features sqlite".into())
}

/// A connection type loadgen runs on.
pub trait LoadgenConnection:
    R2D2Connection + LoadConnection<Backend = Self::B> + MigrationHarness<Self::B> + 'static
{
    /// The backend, restated so that `seqgen::Backend` is known to hold for it.
    type B: seqgen::Backend;
    /// Per-connection setup.
    fn setup(_conn: &mut Self) -> Result<(), DieselError> {
        Ok(())
    }
    /// Inserts one row into `loadgen_rows` (Diesel's insert is concrete per backend).
    fn insert_row(conn: &mut Self, key: &str, id: &str) -> Result<usize, DieselError>;
}

macro_rules! insert_row {
    () => {
        fn insert_row(conn: &mut Self, key: &str, id: &str) -> Result<usize, DieselError> {
            diesel::insert_into(loadgen_rows::table)
                .values((loadgen_rows::key_name.eq(key), loadgen_rows::id.eq(id)))
                .execute(conn)
        }
    };
}

#[cfg(feature = "sqlite")]
impl LoadgenConnection for diesel::SqliteConnection {
    type B = diesel::sqlite::Sqlite;
    fn setup(conn: &mut Self) -> Result<(), DieselError> {
        seqgen::sqlite::configure(conn)
    }
    insert_row!();
}

#[cfg(feature = "postgres")]
impl LoadgenConnection for diesel::PgConnection {
    type B = diesel::pg::Pg;
    insert_row!();
}

#[cfg(feature = "mysql")]
impl LoadgenConnection for diesel::MysqlConnection {
    type B = diesel::mysql::Mysql;
    insert_row!();
}

#[derive(Debug)]
struct Setup;

impl<C: LoadgenConnection> diesel::r2d2::CustomizeConnection<C, diesel::r2d2::Error> for Setup {
    fn on_acquire(&self, conn: &mut C) -> Result<(), diesel::r2d2::Error> {
        C::setup(conn).map_err(diesel::r2d2::Error::QueryError)
    }
}

diesel::table! {
    /// Where `--insert` puts every ID: the ID is the primary key within its counter (IDs of
    /// different `--key`s look alike, `L` + counter, and share the table).
    loadgen_rows (key_name, id) {
        key_name -> Text,
        id -> Text,
    }
}

fn run_on<C: LoadgenConnection>(args: &Args, backend: &'static str) -> Result<Report, BoxError> {
    let url = args.url.strip_prefix("sqlite://").unwrap_or(&args.url);
    let pool = Pool::builder()
        .max_size(args.threads + 2)
        // While the database is away, fail fast and let the backoff decide when to try again.
        .connection_timeout(Duration::from_secs(2))
        .connection_customizer(Box::new(Setup))
        .build(ConnectionManager::<C>::new(url))?;
    {
        let mut conn = pool.get()?;
        seqgen::run_migrations(&mut *conn)?;
        if args.insert {
            create_rows_table(&mut *conn)?;
        }
    }
    let spec = Arc::new(spec_of(args)?);
    let generator = generator_of(args).pool(pool.clone()).build();

    let started = Instant::now();
    let quota = Arc::new(Quota::new(args, started));
    let failed = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..args.threads)
        .map(|_| {
            let (pool, spec, generator, args) =
                (pool.clone(), spec.clone(), generator.clone(), args.clone());
            let (quota, failed) = (quota.clone(), failed.clone());
            std::thread::spawn(move || -> Result<Worker, BoxError> {
                let mut conn = Some(pool.get()?);
                let mut out = open_out(&args)?;
                let mut done = Worker::default();
                loop {
                    if !quota.more() || failed.load(Ordering::Relaxed) {
                        return Ok(done);
                    }
                    let scope = random_scope(&args);
                    let t0 = Instant::now();
                    let roll_back = args.insert && rand::random_bool(args.rollback);
                    // What an app does when the database restarts: the library returns the
                    // error; the app tries again on a new connection, a bounded number of
                    // times. A retried reservation may leave a hole, never a repeat.
                    let result = (|| {
                        let live = match conn.as_mut() {
                            Some(live) => live,
                            None => conn.insert(pool.get()?),
                        };
                        let result = if args.insert {
                            insert_one(&mut **live, &generator, &spec, &scope, roll_back)
                        } else {
                            generator
                                .next_id(&mut **live, spec.scope(&scope))
                                .map(Some)
                                .map_err(BoxError::from)
                        };
                        if result.as_ref().is_err_and(connection_lost) {
                            conn.take(); // the pool tests it before handing it out again
                        }
                        result
                    })
                    .retry(reconnect_backoff())
                    .sleep(std::thread::sleep)
                    .when(connection_lost)
                    .notify(|e, after| {
                        done.reconnects += 1;
                        eprintln!("loadgen: {e}; trying again in {after:?}");
                    })
                    .call();
                    let id = match result {
                        Ok(id) => id,
                        // The last series is full: the run is over, for every thread.
                        Err(e) if series_exhausted(&e) => return Ok(done),
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    };
                    done.took(t0.elapsed(), id, &mut out, &args, &scope)?;
                }
            })
        })
        .collect();
    let mut total = Worker::default();
    let mut first_error = None;
    for worker in workers {
        match worker.join().expect("worker panicked") {
            Ok(w) => total.merge(w),
            Err(e) => first_error = first_error.or(Some(e)),
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let seconds = started.elapsed().as_secs_f64();
    let released = if args.release_on_exit {
        generator.release(&mut *pool.get()?)?
    } else {
        0
    };
    Ok(total.report(backend, args, seconds, generator.reservations(), released))
}

/// The spec the arguments describe: `L` + 12-digit counter, with the date part, series,
/// scopes and mode asked for.
fn spec_of(args: &Args) -> Result<Spec, BoxError> {
    let spec = Spec::builder(args.key.clone())
        .prefix("L")
        .date(args.date.clone())
        .pad(12)
        .batch(args.batch);
    let spec = if args.series.is_empty() {
        spec
    } else {
        spec.series(args.series.clone(), args.series_max)
    };
    let spec = if args.scopes > 0 { spec.scoped() } else { spec };
    Ok(match args.mode {
        Mode::Batched => spec.build()?,
        Mode::Gapless => spec.gapless().build()?,
    })
}

/// The generator the arguments describe, but for its pool.
fn generator_of(args: &Args) -> seqgen::GeneratorBuilder {
    let generator =
        Generator::builder().clock(OffsetClock(TimeDelta::seconds(args.clock_offset_secs)));
    let generator = if args.accept_non_durable_server {
        generator.accept_non_durable_server()
    } else {
        generator
    };
    if args.fixed_batch {
        generator.fixed_batch()
    } else {
        generator
    }
}

/// What a run may still take: `--ids` in all, or until `--seconds` have passed.
struct Quota {
    deadline: Option<Instant>,
    claimed: AtomicU64,
    ids: u64,
}

impl Quota {
    fn new(args: &Args, started: Instant) -> Self {
        Quota {
            deadline: args.seconds.map(|s| started + Duration::from_secs_f64(s)),
            claimed: AtomicU64::new(0),
            ids: args.ids,
        }
    }

    /// Whether one more ID may be taken (and, counting IDs, claims it).
    fn more(&self) -> bool {
        match self.deadline {
            Some(deadline) => Instant::now() < deadline,
            None => self.claimed.fetch_add(1, Ordering::Relaxed) < self.ids,
        }
    }
}

/// The `--out` file, opened for appending, if asked for.
fn open_out(args: &Args) -> std::io::Result<Option<File>> {
    args.out
        .as_ref()
        .map(|path| OpenOptions::new().create(true).append(true).open(path))
        .transpose()
}

/// Whether `e` says the last series is full: the run is over.
fn series_exhausted(e: &BoxError) -> bool {
    matches!(
        e.downcast_ref::<seqgen::Error>(),
        Some(seqgen::Error::SeriesExhausted { .. })
    )
}

/// A scope picked at random among `--scopes` (`""` without scopes).
fn random_scope(args: &Args) -> String {
    match args.scopes {
        0 => String::new(),
        n => format!("s{}", rand::random_range(0..n)),
    }
}

/// The row key of an ID of `scope`: IDs repeat across scopes, so the key names the scope too.
fn row_key(spec: &Spec, scope: &str) -> String {
    match scope {
        "" => spec.key().to_owned(),
        scope => format!("{}/{scope}", spec.key()),
    }
}

/// An `--out` line.
fn out_line(args: &Args, scope: &str, id: &str) -> String {
    match args.scopes {
        0 => id.to_owned(),
        _ => format!("{scope} {id}"),
    }
}

/// Up to about a minute of attempts, 20 ms apart at first, then up to 1 s (with jitter, so that
/// the threads of many processes do not come back in lockstep).
fn reconnect_backoff() -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(Duration::from_millis(20))
        .with_max_delay(Duration::from_secs(1))
        .with_max_times(60)
        .with_jitter()
}

/// Whether `e` says the database connection is gone or could not be made (a restart, a
/// killed session, a network cut), rather than that the request itself was wrong.
fn connection_lost(e: &BoxError) -> bool {
    use diesel::result::DatabaseErrorKind;
    if e.downcast_ref::<diesel::r2d2::PoolError>().is_some() {
        return true; // no connection within the pool's timeout
    }
    let diesel = match e.downcast_ref::<seqgen::Error>() {
        Some(seqgen::Error::Pool(_)) => return true,
        Some(seqgen::Error::Database(e)) => e,
        Some(_) => return false,
        None => match e.downcast_ref::<DieselError>() {
            Some(e) => e,
            None => return false,
        },
    };
    match diesel {
        DieselError::BrokenTransactionManager
        | DieselError::DatabaseError(DatabaseErrorKind::ClosedConnection, _) => true,
        DieselError::DatabaseError(_, info) => {
            let message = info.message().to_ascii_lowercase();
            [
                "connection",
                "gone away",
                "shutting down",
                "starting up",
                "recovery mode",
                "terminating",
                "no more connections",
            ]
            .iter()
            .any(|word| message.contains(word))
        }
        _ => false,
    }
}

/// Takes an ID of `scope` (`""` unscoped) and inserts it in one transaction; `None` when it
/// was rolled back.
fn insert_one<C: LoadgenConnection>(
    conn: &mut C,
    generator: &Generator,
    spec: &Spec,
    scope: &str,
    roll_back: bool,
) -> Result<Option<String>, BoxError> {
    let result = conn.transaction(|conn| {
        let id = generator.next_id(conn, spec.scope(scope))?;
        C::insert_row(conn, &row_key(spec, scope), &id)?;
        if roll_back {
            return Err(seqgen::Error::Database(DieselError::RollbackTransaction));
        }
        Ok(id)
    });
    match result {
        Ok(id) => Ok(Some(id)),
        Err(seqgen::Error::Database(DieselError::RollbackTransaction)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// `loadgen_rows`, created once; several processes may race to create it.
pub(crate) fn create_rows_table<C: LoadgenConnection>(conn: &mut C) -> Result<(), BoxError> {
    let mut attempt = 0;
    loop {
        match conn.batch_execute(
            "CREATE TABLE IF NOT EXISTS loadgen_rows (key_name VARCHAR(191) NOT NULL, \
             id VARCHAR(64) NOT NULL, PRIMARY KEY (key_name, id))",
        ) {
            Ok(()) => return Ok(()),
            // PostgreSQL: two concurrent CREATE TABLE IF NOT EXISTS can collide in pg_type.
            Err(_) if attempt < 5 => {
                attempt += 1;
                std::thread::sleep(Duration::from_millis(50 * attempt));
            }
            Err(e) => return Err(e.into()),
        }
    }
}

fn append_line(out: &mut File, id: &str) -> std::io::Result<()> {
    let mut line = String::with_capacity(id.len() + 1);
    line.push_str(id);
    line.push('\n');
    out.write_all(line.as_bytes())
}

struct Worker {
    ids: u64,
    committed: u64,
    reconnects: u64,
    /// Latency of one ID (with its insert), in microseconds, to 3 significant digits.
    latency_us: hdrhistogram::Histogram<u64>,
}

impl Default for Worker {
    fn default() -> Self {
        Worker {
            ids: 0,
            committed: 0,
            reconnects: 0,
            latency_us: hdrhistogram::Histogram::new(3).expect("3 significant digits is valid"),
        }
    }
}

impl Worker {
    /// Counts an ID of `scope` taken in `latency`; one that committed (`Some`) is appended to
    /// `out`, one write per line, so that a process killed mid-run leaves whole lines.
    fn took(
        &mut self,
        latency: Duration,
        id: Option<String>,
        out: &mut Option<File>,
        args: &Args,
        scope: &str,
    ) -> std::io::Result<()> {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        // Auto-resizing: a value only fails to record past u64 range.
        let _ = self.latency_us.record(micros);
        self.ids += 1;
        if let Some(id) = id {
            self.committed += 1;
            if let Some(out) = out {
                append_line(out, &out_line(args, scope, &id))?;
            }
        }
        Ok(())
    }

    fn merge(&mut self, other: Worker) {
        self.ids += other.ids;
        self.committed += other.committed;
        self.reconnects += other.reconnects;
        let _ = self.latency_us.add(&other.latency_us);
    }

    /// The report of a run whose workers' sum this is.
    fn report(
        &self,
        backend: &'static str,
        args: &Args,
        seconds: f64,
        reservations: u64,
        released: u64,
    ) -> Report {
        let pct = |quantile: f64| self.latency_us.value_at_quantile(quantile);
        Report {
            backend,
            args: args.clone(),
            ids: self.ids,
            committed: self.committed,
            seconds,
            reservations,
            released,
            reconnects: self.reconnects,
            p50_us: pct(0.50),
            p99_us: pct(0.99),
            p999_us: pct(0.999),
        }
    }
}

#[cfg(any(
    feature = "async-sqlite",
    feature = "async-postgres",
    feature = "async-mysql"
))]
mod nonblocking;

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, clap::Error> {
        parse(list.iter().map(|s| s.to_string()))
    }

    #[test]
    fn parses_and_refuses_bad_arguments() {
        let a = args(&[
            "--url",
            "x.db",
            "--threads",
            "8",
            "--seconds",
            "2",
            "--insert",
            "--rollback",
            "0.1",
        ])
        .unwrap();
        assert_eq!(
            (a.threads, a.seconds, a.insert, a.rollback),
            (8, Some(2.0), true, 0.1)
        );
        assert!(args(&[]).is_err());
        assert!(args(&["--url", "x", "--ids", "5", "--seconds", "1"]).is_err());
        assert!(args(&["--url", "x", "--threads", "many"]).is_err());
        assert!(args(&["--url", "x", "--rollback", "0.5"]).is_err());
        assert!(args(&["--url", "x", "--mode", "fast"]).is_err());
        assert!(args(&["--url", "x", "--bogus"]).is_err());
        assert!(args(&["--url", "x", "--threads", "0"]).is_err());
        assert!(args(&["--url", "x", "--insert", "--rollback", "1.5"]).is_err());
        assert!(args(&["--url", "x", "--series", "A,B"]).is_err());
        let b = args(&[
            "--url",
            "x",
            "--series",
            "A,B",
            "--series-max",
            "9",
            "--clock-offset-secs",
            "-86400",
        ])
        .unwrap();
        assert_eq!(
            (b.series, b.series_max, b.clock_offset_secs),
            (vec!["A".to_owned(), "B".to_owned()], 9, -86400)
        );
        assert_eq!(args(&["--url", "x", "--bogus"]).unwrap_err().exit_code(), 2);
    }
}
