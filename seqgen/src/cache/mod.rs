//! The numbers of one key held in memory: a block reserved from the database, served in
//! order to every thread and task alike, and the turn that makes sure only one caller
//! reserves its next block at a time. Memory only: what talks to the database sits above
//! (the generator) and beside (the reservations).
//!
//! A number is taken either from the key's [window](window) (one compare-and-swap, the usual
//! case) or under the key's lock ([`KeyState::lock`]), which closes the window while it is
//! held. Either way numbers go out strictly in order, so what a live generator holds is
//! always the tail of its blocks, and [`Cursor::give_back`] can return all of it.

mod counts;
mod cursor;
mod key;
mod period_texts;
mod remembered;
mod window;

pub(crate) use cursor::{serve, Cursor};
pub(crate) use key::Key;

use std::borrow::Borrow;
use std::ops::{Deref, DerefMut, Range};
use std::sync::Arc;

use crate::clock::Clock;
use crate::error::Result;
use crate::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use crate::sync::{EventListener, Mutex};
// Leaf locks: held for a few steps, with no other lock taken meanwhile, and ordering no number:
// the standard library's even under the model check, which then explores only the locks that
// decide which numbers go where.
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;
use remembered::Remembered;
use std::sync::Mutex as Leaf;
use window::Window;

/// Between the scope and the period in the name of a document date's state: no scope has
/// control characters.
const PERIOD_MARK: char = '\u{1}';

/// The name of the state of `scope` for documents dated in `period` (see `KeyState::name`).
pub(crate) fn dated_name(scope: &str, period: &str) -> String {
    format!("{scope}{PERIOD_MARK}{period}")
}

/// The state of one (key, date pattern, scope) in one generator. A generator keeps one per
/// scope it serves: what is not used on the cached path is kept small (the key is shared, and
/// what reservations remember sits under one lock).
#[derive(Debug)]
pub(crate) struct KeyState {
    /// The `db_key` key, shared by the states of its scopes: its name and statistics.
    key: Arc<Key>,
    /// The state's name in its generator's map of scopes: the scope value of a scoped key's
    /// counter (empty for an unscoped key), and for a document date's state, after
    /// [`PERIOD_MARK`], its period.
    name: Box<str>,
    /// The single numbers any thread takes without the lock (see [`window`]).
    window: Window,
    /// Held only for in-memory work, never across a database call; see [`KeyState::lock`].
    cursor: Mutex<Cursor>,
    /// Whether a reservation of this key is under way (in the foreground or ahead, in the
    /// background), so that when a block runs dry exactly one thread or task reserves and the
    /// others wait for it; see [`Turn`].
    reserving: AtomicBool,
    /// What reservations remember between them (see [`remembered`]).
    remembered: Leaf<Remembered>,
    /// A scope's state: when it was last used, on its generator's count of new scopes, so
    /// that the least recently used are the ones dropped when a spec has too many.
    last_used: AtomicU64,
}

impl KeyState {
    /// The state of `key` in `scope` (`""` unscoped).
    pub(crate) fn new(key: Arc<Key>, scope: &str) -> Self {
        KeyState {
            key,
            name: scope.into(),
            window: Window::new(),
            cursor: Mutex::new(Cursor::default()),
            reserving: AtomicBool::new(false),
            remembered: Leaf::default(),
            last_used: AtomicU64::new(0),
        }
    }

    /// Whether it serves documents dated in one counter's periods ([`dated_name`]), which
    /// each call moves it to ([`KeyState::lock_in`]), never the clock.
    fn is_dated(&self) -> bool {
        self.name.contains(PERIOD_MARK)
    }

    /// The `db_key` key name.
    pub(crate) fn key(&self) -> &str {
        self.key.name()
    }

    /// The scope value of a scoped key's counter; empty for an unscoped key.
    pub(crate) fn scope(&self) -> &str {
        self.name
            .split_once(PERIOD_MARK)
            .map_or(&self.name, |(scope, _)| scope)
    }

    /// The state's name in its generator's map of scopes (see `name`).
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Notes that the scope was used at `tick` (see [`KeyState::last_used`]).
    pub(crate) fn touch(&self, tick: u64) {
        if self.last_used.load(Ordering::Relaxed) != tick {
            self.last_used.store(tick, Ordering::Relaxed);
        }
    }

    /// When the scope was last used (see `last_used`).
    pub(crate) fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    /// The cursor, for work on the blocks: the window is closed until the guard is dropped.
    pub(crate) fn lock(&self) -> Locked<'_> {
        // The cursor is only changed after a step succeeded: a panic elsewhere leaves it
        // consistent, so a poisoned lock is safe to reuse.
        let cursor = self.cursor.lock().unwrap_or_else(|e| e.into_inner());
        let mut locked = Locked {
            cursor,
            window: &self.window,
        };
        let taken = self.window.close();
        locked.cursor.absorb(taken);
        locked
    }

    /// The cursor moved to the current period (see [`Cursor::roll_to`]), for serving from it.
    #[inline]
    pub(crate) fn lock_now(&self, spec: &Spec, clock: &dyn Clock) -> Locked<'_> {
        let mut cursor = self.lock();
        cursor.roll_to(spec, clock);
        cursor
    }

    /// The cursor moved to `period` for a state of document dates (the call's date, which may
    /// be another date of the state's counter), or else to the clock's
    /// ([`lock_now`](Self::lock_now)), for serving from it.
    pub(crate) fn lock_in(&self, spec: &Spec, clock: &dyn Clock, period: &Period) -> Locked<'_> {
        if !self.is_dated() {
            return self.lock_now(spec, clock);
        }
        let mut cursor = self.lock();
        cursor.move_to(spec, period.clone());
        cursor
    }

    /// One number from the key's window, without its lock, if the window holds one for the
    /// clock's current second: what `emit` returned and whether the number is the mark for
    /// reserving the next block ahead. `None` (nothing taken) sends the call to the lock.
    #[inline]
    pub(crate) fn serve_one<F>(
        &self,
        spec: &Spec,
        clock: &dyn Clock,
        emit: &mut F,
    ) -> Option<Result<bool>>
    where
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let second = clock.unix_second();
        // Only a small code comes out of the thread-local's closure, and the error on its
        // own: moving an `Option<Result<_>>` out through it stalled every call on a copy.
        let mut failed = None;
        let served = period_texts::with_known(|known| {
            let Some(taken) = self
                .window
                .take(second, spec.capacity(), |id| known.get(id))
            else {
                return Served::No;
            };
            let number = taken.number;
            match emit(taken.period, number..number + 1) {
                Ok(()) if taken.ahead => Served::Ahead,
                Ok(()) => Served::Yes,
                Err(e) => {
                    failed = Some(e);
                    Served::Failed
                }
            }
        });
        match served? {
            Served::No => None,
            Served::Yes => Some(Ok(false)),
            Served::Ahead => Some(Ok(true)),
            Served::Failed => failed.map(Err),
        }
    }

    /// Waits for no reservation of this key to be under way, then starts one: until the turn
    /// is dropped, every other caller that wants to reserve waits for it. Returns the turn, or
    /// what to wait on before asking again (a thread waits; a task awaits, holding nothing, so
    /// a task dropped while waiting leaves nothing behind).
    pub(crate) fn turn(&self) -> Result<Turn<&KeyState>, EventListener> {
        if self.start_reserving() {
            return Ok(Turn(self));
        }
        // Listening first, then looking again: a turn that ends in between notifies it.
        let ended = self.key.reserved.listen();
        if self.start_reserving() {
            return Ok(Turn(self));
        }
        Err(ended)
    }

    /// Starts a reservation if none is under way; the turn can move to another thread.
    pub(crate) fn try_turn(state: &Arc<KeyState>) -> Option<Turn<Arc<KeyState>>> {
        state.start_reserving().then(|| Turn(Arc::clone(state)))
    }

    fn start_reserving(&self) -> bool {
        !self.reserving.load(Ordering::Relaxed)
            && self
                .reserving
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }
}

/// What [`KeyState::serve_one`] did.
#[derive(Clone, Copy)]
enum Served {
    /// Nothing: the window had no number for the call.
    No,
    /// One number, and `emit` took it.
    Yes,
    /// One number, the mark for reserving the next block ahead.
    Ahead,
    /// One number, and `emit` failed.
    Failed,
}

/// The key's cursor, locked: the window is closed meanwhile, and published again, with what
/// the cursor holds then, when this is dropped.
pub(crate) struct Locked<'a> {
    cursor: crate::sync::MutexGuard<'a, Cursor>,
    window: &'a Window,
}

impl Locked<'_> {
    /// Lets this thread format numbers of the cursor's period without the lock from now on.
    pub(crate) fn share_period(&self) {
        let (id, period) = self.cursor.period_with_id();
        period_texts::remember(id, period);
    }
}

impl Deref for Locked<'_> {
    type Target = Cursor;
    fn deref(&self) -> &Cursor {
        &self.cursor
    }
}

impl DerefMut for Locked<'_> {
    fn deref_mut(&mut self) -> &mut Cursor {
        &mut self.cursor
    }
}

impl Drop for Locked<'_> {
    fn drop(&mut self) {
        let facts = self.cursor.facts();
        self.window.publish(self.cursor.epoch(), facts);
    }
}

/// The right to reserve a block of one key, until dropped (also when a panic unwinds).
#[must_use = "the turn ends when it is dropped"]
pub(crate) struct Turn<S: Borrow<KeyState>>(S);

impl<S: Borrow<KeyState>> Drop for Turn<S> {
    fn drop(&mut self) {
        let state = self.0.borrow();
        state.reserving.store(false, Ordering::Release);
        state.key.reserved.notify(usize::MAX);
    }
}
