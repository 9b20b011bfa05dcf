//! The commands, once per backend through one generic function: each calls
//! [`diesel_seqgen::admin`] and prints what it returns, as text or JSON.

use std::io::Write as _;
use std::process::ExitCode;

use chrono::Utc;
use diesel_migrations::MigrationHarness;
use diesel_seqgen::admin::{self, Setting};
use serde::Serialize;

use crate::connection::{with_connection, AnyConnection};
use crate::{Command, Failure, IdsArgs, PeriodArgs};

/// `println!`, but a closed or failing stdout (`seqgen keys | head`) is a [`Failure`], not a
/// panic.
macro_rules! out {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout(), $($arg)*)?
    };
}

// After `out!`, which they print with.
mod adopt;
mod capacity;
mod gaps;
mod keys;
mod metrics;
mod number;
use adopt::{adopt, renumber, Mode};
use capacity::capacity;
use gaps::gaps;
use keys::keys;
use metrics::metrics;
pub(crate) use metrics::MetricsArgs;
pub(crate) use number::{number, NumberArgs};

pub(crate) use metrics::serve as serve_metrics;

pub(crate) fn run(conn: &mut AnyConnection, command: Command) -> Result<ExitCode, Failure> {
    with_connection!(conn, |conn| run_on(conn, command))
}

fn run_on<C>(conn: &mut C, command: Command) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::MigrateConnection + MigrationHarness<C::Backend>,
{
    match command {
        Command::Migrate => migrate(conn)?,
        Command::Keys { key, tz, json } => keys(conn, key.as_deref(), tz, json)?,
        Command::Capacity {
            key,
            warn,
            critical,
            tz,
        } => return capacity(conn, key.as_deref(), warn, critical, tz),
        Command::Metrics(args) => return metrics(conn, &args),
        Command::Peek {
            key,
            scope,
            period,
            json,
        } => peek(conn, &key, &scope, &period, json)?,
        Command::SetBatch { key, value } => set(conn, &key, Setting::BatchSize, value.0)?,
        Command::SetStart { key, value } => set(conn, &key, Setting::StartValue, value.0)?,
        Command::Gaps {
            ids: IdsArgs { key, table, column },
            scope,
            scope_column,
            period,
            json,
        } => {
            let scope = scope.as_deref().zip(scope_column.as_deref());
            return gaps(conn, &key, &table, &column, scope, &period, json);
        }
        Command::Void {
            key,
            scope,
            reason,
            id,
        } => {
            let spec = admin::recorded_spec(conn, &key)?;
            if reason.trim().is_empty() {
                return Err(Failure::Input(
                    "--reason must say why: the auditor reads it".to_owned(),
                ));
            }
            diesel_seqgen::ledger::void(conn, spec.scope(&scope), &id, &reason)?;
            if scope.is_empty() {
                out!("{key}: {id} voided ({reason})");
            } else {
                out!("{key} ({scope}): {id} voided ({reason})");
            }
        }
        Command::Adopt {
            table,
            dry_run,
            json,
        } => {
            let mode = if dry_run { Mode::DryRun } else { Mode::Adopt };
            return adopt(conn, &table, mode, json, None);
        }
        Command::Check {
            table,
            json,
            textfile,
        } => return adopt(conn, &table, Mode::Check, json, textfile.as_deref()),
        Command::Renumber {
            key,
            scope,
            period,
            to,
            min_idle_secs,
        } => renumber(conn, &key, &scope, &period, to, min_idle_secs)?,
        // Served from `main`: `number` on the connection's own type (a follower waits on
        // it), `completions` with no database.
        Command::Number(_) | Command::Completions { .. } => {
            return Err(Failure::Input(
                "`number` and `completions` run from main".to_owned(),
            ))
        }
        Command::Prune {
            key,
            before,
            tz,
            min_age_secs,
        } => {
            let min_age = std::time::Duration::from_secs(min_age_secs);
            let deleted = admin::prune(conn, &key, &before, Utc::now(), tz, min_age)?;
            if deleted.is_empty() {
                out!("{key}: nothing deleted before {before} (the current and the newest period always stay)");
            } else {
                out!(
                    "{key}: deleted {} period(s) before {before}: {}",
                    deleted.len(),
                    deleted.join(", ")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The spec of `key`: read from `shape` when given, else from the shape its row records.
fn spec_of<C>(conn: &mut C, key: &str, shape: Option<&str>) -> Result<diesel_seqgen::Spec, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    match shape {
        Some(shape) => diesel_seqgen::Spec::from_shape(key, shape)
            .map_err(|e| Failure::Input(format!("--shape: {e}"))),
        None => admin::recorded_spec(conn, key).map_err(|e| match e {
            diesel_seqgen::Error::UnknownKey { .. } | diesel_seqgen::Error::Refused { .. } => Failure::Input(
                format!("{e}; give how its IDs look with --shape, e.g. --shape 'INV{{date:%Y}}{{seq:6}}'"),
            ),
            e => e.into(),
        }),
    }
}

fn migrate<C>(conn: &mut C) -> Result<(), Failure>
where
    C: diesel_seqgen::MigrateConnection + MigrationHarness<C::Backend>,
{
    let pending = conn
        .pending_migrations(diesel_seqgen::migrations::backend_migrations::<C::Backend>())
        .map_err(|e| Failure::Database(format!("could not read the applied migrations: {e}")))?;
    diesel_seqgen::run_migrations(conn)?;
    if pending.is_empty() {
        out!("db_key is up to date");
    }
    for migration in pending {
        out!("applied {}", migration.name());
    }
    Ok(())
}

/// The period a command is about: `--period`, or the current one of the key's date pattern.
pub(super) fn period_of(spec: &diesel_seqgen::Spec, args: &PeriodArgs) -> String {
    args.period
        .clone()
        .unwrap_or_else(|| args.tz.format(Utc::now(), spec.date()))
}

/// `seqgen peek --json`.
#[derive(Serialize)]
struct PeekJson {
    key: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    scope: String,
    period: String,
    last: Option<u64>,
    last_id: Option<String>,
    next: u64,
    next_id: String,
}

fn peek<C>(
    conn: &mut C,
    key: &str,
    scope: &str,
    args: &PeriodArgs,
    json: bool,
) -> Result<(), Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let spec = admin::recorded_spec(conn, key)?;
    let period = period_of(&spec, args);
    let peek = admin::peek(conn, spec.scope(scope), &period)?;
    let shown = PeekJson {
        key: key.to_owned(),
        scope: scope.to_owned(),
        last: peek.last,
        last_id: peek.last.map(|n| spec.format_in_scope(scope, &period, n)),
        next: peek.next,
        next_id: spec.format_in_scope(scope, &period, peek.next),
        period,
    };
    if json {
        return print_json(&shown);
    }
    out!("key:    {key}");
    if !scope.is_empty() {
        out!("scope:  {scope}");
    }
    out!(
        "period: {}",
        if shown.period.is_empty() {
            "-"
        } else {
            &shown.period
        }
    );
    match (shown.last, &shown.last_id) {
        (Some(n), Some(id)) => out!("last:   {n} ({id})"),
        _ => out!("last:   none yet"),
    }
    out!("next:   {} ({})", shown.next, shown.next_id);
    Ok(())
}

fn set<C>(conn: &mut C, key: &str, setting: Setting, value: Option<i64>) -> Result<(), Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let change = admin::set(conn, key, setting, value)?;
    let show = |v: Option<i64>| v.map_or_else(|| "unset".to_owned(), |v| v.to_string());
    out!(
        "{key}: {} {} -> {}{}",
        setting.column(),
        show(change.before),
        show(change.after),
        if change.created {
            " (a new key: its first number)"
        } else {
            ""
        }
    );
    // When a start value takes effect depends on the date part, which the shape tells; and
    // on a step the row holds the counter that prints the number given.
    let spec = admin::recorded_spec(conn, key);
    if let (Setting::StartValue, Some(number), Ok(spec)) = (setting, value, &spec) {
        if spec.step() > 1 {
            out!(
                "(the counter that prints {number}, on a step of {})",
                spec.step()
            );
        }
    }
    let dated = spec.map(|spec| !spec.date().is_empty());
    if let (Setting::StartValue, Some(_), Ok(dated)) = (setting, value, dated) {
        if dated {
            out!("(from the next period on; the current one keeps counting)");
        } else {
            out!("(at the next reservation, if the counter is behind it; it never goes back)");
        }
    }
    Ok(())
}

/// `seqgen gaps --json`.
pub(super) fn print_json(value: &impl Serialize) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Failure::Database(format!("could not write JSON: {e}")))?;
    out!("{text}");
    Ok(())
}
