//! The window: the part of a key's current block that any thread takes single numbers from,
//! in order, with one compare-and-swap and without the key's lock.
//!
//! One word says whether the window is open and how many of its numbers were taken; the
//! window's facts (first number, length, period, the clock second it is valid in) sit beside
//! it. The key's lock holder closes the window first ([`Window::close`], which says how far
//! lock-free takers got), works on the block, and publishes a new window under a new epoch
//! when it lets go ([`Window::publish`]). A taker reads the facts between loading the word
//! and exchanging it for the word plus one: the exchange succeeds only if nobody closed the
//! window in between, so the facts it read are those of the window its number came from.
//!
//! Numbers are taken strictly in order: what a window has not handed out is always its tail,
//! so nothing is stranded when threads stop, and the lock holder gives it back exactly.
//!
//! The epoch has 39 bits: a taker's stale exchange could only succeed if the key's lock were
//! taken and let go 2^39 times (years of continuous slow-path calls) while that one thread
//! stood still between two instructions.

use crate::sync::atomic::{AtomicI64, AtomicU64, Ordering};

/// The word's low bits: numbers taken from the window.
const TAKEN_BITS: u32 = 24;
const TAKEN: u64 = (1 << TAKEN_BITS) - 1;
/// The word's high bit: the lock holder closed the window.
const CLOSED: u64 = 1 << 63;
/// Epochs wrap at this many.
const EPOCHS: u64 = 1 << (63 - TAKEN_BITS);

/// The most numbers one window holds: a longer block is published again when it runs out.
pub(super) const WINDOW_MAX: u64 = TAKEN;

/// A clock second no clock shows: a window that no second may serve.
pub(super) const NEVER: i64 = i64::MIN;

/// The lock-free window onto a key's block (see the module's documentation).
#[derive(Debug)]
pub(super) struct Window {
    word: AtomicU64,
    start: AtomicU64,
    len: AtomicU64,
    second: AtomicI64,
    period: AtomicU64,
    ahead_at: AtomicU64,
}

/// What a window is published with: numbers `start..start + len` of the period with id
/// `period`, served while the clock shows `second`; serving `ahead_at` (if not 0) starts
/// reserving the next block ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Facts {
    pub(super) start: u64,
    pub(super) len: u64,
    pub(super) second: i64,
    pub(super) period: u64,
    pub(super) ahead_at: u64,
}

/// One number taken from the window, with its period as the caller looked it up.
pub(super) struct Taken<P> {
    pub(super) number: u64,
    pub(super) period: P,
    /// The number is the window's mark: the next block is to be reserved ahead.
    pub(super) ahead: bool,
}

impl Window {
    /// A closed window: the first caller takes the key's lock.
    pub(super) fn new() -> Self {
        Window {
            word: AtomicU64::new(CLOSED),
            start: AtomicU64::new(0),
            len: AtomicU64::new(0),
            second: AtomicI64::new(NEVER),
            period: AtomicU64::new(0),
            ahead_at: AtomicU64::new(0),
        }
    }

    /// Takes the window's next number if it has one that is at most `capacity`, in clock
    /// second `second`, of a period `period_of` knows (by its id). `None` sends the caller to
    /// the key's lock.
    #[inline]
    pub(super) fn take<P>(
        &self,
        second: i64,
        capacity: u64,
        period_of: impl Fn(u64) -> Option<P>,
    ) -> Option<Taken<P>> {
        let mut word = self.word.load(Ordering::Acquire);
        if word & CLOSED != 0 {
            return None;
        }
        // Read between the load of `word` and the exchange below: if that succeeds, nobody
        // closed the window in between (closing changes the word), so these are the facts of
        // this window, not a later one's. They do not change while its epoch lasts: a retry
        // in the same epoch reads none of them again.
        let epoch = word >> TAKEN_BITS;
        if self.second.load(Ordering::Relaxed) != second {
            return None;
        }
        let (start, len) = (
            self.start.load(Ordering::Relaxed),
            self.len.load(Ordering::Relaxed),
        );
        let period = period_of(self.period.load(Ordering::Relaxed))?;
        let ahead_at = self.ahead_at.load(Ordering::Relaxed);
        loop {
            let taken = word & TAKEN;
            let number = start + taken;
            if taken >= len || number > capacity {
                return None;
            }
            match self.word.compare_exchange_weak(
                word,
                word + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    return Some(Taken {
                        number,
                        period,
                        ahead: number == ahead_at,
                    })
                }
                // Another thread took a number meanwhile: again with the next one, if the
                // window is the same (closed or published anew: to the lock).
                Err(now) if now >> TAKEN_BITS == epoch => {
                    std::hint::spin_loop();
                    word = now;
                }
                Err(_) => return None,
            }
        }
    }

    /// Closes the window, for the key's lock holder: returns how many of its numbers were
    /// taken since it was published (0 if it was closed).
    pub(super) fn close(&self) -> u64 {
        let word = self.word.swap(CLOSED, Ordering::AcqRel);
        if word & CLOSED != 0 {
            0
        } else {
            word & TAKEN
        }
    }

    /// Opens a new window with `facts`, under `epoch` (the key's lock holder, after
    /// [`close`](Self::close)).
    pub(super) fn publish(&self, epoch: u64, facts: Facts) {
        debug_assert!(facts.len <= WINDOW_MAX);
        self.start.store(facts.start, Ordering::Relaxed);
        self.len.store(facts.len, Ordering::Relaxed);
        self.second.store(facts.second, Ordering::Relaxed);
        self.period.store(facts.period, Ordering::Relaxed);
        self.ahead_at.store(facts.ahead_at, Ordering::Relaxed);
        // Release: a taker that loads this word sees the facts above.
        self.word
            .store((epoch % EPOCHS) << TAKEN_BITS, Ordering::Release);
    }
}

#[cfg(all(test, not(seqgen_loom)))]
mod tests {
    use super::*;

    fn facts(start: u64, len: u64) -> Facts {
        Facts {
            start,
            len,
            second: 7,
            period: 1,
            ahead_at: start + 2,
        }
    }

    #[test]
    fn numbers_are_taken_in_order_until_the_window_runs_out() {
        let window = Window::new();
        assert!(window.take(7, u64::MAX, Some).is_none(), "closed");
        window.publish(1, facts(10, 3));
        let taken: Vec<_> = std::iter::from_fn(|| window.take(7, u64::MAX, Some))
            .map(|t| (t.number, t.ahead))
            .collect();
        assert_eq!(taken, [(10, false), (11, false), (12, true)]);
        assert_eq!(window.close(), 3);
    }

    #[test]
    fn another_second_a_closed_window_or_the_capacity_send_the_caller_to_the_lock() {
        let window = Window::new();
        window.publish(1, facts(10, 3));
        assert!(window.take(8, u64::MAX, Some).is_none());
        assert!(window.take(7, 9, Some).is_none());
        assert!(window.take(7, u64::MAX, |_| None::<u64>).is_none());
        assert_eq!(window.take(7, u64::MAX, Some).unwrap().number, 10);
        assert_eq!(window.close(), 1);
        assert!(window.take(7, u64::MAX, Some).is_none());
        assert_eq!(window.close(), 0, "closed twice: nothing more taken");
    }
}
