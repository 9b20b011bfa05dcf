//! `seqgen capacity`: the counters past a warning or critical part of what they hold, as a
//! monitoring plugin reports them (Nagios' convention: exit 0 OK, 1 WARNING, 2 CRITICAL,
//! 3 UNKNOWN).

use std::io::Write as _;
use std::process::ExitCode;

use chrono::Utc;
use diesel_seqgen::admin::{self, CounterCapacity, Limit};
use diesel_seqgen::TimeZone;

use super::keys::{runs_out_text, used_text};
use crate::Failure;

pub(super) fn capacity<C>(
    conn: &mut C,
    key: Option<&str>,
    warn: f64,
    critical: f64,
    tz: TimeZone,
) -> Result<ExitCode, Failure>
where
    C: diesel_seqgen::IdConnection,
{
    let counters = admin::capacity(conn, key, tz, Utc::now())?;
    // Only what stops inserts when full: a widening or cycling counter goes on, and a past
    // period takes no more numbers.
    let watched: Vec<&CounterCapacity> = counters.iter().filter(|c| c.can_run_out()).collect();
    let percent = |c: &CounterCapacity| c.used_ratio().unwrap_or(0.0) * 100.0;
    let over = |threshold: f64| -> Vec<&CounterCapacity> {
        watched
            .iter()
            .copied()
            .filter(|c| percent(c) >= threshold)
            .collect()
    };
    let (critical_ones, warned_ones) = (over(critical), over(warn));
    let (state, code) = match (critical_ones.is_empty(), warned_ones.is_empty()) {
        (false, _) => ("CRITICAL", 2),
        (true, false) => ("WARNING", 1),
        (true, true) => ("OK", 0),
    };
    let fullest = watched
        .iter()
        .max_by(|a, b| percent(a).total_cmp(&percent(b)))
        .map_or_else(String::new, |c| {
            format!(", fullest {} at {:.1}%", place(c), percent(c))
        });
    out!(
        "SEQGEN CAPACITY {state} - {} counter(s) watched, {} at or past {warn}%, {} at or past {critical}%{fullest}",
        watched.len(),
        warned_ones.len(),
        critical_ones.len()
    );
    for counter in &warned_ones {
        let level = if percent(counter) >= critical {
            "CRITICAL"
        } else {
            "WARNING"
        };
        out!(
            "{level}: {} {} of {}, runs out: {}",
            place(counter),
            used_text(counter).trim(),
            match counter.limit {
                Limit::Stops { capacity } => capacity,
                _ => 0,
            },
            runs_out_text(counter)
        );
    }
    for counter in counters
        .iter()
        .filter(|c| matches!(c.limit, Limit::Unknown(_)))
    {
        if let Limit::Unknown(why) = &counter.limit {
            out!("UNKNOWN: {}: {why} (not watched)", place(counter));
        }
    }
    Ok(ExitCode::from(code))
}

/// `orders 2611` or `invoices scope acme 2026`.
fn place(counter: &CounterCapacity) -> String {
    let mut text = counter.key.clone();
    if !counter.scope.is_empty() {
        text.push_str(&format!(" scope {}", counter.scope));
    }
    if !counter.period.is_empty() {
        text.push_str(&format!(" {}", counter.period));
    }
    text
}
