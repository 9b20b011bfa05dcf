//! Numbers a generator holds and will not serve go back to their counters: all of them at
//! `release`, what an ended period or a late block reserved ahead left behind at the key's
//! next reservation, and the blocks of scopes dropped for room.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};

use super::refill::turn_of;
use super::Engine;
use crate::backend::{Counter, IdConnection};
use crate::cache::KeyState;
use crate::driver::{drive, Blocking, Driver};
use crate::error::{Error, Result};
use crate::reserve::identity::identify;
use crate::reserve::retry::retrying;
use crate::trace::event;
use diesel_seqgen_core::__private::Period;

/// How many dropped scopes a reservation gives back before its own: a few statements more
/// for the caller that meets them, never thousands at once.
const EVICTED_PER_RESERVATION: usize = 16;

impl Engine {
    /// [`Generator::release`](crate::Generator::release) on a blocking connection.
    pub(crate) fn release<C>(&self, conn: &mut C) -> Result<u64>
    where
        C: IdConnection,
    {
        drive(self.release_on(&mut Blocking(conn)))
    }

    /// Drops every block this generator holds when a block comes from a newer timeline than
    /// the last (a standby was promoted meanwhile): they were reserved before the failover,
    /// and an asynchronous standby may have lost those reservations, so the promoted server
    /// may hand their numbers out again. Holes, never duplicates.
    pub(super) fn follow_timeline(&self, timeline: u32) {
        let before = self.inner.timeline.fetch_max(timeline, Ordering::AcqRel);
        if before == 0 || before >= timeline {
            return;
        }
        let mut _dropped = 0;
        for state in self.states() {
            for (_, block) in state.lock().give_back() {
                _dropped += block.end - block.start;
            }
        }
        event!(
            warn,
            before,
            timeline,
            dropped = _dropped,
            "the database failed over to a promoted standby: the numbers held from before were dropped"
        );
    }

    /// [`release`](Self::release) on `db`.
    pub(crate) async fn release_on<D: Driver>(&self, db: &mut D) -> Result<u64> {
        let Some(database) = self.inner.database.get() else {
            return Ok(0); // never reserved a block
        };
        // Lowering a counter of another database would hand its numbers out twice.
        let (found, _) = identify(db, "", false).await?;
        if !database.matches(&found) {
            return Err(Error::DifferentDatabase);
        }
        let mut given_back = self.give_back_evicted(db, usize::MAX).await?;
        for state in self.states() {
            // No reservation of this key (in the foreground or ahead) runs meanwhile.
            let _turn = turn_of(db, &state).await;
            let unused = state.lock().give_back();
            given_back += give_back(db, &state, unused).await?;
            state.publish();
        }
        Ok(given_back)
    }

    /// Gives back what `state`'s ended periods and late blocks left behind, and the blocks of
    /// scopes dropped for room, before a reservation on `db` outside a transaction. A failure
    /// only leaves holes: the reservation goes on.
    pub(super) async fn give_back_left_behind<D: Driver>(&self, db: &mut D, state: &KeyState) {
        let left = state.lock().take_left_behind();
        let mut result = give_back(db, state, left).await.map(drop);
        if result.is_ok() {
            result = self
                .give_back_evicted(db, EVICTED_PER_RESERVATION)
                .await
                .map(drop);
        }
        if let Err(_error) = result {
            event!(
                warn,
                key = state.key(),
                error = %_error,
                "giving unused numbers back failed: they stay unused"
            );
        }
    }

    /// Gives back the blocks of up to `most` of the scopes dropped (idle, or for room), first
    /// dropped first, and keeps their statistics.
    async fn give_back_evicted<D: Driver>(&self, db: &mut D, most: usize) -> Result<u64> {
        let evicted: Vec<Arc<KeyState>> = {
            let mut evicted = self
                .inner
                .evicted
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let most = most.min(evicted.len());
            evicted.drain(..most).collect()
        };
        let mut given_back = 0;
        let mut result = Ok(());
        for state in &evicted {
            let unused = state.lock().give_back();
            match result {
                Ok(()) => match give_back(db, state, unused).await {
                    Ok(n) => given_back += n,
                    Err(e) => result = Err(e),
                },
                // After a failure, the rest stays unused.
                Err(_) => state.count_abandoned(unused.iter().map(|(_, b)| b.end - b.start).sum()),
            }
        }
        self.retire(evicted.iter().map(|state| state.stats()));
        result.map(|()| given_back)
    }

    /// Keeps what the key states this generator dropped served from memory (the rest of their
    /// statistics stays with their key).
    pub(super) fn retire(&self, stats: impl IntoIterator<Item = crate::stats::KeyStats>) {
        let mut retired = self
            .inner
            .retired
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let all = std::mem::take(&mut *retired);
        *retired = crate::stats::per_key(all.into_iter().chain(stats));
    }

    /// Keeps `states`, dropped for room, until their blocks are given back.
    pub(super) fn evict(&self, states: impl IntoIterator<Item = Arc<KeyState>>) {
        self.inner
            .evicted
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(states);
    }
}

/// Gives `blocks` of `state`'s key back to their counters, in order, each with one
/// compare-and-set that succeeds only if no reservation came after the block; returns how
/// many numbers went back. What does not go back stays a hole, counted as abandoned.
async fn give_back<D: Driver>(
    db: &mut D,
    state: &KeyState,
    blocks: Vec<(Period, Range<u64>)>,
) -> Result<u64> {
    let mut given_back = 0;
    let mut blocks = blocks.into_iter();
    while let Some((period, block)) = blocks.next() {
        let unused = block.end - block.start;
        let (Ok(held_end), Ok(value)) =
            (i64::try_from(block.end - 1), i64::try_from(block.start - 1))
        else {
            state.count_abandoned(unused); // not a block a counter gave: keep the hole
            continue;
        };
        // Numbers from `block.start` on were never served: the went-back check need not
        // guard them, whether or not the counter takes them back. Lowered first, so that a
        // compare-and-set that committed but whose answer was lost (a dropped connection)
        // does not make the next block look like a counter that went back.
        state.lower_held(period.counter(), block.start - 1);
        let counter = Counter::new(state.key(), state.scope(), period.counter());
        match retrying!(D, db.give_back(counter, held_end, value).await) {
            Ok(true) => {
                state.count_given_back(unused);
                given_back += unused;
            }
            Ok(false) => {
                state.count_abandoned(unused);
                event!(
                    debug,
                    key = counter.key,
                    scope = counter.scope,
                    period = %period.text,
                    unused,
                    "not given back (another instance reserved after this one): they stay unused"
                );
            }
            Err(e) => {
                let rest: u64 = blocks.map(|(_, b)| b.end - b.start).sum();
                state.count_abandoned(unused + rest);
                return Err(e);
            }
        }
    }
    Ok(given_back)
}
