//! `seqgen keys`: every counter, with how much of it is used and when it runs out.

use std::collections::HashMap;
use std::io::Write as _;

use chrono::Utc;
use comfy_table::{presets, CellAlignment, Table};
use diesel_seqgen::admin::{self, CounterCapacity, Limit, RunsOut};
use diesel_seqgen::TimeZone;
use serde::Serialize;

use crate::Failure;

/// A row of `seqgen keys --json`.
#[derive(Serialize)]
struct KeyRow {
    key: String,
    scope: String,
    period: String,
    current_value: i64,
    batch_size: Option<i64>,
    start_value: Option<i64>,
    shape: Option<String>,
    updated_at: String,
    /// The counter's capacity, for a row that is a counter whose shape could be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<CapacityJson>,
}

/// How much of a counter is used, in `seqgen keys --json` and `seqgen capacity`.
#[derive(Serialize)]
pub(super) struct CapacityJson {
    /// `stops`, `widens`, `repeats` or `unknown`.
    pub(super) at_end: &'static str,
    /// The numbers it holds before its end (`stops`), before IDs widen, or in one cycle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) capacity: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) used_percent: Option<f64>,
    pub(super) current: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) runs_out: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) unknown_because: Option<String>,
}

impl CapacityJson {
    pub(super) fn of(counter: &CounterCapacity) -> Self {
        let (at_end, capacity, unknown_because) = match &counter.limit {
            Limit::Stops { capacity } => ("stops", Some(*capacity), None),
            Limit::Widens { at } => ("widens", Some(*at), None),
            Limit::Repeats { every } => ("repeats", Some(*every), None),
            Limit::Unknown(why) => ("unknown", None, Some(why.clone())),
            _ => ("unknown", None, None),
        };
        CapacityJson {
            at_end,
            capacity,
            used_percent: counter.used_ratio().map(|r| (r * 1000.0).round() / 10.0),
            current: counter.current,
            runs_out: match counter.runs_out {
                RunsOut::At(at) => Some(at.to_rfc3339()),
                RunsOut::NotThisPeriod => Some("not this period".to_owned()),
                RunsOut::NotKnownYet => Some("not known yet".to_owned()),
                _ => None,
            },
            unknown_because,
        }
    }
}

pub(super) fn keys<C>(
    conn: &mut C,
    key: Option<&str>,
    tz: TimeZone,
    json: bool,
) -> Result<(), Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let rows = admin::counters(conn, key)?;
    if let (Some(key), true) = (key, rows.is_empty()) {
        return Err(diesel_seqgen::Error::UnknownKey {
            key: key.to_owned(),
        }
        .into());
    }
    let capacities = admin::capacity(conn, key, tz, Utc::now())?;
    // By (key, scope, period): a database has a counter per scope and period, and a search
    // of the list for each row took minutes at 100,000 counters.
    let capacities: HashMap<(&str, &str, &str), &CounterCapacity> = capacities
        .iter()
        .map(|c| ((c.key.as_str(), c.scope.as_str(), c.period.as_str()), c))
        .collect();
    let capacity_of = |row: &admin::Counter| {
        capacities
            .get(&(row.key.as_str(), row.scope.as_str(), row.period.as_str()))
            .copied()
    };
    if json {
        let rows: Vec<KeyRow> = rows
            .iter()
            .map(|row| KeyRow {
                key: row.key.clone(),
                scope: row.scope.clone(),
                period: row.period.clone(),
                current_value: row.current_value,
                batch_size: row.batch_size,
                start_value: row.start_value,
                shape: row.shape.clone(),
                updated_at: row.updated_at.clone(),
                capacity: capacity_of(row).map(CapacityJson::of),
            })
            .collect();
        return super::print_json(&rows);
    }
    if rows.is_empty() {
        out!("no keys yet: an app's first number creates its key's rows");
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(presets::NOTHING).set_header([
        "KEY", "SCOPE", "PERIOD", "CURRENT", "BATCH", "START", "CAPACITY", "USED %", "RUNS OUT",
        "SHAPE", "UPDATED",
    ]);
    let dash = |text: &str| {
        if text.is_empty() {
            "-".to_owned()
        } else {
            text.to_owned()
        }
    };
    let unset = |v: Option<i64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    for row in &rows {
        let (capacity, used, runs_out) = capacity_of(row).map_or_else(
            || ("-".to_owned(), "-".to_owned(), "-".to_owned()),
            |c| (capacity_text(c), used_text(c), runs_out_text(c)),
        );
        table.add_row([
            row.key.clone(),
            dash(&row.scope),
            dash(&row.period),
            row.current_value.to_string(),
            unset(row.batch_size),
            unset(row.start_value),
            capacity,
            used,
            runs_out,
            row.shape.clone().unwrap_or_else(|| "-".to_owned()),
            row.updated_at.clone(),
        ]);
    }
    for column in [3, 4, 5, 6] {
        if let Some(column) = table.column_mut(column) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    out!("{}", table.trim_fmt());
    Ok(())
}

/// `999`, `widens at 99`, `repeats every 500`, or why it is not known.
fn capacity_text(counter: &CounterCapacity) -> String {
    match &counter.limit {
        Limit::Stops { capacity } => capacity.to_string(),
        Limit::Widens { at } => format!("widens at {at}"),
        Limit::Repeats { every } => format!("repeats every {every}"),
        _ => "? (shape unreadable)".to_owned(),
    }
}

/// `█████████░  85.1%`: ten blocks, and the percentage.
pub(super) fn used_text(counter: &CounterCapacity) -> String {
    let Some(ratio) = counter.used_ratio() else {
        return "-".to_owned();
    };
    let full = (ratio * 10.0).round() as usize;
    format!(
        "{}{} {:5.1}%",
        "█".repeat(full),
        "░".repeat(10 - full.min(10)),
        ratio * 100.0
    )
}

/// The date it runs out at its period's rate so far (UTC); `not this period` when the period
/// ends first; `-` when it cannot run out (or its period has ended).
pub(super) fn runs_out_text(counter: &CounterCapacity) -> String {
    match counter.runs_out {
        RunsOut::At(at) => at.format("%Y-%m-%d %H:%M").to_string(),
        RunsOut::NotThisPeriod => "not this period".to_owned(),
        RunsOut::NotKnownYet => "not known yet".to_owned(),
        _ => "-".to_owned(),
    }
}
