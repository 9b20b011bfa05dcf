//! Numbers a thread takes ahead of need from a key other threads are waiting for.
//!
//! A cached ID costs one lock of its key. When threads serving one key keep finding that lock
//! held (see `KeyState::contention`), each takes [`LEASE`] numbers at a time instead of one,
//! and serves its next calls from them in a thread-local lease, without the lock, as long as
//! the clock is still in the second the key's period was checked at and nothing was given
//! back since (`KeyState::epoch`). A lease is only ever carved out of the key's block under
//! its lock, so no number is in two leases, or in a lease and the block.
//!
//! What is left of a lease when its thread moves on (another key took its slot, the second or
//! the period changed, the thread ended) goes back to the block if it lies just below what the
//! block still holds, else it stays a hole, as numbers of a block do when a generator stops.
//! An uncontended key takes no lease: its numbers are served one at a time, in order.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::Arc;

use crate::cache::{Cursor, KeyState};
use crate::error::Result;
use seqgen_core::__private::Period;
use seqgen_core::Spec;

/// How many numbers a thread takes at a time from a contended key: its lock is then taken
/// once every `LEASE` IDs, and a thread that stops leaves at most `LEASE - 1` holes per key.
pub(crate) const LEASE: u64 = 16;

/// How many keys a thread holds leases of at once; taking one more settles the oldest.
const SLOTS: usize = 4;

/// A thread takes a lease only from a block that holds at least this many more numbers, so
/// that what leases leave unserved (a thread that ends, a key pushed out of its slots) stays
/// a small part of a block, and small batches are served one number at a time, in order.
const BLOCK_LEFT: u64 = 64 * LEASE;

/// Numbers of one key's block that one thread serves without the key's lock.
struct Lease {
    state: Arc<KeyState>,
    /// The key's epoch when the numbers were taken.
    epoch: u64,
    /// The clock second the key's period was checked at.
    second: i64,
    period: Period,
    /// The numbers taken; `next..end` are left.
    taken: Range<u64>,
    next: u64,
    /// How many were served (counted into the key's statistics when the lease is settled).
    served: u64,
}

impl Lease {
    /// Whether the lease can serve a number now, in clock second `second`.
    fn serves(&self, state: &Arc<KeyState>, second: i64) -> bool {
        Arc::ptr_eq(&self.state, state)
            && self.next < self.taken.end
            && self.second == second
            && self.epoch == state.epoch()
    }

    /// Settles the lease with its key's cursor, locked by the caller; returns its period.
    fn settle(self, cursor: &mut Cursor) -> Period {
        let same_epoch = self.epoch == self.state.epoch();
        cursor.settle(
            &self.period,
            self.next..self.taken.end,
            self.served,
            same_epoch,
        );
        self.state.count_lease(false);
        self.period
    }

    /// Settles the lease, taking its key's lock (never with another key's lock held).
    fn settle_alone(self) {
        let state = Arc::clone(&self.state);
        self.settle(&mut state.cursor());
    }
}

/// This thread's leases; settled when the thread ends.
struct Leases(Vec<Lease>);

impl Leases {
    /// This thread's lease of `state`, if it holds one.
    fn of(&mut self, state: &Arc<KeyState>) -> Option<&mut Lease> {
        self.0.iter_mut().find(|l| Arc::ptr_eq(&l.state, state))
    }

    /// This thread's lease of `state`, taken out of its slots.
    fn remove(&mut self, state: &Arc<KeyState>) -> Option<Lease> {
        let i = self.0.iter().position(|l| Arc::ptr_eq(&l.state, state))?;
        Some(self.0.remove(i))
    }
}

impl Drop for Leases {
    fn drop(&mut self) {
        for lease in self.0.drain(..) {
            lease.settle_alone();
        }
    }
}

thread_local! {
    static LEASES: RefCell<Leases> = const { RefCell::new(Leases(Vec::new())) };
}

/// Serves one number of `state` from this thread's lease, without its lock, if the lease
/// still serves in clock second `second`: what `emit` returned.
pub(crate) fn serve<F>(state: &Arc<KeyState>, second: i64, emit: &mut F) -> Option<Result<()>>
where
    F: FnMut(&Period, Range<u64>) -> Result<()>,
{
    LEASES
        .try_with(|leases| {
            // Borrowed already: `emit` called seqgen again; that call goes through the lock.
            let mut leases = leases.try_borrow_mut().ok()?;
            let lease = leases.0.iter_mut().find(|l| l.serves(state, second))?;
            let number = lease.next;
            lease.next += 1;
            lease.served += 1;
            Some(emit(&lease.period, number..number + 1))
        })
        .ok()
        .flatten()
}

/// With `state`'s cursor locked and moved to the current period: when this thread's lease of
/// the key has numbers left of that period, and nothing was given back since it was taken,
/// lets it serve in the cursor's second (the lease was waiting for the period to be checked
/// in a new second) and returns that second. A thread serves its lease before the numbers
/// above it, so that the IDs one thread gets always increase.
pub(crate) fn renew(state: &Arc<KeyState>, cursor: &Cursor) -> Option<i64> {
    let second = cursor.period_second()?;
    LEASES
        .try_with(|leases| {
            let mut leases = leases.try_borrow_mut().ok()?;
            let lease = leases.of(state)?;
            if lease.next < lease.taken.end
                && lease.epoch == state.epoch()
                && lease.period == cursor.period
            {
                lease.second = second;
                return Some(second);
            }
            None
        })
        .ok()
        .flatten()
}

/// With `state`'s cursor locked and moved to the current period, after one number was served
/// from it: settles this thread's lease of the key, if any, and takes up to [`LEASE`] - 1
/// numbers for its next calls. Returns the lease of another key this one pushed out of the
/// thread's slots, to be dropped once `cursor` is unlocked.
#[must_use = "a lease pushed out is settled when dropped, after the key's lock is released"]
fn take(state: &Arc<KeyState>, cursor: &mut Cursor, spec: &Spec) -> Option<Settle> {
    let second = cursor.period_second()?;
    LEASES
        .try_with(|leases| {
            // Borrowed already (`emit` called seqgen again): no lease this time.
            let mut leases = leases.try_borrow_mut().ok()?;
            // This thread's lease of the key ran out or can no longer serve: settled first,
            // so that what it left can go back to the block before the next lease is taken.
            let previous = leases.remove(state).map(|lease| lease.settle(cursor));
            let leases = &mut leases.0;
            if cursor.left() < BLOCK_LEFT {
                return None;
            }
            let taken = cursor.take_ahead(spec, LEASE - 1)?;
            state.count_lease(true);
            let period = match previous {
                // No allocation under the key's lock while the period lasts.
                Some(period) if period == cursor.period => period,
                _ => cursor.period.clone(),
            };
            let lease = Lease {
                state: Arc::clone(state),
                epoch: state.epoch(),
                second,
                period,
                next: taken.start,
                taken,
                served: 0,
            };
            let pushed_out = (leases.len() == SLOTS).then(|| leases.remove(0));
            leases.push(lease);
            pushed_out.map(|lease| Settle(Some(lease)))
        })
        // No thread-local storage: the thread is ending.
        .ok()
        .flatten()
}

/// With `state`'s cursor locked, after a number was served from it to a thread that may hold
/// a lease of the key: a new lease while the key is `contended` (see [`take`]); otherwise
/// this thread's lease, which ran out or can no longer serve, is settled.
#[must_use = "a lease pushed out is settled when dropped, after the key's lock is released"]
pub(crate) fn after_serving(
    state: &Arc<KeyState>,
    cursor: &mut Cursor,
    spec: &Spec,
    contended: bool,
) -> Option<Settle> {
    if contended {
        return take(state, cursor, spec);
    }
    if let Some(lease) = remove_mine(state) {
        lease.settle(cursor);
    }
    None
}

/// Settles this thread's lease of `state`, if it holds one, so that its numbers go back to
/// the block before the block is given back (`Generator::release`).
pub(crate) fn settle_mine(state: &Arc<KeyState>) {
    if let Some(lease) = remove_mine(state) {
        lease.settle_alone();
    }
}

/// Takes this thread's lease of `state` out of its slots.
fn remove_mine(state: &Arc<KeyState>) -> Option<Lease> {
    LEASES
        .try_with(|leases| leases.try_borrow_mut().ok()?.remove(state))
        .ok()
        .flatten()
}

/// A lease of another key, settled when dropped: drop it once the current key's lock is
/// released.
pub(crate) struct Settle(Option<Lease>);

impl Drop for Settle {
    fn drop(&mut self) {
        if let Some(lease) = self.0.take() {
            lease.settle_alone();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use chrono::{TimeDelta, TimeZone, Utc};

    use super::*;
    use crate::clock::{Clock, FixedClock};

    /// A key with the block 1..=10,000 in memory, and a clock standing still.
    fn key() -> (Arc<KeyState>, Spec, FixedClock) {
        let spec = Spec::builder("leased").date("").pad(6).build().unwrap();
        let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 23, 12, 0, 0).unwrap());
        let state = Arc::new(KeyState::new("leased", ""));
        state
            .cursor_now(&spec, &clock)
            .refill(&Period::default(), 1..10_001, &(1..10_001), false);
        (state, spec, clock)
    }

    /// One number from the cursor, as the locked path serves it, then a lease.
    fn serve_locked(state: &Arc<KeyState>, spec: &Spec, clock: &FixedClock) -> u64 {
        let mut cursor = state.cursor_now(spec, clock);
        if let Some(second) = renew(state, &cursor) {
            drop(cursor);
            return serve_leased_in(state, second, 1)[0];
        }
        let mut number = 0;
        crate::cache::serve(&mut cursor, spec, &mut 1, &mut |_, counters| {
            number = counters.start;
            Ok(())
        })
        .unwrap();
        drop(take(state, &mut cursor, spec));
        number
    }

    /// Numbers from this thread's lease, as many as it serves.
    fn serve_leased(state: &Arc<KeyState>, clock: &FixedClock, max: usize) -> Vec<u64> {
        serve_leased_in(state, clock.unix_second(), max)
    }

    fn serve_leased_in(state: &Arc<KeyState>, second: i64, max: usize) -> Vec<u64> {
        let mut numbers = Vec::new();
        let mut emit = |_: &Period, counters: Range<u64>| {
            numbers.push(counters.start);
            Ok(())
        };
        for _ in 0..max {
            match serve(state, second, &mut emit) {
                Some(served) => served.unwrap(),
                None => break,
            }
        }
        numbers
    }

    #[test]
    fn a_lease_is_carved_out_of_the_block_and_served_in_order() {
        let (state, spec, clock) = key();
        assert_eq!(serve_locked(&state, &spec, &clock), 1);
        assert_eq!(
            serve_leased(&state, &clock, 100),
            (2..=16).collect::<Vec<_>>()
        );
        // The block goes on above the lease, and the next lease after that.
        assert_eq!(serve_locked(&state, &spec, &clock), 17);
        assert_eq!(serve_leased(&state, &clock, 3), [18, 19, 20]);
        settle_mine(&state);
        // What was left of the lease lay just below the block: it went back.
        assert_eq!(state.cursor().take(1).start, 21);
        let stats = state.stats();
        assert_eq!((stats.served_from_memory, stats.numbers_abandoned), (20, 0));
    }

    #[test]
    fn a_lease_is_not_served_after_the_block_was_given_back() {
        let (state, spec, clock) = key();
        serve_locked(&state, &spec, &clock);
        assert_eq!(serve_leased(&state, &clock, 2), [2, 3]);
        let unused = state.give_back();
        assert_eq!(unused.len(), 1);
        assert_eq!((unused[0].1, unused[0].2), (17, 10_001));
        assert!(serve_leased(&state, &clock, 1).is_empty());
        settle_mine(&state);
        // 4..=16 are holes: the counter may have taken back 17.. and handed them out again.
        let stats = state.stats();
        assert_eq!((stats.served_from_memory, stats.numbers_abandoned), (3, 13));
    }

    #[test]
    fn a_lease_waits_for_the_period_to_be_checked_in_a_new_second() {
        let (state, spec, clock) = key();
        serve_locked(&state, &spec, &clock);
        assert_eq!(serve_leased(&state, &clock, 1), [2]);
        clock.advance(TimeDelta::seconds(1));
        assert!(serve_leased(&state, &clock, 1).is_empty());
        // The locked path checks the period (the same: no date part), and the thread goes on
        // with its lease before anything above it.
        assert_eq!(serve_locked(&state, &spec, &clock), 3);
        assert_eq!(
            serve_leased(&state, &clock, 100),
            (4..=16).collect::<Vec<_>>()
        );
        assert_eq!(serve_locked(&state, &spec, &clock), 17);
    }

    #[test]
    fn a_lease_of_an_ended_period_is_never_served() {
        let spec = Spec::builder("daily")
            .date("%Y%m%d")
            .pad(6)
            .build()
            .unwrap();
        let clock = FixedClock::new(Utc.with_ymd_and_hms(2026, 11, 23, 23, 59, 59).unwrap());
        let state = Arc::new(KeyState::new("daily", ""));
        let period = state.cursor_now(&spec, &clock).period.clone();
        state
            .cursor()
            .refill(&period, 1..10_001, &(1..10_001), false);
        serve_locked(&state, &spec, &clock);
        assert_eq!(serve_leased(&state, &clock, 1), [2]);
        clock.advance(TimeDelta::seconds(1));
        // A new day: the locked path finds no block of it (the old one is abandoned), and the
        // lease of the old day is not served again, whatever second the clock shows next.
        assert!(state.cursor_now(&spec, &clock).take(1).is_empty());
        clock.advance(TimeDelta::seconds(-1));
        assert!(serve_leased(&state, &clock, 1).is_empty());
    }

    #[test]
    fn a_small_block_is_not_leased() {
        let (state, spec, clock) = key();
        state.cursor().take(10_000 - BLOCK_LEFT);
        assert_eq!(serve_locked(&state, &spec, &clock), 10_001 - BLOCK_LEFT);
        assert!(serve_leased(&state, &clock, 1).is_empty());
        assert_eq!(serve_locked(&state, &spec, &clock), 10_002 - BLOCK_LEFT);
    }

    #[test]
    fn a_thread_that_ends_settles_its_leases() {
        let (state, spec, clock) = key();
        let clock = Arc::new(clock);
        let (s, c) = (Arc::clone(&state), Arc::clone(&clock));
        let spec2 = spec.clone();
        let served = std::thread::spawn(move || {
            serve_locked(&s, &spec2, &c);
            serve_leased(&s, &c, 4)
        })
        .join()
        .unwrap();
        assert_eq!(served, [2, 3, 4, 5]);
        assert_eq!(state.cursor().take(1).start, 6);
        assert_eq!(state.stats().served_from_memory, 5);
    }

    #[test]
    fn a_fifth_key_pushes_the_oldest_lease_out_and_its_numbers_go_back() {
        let keys: Vec<_> = (0..=SLOTS).map(|_| key()).collect();
        for (state, spec, clock) in &keys {
            serve_locked(state, spec, clock);
        }
        let (first, _, clock) = &keys[0];
        assert!(serve_leased(first, clock, 1).is_empty());
        assert_eq!(first.cursor().take(1).start, 2);
        let (last, _, clock) = &keys[SLOTS];
        assert_eq!(serve_leased(last, clock, 1), [2]);
    }
}
