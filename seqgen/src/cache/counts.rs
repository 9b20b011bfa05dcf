//! What happened to a key: its statistics and metrics, counted once per reservation (and per
//! block given back or abandoned), never on the cached path, where the cursor's count of
//! numbers served is all there is.

use std::time::Instant;

use super::KeyState;
use crate::meter;
use crate::stats::{retries_so_far, KeyStats, Timings};
use crate::trace;

/// What happened to a key, as its statistics count it ([`KeyStats`], less its name and what
/// the cursors count).
#[derive(Debug, Default)]
pub(super) struct Counted {
    reservations: u64,
    numbers_reserved: u64,
    numbers_abandoned: u64,
    numbers_given_back: u64,
    retries: u64,
    conflicts: u64,
    reservation_time: Timings,
}

impl Counted {
    /// What was counted, as the statistics of the key named `key` (but for the numbers its
    /// states served from memory).
    pub(super) fn stats(&self, key: &str) -> KeyStats {
        KeyStats {
            key: key.to_owned(),
            served_from_memory: 0,
            reservations: self.reservations,
            numbers_reserved: self.numbers_reserved,
            numbers_abandoned: self.numbers_abandoned,
            numbers_given_back: self.numbers_given_back,
            retries: self.retries,
            conflicts: self.conflicts,
            reservation_time: self.reservation_time,
        }
    }
}

impl KeyState {
    /// Counts into the key's statistics (not on the cached path: see [`KeyState::stats`]).
    fn count(&self, what: impl FnOnce(&mut Counted)) {
        self.key.count(what);
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
            retries_before: retries_so_far(),
            span: trace::ReservationSpan::start(self.key(), period, backend, how),
        }
    }

    /// Counts a call that failed because another transaction held or changed the counter.
    pub(crate) fn count_conflict(&self) {
        self.count(|stats| stats.conflicts += 1);
        meter::add(meter::CONFLICTS, self.key(), 1);
    }

    /// Counts `numbers` reserved and never served, which could not go back to their counter
    /// (another instance reserved after them): holes.
    pub(crate) fn count_abandoned(&self, numbers: u64) {
        self.count(|stats| stats.numbers_abandoned += numbers);
        meter::add(meter::NUMBERS_ABANDONED, self.key(), numbers);
    }

    /// Counts `numbers` given back to the counter.
    pub(crate) fn count_given_back(&self, numbers: u64) {
        self.count(|stats| stats.numbers_given_back += numbers);
        meter::add(meter::NUMBERS_GIVEN_BACK, self.key(), numbers);
    }

    /// Publishes the numbers served since the last time as a metric: done at reservations and
    /// when blocks are given back, never on the cached path.
    pub(crate) fn publish(&self) {
        if cfg!(feature = "metrics") {
            let served = self.lock().unpublished();
            meter::add(meter::SERVED_FROM_MEMORY, self.key(), served);
        }
    }

    /// What this state of the key served from memory: the rest of the key's statistics is
    /// its [`Key`]'s, shared by its scopes.
    pub(crate) fn stats(&self) -> KeyStats {
        KeyStats {
            key: self.key().to_string(),
            served_from_memory: self.lock().served(),
            ..KeyStats::default()
        }
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
    /// This thread's retries before the reservation (see [`retries_so_far`]). A task that
    /// moved to another thread meanwhile reads another thread's count: on the async path the
    /// statistic is approximate (never negative).
    retries_before: u64,
    span: trace::ReservationSpan,
}

impl Reserving<'_> {
    /// Counts the reservation's time from `started` (one sent before its bookkeeping began).
    pub(crate) fn since(mut self, started: Instant) -> Self {
        self.started = started;
        self
    }

    /// The reservation took `numbers`; how long it took.
    pub(crate) fn took(self, numbers: u64) -> std::time::Duration {
        let Reserving {
            state,
            started,
            retries_before,
            span,
        } = self;
        span.took(numbers);
        let retries = retries_so_far().saturating_sub(retries_before);
        let took = started.elapsed();
        state.count(|stats| {
            stats.reservations += 1;
            stats.numbers_reserved += numbers;
            stats.retries += retries;
            stats.reservation_time.record(took);
        });
        meter::add(meter::RESERVATIONS, state.key(), 1);
        meter::add(meter::NUMBERS_RESERVED, state.key(), numbers);
        meter::add(meter::RETRIES, state.key(), retries);
        meter::reservation_time(state.key(), took);
        state.publish();
        took
    }
}
