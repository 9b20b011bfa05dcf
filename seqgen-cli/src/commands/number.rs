//! `seqgen number`: gapless numbers given after the commit, once or as a sidecar that follows
//! the table ([`diesel_seqgen::pending`]).

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use diesel_seqgen::pending::{self, FollowConnection, PendingRows};

use crate::connection::{connect, with_connection};
use crate::Failure;

/// The rows to number, and how.
#[derive(Debug, clap::Args)]
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
    /// Keep numbering rows as they commit, until stopped; on PostgreSQL woken by the
    /// `seqgen_pending` notification (`diesel_seqgen::pending::notify_on_commit`).
    #[arg(long)]
    follow: bool,
    /// With --follow, the longest wait between two looks at the table, in milliseconds.
    #[arg(long, value_name = "MILLISECONDS", default_value_t = 50)]
    poll_ms: u64,
}

pub(crate) fn number(url: Option<&str>, args: &NumberArgs) -> Result<ExitCode, Failure> {
    let mut conn = connect(url, false)?;
    with_connection!(&mut conn, |conn| number_on(conn, args))
}

fn number_on<C: FollowConnection>(conn: &mut C, args: &NumberArgs) -> Result<ExitCode, Failure> {
    let spec = super::spec_of(conn, &args.ids.key, args.shape.as_deref())?
        .into_gapless()
        .with_time_zone(args.tz);
    let mut rows =
        PendingRows::new(&args.ids.table, &args.ids.column, &args.order_by).batch(args.batch);
    if let Some(column) = &args.scope_column {
        rows = rows.scoped_by(column);
    }
    if let Some(column) = &args.date_column {
        rows = rows.dated_by(column);
    }
    if args.follow {
        conn.listen()?;
    }
    loop {
        let done = pending::number_pending(conn, &spec, rows)?;
        if done.rows > 0 || !args.follow {
            out!(
                "{}: numbered {} row(s) of {}",
                args.ids.key,
                done.rows,
                args.ids.table
            );
        }
        if done.left > 0 && !args.follow {
            out!(
                "{}: {} row(s) left: dated too far ahead, or without a valid scope",
                args.ids.key,
                done.left
            );
        }
        if !args.follow {
            return Ok(ExitCode::SUCCESS);
        }
        conn.wait(Duration::from_millis(args.poll_ms))?;
    }
}
