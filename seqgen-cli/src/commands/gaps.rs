//! `seqgen gaps`: the numbers a period handed out against a business table's IDs.

use std::io::Write as _;
use std::process::ExitCode;

use diesel_seqgen::admin::{self, Missing};
use serde::Serialize;

use super::{period_of, print_json};
use crate::{Failure, PeriodArgs};

#[derive(Serialize)]
struct GapsJson {
    key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    period: String,
    first: u64,
    last: u64,
    found: usize,
    missing: Vec<MissingJson>,
    duplicates: Vec<(u64, usize)>,
    beyond: Vec<u64>,
    foreign: usize,
    explained: bool,
}

#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum MissingJson {
    Voided {
        number: u64,
        /// `None` with a reset: the number's own date is not known.
        id: Option<String>,
        reason: String,
    },
    Unexplained {
        from: u64,
        to: u64,
    },
}

pub(super) fn gaps<C>(
    conn: &mut C,
    key: &str,
    table: &str,
    column: &str,
    scope: Option<(&str, &str)>,
    args: &PeriodArgs,
    json: bool,
) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let spec = admin::recorded_spec(conn, key)?;
    let period = period_of(&spec, args);
    let ids = admin::IdColumn::new(table, column);
    let report = match scope {
        Some((value, scope_column)) => admin::gaps(
            conn,
            spec.scope(value),
            ids.scoped_by(scope_column),
            &period,
        ),
        None => admin::gaps(conn, &spec, ids, &period),
    };
    let report = report.map_err(|e| match e {
        // Most likely a mistyped table or column name.
        diesel_seqgen::Error::Database(e) => {
            Failure::Input(format!("could not read {table}.{column}: {e}"))
        }
        e => e.into(),
    })?;
    let code = if report.is_explained() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    // The report counts IDs; an operator reads the numbers they print (on a step, 10, 20, …),
    // and the IDs in their scope (which a template may print).
    let number = |counter: u64| spec.stepped(counter);
    let in_scope = scope.map_or("", |(value, _)| value);
    // With a reset, a number of the counter may have been printed with any of its dates.
    let id_of = |counter: u64| match spec.reset() {
        None => spec.format_in_scope(in_scope, &period, counter),
        Some(_) => "-".to_owned(),
    };
    // 0: nothing handed out yet.
    let last = if report.last == 0 {
        0
    } else {
        number(report.last)
    };
    if json {
        print_json(&GapsJson {
            key: report.key.clone(),
            scope: scope.map(|(value, _)| value.to_owned()),
            period: report.period.clone(),
            first: number(report.first),
            last,
            found: report.found,
            missing: report
                .missing
                .iter()
                .map(|m| match m {
                    Missing::Voided { number: n, reason } => MissingJson::Voided {
                        number: number(*n),
                        id: spec.reset().is_none().then(|| id_of(*n)),
                        reason: reason.clone(),
                    },
                    Missing::Unexplained { from, to } => MissingJson::Unexplained {
                        from: number(*from),
                        to: number(*to),
                    },
                })
                .collect(),
            duplicates: report
                .duplicates
                .iter()
                .map(|&(n, times)| (number(n), times))
                .collect(),
            beyond: report.beyond.iter().map(|&n| number(n)).collect(),
            foreign: report.foreign,
            explained: report.is_explained(),
        })?;
        return Ok(code);
    }
    let shown = match (spec.reset(), period.is_empty()) {
        (Some(reset), _) => match spec.counter_period(&period) {
            row if row.is_empty() => format!("- (reset {reset}: every date)"),
            row => format!("{row} (reset {reset}: every date in it)"),
        },
        (None, true) => "-".to_owned(),
        (None, false) => period.clone(),
    };
    let in_scope = scope.map_or_else(String::new, |(value, _)| format!(" (scope {value})"));
    out!(
        "{key}{in_scope}, period {shown}: numbers {}..={} handed out, {} found in {table}.{column}",
        number(report.first),
        last,
        report.found
    );
    let mut unexplained = 0;
    for missing in &report.missing {
        match missing {
            Missing::Voided { number: n, reason } => {
                out!("  {:>8}  {}  voided: {reason}", number(*n), id_of(*n))
            }
            Missing::Unexplained { from, to } => {
                unexplained += to - from + 1;
                if from == to {
                    out!("  {:>8}  {}  unexplained", number(*from), id_of(*from));
                } else {
                    out!(
                        "  {:>8}  {} ..= {}  unexplained ({} numbers)",
                        number(*from),
                        id_of(*from),
                        id_of(*to),
                        to - from + 1
                    );
                }
            }
        }
    }
    for (n, times) in &report.duplicates {
        out!(
            "  {:>8}  {}  DUPLICATE: {times} rows",
            number(*n),
            id_of(*n)
        );
    }
    for n in &report.beyond {
        out!(
            "  {:>8}  {}  past the counter: not handed out by seqgen",
            number(*n),
            id_of(*n)
        );
    }
    if report.foreign > 0 {
        out!(
            "({} value(s) of {table}.{column} are no ID of key {key}; not checked)",
            report.foreign
        );
    }
    if report.is_explained() {
        out!("every missing number is voided");
    } else {
        out!(
            "{unexplained} unexplained, {} duplicated, {} past the counter",
            report.duplicates.len(),
            report.beyond.len()
        );
    }
    Ok(code)
}
