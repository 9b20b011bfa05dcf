//! The checker: reads every app's history and the tables after a run, and says whether any
//! number repeated, went missing, or ran ahead of its counter.
//!
//! Per key (apps of one kind share it):
//! - **No repeat.** A batched ID is handed to at most one attempt, committed or not (a rolled
//!   back batched number is a hole, never reissued). A gapless number is committed at most
//!   once, and a number rolled back is in the table only where a later attempt took it again.
//! - **Nothing acknowledged is lost.** Every committed ID is in the table.
//! - **Gapless is exactly 1..N** over the table's rows.
//! - **Counters never behind their tables**: each counter row holds at least the highest number
//!   of its IDs in the table.
//! - **Unknown outcomes** (an error, or a process killed mid-attempt) are resolved by the table
//!   where their IDs are known, and counted; a row no history names is one such attempt's.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::history::{Attempt, Outcome};

/// One key's rows and counters, as the database holds them after the run.
#[derive(Debug, Default)]
pub struct Tables {
    /// `loadgen_rows`' IDs, by `key_name`.
    pub rows: HashMap<String, Vec<String>>,
    /// `db_key`'s counters: (key, scope, period) → current value.
    pub counters: HashMap<(String, String, String), i64>,
    /// `loadgen_pending`'s tokens and numbers, by `key_name`.
    pub pending: HashMap<String, Vec<(String, Option<String>)>>,
}

/// Where a key's numbers are counted, as its app writes them.
#[derive(Debug, Clone)]
pub struct Key {
    /// `loadgen_rows.key_name` of its rows.
    pub rows: String,
    /// Its counter rows' `key_name` and `scope`; their period is the ID's date part.
    pub counter: (String, String),
    pub gapless: bool,
    /// Numbered after the commit: its rows are `loadgen_pending`'s, named by their tokens.
    pub deferred: bool,
}

/// What the checker found on one key.
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Verdict {
    pub attempts: usize,
    pub committed: usize,
    pub rows: usize,
    /// Attempts whose outcome was unknown (an error, or killed), and of them those the table
    /// resolved (their IDs known).
    pub unknown: usize,
    pub unknown_resolved: usize,
    /// Everything wrong, each in a sentence.
    pub errors: Vec<String>,
}

/// The number of an ID (`L`, a date part, 12 digits) and its date part.
fn split(id: &str) -> Option<(&str, i64)> {
    let body = id.strip_prefix('L')?;
    let at = body.len().checked_sub(12)?;
    Some((&body[..at], body[at..].parse().ok()?))
}

/// Checks `key` against its apps' `attempts` and the `tables`.
pub fn check(key: &Key, attempts: &[Attempt], tables: &Tables) -> Verdict {
    if key.deferred {
        return check_deferred(key, attempts, tables);
    }
    let mut verdict = Verdict {
        attempts: attempts.len(),
        ..Verdict::default()
    };
    let empty = Vec::new();
    let rows = tables.rows.get(&key.rows).unwrap_or(&empty);
    verdict.rows = rows.len();
    let in_table: HashSet<&str> = rows.iter().map(String::as_str).collect();
    let mut errors = Vec::new();

    // Gapless numbers in the table that every attempt handed them rolled back.
    let mut kept = Vec::new();
    // Which attempts each ID was handed to, and which committed it.
    let mut handed: HashMap<&str, Vec<&Attempt>> = HashMap::new();
    for attempt in attempts {
        for id in &attempt.ids {
            handed.entry(id).or_default().push(attempt);
        }
        match attempt.outcome {
            Some(Outcome::Committed) => {
                // Its last try's IDs; a retried transaction's earlier tries rolled back.
                verdict.committed += attempt.ended_with.len();
                for id in attempt
                    .ended_with
                    .iter()
                    .filter(|id| !in_table.contains(id.as_str()))
                {
                    errors.push(format!(
                        "{id} was committed by {} but is not in the table",
                        attempt.op
                    ));
                }
            }
            Some(Outcome::Unknown) | None => {
                verdict.unknown += 1;
                if !attempt.ids.is_empty() {
                    verdict.unknown_resolved += 1;
                }
            }
            Some(Outcome::RolledBack) => {}
        }
    }
    for (id, by) in &handed {
        let ops = || {
            by.iter()
                .map(|a| a.op.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !key.gapless {
            if by.len() > 1 {
                errors.push(format!("repeat: batched {id} was handed to {}", ops()));
            }
            continue;
        }
        let committed = by
            .iter()
            .filter(|a| {
                a.outcome == Some(Outcome::Committed) && a.ended_with.contains(&id.to_string())
            })
            .count();
        if committed > 1 {
            errors.push(format!("repeat: gapless {id} was committed by {}", ops()));
        }
        let could_commit = by.iter().any(|a| {
            matches!(
                a.outcome,
                Some(Outcome::Committed | Outcome::Unknown) | None
            )
        });
        if in_table.contains(id) && !could_commit {
            kept.push(format!(
                "{id} is in the table but was rolled back by {}",
                ops()
            ));
        }
    }

    // Rows no attempt names, and gapless numbers in the table whose every attempt rolled
    // back (the rollback gave the number back, for the next attempt to take): explained only
    // by attempts killed before they learned their IDs, one row each.
    let unexplained = rows
        .iter()
        .filter(|id| !handed.contains_key(id.as_str()))
        .count();
    let blind = attempts
        .iter()
        .filter(|a| a.ids.is_empty() && matches!(a.outcome, Some(Outcome::Unknown) | None))
        .count();
    if unexplained + kept.len() > blind {
        if unexplained > 0 {
            errors.push(format!(
                "{unexplained} rows of {} no history names, with only {blind} attempts that could have written them",
                key.rows
            ));
        }
        errors.extend(kept.into_iter().map(|kept| {
            format!("{kept}, with only {blind} attempts killed before they knew their IDs")
        }));
    }

    // Per counter (the ID's date part): the highest number, and gapless 1..N.
    let mut numbers: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
    for id in rows {
        match split(id) {
            Some((period, number)) => numbers.entry(period).or_default().push(number),
            None => errors.push(format!("{id} in {} is not an ID of the run", key.rows)),
        }
    }
    for (period, mut list) in numbers {
        list.sort_unstable();
        let highest = *list.last().expect("a period has rows");
        let counter = (
            key.counter.0.clone(),
            key.counter.1.clone(),
            period.to_owned(),
        );
        match tables.counters.get(&counter) {
            Some(&value) if value >= highest => {}
            Some(&value) => errors.push(format!(
                "counter {counter:?} holds {value}, behind its table's {highest}"
            )),
            None => errors.push(format!("no counter {counter:?} for its table's {highest}")),
        }
        if key.gapless && list != (1..=list.len() as i64).collect::<Vec<_>>() {
            let missing = (1..=highest)
                .filter(|n| list.binary_search(n).is_err())
                .take(5);
            errors.push(format!(
                "gapless {period:?} of {}: {} rows up to {highest}, missing {:?}, repeated {}",
                key.rows,
                list.len(),
                missing.collect::<Vec<_>>(),
                list.windows(2).filter(|w| w[0] == w[1]).count()
            ));
        }
    }
    verdict.errors = errors;
    verdict
}

/// [`check`] of a key numbered after the commit: every committed row (named by its token) is
/// in the table and no rolled-back one; every row has a number, exactly 1..N, and the
/// counter is N.
fn check_deferred(key: &Key, attempts: &[Attempt], tables: &Tables) -> Verdict {
    let empty = Vec::new();
    let rows = tables.pending.get(&key.rows).unwrap_or(&empty);
    let tokens: HashSet<&str> = rows.iter().map(|(token, _)| token.as_str()).collect();
    let mut verdict = Verdict {
        attempts: attempts.len(),
        rows: rows.len(),
        ..Verdict::default()
    };
    let mut named = HashSet::new();
    for attempt in attempts {
        named.extend(attempt.ids.iter().map(String::as_str));
        let missing = (attempt.ended_with.iter()).filter(|t| !tokens.contains(t.as_str()));
        match attempt.outcome {
            Some(Outcome::Committed) => {
                verdict.committed += attempt.ended_with.len();
                for token in missing {
                    let op = &attempt.op;
                    verdict.errors.push(format!(
                        "row {token} was committed by {op} but is not in the table"
                    ));
                }
            }
            Some(Outcome::RolledBack) => {
                for token in attempt.ids.iter().filter(|t| tokens.contains(t.as_str())) {
                    let op = &attempt.op;
                    verdict.errors.push(format!(
                        "row {token} is in the table but {op} rolled it back"
                    ));
                }
            }
            Some(Outcome::Unknown) | None => {
                verdict.unknown += 1;
                verdict.unknown_resolved += usize::from(!attempt.ids.is_empty());
            }
        }
    }
    let unexplained = tokens.iter().filter(|t| !named.contains(*t)).count();
    let blind = attempts
        .iter()
        .filter(|a| a.ids.is_empty() && matches!(a.outcome, Some(Outcome::Unknown) | None))
        .count();
    if unexplained > blind {
        verdict.errors.push(format!(
            "{unexplained} rows of {} no history names, with only {blind} attempts that could have written them",
            key.rows
        ));
    }
    let mut numbers = Vec::with_capacity(rows.len());
    for (token, number) in rows {
        match number.as_deref().map(split) {
            Some(Some(("", n))) => numbers.push(n),
            Some(_) => verdict.errors.push(format!(
                "row {token}'s number {number:?} is not one of the key's"
            )),
            None => verdict.errors.push(format!(
                "row {token} has no number after the followers' last round"
            )),
        }
    }
    numbers.sort_unstable();
    let n = numbers.len() as i64;
    if numbers != (1..=n).collect::<Vec<_>>() {
        let repeated = numbers.windows(2).filter(|w| w[0] == w[1]).count();
        verdict.errors.push(format!(
            "{} numbered rows of {} are not exactly 1..={n} ({repeated} repeated, highest {:?})",
            numbers.len(),
            key.rows,
            numbers.last()
        ));
    }
    let counter = (key.counter.0.clone(), key.counter.1.clone(), String::new());
    match tables.counters.get(&counter).copied().unwrap_or(0) {
        value if value == n => {}
        value => verdict.errors.push(format!(
            "counter {counter:?} holds {value}, its table 1..={n}"
        )),
    }
    verdict
}

#[cfg(test)]
mod tests;
