//! A key's blocks as the lock holder sees them: the current block of the current period, the
//! next one reserved ahead, and what a period that ended left behind.

use std::ops::Range;

use super::period_texts;
use super::window::{Facts, NEVER, WINDOW_MAX};
use crate::clock::Clock;
use crate::counter_range::checked;
use crate::error::Result;
use crate::trace::event;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// A block of committed numbers `next..end` of one period, the block after it when one was
/// reserved ahead, and the blocks of ended periods still to be given back to their counters.
#[derive(Debug)]
pub(crate) struct Cursor {
    pub(crate) period: Period,
    /// The period's id (see [`periods`]): what a window names its period by.
    period_id: u64,
    next: u64,
    end: u64,
    /// Serving this number starts reserving the next block in the background (80 % into
    /// the block); 0 when nothing is to be reserved ahead.
    ahead_at: u64,
    /// The next block of the same period, reserved ahead; always above the current one.
    spare: Option<Range<u64>>,
    /// Numbers of ended periods (and blocks reserved ahead for them) that were never served:
    /// given back to their counters at the key's next reservation or at `release`.
    left_behind: Vec<(Period, Range<u64>)>,
    /// The clock second the period was last computed for ([`NEVER`] before the first): the
    /// period is recomputed at most once a second (specs reject date patterns finer than a
    /// second).
    period_second: i64,
    /// Numbers served from blocks already held (not those a reservation served at once), by
    /// the lock holder or from the window.
    served: u64,
    /// How many of them were published as a metric (see `KeyState::publish`).
    published: u64,
    /// Windows published so far (see [`super::window`]).
    epoch: u64,
}

impl Default for Cursor {
    fn default() -> Self {
        Cursor {
            period: Period::default(),
            period_id: period_texts::id_of(""),
            next: 0,
            end: 0,
            ahead_at: 0,
            spare: None,
            left_behind: Vec::new(),
            period_second: NEVER,
            served: 0,
            published: 0,
            epoch: 0,
        }
    }
}

impl Cursor {
    /// Moves to the period `now` falls in. What the blocks of the period that ended still
    /// hold is left behind, to be given back to its counter: no ID is ever stamped with a
    /// period it was not reserved for. A printed date that draws from the same counter as the
    /// last (a [reset](diesel_seqgen_core::Reset)) keeps the blocks: their numbers are that
    /// counter's, whichever of its dates prints them. Whether the counter changed.
    pub(crate) fn roll_to(&mut self, spec: &Spec, clock: &dyn Clock) -> bool {
        if self.period_second == clock.unix_second() {
            return false;
        }
        let now = clock.now();
        self.period_second = now.timestamp();
        let text = spec.period_at(now);
        if text == self.period.text {
            return false;
        }
        self.move_to(spec, spec.period(text))
    }

    /// Moves to `new`, the period of the clock's moment or of a document's date (see
    /// [`roll_to`](Self::roll_to)). Whether the counter changed.
    #[cfg_attr(not(feature = "tracing"), allow(unused_variables))] // `spec` names the trace's key
    pub(crate) fn move_to(&mut self, spec: &Spec, new: Period) -> bool {
        if new.text == self.period.text {
            return false;
        }
        if new.counter() == self.period.counter() {
            // Another date printed from the same counter (a reset): its blocks go on.
            self.period = new;
            self.period_id = period_texts::id_of(&self.period.text);
            return false;
        }
        let old = std::mem::replace(&mut self.period, new);
        let unused = self.left() + self.spare.as_ref().map_or(0, |s| s.end - s.start);
        if unused > 0 {
            event!(
                debug,
                key = spec.key(),
                from = %old.text,
                to = %self.period.text,
                unused,
                "a new period: the numbers left of the last one go back to its counter"
            );
        }
        // The spare block is above the current one: it goes back first.
        if let Some(spare) = self.spare.take() {
            self.left_behind.push((old.clone(), spare));
        }
        if self.next < self.end {
            self.left_behind.push((old, self.next..self.end));
        }
        self.period_id = period_texts::id_of(&self.period.text);
        self.next = self.end;
        self.ahead_at = 0;
        true
    }

    /// The blocks ended periods left behind, taken out to be given back (see
    /// [`give_back`](Self::give_back) for the order).
    pub(crate) fn take_left_behind(&mut self) -> Vec<(Period, Range<u64>)> {
        std::mem::take(&mut self.left_behind)
    }

    /// How many numbers the current block still holds.
    pub(crate) fn left(&self) -> u64 {
        self.end.saturating_sub(self.next)
    }

    /// Counts `n` numbers lock-free takers took from the window since it was published: they
    /// were the first `n` of the block.
    pub(super) fn absorb(&mut self, n: u64) {
        self.next += n;
        self.served += n;
    }

    /// What the window is published with when the lock is let go: the block (the spare once
    /// the current one is empty), in the second the period was checked in. The mark for
    /// reserving ahead, once passed, is the window's first number, so the first taker asks.
    pub(super) fn facts(&mut self) -> Facts {
        if self.next >= self.end {
            if let Some(spare) = self.spare.take() {
                self.use_block(spare);
            }
        }
        self.epoch += 1;
        Facts {
            start: self.next,
            len: self.left().min(WINDOW_MAX),
            second: self.period_second,
            period: self.period_id,
            ahead_at: if self.ahead_at != 0 && self.spare.is_none() {
                self.ahead_at.max(self.next)
            } else {
                0
            },
        }
    }

    /// The epoch of the window [`facts`](Self::facts) describes.
    pub(super) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// The period's id and the period, for the taker's thread to keep (see [`periods`]).
    pub(super) fn period_with_id(&self) -> (u64, &Period) {
        (self.period_id, &self.period)
    }

    /// Numbers served so far.
    pub(super) fn served(&self) -> u64 {
        self.served
    }

    /// Numbers served since the last call: to be published as a metric.
    pub(super) fn unpublished(&mut self) -> u64 {
        let fresh = self.served - self.published;
        self.published = self.served;
        fresh
    }

    /// One number from the block, counted as served, if it holds one within the spec's
    /// capacity: the usual case of [`serve`], in fewer steps.
    #[inline]
    fn take_one(&mut self, spec: &Spec) -> Option<u64> {
        let number = self.next;
        if number < self.end && number <= spec.capacity() {
            self.next += 1;
            self.served += 1;
            return Some(number);
        }
        None
    }

    /// Takes up to `n` numbers from the block, moving on to the spare block when the current
    /// one runs dry.
    fn take(&mut self, n: u64) -> Range<u64> {
        if self.next >= self.end {
            match self.spare.take() {
                Some(spare) => self.use_block(spare),
                None => return self.next..self.next,
            }
        }
        let start = self.next;
        self.next = self.end.min(start.saturating_add(n));
        start..self.next
    }

    /// Moves on to `block`, the spare.
    fn use_block(&mut self, block: Range<u64>) {
        self.ahead_at = ahead_mark(&block);
        (self.next, self.end) = (block.start, block.end);
    }

    /// Whether the next block should now be reserved ahead: the current one is 80 % served and
    /// none is reserved yet.
    #[inline]
    pub(crate) fn wants_ahead(&self) -> bool {
        self.ahead_at != 0 && self.next >= self.ahead_at && self.spare.is_none()
    }

    /// Whether the spare block is wanted still: `period`'s counter is current (a block is its
    /// counter's, whichever date prints it), none is reserved, and the
    /// current block is 80 % served (a refill in the foreground may have come first).
    pub(crate) fn still_wants_ahead(&self, period: &Period) -> bool {
        self.period.counter() == period.counter() && self.wants_ahead()
    }

    /// Empties the cursor and returns what it still held, the spare block first, then what
    /// ended periods left behind, latest first: the order in which they can go back to their
    /// counters. Nothing of them is served afterwards, whether or not a counter takes them
    /// back.
    pub(crate) fn give_back(&mut self) -> Vec<(Period, Range<u64>)> {
        let mut unused = Vec::new();
        if let Some(spare) = self.spare.take() {
            unused.push((self.period.clone(), spare));
        }
        if self.next < self.end {
            unused.push((self.period.clone(), self.next..self.end));
            self.next = self.end;
        }
        self.ahead_at = 0;
        unused.extend(self.left_behind.drain(..).rev());
        unused
    }

    /// Takes `block`, reserved for `period` in the foreground, and serves its first `need`
    /// numbers (returned); with `ahead`, the next block is to be reserved in the background
    /// once 80 % of it is served. The cursor is empty (the caller held the key's turn since
    /// it found it so). A block of a period that ended meanwhile is left behind but for the
    /// numbers served.
    pub(crate) fn refill(
        &mut self,
        period: &Period,
        block: Range<u64>,
        need: u64,
        ahead: bool,
    ) -> Range<u64> {
        let mine = block.start..block.start + need;
        let rest = mine.end..block.end;
        if self.period.counter() != period.counter() {
            self.left_behind.push((period.clone(), rest));
        } else if self.next < self.end || self.spare.is_some() {
            // Not expected (only the turn's holder fills the cursor), but never a reason to
            // drop numbers: the block is above all the cursor holds.
            self.keep_spare(period, rest);
        } else {
            self.ahead_at = if ahead { ahead_mark(&block) } else { 0 };
            (self.next, self.end) = (rest.start, rest.end);
        }
        mine
    }

    /// Gives up reserving ahead for the current block of `period` (no idle pool connection, or
    /// the reservation failed): its caller refills in the foreground when it runs dry, instead
    /// of every later call trying again.
    pub(crate) fn stop_ahead(&mut self, period: &Period) {
        if self.period.counter() == period.counter() && self.spare.is_none() {
            self.ahead_at = 0;
        }
    }

    /// Keeps `block`, reserved ahead for `period`, as the next one; a block the cursor cannot
    /// take (its period ended) is left behind, to go back to its counter.
    pub(crate) fn keep_spare(&mut self, period: &Period, block: Range<u64>) {
        if self.period.counter() == period.counter() && self.spare.is_none() {
            self.spare = Some(block);
        } else {
            self.left_behind.push((period.clone(), block));
        }
    }
}

/// The number whose serving starts reserving the block after `block`: 80 % into it.
fn ahead_mark(block: &Range<u64>) -> u64 {
    block.start + (block.end - block.start) * 4 / 5
}

/// Hands out what the cursor's blocks still hold, up to `need`.
#[inline(always)] // the hot path's one step: the fast case must not sit behind a call
pub(crate) fn serve<F>(cursor: &mut Cursor, spec: &Spec, need: &mut u64, emit: &mut F) -> Result<()>
where
    F: FnMut(&Period, Range<u64>) -> Result<()>,
{
    // The usual call, one number from the block, in fewer steps than the loop below.
    if *need == 1 {
        if let Some(number) = cursor.take_one(spec) {
            *need = 0;
            return emit(&cursor.period, number..number + 1);
        }
    }
    while *need > 0 {
        let got = cursor.take(*need);
        if got.is_empty() {
            break;
        }
        *need -= got.end - got.start;
        cursor.served += got.end - got.start;
        let got = checked(spec, &cursor.period, got)?;
        emit(&cursor.period, got)?;
    }
    Ok(())
}
