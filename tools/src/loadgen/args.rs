//! loadgen's arguments.

use std::path::PathBuf;

/// Numbering modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Blocks of `batch` numbers, served from memory.
    Batched,
    /// Numbers taken in the inserting transaction.
    Gapless,
    /// Rows committed without a number, numbered afterwards by a follower the process runs
    /// (`diesel_seqgen::pending::spawn_follower`); with `--via insert-into`.
    Deferred,
}

/// How each ID is taken and its row inserted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Via {
    /// `Generator::next_id`, then a plain Diesel insert of the ID (with `--insert`).
    NextId,
    /// `diesel_seqgen::insert_into(table).values(&mut rows)`, the insert users call, on
    /// derived models (`--key` is their scope; `--bulk` rows each); implies `--insert`.
    InsertInto,
}

/// The connection `--via insert-into` inserts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Form {
    /// The pooled connection as r2d2 hands it out (`&mut pooled`), the default generator.
    Pooled,
    /// The connection inside it (`&mut *pooled`), the default generator.
    Deref,
    /// A plain connection of the thread's own, the default generator.
    Plain,
    /// `&mut *pooled` with the process's own generator (`.with_generator(&g)`).
    Own,
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
    /// How each ID is taken and inserted
    #[arg(long, value_enum, default_value_t = Via::NextId, requires_if("insert-into", "insert"))]
    pub via: Via,
    /// With --via insert-into: the connection it inserts on (the default generator is given
    /// the pool by `global::use_pool`, as the README starts an app)
    #[arg(long, value_enum, default_value_t = Form::Pooled)]
    pub form: Form,
    /// With --via insert-into: rows per insert
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub bulk: u32,
    /// Roll back that fraction (0..=1) of the inserts, after the ID was taken
    #[arg(long, value_name = "P", default_value_t = 0.0, requires = "insert", value_parser = fraction)]
    pub rollback: f64,
    /// Run a transaction the database aborted (a deadlock, a serialization failure, a Galera
    /// certification conflict) again, with `diesel_seqgen::retry_transaction`, as an app must there;
    /// without it, such an abort fails the run
    #[arg(long, requires = "insert", conflicts_with = "run_async")]
    pub retry_conflicts: bool,
    /// Shift this process's clock by S seconds (may be negative; at most 100 years either way)
    #[arg(
        long,
        value_name = "S",
        default_value_t = 0,
        allow_negative_numbers = true,
        value_parser = clap::value_parser!(i64).range(-MAX_CLOCK_OFFSET..=MAX_CLOCK_OFFSET)
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
    /// Append what each attempt asked and got to FILE (`seqgen_tools::history`), for the
    /// nemesis checker
    #[arg(long, value_name = "FILE", conflicts_with = "run_async")]
    pub history: Option<PathBuf>,
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
    /// connection checked out of a deadpool pool of --connections (`diesel_seqgen::nonblocking`; build
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
    use clap::{CommandFactory, Parser};
    let args = Args::try_parse_from(std::iter::once("loadgen".to_owned()).chain(args))?;
    let refuse = |message: &str| {
        Err(Args::command().error(clap::error::ErrorKind::ArgumentConflict, message))
    };
    if args.via == Via::InsertInto {
        // The models' spec is fixed; only the generator's settings can change.
        if !args.date.is_empty() || !args.series.is_empty() || args.scopes > 0 {
            return refuse(
                "--via insert-into takes its spec from its models: no --date, --series or --scopes",
            );
        }
        if args.form != Form::Own && (args.fixed_batch || args.clock_offset_secs != 0) {
            return refuse("--fixed-batch and --clock-offset-secs are a generator's settings: with --via insert-into, only --form own has one");
        }
    } else if args.mode == Mode::Deferred {
        return refuse("--mode deferred goes with --via insert-into");
    } else if args.bulk != 1 || args.form != Form::Pooled {
        return refuse("--bulk and --form go with --via insert-into");
    }
    if args.mode == Mode::Deferred && args.run_async {
        return refuse("--mode deferred runs its follower on a thread: not with --async");
    }
    Ok(args)
}

/// The largest clock shift `--clock-offset-secs` takes: 100 years, far inside what a date can
/// hold (a larger one overflowed chrono's arithmetic: a panic, not a usage error).
pub const MAX_CLOCK_OFFSET: i64 = 100 * 366 * 24 * 3600;
