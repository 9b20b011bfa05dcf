//! `seqgen number`: gapless numbers given after the commit, once or as a sidecar that follows
//! the table ([`diesel_seqgen::pending`]). Following, it lives through lost connections,
//! server restarts, failovers, lock timeouts and deadlocks (it connects again, after a growing
//! pause), stops on what no new attempt can fix, and ends its batch and exits 0 on SIGTERM
//! or SIGINT.

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use backon::{BlockingRetryable, ExponentialBuilder};
use diesel::Connection;
use diesel_seqgen::pending::{self, FollowConnection, FollowEvent, PendingRows};
use diesel_seqgen::Spec;

use crate::connection::{backend_of, connect, url_of, with_connection};
use crate::Failure;

/// The exit codes of `seqgen number`, for its `--help`.
pub(crate) const EXIT_CODES: &str = "\
Exit codes:
  0  numbered every row waiting (once), or stopped by SIGTERM or SIGINT after its batch (--follow)
  2  what no new attempt can fix: bad arguments, a table or column that does not exist, db_key
     missing (`seqgen migrate`), a key that refuses the spec (another shape, not gapless)
  3  the database failed (once; with --follow the command connects again instead)";

/// The rows to number, and how.
#[derive(Debug, clap::Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct NumberArgs {
    /// The key, the table (`table` or `schema.table`) and its column of the numbers (NULL
    /// until numbered).
    #[command(flatten)]
    ids: crate::IdsArgs,
    /// Its integer column that orders the rows (an auto-increment or identity key).
    #[arg(long)]
    order_by: String,
    /// For a key that counts per scope: the column holding each row's scope.
    #[arg(long)]
    scope_column: Option<String>,
    /// The column holding each row's document date, whose period its number is taken in
    /// (by default the period when it is numbered).
    #[arg(long)]
    date_column: Option<String>,
    /// How the IDs look (e.g. `INV{date:%Y}{seq:6}`), for a key without a recorded shape.
    #[arg(long)]
    shape: Option<String>,
    /// The time zone the key's periods begin in (`utc`, `local`, `+08:00`, `Europe/Paris`).
    #[arg(long, default_value = "utc", value_parser = crate::parse_time_zone)]
    tz: diesel_seqgen::TimeZone,
    /// Rows per transaction.
    #[arg(long, default_value_t = 500)]
    batch: usize,
    /// Keep numbering rows as they commit, until stopped (SIGTERM, SIGINT); on PostgreSQL
    /// woken by the `seqgen_pending` notification (`diesel_seqgen::pending::notify_on_commit`).
    /// A lost connection, a restart or a failover only pauses it: it connects again.
    #[arg(long)]
    follow: bool,
    /// With --follow, the longest wait between two looks at the table, in milliseconds.
    #[arg(long, value_name = "MILLISECONDS", default_value_t = 50)]
    poll_ms: u64,
}

impl NumberArgs {
    /// The rows as `diesel_seqgen::pending` takes them.
    fn rows(&self) -> PendingRows<'_> {
        let mut rows =
            PendingRows::new(&self.ids.table, &self.ids.column, &self.order_by).batch(self.batch);
        if let Some(column) = &self.scope_column {
            rows = rows.scoped_by(column);
        }
        if let Some(column) = &self.date_column {
            rows = rows.dated_by(column);
        }
        rows
    }

    /// The key's spec, read on `conn`.
    fn spec<C: diesel_seqgen::IdConnection>(&self, conn: &mut C) -> Result<Spec, Failure> {
        Ok(super::spec_of(conn, &self.ids.key, self.shape.as_deref())?
            .into_gapless()
            .with_time_zone(self.tz))
    }
}

pub(crate) fn number(url: Option<&str>, args: &NumberArgs) -> Result<ExitCode, Failure> {
    if args.follow {
        return follow(url, args);
    }
    let mut conn = connect(url, false)?;
    with_connection!(&mut conn, |conn| {
        let spec = args.spec(conn)?;
        let done = pending::number_pending(conn, &spec, args.rows())?;
        out!(
            "{}: numbered {} row(s) of {}",
            args.ids.key,
            done.rows,
            args.ids.table
        );
        if done.left > 0 {
            out!(
                "{}: {} row(s) left: dated too far ahead, or without a valid scope",
                args.ids.key,
                done.left
            );
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// `--follow`: until SIGTERM or SIGINT (a second SIGINT ends it at once).
fn follow(url: Option<&str>, args: &NumberArgs) -> Result<ExitCode, Failure> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register_conditional_shutdown(signal, 1, Arc::clone(&stop))
            .and_then(|_| signal_hook::flag::register(signal, Arc::clone(&stop)))
            .map_err(|e| Failure::Database(format!("could not handle signals: {e}")))?;
    }
    let url = url_of(url)?;
    match backend_of(url) {
        #[cfg(feature = "postgres")]
        "postgres" => follow_on(|| diesel::PgConnection::establish(url), args, &stop),
        #[cfg(feature = "mysql")]
        "mysql" => follow_on(|| diesel::MysqlConnection::establish(url), args, &stop),
        #[cfg(feature = "sqlite")]
        "sqlite" => {
            // A missing file is bad input (and would become an empty database).
            connect(Some(url), false)?;
            let path = url.strip_prefix("sqlite://").unwrap_or(url);
            follow_on(
                || {
                    let mut conn = diesel::SqliteConnection::establish(path)?;
                    diesel_seqgen::sqlite::configure(&mut conn)
                        .map_err(diesel::ConnectionError::CouldntSetupConfiguration)?;
                    Ok(conn)
                },
                args,
                &stop,
            )
        }
        // A backend this build lacks: `connect` says which feature to build with.
        _ => connect(Some(url), false).map(|_| ExitCode::SUCCESS),
    }
}

/// `--follow` on connections from `establish`: the key's spec once a connection reads it
/// (the database may be down at the start, as after a failover), then
/// [`pending::keep_following`].
fn follow_on<C, E>(
    mut establish: E,
    args: &NumberArgs,
    stop: &AtomicBool,
) -> Result<ExitCode, Failure>
where
    C: FollowConnection,
    E: FnMut() -> diesel::ConnectionResult<C>,
{
    let mut connect = || -> diesel_seqgen::Result<C> { Ok(establish()?) };
    let spec = (|| {
        let mut conn = connect()?;
        args.spec(&mut conn)
    })
    .retry(pauses())
    .sleep(std::thread::sleep)
    .when(|failure| matches!(failure, Failure::Database(_)) && !stop.load(Ordering::Relaxed))
    .notify(|failure, pause| {
        if let Failure::Database(e) | Failure::Input(e) = failure {
            eprintln!("{}: {e}; trying again in {pause:.1?}", args.ids.key);
        }
    })
    .call();
    let spec = match spec {
        Err(Failure::Database(_)) if stop.load(Ordering::Relaxed) => return Ok(ExitCode::SUCCESS),
        spec => spec?,
    };
    let poll = Duration::from_millis(args.poll_ms);
    let (key, table) = (&args.ids.key, &args.ids.table);
    let followed = pending::keep_following(connect, &spec, args.rows(), poll, stop, |event| {
        let written = match event {
            FollowEvent::Numbered(done) if done.left > 0 => writeln!(
                std::io::stdout(),
                "{key}: numbered {} row(s) of {table}; {} left: dated too far ahead, or without a valid scope",
                done.rows,
                done.left
            ),
            FollowEvent::Numbered(done) => {
                writeln!(std::io::stdout(), "{key}: numbered {} row(s) of {table}", done.rows)
            }
            FollowEvent::Failed { error, retry_in } => {
                let error = crate::failure::describe(error);
                eprintln!("{key}: {error}; connecting again in {retry_in:.1?}");
                Ok(())
            }
            _ => Ok(()),
        };
        // Whoever read the output went away: nothing more to say, and nobody to say it to.
        if written.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
    });
    // Only what no new attempt can fix ends it early: bad input, whatever its kind.
    followed.map_err(|e| Failure::Input(crate::failure::describe(&e)))?;
    Ok(ExitCode::SUCCESS)
}

/// The pauses between two attempts to read the key's spec: as a follower's.
fn pauses() -> ExponentialBuilder {
    ExponentialBuilder::new()
        .with_min_delay(Duration::from_millis(100))
        .with_max_delay(Duration::from_secs(10))
        .with_jitter()
        .without_max_times()
}
