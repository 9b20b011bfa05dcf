//! What a key's reservations remember between them: how big the next block should be, the row
//! known to exist, the highest number held in each recent period, the shape found recorded
//! and how full the counter is getting. Never on the cached path; one lock for all of it, as
//! a generator keeps one per scope and a lock is 8 bytes. Periods are named by their ids
//! ([`period_texts::id_of`]), not by copies of their texts.

use std::collections::VecDeque;
use std::ops::Range;

use chrono::{DateTime, Utc};

use super::period_texts::id_of;
use super::KeyState;
use crate::batch::BatchState;

/// How many periods a key remembers its highest number for: enough for clocks that disagree
/// by a few periods; a period older than that is no longer checked.
const HELD_PERIODS: usize = 16;

/// What a key's reservations remember (see the module's documentation).
#[derive(Debug, Default)]
pub(super) struct Remembered {
    /// How big the next block should be; used only by the caller whose turn it is.
    batch: BatchState,
    /// The last period whose `db_key` row is known to exist (rows are never deleted): lets
    /// gapless mode skip looking for it. 0 (an id no period has) before any.
    known_row: u64,
    /// The highest number a committed reservation gave this key in each of its latest
    /// periods, so a counter that went back is noticed instead of served.
    held: VecDeque<(u64, u64)>,
    /// The shape last found recorded on the key's row: in-transaction paths check it once.
    shape: Option<Box<str>>,
    /// How full the counter reserved from is getting in its period.
    watch: Option<Watch>,
}

/// A key's counter watched in one period, for the capacity warnings (at 80 % and 95 %): its
/// first reservation seen (when, and its last number) and the warnings given.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Watch {
    period: u64,
    /// When this generator first reserved in the period, and the last number it got then.
    pub(crate) first: (DateTime<Utc>, u64),
    /// 0: none yet; 1: at 80 %; 2: at 95 %.
    warned: u8,
}

impl KeyState {
    fn remembered<T>(&self, f: impl FnOnce(&mut Remembered) -> T) -> T {
        // Every change is one step: a panic elsewhere leaves it consistent.
        f(&mut self.remembered.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Calls `f` with how big the next block should be (for the caller whose turn it is).
    pub(crate) fn batch<T>(&self, f: impl FnOnce(&mut BatchState) -> T) -> T {
        self.remembered(|r| f(&mut r.batch))
    }

    /// Whether the row of `period` is known to exist.
    pub(crate) fn row_known(&self, period: &str) -> bool {
        let id = id_of(period);
        self.remembered(|r| r.known_row == id)
    }

    /// Remembers that the row of `period` exists.
    pub(crate) fn remember_row(&self, period: &str) {
        let id = id_of(period);
        self.remembered(|r| r.known_row = id);
    }

    /// Notes that a committed reservation gave `block` from the counter of `period` (its
    /// `Period::counter`: every date a reset prints from one counter is one), or returns the
    /// highest number held before if the block is not above it: the counter went back.
    pub(crate) fn note_block(&self, period: &str, block: &Range<u64>) -> Result<(), u64> {
        let id = id_of(period);
        let last = block.end - 1;
        self.remembered(|r| {
            let held = &mut r.held;
            match held.iter_mut().find(|(p, _)| *p == id) {
                Some((_, high)) if block.start <= *high => return Err(*high),
                Some((_, high)) => *high = last,
                None => {
                    if held.len() == HELD_PERIODS {
                        held.pop_front();
                    }
                    if held.capacity() == 0 {
                        // Most keys see one period at a time (all undated ones): room for one
                        // first, not the four a first push makes.
                        held.reserve_exact(1);
                    }
                    held.push_back((id, last));
                }
            }
            Ok(())
        })
    }

    /// After the numbers above `high` were taken out of the blocks unserved
    /// ([`Cursor::give_back`](super::Cursor::give_back)), the highest number held in `period`
    /// is `high` again.
    pub(crate) fn lower_held(&self, period: &str, high: u64) {
        let id = id_of(period);
        self.remembered(|r| {
            if let Some((_, h)) = r.held.iter_mut().find(|(p, _)| *p == id) {
                *h = high.min(*h);
            }
        });
    }

    /// Whether `shape` was found recorded on the key's row before.
    pub(crate) fn shape_known(&self, shape: &str) -> bool {
        self.remembered(|r| r.shape.as_deref() == Some(shape))
    }

    /// Remembers that `shape` is recorded on the key's row.
    pub(crate) fn remember_shape(&self, shape: &str) {
        self.remembered(|r| {
            if r.shape.as_deref() != Some(shape) {
                r.shape = Some(shape.into());
            }
        });
    }

    /// Notes that a reservation in `period` ended at `last` (at `at`), with the counter full
    /// enough for the warning of `level` (0: none; 1: at 80 %; 2: at 95 %). The period's watch
    /// (where it began) when that warning is due: not given in the period yet.
    pub(crate) fn watch(
        &self,
        period: &str,
        last: u64,
        at: DateTime<Utc>,
        level: u8,
    ) -> Option<Watch> {
        let id = id_of(period);
        self.remembered(|r| {
            let watch = match &mut r.watch {
                Some(w) if w.period == id => w,
                other => other.insert(Watch {
                    period: id,
                    first: (at, last),
                    warned: 0,
                }),
            };
            (watch.warned < level).then(|| {
                watch.warned = level;
                *watch
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::Key;
    use std::sync::Arc;

    fn state() -> KeyState {
        KeyState::new(Arc::new(Key::new("remembered")), "")
    }

    #[test]
    fn a_counter_that_went_back_is_noticed_in_its_period_only() {
        let state = state();
        assert_eq!(state.note_block("2026", &(1..11)), Ok(()));
        assert_eq!(state.note_block("2026", &(5..15)), Err(10));
        assert_eq!(state.note_block("2027", &(1..11)), Ok(()));
        state.lower_held("2026", 4);
        assert_eq!(state.note_block("2026", &(5..15)), Ok(()));
    }

    #[test]
    fn a_row_and_a_shape_are_remembered_by_period_and_text() {
        let state = state();
        assert!(!state.row_known("2026"));
        state.remember_row("2026");
        assert!(state.row_known("2026") && !state.row_known("2027"));
        assert!(!state.shape_known("pad=4"));
        state.remember_shape("pad=4");
        assert!(state.shape_known("pad=4") && !state.shape_known("pad=5"));
    }

    #[test]
    fn each_warning_is_given_once_a_period() {
        let state = state();
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let later = at + chrono::TimeDelta::seconds(60);
        assert!(state.watch("2026", 7, at, 0).is_none(), "no warning due");
        assert_eq!(
            state.watch("2026", 9, later, 1).map(|w| w.first),
            Some((at, 7))
        );
        assert!(state.watch("2026", 10, later, 1).is_none(), "given once");
        assert!(state.watch("2026", 11, later, 2).is_some());
        assert_eq!(
            state.watch("2027", 3, later, 1).map(|w| w.first),
            Some((later, 3))
        );
    }
}
