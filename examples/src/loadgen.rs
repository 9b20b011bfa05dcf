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
use seqgen::{Generator, OffsetClock, Spec};

const USAGE: &str = "usage: loadgen --url URL [--key NAME] [--threads N] [--ids N | --seconds S] \
[--batch N] [--mode batched|gapless] [--insert] [--rollback P] [--clock-offset-secs S] \
[--date PATTERN] [--series CODES --series-max N] [--out FILE] [--accept-non-durable-server]

  --url URL               a SQLite file path, postgres://... or mysql://... (the scheme picks the backend)
  --key NAME              db_key counter name (default: loadgen)
  --threads N             worker threads (default: 4)
  --ids N                 IDs to take in all (default: 100000), or
  --seconds S             run for S seconds instead
  --batch N               numbers reserved per round trip (default: 100)
  --mode batched|gapless  numbering mode (default: batched)
  --insert                insert each ID into loadgen_rows inside a transaction
  --rollback P            roll back that fraction (0..=1) of the inserts, after the ID was taken
  --clock-offset-secs S   shift this process's clock by S seconds (may be negative)
  --date PATTERN          a date part for the IDs, e.g. %Y%m%d (default: none)
  --series CODES          series codes, comma-separated (e.g. A,B,C): the run ends when the
                          last is full
  --series-max N          numbers per series (with --series)
  --out FILE              append every committed ID to FILE, one per line
  --accept-non-durable-server
                          reserve even where the server does not commit durably (a crash
                          can then repeat numbers; for development databases only)

A dropped connection (a database restart, a network cut) is retried on a new connection with
bounded exponential backoff; the run fails when the database stays away for about a minute.";

/// Numbering modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Blocks of `batch` numbers, served from memory.
    Batched,
    /// Numbers taken in the inserting transaction.
    Gapless,
}

/// Parsed command line.
#[derive(Debug, Clone)]
pub struct Args {
    /// Database URL or SQLite path.
    pub url: String,
    /// Counter name.
    pub key: String,
    /// Worker threads.
    pub threads: usize,
    /// IDs to take, when not running for a time.
    pub ids: u64,
    /// Run for this long instead.
    pub seconds: Option<f64>,
    /// Batch size.
    pub batch: u32,
    /// Numbering mode.
    pub mode: Mode,
    /// Insert each ID in a transaction.
    pub insert: bool,
    /// Fraction of inserts to roll back.
    pub rollback: f64,
    /// Clock shift in seconds.
    pub clock_offset_secs: i64,
    /// Date pattern of the IDs.
    pub date: String,
    /// Series codes, if any.
    pub series: Vec<String>,
    /// Numbers per series.
    pub series_max: u64,
    /// File to append committed IDs to.
    pub out: Option<PathBuf>,
    /// Reserve on a server that does not commit durably.
    pub accept_non_durable_server: bool,
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        url: String::new(),
        key: "loadgen".into(),
        threads: 4,
        ids: 100_000,
        seconds: None,
        batch: 100,
        mode: Mode::Batched,
        insert: false,
        rollback: 0.0,
        clock_offset_secs: 0,
        date: String::new(),
        series: Vec::new(),
        series_max: 0,
        out: None,
        accept_non_durable_server: false,
    };
    let (mut ids_given, mut args) = (false, args.into_iter());
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--url" => parsed.url = value()?,
            "--key" => parsed.key = value()?,
            "--threads" => parsed.threads = number(&flag, &value()?)?,
            "--ids" => {
                parsed.ids = number(&flag, &value()?)?;
                ids_given = true;
            }
            "--seconds" => parsed.seconds = Some(number(&flag, &value()?)?),
            "--batch" => parsed.batch = number(&flag, &value()?)?,
            "--mode" => {
                parsed.mode = match value()?.as_str() {
                    "batched" => Mode::Batched,
                    "gapless" => Mode::Gapless,
                    other => return Err(format!("--mode must be batched or gapless, got {other}")),
                }
            }
            "--insert" => parsed.insert = true,
            "--rollback" => parsed.rollback = number(&flag, &value()?)?,
            "--clock-offset-secs" => parsed.clock_offset_secs = number(&flag, &value()?)?,
            "--date" => parsed.date = value()?,
            "--series" => parsed.series = value()?.split(',').map(str::to_owned).collect(),
            "--series-max" => parsed.series_max = number(&flag, &value()?)?,
            "--out" => parsed.out = Some(PathBuf::from(value()?)),
            "--accept-non-durable-server" => parsed.accept_non_durable_server = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.url.is_empty() {
        return Err("--url is required".into());
    }
    if ids_given && parsed.seconds.is_some() {
        return Err("give --ids or --seconds, not both".into());
    }
    if parsed.threads == 0 || parsed.batch == 0 {
        return Err("--threads and --batch must be at least 1".into());
    }
    if !(0.0..=1.0).contains(&parsed.rollback) {
        return Err("--rollback must be between 0 and 1".into());
    }
    if parsed.rollback > 0.0 && !parsed.insert {
        return Err("--rollback needs --insert".into());
    }
    if parsed.series.is_empty() != (parsed.series_max == 0) {
        return Err("--series and --series-max go together".into());
    }
    if parsed.seconds.is_some_and(|s| !(s > 0.0 && s.is_finite())) {
        return Err("--seconds must be positive".into());
    }
    Ok(parsed)
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} takes a number, got {value:?}"))
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
    /// Latency percentiles of one ID (with its insert), in microseconds.
    pub p50_us: u64,
    /// 99th percentile.
    pub p99_us: u64,
    /// 99.9th percentile.
    pub p999_us: u64,
}

impl Report {
    /// The one JSON line loadgen prints.
    pub fn json(&self) -> String {
        let per_sec = self.committed as f64 / self.seconds.max(1e-9);
        format!(
            concat!(
                r#"{{"backend":"{}","mode":"{}","threads":{},"batch":{},"ids":{},"committed":{},"#,
                r#""seconds":{:.3},"ids_per_sec":{:.0},"reservations":{},"reconnects":{},"p50_us":{},"p99_us":{},"p999_us":{}}}"#
            ),
            self.backend,
            match self.args.mode {
                Mode::Batched => "batched",
                Mode::Gapless => "gapless",
            },
            self.args.threads,
            self.args.batch,
            self.ids,
            self.committed,
            self.seconds,
            per_sec,
            self.reservations,
            self.reconnects,
            self.p50_us,
            self.p99_us,
            self.p999_us
        )
    }
}

/// Runs loadgen with command-line arguments: exit code 2 and the usage on bad arguments,
/// 1 on a failed run, 0 after printing the JSON line.
pub fn main_with(args: impl IntoIterator<Item = String>) -> ExitCode {
    let args = match parse(args) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("loadgen: {e}\n\n{USAGE}");
            return ExitCode::from(2);
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
        .max_size(args.threads as u32 + 2)
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
    let spec = Arc::new(match args.mode {
        Mode::Batched => spec.build()?,
        Mode::Gapless => spec.gapless().build()?,
    });
    let generator = Generator::builder()
        .clock(OffsetClock(TimeDelta::seconds(args.clock_offset_secs)))
        .pool(pool.clone());
    let generator = if args.accept_non_durable_server {
        generator.accept_non_durable_server()
    } else {
        generator
    }
    .build();

    let started = Instant::now();
    let deadline = args.seconds.map(|s| started + Duration::from_secs_f64(s));
    let claimed = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..args.threads)
        .map(|worker| {
            let (pool, spec, generator, args) =
                (pool.clone(), spec.clone(), generator.clone(), args.clone());
            let (claimed, failed) = (claimed.clone(), failed.clone());
            std::thread::spawn(move || -> Result<Worker, BoxError> {
                let mut conn = Some(pool.get()?);
                let mut out = match &args.out {
                    Some(path) => Some(OpenOptions::new().create(true).append(true).open(path)?),
                    None => None,
                };
                let mut done = Worker::default();
                let mut rng = Rng(0x9e37_79b9_7f4a_7c15
                    ^ ((worker as u64 + 1) * 0x1000_0001)
                    ^ (u64::from(std::process::id()) << 32));
                loop {
                    let more = match deadline {
                        Some(deadline) => Instant::now() < deadline,
                        None => claimed.fetch_add(1, Ordering::Relaxed) < args.ids,
                    };
                    if !more || failed.load(Ordering::Relaxed) {
                        return Ok(done);
                    }
                    let t0 = Instant::now();
                    let roll_back = args.insert && rng.next_f64() < args.rollback;
                    // What an app does when the database restarts: the library returns the
                    // error; the app tries again on a new connection, a bounded number of
                    // times. A retried reservation may leave a hole, never a repeat.
                    let result = (|| {
                        let live = match conn.as_mut() {
                            Some(live) => live,
                            None => conn.insert(pool.get()?),
                        };
                        let result = if args.insert {
                            insert_one(&mut **live, &generator, &spec, roll_back)
                        } else {
                            generator
                                .next_id(&mut **live, &spec)
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
                        Err(e)
                            if matches!(
                                e.downcast_ref::<seqgen::Error>(),
                                Some(seqgen::Error::SeriesExhausted { .. })
                            ) =>
                        {
                            return Ok(done)
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            return Err(e);
                        }
                    };
                    done.latencies_us.push(t0.elapsed().as_micros() as u64);
                    done.ids += 1;
                    if let Some(id) = id {
                        done.committed += 1;
                        if let Some(out) = &mut out {
                            // One write per line: a process killed mid-run leaves whole lines.
                            append_line(out, &id)?;
                        }
                    }
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
    total.latencies_us.sort_unstable();
    let pct = |p: f64| {
        let lat = &total.latencies_us;
        if lat.is_empty() {
            0
        } else {
            lat[((lat.len() as f64 * p) as usize).min(lat.len() - 1)]
        }
    };
    Ok(Report {
        backend,
        args: args.clone(),
        ids: total.ids,
        committed: total.committed,
        seconds,
        reservations: generator.reservations(),
        reconnects: total.reconnects,
        p50_us: pct(0.50),
        p99_us: pct(0.99),
        p999_us: pct(0.999),
    })
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

/// Takes an ID and inserts it in one transaction; `None` when it was rolled back.
fn insert_one<C: LoadgenConnection>(
    conn: &mut C,
    generator: &Generator,
    spec: &Spec,
    roll_back: bool,
) -> Result<Option<String>, BoxError> {
    let result = conn.transaction(|conn| {
        let id = generator.next_id(conn, spec)?;
        C::insert_row(conn, spec.key(), &id)?;
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
fn create_rows_table<C: LoadgenConnection>(conn: &mut C) -> Result<(), BoxError> {
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

#[derive(Default)]
struct Worker {
    ids: u64,
    committed: u64,
    reconnects: u64,
    latencies_us: Vec<u64>,
}

impl Worker {
    fn merge(&mut self, other: Worker) {
        self.ids += other.ids;
        self.committed += other.committed;
        self.reconnects += other.reconnects;
        self.latencies_us.extend(other.latencies_us);
    }
}

/// xorshift64*: enough randomness to pick which transactions roll back.
struct Rng(u64);

impl Rng {
    fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Args, String> {
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
    }
}
