//! `seqgen adopt`, `seqgen check` and `seqgen renumber`: a key's counters against the IDs a
//! table already holds, and the deliberate way back.

use std::io::Write as _;
use std::process::ExitCode;

use diesel_seqgen::admin::{self, CounterCheck, IdColumn, TableCheck};
use serde::Serialize;

use super::print_json;
use crate::{Failure, TableArgs};

/// What `adopt` does with what it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// `seqgen check`: report, exit code 1 when a counter is behind.
    Check,
    /// `seqgen adopt --dry-run`: report what would be raised.
    DryRun,
    /// `seqgen adopt`: raise.
    Adopt,
}

#[derive(Serialize)]
struct TableJson {
    key: String,
    table: String,
    column: String,
    ids: u64,
    empty: u64,
    unparsed: u64,
    unparsed_examples: Vec<String>,
    counters: Vec<CounterJson>,
    behind: bool,
    raised: bool,
}

#[derive(Serialize)]
struct CounterJson {
    scope: String,
    period: String,
    highest: u64,
    highest_id: String,
    counter: u64,
    behind: bool,
    in_use: bool,
}

pub(super) fn adopt<C>(
    conn: &mut C,
    args: &TableArgs,
    mode: Mode,
    json: bool,
    textfile: Option<&std::path::Path>,
) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let key = args.ids.key.as_str();
    let spec = super::spec_of(conn, key, args.shape.as_deref())?;
    let mut ids = IdColumn::new(&args.ids.table, &args.ids.column);
    if let Some(scope_column) = &args.scope_column {
        ids = ids.scoped_by(scope_column);
    }
    let found: TableCheck = match mode {
        Mode::Adopt => admin::adopt(conn, &spec, ids)?,
        Mode::Check | Mode::DryRun => admin::check(conn, &spec, ids)?,
    };
    if let Some(path) = textfile {
        let behind = found.counters.iter().filter(|c| c.is_behind()).count();
        super::metrics::write_check(path, key, &args.ids.table, behind, found.empty)?;
    }
    let code = if mode == Mode::Check && (found.is_behind() || found.empty > 0) {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    };
    let id_of = |c: &CounterCheck| spec.format_in_scope(&c.scope, &c.period, c.highest);
    if json {
        print_json(&TableJson {
            key: found.key.clone(),
            table: args.ids.table.clone(),
            column: args.ids.column.clone(),
            ids: found.ids,
            empty: found.empty,
            unparsed: found.unparsed,
            unparsed_examples: found.unparsed_examples.clone(),
            counters: found
                .counters
                .iter()
                .map(|c| CounterJson {
                    scope: c.scope.clone(),
                    period: c.period.clone(),
                    highest: c.highest,
                    highest_id: id_of(c),
                    counter: c.counter,
                    behind: c.is_behind(),
                    in_use: c.in_use,
                })
                .collect(),
            behind: found.is_behind(),
            raised: mode == Mode::Adopt && found.is_behind(),
        })?;
        return Ok(code);
    }
    out!(
        "{key}: {} ID(s) in {}.{}, {} counter(s)",
        found.ids,
        args.ids.table,
        args.ids.column,
        found.counters.len()
    );
    let verb = match mode {
        Mode::Check => "BEHIND",
        Mode::DryRun => "would raise",
        Mode::Adopt => "raised",
    };
    let dash = |text: &str| {
        if text.is_empty() {
            "-".to_owned()
        } else {
            text.to_owned()
        }
    };
    for c in &found.counters {
        let place = match c.scope.as_str() {
            "" => format!("period {}", dash(&c.period)),
            scope => format!("scope {scope}, period {}", dash(&c.period)),
        };
        if c.is_behind() {
            out!(
                "  {place}: highest {} ({}), counter {}: {verb} to {}",
                c.highest,
                id_of(c),
                c.counter,
                c.highest
            );
        } else {
            out!(
                "  {place}: highest {} ({}), counter {}: ok",
                c.highest,
                id_of(c),
                c.counter
            );
        }
    }
    if found.unparsed > 0 {
        out!(
            "{} value(s) are no ID of key {key} and were left out, e.g. {}",
            found.unparsed,
            found.unparsed_examples.join(", ")
        );
    }
    if found.empty > 0 {
        out!(
            "{} row(s) have no ID (NULL, empty or 0): inserted without seqgen filling them. Insert \
             with `diesel_seqgen::insert_into`, or call `diesel_seqgen::assign_ids` first; the \
             `diesel_seqgen::Id` field type refuses such an insert",
            found.empty
        );
    }
    let risky = found
        .counters
        .iter()
        .filter(|c| c.is_behind() && c.in_use)
        .count();
    if risky > 0 && mode != Mode::Check {
        eprintln!(
            "warning: {risky} counter(s) behind the table were in use: running instances may hold \
             numbers at or below their old value, which the table may hold too; restart them \
             (or call Generator::release) after adopting"
        );
    }
    match (mode, found.is_behind()) {
        (_, false) => out!("every counter is at or past its table's highest ID"),
        (Mode::Check, true) => out!("behind: run `seqgen adopt` with the same arguments"),
        (Mode::DryRun, true) => out!("nothing changed (--dry-run)"),
        (Mode::Adopt, true) => out!("raised; seqgen continues past every ID in the table"),
    }
    Ok(code)
}

pub(super) fn renumber<C>(
    conn: &mut C,
    key: &str,
    scope: &str,
    period: &str,
    to: u64,
    min_idle_secs: u64,
) -> Result<(), Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let min_idle = std::time::Duration::from_secs(min_idle_secs);
    let (before, after) = admin::renumber(conn, key, scope, period, to, min_idle)?;
    out!(
        "{key}: counter {before} -> {after}; the next number is {}",
        after + 1
    );
    Ok(())
}
