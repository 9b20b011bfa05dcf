//! A key's counter watched in its period, for the capacity warnings (at 80 % and 95 %).

use chrono::{DateTime, Utc};

use super::KeyState;

/// A key's counter watched in one period: its first reservation seen (when, and its last
/// number) and the capacity warnings given.
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    period: String,
    /// When this generator first reserved in the period, and the last number it got then.
    pub(crate) first: (DateTime<Utc>, u64),
    /// 0: none yet; 1: at 80 %; 2: at 95 %.
    warned: u8,
}

impl KeyState {
    /// Notes that a reservation in `period` ended at `last` (at `at`), and returns the watch of
    /// that period: where it began, and which warnings it gave.
    pub(crate) fn watch(&self, period: &str, last: u64, at: DateTime<Utc>) -> Watch {
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *watch {
            Some(w) if w.period == period => w.clone(),
            other => other
                .insert(Watch {
                    period: period.to_owned(),
                    first: (at, last),
                    warned: 0,
                })
                .clone(),
        }
    }

    /// Notes that the warning of `level` was given in `period` (1: 80 %, 2: 95 %); whether it
    /// was not given before.
    pub(crate) fn warn_once(&self, period: &str, level: u8) -> bool {
        let mut watch = self.watch.lock().unwrap_or_else(|e| e.into_inner());
        match &mut *watch {
            Some(w) if w.period == period && w.warned < level => {
                w.warned = level;
                true
            }
            _ => false,
        }
    }
}
