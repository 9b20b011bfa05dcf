//! The numbers of one key held in memory: a block reserved from the database, served in
//! order, and the lock that makes sure only one thread refills it at a time.

use std::collections::VecDeque;
use std::ops::Range;
use std::sync::{Mutex, MutexGuard};

use crate::clock::Clock;
use seqgen_core::__private::Period;
use seqgen_core::Spec;

/// The state of one (key, date pattern) in one generator.
#[derive(Debug, Default)]
pub(crate) struct KeyState {
    /// Held only for in-memory work, never across a database call.
    cursor: Mutex<Cursor>,
    /// Held across the reservation, so that when a block runs dry exactly one thread
    /// reserves and the others wait for it.
    refill: Mutex<()>,
    /// The last period whose `db_key` row is known to exist (rows are never deleted): lets
    /// gapless mode skip looking for it.
    known_row: Mutex<Option<String>>,
    /// The highest number a committed reservation gave this key in each of its latest
    /// periods, so a counter that went back is noticed instead of served.
    held: Mutex<VecDeque<(String, u64)>>,
    /// The shape last found recorded on the key's row: in-transaction paths check it once.
    shape: Mutex<Option<String>>,
}

/// How many periods a key remembers its highest number for: enough for clocks that disagree
/// by a few periods; a period older than that is no longer checked.
const HELD_PERIODS: usize = 16;

/// A block of committed numbers `next..end` of one period.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    pub(crate) period: Period,
    next: u64,
    end: u64,
    /// The clock second the period was last computed for: the period is recomputed at most
    /// once a second (specs reject date patterns finer than a second).
    period_second: Option<i64>,
}

impl KeyState {
    pub(crate) fn cursor(&self) -> MutexGuard<'_, Cursor> {
        // The cursor is only changed after a step succeeded: a panic elsewhere leaves it
        // consistent, so a poisoned lock is safe to reuse.
        self.cursor.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn refill(&self) -> MutexGuard<'_, ()> {
        self.refill.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the row of `period` is known to exist.
    pub(crate) fn row_known(&self, period: &str) -> bool {
        self.known_row
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_deref()
            == Some(period)
    }

    /// Remembers that the row of `period` exists.
    pub(crate) fn remember_row(&self, period: &str) {
        let mut known = self.known_row.lock().unwrap_or_else(|e| e.into_inner());
        if known.as_deref() != Some(period) {
            *known = Some(period.to_owned());
        }
    }
}

impl KeyState {
    /// Notes that a committed reservation gave `block` in `period`, or returns the highest
    /// number held before if the block is not above it: the counter went back.
    pub(crate) fn note_block(&self, period: &str, block: &Range<u64>) -> Result<(), u64> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        let last = block.end - 1;
        match held.iter_mut().find(|(p, _)| p == period) {
            Some((_, high)) if block.start <= *high => return Err(*high),
            Some((_, high)) => *high = last,
            None => {
                if held.len() == HELD_PERIODS {
                    held.pop_front();
                }
                held.push_back((period.to_owned(), last));
            }
        }
        Ok(())
    }

    /// Whether `shape` was found recorded on the key's row before.
    pub(crate) fn shape_known(&self, shape: &str) -> bool {
        self.shape
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_deref()
            == Some(shape)
    }

    /// Remembers that `shape` is recorded on the key's row.
    pub(crate) fn remember_shape(&self, shape: &str) {
        *self.shape.lock().unwrap_or_else(|e| e.into_inner()) = Some(shape.to_owned());
    }
}

impl Cursor {
    /// Moves to the period `now` falls in; a block of another period is abandoned (its
    /// numbers become holes), so no ID is ever stamped with a period it was not reserved for.
    pub(crate) fn roll_to(&mut self, spec: &Spec, clock: &dyn Clock) {
        if self.period_second == Some(clock.unix_second()) {
            return;
        }
        let now = clock.now();
        self.period_second = Some(now.timestamp());
        let text = spec.period_at(now);
        if text != self.period.text {
            self.period = Period::new(text);
            self.next = self.end;
        }
    }

    /// Takes up to `n` numbers from the block.
    pub(crate) fn take(&mut self, n: u64) -> Range<u64> {
        let start = self.next;
        self.next = self.end.min(start.saturating_add(n));
        start..self.next
    }

    /// Replaces the block with `range`, if it still belongs to `period`.
    pub(crate) fn refill(&mut self, period: &Period, range: Range<u64>) {
        if self.period == *period {
            self.next = range.start;
            self.end = range.end;
        }
    }
}
