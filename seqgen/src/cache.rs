//! The numbers of one key held in memory: a block reserved from the database, served in
//! order, the lock that makes sure only one thread refills it at a time, and the capacity
//! checks on what is served.

use std::borrow::Borrow;
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::Instant;

use event_listener::Event;

use crate::backend::Counter;
use crate::batch::BatchState;
use crate::clock::Clock;
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::meter;
use crate::stats::KeyStats;
use crate::trace::{self, event};
use seqgen_core::__private::Period;
use seqgen_core::Spec;

/// The state of one (key, date pattern, scope) in one generator.
#[derive(Debug, Default)]
pub(crate) struct KeyState {
    /// The `db_key` key name.
    key: String,
    /// The scope value of a scoped key's counter; empty for an unscoped key.
    scope: String,
    /// Held only for in-memory work, never across a database call. The standard library's
    /// mutex: parking_lot's served 8 threads on one key 1.7 times faster in aggregate (the
    /// `contended` bench) but made `next_id`'s p99.9 about 500 times its p50 (bench-report),
    /// where this one keeps it within 3 times.
    cursor: Mutex<Cursor>,
    /// How recently a thread found `cursor` locked: set to [`CONTENDED`] when one did, lowered
    /// by one at every lock taken without waiting. While above zero, threads serving the key
    /// take a few numbers ahead of need (see [`crate::lease`]).
    contention: AtomicU32,
    /// How many threads hold a lease of the key (see [`crate::lease`]).
    leased: AtomicU32,
    /// Changed, under `cursor`'s lock, whenever numbers taken ahead by threads must no longer
    /// be served: the period changed, or the blocks were given back.
    epoch: AtomicU64,
    /// Whether a reservation of this key is under way (in the foreground or ahead, in the
    /// background), so that when a block runs dry exactly one thread or task reserves and the
    /// others wait for it; see [`Turn`].
    reserving: AtomicBool,
    /// Notified when a reservation ends: threads wait for it, tasks await it (see
    /// [`Driver::wait`](crate::driver::Driver::wait)).
    reserved: Event,
    /// How big the next block should be; used only by the thread whose turn it is.
    batch: Mutex<BatchState>,
    /// The last period whose `db_key` row is known to exist (rows are never deleted): lets
    /// gapless mode skip looking for it.
    known_row: Mutex<Option<String>>,
    /// The highest number a committed reservation gave this key in each of its latest
    /// periods, so a counter that went back is noticed instead of served.
    held: Mutex<VecDeque<(String, u64)>>,
    /// The shape last found recorded on the key's row: in-transaction paths check it once.
    shape: Mutex<Option<String>>,
    /// What happened to the key, but for what the cursor counts (see [`KeyState::stats`]).
    counted: Mutex<KeyStats>,
    /// The cursor's counts (served, abandoned) last published as metrics (see [`crate::meter`]).
    published: Mutex<(u64, u64)>,
    /// A scope's state: when it was last used, on its generator's count of new scopes, so
    /// that the least recently used are the ones dropped when a spec has too many.
    last_used: AtomicU64,
}

/// What [`KeyState::contention`] is set to when a thread finds the key's lock held: how many
/// locks in a row taken without waiting end the taking ahead.
const CONTENDED: u32 = 64;

/// How many periods a key remembers its highest number for: enough for clocks that disagree
/// by a few periods; a period older than that is no longer checked.
const HELD_PERIODS: usize = 16;

/// A block of committed numbers `next..end` of one period, and the block after it when one
/// was reserved ahead.
#[derive(Debug, Default)]
pub(crate) struct Cursor {
    pub(crate) period: Period,
    next: u64,
    end: u64,
    /// Serving this number starts reserving the next block in the background (80 % into
    /// the block); 0 when nothing is to be reserved ahead.
    ahead_at: u64,
    /// The next block of the same period, reserved ahead; always above the current one.
    spare: Option<Range<u64>>,
    /// The clock second the period was last computed for: the period is recomputed at most
    /// once a second (specs reject date patterns finer than a second).
    period_second: Option<i64>,
    /// Numbers served from the blocks (counted here, under the lock that serves them, so that
    /// counting costs the cached path nothing).
    served: u64,
    /// Numbers of blocks dropped unserved when their period ended.
    abandoned: u64,
}

impl KeyState {
    pub(crate) fn new(key: &str, scope: &str) -> Self {
        KeyState {
            key: key.to_owned(),
            scope: scope.to_owned(),
            ..KeyState::default()
        }
    }

    /// The scope value of a scoped key's counter; empty for an unscoped key.
    pub(crate) fn scope(&self) -> &str {
        &self.scope
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

    /// Drops the numbers this state still holds (they become holes) and returns its
    /// statistics, for a state its generator no longer keeps.
    pub(crate) fn retire(&self) -> KeyStats {
        let unused: u64 = self
            .give_back()
            .iter()
            .map(|(_, next, end)| end - next)
            .sum();
        if unused > 0 {
            self.count_abandoned(unused);
        }
        self.publish();
        self.stats()
    }

    /// This key's counter row in `period`.
    pub(crate) fn counter<'a>(&'a self, period: &'a str) -> Counter<'a> {
        Counter::new(&self.key, &self.scope, period)
    }

    pub(crate) fn cursor(&self) -> MutexGuard<'_, Cursor> {
        // The cursor is only changed after a step succeeded: a panic elsewhere leaves it
        // consistent, so a poisoned lock is safe to reuse.
        self.cursor.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The cursor, moved to the current period (see [`Cursor::roll_to`]), for serving from
    /// it: notes whether this thread had to wait for it.
    #[inline]
    pub(crate) fn cursor_now(&self, spec: &Spec, clock: &dyn Clock) -> MutexGuard<'_, Cursor> {
        let mut cursor = self.try_cursor().unwrap_or_else(|| self.cursor());
        if cursor.roll_to(spec, clock) {
            self.new_epoch();
        }
        cursor
    }

    /// The cursor if no other thread holds it; notes either way how contended the key is
    /// (see [`KeyState::contention`]).
    #[inline]
    fn try_cursor(&self) -> Option<MutexGuard<'_, Cursor>> {
        match self.cursor.try_lock() {
            Ok(cursor) => {
                // Under the lock: no other thread lowers it meanwhile.
                let contention = self.contention.load(Ordering::Relaxed);
                if contention > 0 {
                    self.contention.store(contention - 1, Ordering::Relaxed);
                }
                Some(cursor)
            }
            Err(TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(TryLockError::WouldBlock) => {
                self.contention.store(CONTENDED, Ordering::Relaxed);
                None
            }
        }
    }

    /// The usual call in a few steps: one number, for a thread that finds the key's lock
    /// free and no lease of it, in the clock second the period was last checked in, from
    /// the block. Returns what `emit` returned and whether the block is now 80 % served (its
    /// next block is to be reserved ahead); `None` (nothing taken) sends the call down the
    /// general path, which handles everything else.
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
        // Before the clock is read: a busy key's callers go on to their leases at once.
        if self.is_leased() {
            return None;
        }
        let second = clock.unix_second();
        let mut cursor = self.try_cursor()?;
        if cursor.period_second != Some(second) {
            return None;
        }
        let number = cursor.take_one(spec)?;
        // The error alone is moved: moving the whole `Result` stalled the usual case on
        // a copy of what `emit` had just written.
        if let Err(e) = emit(&cursor.period, number..number + 1) {
            return Some(Err(e));
        }
        Some(Ok(cursor.wants_ahead()))
    }

    /// Whether threads recently found the key's lock held (see [`KeyState::contention`]):
    /// threads take leases of it.
    #[inline]
    pub(crate) fn is_contended(&self) -> bool {
        self.contention.load(Ordering::Relaxed) > 0
    }

    /// Whether some thread holds a lease of the key.
    #[inline]
    pub(crate) fn has_leases(&self) -> bool {
        self.leased.load(Ordering::Relaxed) > 0
    }

    /// Whether threads may hold leases of the key: they serve them first.
    #[inline]
    pub(crate) fn is_leased(&self) -> bool {
        self.is_contended() || self.has_leases()
    }

    /// Counts a lease taken (`1`) or settled (`-1`).
    pub(crate) fn count_lease(&self, taken: bool) {
        if taken {
            self.leased.fetch_add(1, Ordering::Relaxed);
        } else {
            self.leased.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// See [`KeyState::epoch`].
    #[inline]
    pub(crate) fn epoch(&self) -> u64 {
        self.epoch.load(Ordering::Acquire)
    }

    /// Ends the numbers taken ahead so far (call with the cursor locked).
    fn new_epoch(&self) {
        self.epoch.fetch_add(1, Ordering::Release);
    }

    /// Empties the cursor ([`Cursor::give_back`]); numbers threads took ahead are no longer
    /// served either.
    pub(crate) fn give_back(&self) -> Vec<(Period, u64, u64)> {
        let mut cursor = self.cursor();
        let unused = cursor.give_back();
        self.new_epoch();
        unused
    }

    /// Waits until no reservation of this key is under way, then starts one: until the turn
    /// is dropped, every other caller that wants to reserve waits for it. A thread waits here;
    /// a task awaits, holding no lock, so a task dropped while waiting leaves nothing behind.
    pub(crate) async fn turn<D: Driver>(&self, db: &mut D) -> Turn<&KeyState> {
        loop {
            if self.start_reserving() {
                return Turn(self);
            }
            // Listening first, then looking again: a turn that ends in between notifies it.
            let ended = self.reserved.listen();
            if self.start_reserving() {
                return Turn(self);
            }
            db.wait(ended).await;
        }
    }

    /// Starts a reservation if none is under way; the turn can move to another thread.
    pub(crate) fn try_turn(state: &Arc<KeyState>) -> Option<Turn<Arc<KeyState>>> {
        state.start_reserving().then(|| Turn(Arc::clone(state)))
    }

    fn start_reserving(&self) -> bool {
        self.reserving
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// How big the next block should be (for the thread whose turn it is).
    pub(crate) fn batch(&self) -> MutexGuard<'_, BatchState> {
        self.batch.lock().unwrap_or_else(|e| e.into_inner())
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
    /// Counts into the key's statistics (not on the cached path: see [`Cursor::served`]).
    fn count(&self, what: impl FnOnce(&mut KeyStats)) {
        what(&mut self.counted.lock().unwrap_or_else(|e| e.into_inner()));
    }

    /// Starts the bookkeeping of a reservation of this key in `period` on `backend`, made
    /// `how` (`"foreground"`, `"ahead"`, `"in transaction"`, `"gapless"`): see [`Reserving`].
    pub(crate) fn reserving(
        &self,
        period: &str,
        backend: &'static str,
        how: &'static str,
    ) -> Reserving<'_> {
        Reserving {
            state: self,
            started: Instant::now(),
            retries_before: crate::retry::retries_so_far(),
            span: trace::ReservationSpan::start(&self.key, period, backend, how),
        }
    }

    /// Counts a call that failed because another transaction held or changed the counter.
    pub(crate) fn count_conflict(&self) {
        self.count(|stats| stats.conflicts += 1);
        meter::add(meter::CONFLICTS, &self.key, 1);
    }

    /// Counts `numbers` reserved and dropped unserved (a block reserved ahead that was no
    /// longer wanted, a block `release` could not give back).
    pub(crate) fn count_abandoned(&self, numbers: u64) {
        self.count(|stats| stats.numbers_abandoned += numbers);
        meter::add(meter::NUMBERS_ABANDONED, &self.key, numbers);
    }

    /// Counts `numbers` that `release` gave back to the counter.
    pub(crate) fn count_given_back(&self, numbers: u64) {
        self.count(|stats| stats.numbers_given_back += numbers);
        meter::add(meter::NUMBERS_GIVEN_BACK, &self.key, numbers);
    }

    /// Publishes what the cursor counted since the last time, as metrics: done at
    /// reservations and at `release`, never on the cached path.
    pub(crate) fn publish(&self) {
        if cfg!(feature = "metrics") {
            let (served, abandoned) = self.cursor().counts();
            let mut published = self.published.lock().unwrap_or_else(|e| e.into_inner());
            meter::add(meter::SERVED_FROM_MEMORY, &self.key, served - published.0);
            meter::add(meter::NUMBERS_ABANDONED, &self.key, abandoned - published.1);
            *published = (served, abandoned);
        }
    }

    /// What happened to the key in this generator.
    pub(crate) fn stats(&self) -> KeyStats {
        let (served, abandoned) = self.cursor().counts();
        let mut stats = self
            .counted
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        stats.key = self.key.clone();
        stats.served_from_memory = served;
        stats.numbers_abandoned += abandoned;
        stats
    }
}

/// The bookkeeping of one reservation of a key: its span (feature `tracing`) from the start,
/// and, once it took its numbers ([`took`](Reserving::took)), its count, time and retries in
/// the key's statistics and metrics. Dropped without `took` (the reservation failed), it ends
/// the span and counts nothing.
#[must_use = "a reservation is counted by `took`"]
pub(crate) struct Reserving<'a> {
    state: &'a KeyState,
    started: Instant,
    /// This thread's retries before the reservation (see [`crate::retry::retries_so_far`]).
    /// A task that moved to another thread meanwhile reads another thread's count: on the
    /// async path the statistic is approximate (never negative).
    retries_before: u64,
    span: trace::ReservationSpan,
}

impl Reserving<'_> {
    /// Counts the reservation's time from `started` (one sent before its bookkeeping began).
    pub(crate) fn since(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// The reservation took `numbers`.
    pub(crate) fn took(self, numbers: u64) {
        let Reserving {
            state,
            started,
            retries_before,
            span,
        } = self;
        span.took(numbers);
        let retries = crate::retry::retries_so_far().saturating_sub(retries_before);
        let took = started.elapsed();
        state.count(|stats| {
            stats.reservations += 1;
            stats.numbers_reserved += numbers;
            stats.retries += retries;
            stats.reservation_time.record(took);
        });
        meter::add(meter::RESERVATIONS, &state.key, 1);
        meter::add(meter::NUMBERS_RESERVED, &state.key, numbers);
        meter::add(meter::RETRIES, &state.key, retries);
        meter::reservation_time(&state.key, took);
        state.publish();
    }
}

/// The right to reserve a block of one key, until dropped (also when a panic unwinds).
#[must_use = "the turn ends when it is dropped"]
pub(crate) struct Turn<S: Borrow<KeyState>>(S);

impl<S: Borrow<KeyState>> Drop for Turn<S> {
    fn drop(&mut self) {
        let state = self.0.borrow();
        state.reserving.store(false, Ordering::Release);
        state.reserved.notify(usize::MAX);
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

    /// After the numbers above `high` were taken out of the block unserved
    /// ([`Cursor::give_back`]), the highest number held in `period` is `high` again.
    pub(crate) fn lower_held(&self, period: &str, high: u64) {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, h)) = held.iter_mut().find(|(p, _)| p == period) {
            *h = high.min(*h);
        }
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
    /// Whether the period changed.
    pub(crate) fn roll_to(&mut self, spec: &Spec, clock: &dyn Clock) -> bool {
        if self.period_second == Some(clock.unix_second()) {
            return false;
        }
        let now = clock.now();
        self.period_second = Some(now.timestamp());
        let text = spec.period_at(now);
        if text != self.period.text {
            let spare = self.spare.take().map_or(0, |spare| spare.end - spare.start);
            let unused = self.end - self.next + spare;
            if self.end != 0 {
                event!(
                    debug,
                    key = spec.key(),
                    from = %self.period.text,
                    to = %text,
                    unused,
                    "a new period: the numbers left of the last one stay unused"
                );
            }
            self.abandoned += unused;
            self.period = Period::new(text);
            self.next = self.end;
            self.ahead_at = 0;
            return true;
        }
        false
    }

    /// The clock second the period was last checked at.
    pub(crate) fn period_second(&self) -> Option<i64> {
        self.period_second
    }

    /// How many numbers the current block still holds.
    pub(crate) fn left(&self) -> u64 {
        self.end.saturating_sub(self.next)
    }

    /// Takes up to `n` numbers from the current block only, for a thread to serve later
    /// ([`crate::lease`]): not counted as served until they are. None when the block is empty
    /// or they would pass the spec's capacity (the locked path refuses those one at a time).
    pub(crate) fn take_ahead(&mut self, spec: &Spec, n: u64) -> Option<Range<u64>> {
        let start = self.next.min(self.end);
        let range = start..self.end.min(start.saturating_add(n));
        if range.is_empty() || checked(spec, &self.period, range.clone()).is_err() {
            return None;
        }
        self.next = range.end;
        Some(range)
    }

    /// Settles numbers a thread took ahead of `period` (`range`, of which `served` were
    /// served) and no longer serves: what is left goes back to the block when it lies just
    /// below it and nothing was given back since (`same_epoch`), else becomes a hole.
    pub(crate) fn settle(
        &mut self,
        period: &Period,
        range: Range<u64>,
        served: u64,
        same_epoch: bool,
    ) {
        self.served += served;
        if range.is_empty() {
            return;
        }
        if same_epoch && self.period == *period && self.next == range.end {
            self.next = range.start;
        } else {
            self.abandoned += range.end - range.start;
        }
    }

    /// What the cursor counted: numbers served, numbers abandoned at a period's end.
    fn counts(&self) -> (u64, u64) {
        (self.served, self.abandoned)
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
    pub(crate) fn take(&mut self, n: u64) -> Range<u64> {
        if self.next >= self.end {
            match self.spare.take() {
                Some(spare) => {
                    (self.next, self.end) = (spare.start, spare.end);
                    self.ahead_at = ahead_mark(&spare);
                }
                None => return self.next..self.next,
            }
        }
        let start = self.next;
        self.next = self.end.min(start.saturating_add(n));
        start..self.next
    }

    /// Whether the next block should now be reserved ahead: the current one is 80 % served and
    /// none is reserved yet.
    #[inline]
    pub(crate) fn wants_ahead(&self) -> bool {
        self.ahead_at != 0 && self.next >= self.ahead_at && self.spare.is_none()
    }

    /// Whether the spare block is wanted still: `period` is current, none is reserved, and the
    /// current block is 80 % served (a refill in the foreground may have come first).
    pub(crate) fn still_wants_ahead(&self, period: &Period) -> bool {
        self.period == *period && self.wants_ahead()
    }

    /// Empties the cursor and returns what it still held as (`period`, first unused, end), the
    /// spare block first: the order in which they can go back to the counter. Nothing of them
    /// is served afterwards, whether or not the counter takes them back.
    pub(crate) fn give_back(&mut self) -> Vec<(Period, u64, u64)> {
        let mut unused = Vec::new();
        if let Some(spare) = self.spare.take() {
            unused.push((self.period.clone(), spare.start, spare.end));
        }
        if self.next < self.end {
            unused.push((self.period.clone(), self.next, self.end));
            self.next = self.end;
        }
        self.ahead_at = 0;
        unused
    }

    /// Replaces the block with `range`, if it still belongs to `period`; with `ahead`, the next
    /// one is to be reserved in the background once 80 % of `block` is served.
    pub(crate) fn refill(
        &mut self,
        period: &Period,
        range: Range<u64>,
        block: &Range<u64>,
        ahead: bool,
    ) {
        if self.period == *period {
            self.next = range.start;
            self.end = range.end;
            self.ahead_at = if ahead { ahead_mark(block) } else { 0 };
        }
    }

    /// Gives up reserving ahead for the current block of `period` (no idle pool connection, or
    /// the reservation failed): its caller refills in the foreground when it runs dry, instead
    /// of every later call trying again.
    pub(crate) fn stop_ahead(&mut self, period: &Period) {
        if self.period == *period && self.spare.is_none() {
            self.ahead_at = 0;
        }
    }

    /// Keeps `block`, reserved ahead, as the next one, if it still belongs to `period`:
    /// whether it was kept.
    pub(crate) fn keep_spare(&mut self, period: &Period, block: &Range<u64>) -> bool {
        if self.period == *period && self.spare.is_none() {
            self.spare = Some(block.clone());
            return true;
        }
        false
    }
}

/// The number whose serving starts reserving the block after `block`: 80 % into it.
fn ahead_mark(block: &Range<u64>) -> u64 {
    block.start + (block.end - block.start) * 4 / 5
}

/// The counters `last - count + 1 ..= last`.
pub(crate) fn block_ending_at(last: i64, count: u64) -> Result<Range<u64>> {
    let end = u64::try_from(last)
        .ok()
        .and_then(|last| last.checked_add(1))
        .filter(|&end| end > count)
        .ok_or_else(|| {
            Error::Database(diesel::result::Error::DeserializationError(
                format!("db_key returned {last} after adding {count}: the row was changed by hand")
                    .into(),
            ))
        })?;
    Ok(end - count..end)
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

/// Refuses counters past the spec's capacity: an overflow, or the last series full.
pub(crate) fn checked(spec: &Spec, period: &Period, counters: Range<u64>) -> Result<Range<u64>> {
    if counters.end - 1 <= spec.capacity() {
        return Ok(counters);
    }
    Err(capacity_error(spec, period))
}

/// The spec's capacity is used up in `period`: an overflow, or the last series full.
pub(crate) fn capacity_error(spec: &Spec, period: &Period) -> Error {
    match spec.series() {
        Some(series) => Error::SeriesExhausted {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            last: series.codes().last().cloned().unwrap_or_default(),
        },
        None => Error::Overflow {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            max: spec.capacity(),
        },
    }
}

/// The largest counter a spec can take: its capacity, within an `i64`.
pub(crate) fn largest(spec: &Spec) -> u64 {
    spec.capacity().min(i64::MAX as u64)
}

/// The error for `count` numbers that do not fit: past the spec's capacity, or past `i64`.
pub(crate) fn refused(spec: &Spec, period: &Period, count: u64) -> Error {
    if spec.capacity() <= i64::MAX as u64 {
        capacity_error(spec, period)
    } else {
        Error::CounterOutOfRange {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            count,
        }
    }
}
