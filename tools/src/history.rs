//! What a client asked and what it got, one line per event, in the file `loadgen --history`
//! appends to: what the nemesis checker (`nemesis::check`) reads back after a run, Jepsen's way.
//!
//! ```text
//! I 4711.17 @812345678              attempt 17 of process 4711 begins
//! G 4711.17 L000000000042           it was handed this ID (before its commit)
//! C 4711.17 @812345690 L000000000042  its transaction committed, with these IDs
//! R 4711.17 @812345701 L000000000043  it rolled back on purpose: these IDs must not be in the table
//! U 4711.17 @812345720 L000000000044  it failed; whether it committed is unknown (the table tells)
//! ```
//!
//! `@` is when, in milliseconds of the machine's monotonic clock: every process's lines can be
//! laid on one time line (libfaketime moves the apps' wall clocks, not this one), so that a
//! run tells how long each key committed nothing ([`longest_without_commit`]).
//!
//! An attempt killed midway has an `I` (and maybe a `G`) and nothing after. Every line is
//! written whole by one `write` on a file opened for appending, so a killed process leaves no
//! half line but perhaps its last.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// What became of an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Committed, with its IDs (`C`).
    Committed,
    /// Rolled back by the client on purpose (`R`).
    RolledBack,
    /// Failed, perhaps after its commit reached the server (`U`).
    Unknown,
}

impl Outcome {
    fn letter(self) -> char {
        match self {
            Outcome::Committed => 'C',
            Outcome::RolledBack => 'R',
            Outcome::Unknown => 'U',
        }
    }
}

/// A process's history file, shared by its threads.
#[derive(Debug)]
pub struct History {
    file: File,
    process: u32,
    next: AtomicU64,
}

impl History {
    /// Appends to `path` (created if missing).
    pub fn open(path: &Path) -> std::io::Result<Self> {
        Ok(History {
            file: OpenOptions::new().create(true).append(true).open(path)?,
            process: std::process::id(),
            next: AtomicU64::new(0),
        })
    }

    /// A new attempt begins: its name, after its `I` line.
    pub fn invoke(&self) -> std::io::Result<String> {
        let op = format!(
            "{}.{}",
            self.process,
            self.next.fetch_add(1, Ordering::Relaxed)
        );
        self.line('I', &op, true, &[])?;
        Ok(op)
    }

    /// `op` was handed `ids`, not yet committed.
    pub fn got(&self, op: &str, ids: &[String]) -> std::io::Result<()> {
        match ids {
            [] => Ok(()),
            ids => self.line('G', op, false, ids),
        }
    }

    /// `op` ended so, with `ids` (those it knows of).
    pub fn ended(&self, op: &str, outcome: Outcome, ids: &[String]) -> std::io::Result<()> {
        self.line(outcome.letter(), op, true, ids)
    }

    fn line(&self, letter: char, op: &str, timed: bool, ids: &[String]) -> std::io::Result<()> {
        let mut line = format!("{letter} {op}");
        if timed {
            line.push_str(&format!(" @{}", now_ms()));
        }
        for id in ids {
            line.push(' ');
            line.push_str(id);
        }
        line.push('\n');
        (&self.file).write_all(line.as_bytes())
    }
}

/// One attempt as the history files tell it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attempt {
    /// `process.n`.
    pub op: String,
    /// Every ID it was handed (`G`, and its end's): with `--retry-conflicts`, those of each
    /// try.
    pub ids: Vec<String>,
    /// The IDs its end line names: for a commit, those committed (its last try's).
    pub ended_with: Vec<String>,
    /// How it ended; `None` when its process died first.
    pub outcome: Option<Outcome>,
    /// When it ended (`@`, milliseconds), where its history says.
    pub ended_at: Option<u64>,
}

/// Milliseconds on the machine's monotonic clock (`CLOCK_MONOTONIC`: since boot).
fn now_ms() -> u64 {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    now.tv_sec as u64 * 1000 + now.tv_nsec as u64 / 1_000_000
}

/// The longest time between two commits of `attempts` (one key's, every process's), in
/// seconds: how long the key took no number through a fault. `None` without two timed commits.
pub fn longest_without_commit(attempts: &[Attempt]) -> Option<f64> {
    let mut times: Vec<u64> = attempts
        .iter()
        .filter(|a| a.outcome == Some(Outcome::Committed))
        .filter_map(|a| a.ended_at)
        .collect();
    times.sort_unstable();
    let longest = times.windows(2).map(|pair| pair[1] - pair[0]).max()?;
    Some(longest as f64 / 1000.0)
}

/// Every attempt of the history `text`, in the order they began; a last line cut short is
/// ignored.
pub fn read(text: &str) -> Result<Vec<Attempt>, String> {
    let whole = &text[..text.rfind('\n').map_or(0, |end| end + 1)];
    let mut attempts: Vec<Attempt> = Vec::new();
    let mut index = std::collections::HashMap::new();
    for line in whole.lines() {
        let mut words = line.split(' ').peekable();
        let (Some(letter), Some(op)) = (words.next(), words.next()) else {
            return Err(format!("not a history line: {line:?}"));
        };
        let time = words.next_if(|word| word.starts_with('@'));
        let time = match time.map(|t| t[1..].parse::<u64>()) {
            Some(Ok(ms)) => Some(ms),
            Some(Err(_)) => return Err(format!("not a time in {line:?}")),
            None => None,
        };
        if letter == "I" {
            index.insert(op.to_owned(), attempts.len());
            attempts.push(Attempt {
                op: op.to_owned(),
                ..Attempt::default()
            });
            continue;
        }
        let at = *index
            .get(op)
            .ok_or_else(|| format!("{letter} before the I of {op}"))?;
        let attempt = &mut attempts[at];
        let named: Vec<String> = words.map(str::to_owned).collect();
        for id in &named {
            if !attempt.ids.contains(id) {
                attempt.ids.push(id.clone());
            }
        }
        if letter != "G" {
            attempt.ended_with = named;
            attempt.ended_at = time;
        }
        attempt.outcome = match letter {
            "G" => attempt.outcome,
            "C" => Some(Outcome::Committed),
            "R" => Some(Outcome::RolledBack),
            "U" => Some(Outcome::Unknown),
            _ => return Err(format!("not a history line: {line:?}")),
        };
    }
    Ok(attempts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h");
        let history = History::open(&path).unwrap();
        let ids = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = history.invoke().unwrap();
        history.got(&a, &ids(&["L1"])).unwrap();
        history
            .ended(&a, Outcome::Committed, &ids(&["L1"]))
            .unwrap();
        let b = history.invoke().unwrap();
        history
            .ended(&b, Outcome::Unknown, &ids(&["L2", "L3"]))
            .unwrap();
        let c = history.invoke().unwrap();
        history.got(&c, &ids(&["L4"])).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("C 1.9 L"); // a line cut short by a kill
        let read = read(&text).unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(
            (read[0].ids.clone(), read[0].outcome),
            (ids(&["L1"]), Some(Outcome::Committed))
        );
        assert_eq!(read[0].ended_with, ids(&["L1"]));
        assert_eq!(read[1].outcome, Some(Outcome::Unknown));
        assert_eq!(read[1].ids, ids(&["L2", "L3"]));
        assert_eq!((read[2].ids.clone(), read[2].outcome), (ids(&["L4"]), None));
        assert!(read[0].ended_at.is_some() && read[2].ended_at.is_none());
        assert!(super::read("X 1.1\n").is_err());
        // Histories written before lines carried their time still read.
        let untimed = super::read("I 1.1\nC 1.1 L1\n").unwrap();
        assert_eq!(
            (untimed[0].ids.clone(), untimed[0].ended_at),
            (ids(&["L1"]), None)
        );
        let timed = super::read("I 1.1 @5\nC 1.1 @1005 L1\nI 1.2 @6\nC 1.2 @3506 L2\n").unwrap();
        assert_eq!(longest_without_commit(&timed), Some(2.501));
        assert!(super::read("C 1.1 L1\n").is_err(), "no I before it");
    }
}
