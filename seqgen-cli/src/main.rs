//! `seqgen`: look at and change seqgen's `db_key` counters, and audit gapless numbers against
//! your tables, on SQLite, PostgreSQL and MySQL. Each command is a function of
//! [`diesel_seqgen::admin`]; this binary parses arguments, connects, and prints.
//!
//! Exit codes: 0 done; 1 `gaps` found something unexplained, or `check` a counter behind its
//! table; 2 bad input or a refused change (nothing changed); 3 the database failed or could
//! not be reached. `capacity` follows monitoring plugins instead: 0 OK, 1 WARNING, 2 CRITICAL,
//! 3 UNKNOWN.

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};

/// The exit codes, for `--help`.
const EXIT_CODES: &str = "\
Exit codes:
  0  done
  1  `gaps` found a missing number nobody explained; `check` a counter behind its table
  2  bad input or a refused change: nothing changed
  3  the database failed or could not be reached
  `capacity` answers as a monitoring plugin: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN.
  `number --follow` connects again after a failure; see `seqgen number --help`.";

mod commands;
mod connection;
mod failure;
pub(crate) use failure::Failure;

/// Look at and change seqgen's db_key counters; audit gapless numbers against your tables.
#[derive(Debug, Parser)]
#[command(name = "seqgen", version, about, long_about = None, after_help = EXIT_CODES)]
struct Cli {
    /// The database: a PostgreSQL or MySQL URL, or a SQLite file. As with the diesel CLI, it
    /// is read from DATABASE_URL when not given, and a `.env` file (in this directory or
    /// above) can set that.
    #[arg(
        long,
        visible_alias = "url",
        env = "DATABASE_URL",
        global = true,
        hide_env_values = true
    )]
    database_url: Option<String>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create or upgrade the db_key table (and the void ledger).
    Migrate,
    /// Every key with its periods: current value, batch size, start value, capacity, how much
    /// of it is used, when it runs out at its period's rate so far, shape, last change.
    Keys {
        /// Only this key.
        #[arg(long)]
        key: Option<String>,
        /// The time zone the keys' periods begin in (`utc`, `local`, `+08:00`, `Europe/Paris`),
        /// which tells the current period.
        #[arg(long, default_value = "utc", value_parser = parse_time_zone)]
        tz: diesel_seqgen::TimeZone,
        /// JSON (one array) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// The current counters past --warn or --critical percent of what they hold, as a
    /// monitoring plugin: exit code 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (Nagios).
    Capacity {
        /// Only this key.
        #[arg(long)]
        key: Option<String>,
        /// Warning at this percent used.
        #[arg(long, default_value_t = 80.0)]
        warn: f64,
        /// Critical at this percent used.
        #[arg(long, default_value_t = 95.0)]
        critical: f64,
        /// The time zone the keys' periods begin in.
        #[arg(long, default_value = "utc", value_parser = parse_time_zone)]
        tz: diesel_seqgen::TimeZone,
    },
    /// Every key's capacity, and the rows waiting for a follower (--pending), in Prometheus'
    /// exposition format: printed (node_exporter's textfile collector), or served at /metrics
    /// with --listen.
    Metrics(commands::MetricsArgs),
    /// The last number a key handed out in a period, and the next one.
    Peek {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// The scope, for a key that counts per scope (a company, an order...).
        #[arg(long, default_value = "")]
        scope: String,
        #[command(flatten)]
        period: PeriodArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Set a key's batch_size (numbers per reservation); `default` clears it.
    SetBatch {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// At least 1, or `default` for the spec's own.
        value: SettingValue,
    },
    /// Set a key's start_value (the first number of a new period); `default` clears it.
    SetStart {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// At least 1, or `default` for 1. With a step, a number on it (`1000` on a step of
        /// 10), which the row stores as the counter that prints it (100).
        value: SettingValue,
    },
    /// For a gapless key: the numbers of a period missing from a table, each voided or
    /// unexplained (exit code 1 when something is unexplained).
    Gaps {
        #[command(flatten)]
        ids: IdsArgs,
        /// For a key that counts per scope: the scope to check…
        #[arg(long, requires = "scope_column")]
        scope: Option<String>,
        /// …and the table's column holding each row's scope.
        #[arg(long, requires = "scope")]
        scope_column: Option<String>,
        #[command(flatten)]
        period: PeriodArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Record in the void ledger that an issued ID was cancelled, and why (`gaps` shows it).
    Void {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// The scope the ID was taken in, for a key that counts per scope.
        #[arg(long, default_value = "")]
        scope: String,
        /// Why, in words an auditor can read.
        #[arg(long)]
        reason: String,
        /// The ID, as issued (e.g. INV2026000041).
        id: String,
    },
    /// Raise a key's counters past the IDs a table already holds (every period and scope),
    /// so that seqgen continues after them; never lowers one. Run it before seqgen takes over.
    Adopt {
        #[command(flatten)]
        table: TableArgs,
        /// Print what it would raise, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compare a table's IDs with the key's counters: exit code 1 when a counter is behind
    /// the table (its next number is one the table holds: after a restore, an edit, an import).
    Check {
        #[command(flatten)]
        table: TableArgs,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Also write what was found to this file, for node_exporter's textfile collector
        /// (seqgen_check_counters_behind, seqgen_check_rows_without_id).
        #[arg(long, value_name = "PATH")]
        textfile: Option<std::path::PathBuf>,
    },
    /// Set a counter back, deliberately, for a key nobody uses any more: every number above
    /// TO comes out again. The database refuses any other lowering.
    Renumber {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// The scope, for a key that counts per scope.
        #[arg(long, default_value = "")]
        scope: String,
        /// The period, as the IDs show it (none for a key without a date part).
        #[arg(long, default_value = "")]
        period: String,
        /// The counter's new value: the next number is TO + 1.
        #[arg(long)]
        to: u64,
        /// Refuse a counter that took a number less than this many seconds ago.
        #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
        min_idle_secs: u64,
    },
    /// Number a table's committed rows that have no number yet with a gapless key, in order,
    /// in short transactions (numbers given after the commit); with --follow, as they commit.
    Number(commands::NumberArgs),
    /// Print a completion script for SHELL, e.g. `seqgen completions bash >
    /// ~/.local/share/bash-completion/completions/seqgen` (as `diesel completions` does).
    Completions {
        /// The shell the script is for.
        shell: clap_complete::Shell,
    },
    /// Delete a key's counter rows of the periods before PERIOD (never the current one).
    Prune {
        /// The key, as `seqgen keys` lists it.
        #[arg(long)]
        key: String,
        /// The first period to keep, as the IDs show it (e.g. 202601).
        #[arg(long, value_name = "PERIOD")]
        before: String,
        /// The time zone the key's periods begin in (`utc`, `local`, `+08:00`, `Europe/Paris`).
        #[arg(long, default_value = "utc", value_parser = parse_time_zone)]
        tz: diesel_seqgen::TimeZone,
        /// Refuse a period whose row took a number less than this many seconds ago: an
        /// instance whose clock lags may still be in it.
        #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
        min_age_secs: u64,
    },
}

/// A key, and the business table column holding its IDs.
#[derive(Debug, clap::Args)]
struct IdsArgs {
    /// The key, as `seqgen keys` lists it.
    #[arg(long)]
    key: String,
    /// The business table (`table` or `schema.table`).
    #[arg(long)]
    table: String,
    /// Its column holding the IDs.
    #[arg(long)]
    column: String,
}

/// A business table's IDs of a key, and how to read them.
#[derive(Debug, clap::Args)]
struct TableArgs {
    #[command(flatten)]
    ids: IdsArgs,
    /// For a key that counts per scope: the table's column holding each row's scope.
    #[arg(long)]
    scope_column: Option<String>,
    /// How the IDs look, as `seqgen keys` shows a shape (e.g. `INV{date:%Y}{seq:6}`), for a
    /// key that has no shape recorded yet; by default the recorded one.
    #[arg(long)]
    shape: Option<String>,
}

/// Which period: given, or the current one in a time zone.
#[derive(Debug, clap::Args)]
struct PeriodArgs {
    /// The period as the IDs show it (e.g. 202611); the current one by default.
    #[arg(long)]
    period: Option<String>,
    /// The time zone the key's periods begin in (`utc`, `local`, `+08:00`, `Europe/Paris`), for the current
    /// period.
    #[arg(long, default_value = "utc", value_parser = parse_time_zone)]
    tz: diesel_seqgen::TimeZone,
}

/// A setting's new value: a number, or `default` to clear it.
#[derive(Debug, Clone, Copy)]
struct SettingValue(Option<i64>);

impl std::str::FromStr for SettingValue {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "default" {
            return Ok(SettingValue(None));
        }
        match text.parse::<i64>() {
            Ok(n) if n >= 1 => Ok(SettingValue(Some(n))),
            _ => Err(format!(
                "expected a whole number of at least 1, or `default`; got {text:?}"
            )),
        }
    }
}

fn parse_time_zone(text: &str) -> Result<diesel_seqgen::TimeZone, String> {
    diesel_seqgen::TimeZone::parse(text).ok_or_else(|| {
        format!(
            "expected `utc`, `local`, an offset such as `+08:00` or an IANA zone such as \
             `Europe/Paris`; got {text:?}"
        )
    })
}

fn main() -> ExitCode {
    // As the diesel CLI does: variables of a `.env` file, unless the environment has them.
    let _ = dotenvy::dotenv();
    let cli = Cli::parse();
    let url = cli.database_url.as_deref();
    // A monitoring plugin's convention: anything that keeps it from answering is UNKNOWN.
    let unknown = matches!(cli.command, Command::Capacity { .. });
    let result = match &cli.command {
        Command::Metrics(args) if args.listen.is_some() => commands::serve_metrics(url, args),
        Command::Number(args) => commands::number(url, args),
        Command::Completions { shell } => completions(*shell),
        _ => run(url, cli.command),
    };
    match result {
        Ok(code) => code,
        Err(Failure::Closed) => ExitCode::SUCCESS,
        Err(Failure::Input(message) | Failure::Database(message)) if unknown => {
            println!("SEQGEN CAPACITY UNKNOWN - {message}");
            ExitCode::from(3)
        }
        Err(Failure::Input(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Database(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(3)
        }
    }
}

/// `seqgen completions SHELL`: no database.
fn completions(shell: clap_complete::Shell) -> Result<ExitCode, Failure> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "seqgen", &mut script);
    std::io::Write::write_all(&mut std::io::stdout(), &script)?;
    Ok(ExitCode::SUCCESS)
}

/// Connects and runs `command`.
fn run(url: Option<&str>, command: Command) -> Result<ExitCode, Failure> {
    let create = matches!(command, Command::Migrate);
    connection::connect(url, create).and_then(|mut conn| commands::run(&mut conn, command))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    /// `--help` says what every flag and argument of every command is for, and clap's own
    /// checks of the definitions pass.
    #[test]
    fn every_argument_has_help() {
        super::Cli::command().debug_assert();
        let cli = super::Cli::command();
        let missing: Vec<String> = std::iter::once(&cli)
            .chain(cli.get_subcommands())
            .flat_map(|command| {
                command
                    .get_arguments()
                    .filter(|arg| arg.get_help().is_none())
                    .map(|arg| format!("seqgen {} {}", command.get_name(), arg.get_id()))
            })
            .collect();
        assert!(missing.is_empty(), "without help: {missing:?}");
    }
}
