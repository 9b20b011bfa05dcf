//! Batched mode, from the database: the block a caller reserves when memory ran dry (one
//! caller per key at a time, the others wait for it), the block reserved ahead on a pool
//! before that happens, and the checks every reservation passes before it is served.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::Engine;
use crate::backend::{Backend, Counter};
use crate::batch::{Batch, Sizing};
use crate::cache::{serve, KeyState, Turn};
use crate::counter_range::{block_ending_at, checked};
use crate::driver::{drive, Driver};
use crate::error::{Error, Result};
use crate::reserve::identity::identify;
use crate::reserve::pool::PoolReserve;
use crate::reserve::{check_shape, reserve_block, reserve_fitting, same_shape, Reserved, Retry};
use crate::trace::event;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// Waits for the turn to reserve a block of `state`'s key (see [`KeyState::turn`]).
pub(super) async fn turn_of<'s, D: Driver>(db: &mut D, state: &'s KeyState) -> Turn<&'s KeyState> {
    loop {
        match state.turn() {
            Ok(turn) => return turn,
            Err(ended) => db.wait(ended).await,
        }
    }
}

impl Engine {
    /// Reserves the `need` numbers the cached block of `state` could not serve.
    #[allow(clippy::too_many_arguments)] // what `serve` found
    pub(super) async fn reserve_rest<D, F>(
        &self,
        db: &mut D,
        spec: &Spec,
        scope: &str,
        state: Arc<KeyState>,
        period: Period,
        mut need: u64,
        mut emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let pool = self.pool_for::<D>();
        let pool = pool.as_deref();
        // 1. Inside the caller's transaction without a second connection: take exactly what
        // is needed in that transaction and cache nothing, since a rollback takes it back.
        let in_transaction = db.in_transaction();
        let through_pool =
            in_transaction && D::Backend::RESERVE_BESIDE_TRANSACTION && pool.is_some();
        if in_transaction && !through_pool {
            let claim = self.shape_before_reserving(db, spec, &state, pool).await?;
            let counter = Counter::of(spec, scope, period.counter());
            let unknown = self.row_unknown::<D>(&state, counter);
            if unknown {
                self.create_row_first(db, counter, pool).await?;
            }
            let reserving = state.reserving(&period.text, D::Backend::NAME, "in transaction");
            let (last, _) = reserve_fitting(
                db,
                spec,
                scope,
                &period,
                need,
                need,
                Retry::No { gapless: None },
            )
            .await
            .inspect_err(|e| self.count_conflict(spec, scope, e))?;
            reserving.took(need);
            if unknown {
                state.remember_row(period.counter());
            }
            self.claim_shape(db, spec, &state, claim).await?;
            self.inner.reservations.fetch_add(1, Ordering::Relaxed);
            let mine = block_ending_at(last, need)?;
            self.watch_capacity(spec, &state, &period, mine.end - 1);
            return emit(&period, checked(spec, &period, mine)?);
        }

        // 2. Refill: one caller reserves (here, or ahead in the background), the others wait
        // here and then find the new block. Nothing below holds a lock across an await: a
        // task dropped while reserving ends its turn, and its block is a hole.
        let _turn = turn_of(db, &state).await;
        // What came meanwhile first, in the period the clock shows now (or the document's).
        let period = {
            let mut cursor = state.lock_in(spec, &*self.inner.clock, &period);
            serve(&mut cursor, spec, &mut need, &mut emit)?;
            cursor.period.clone()
        };
        if need == 0 {
            return Ok(());
        }
        if !in_transaction {
            // On this connection, in autocommit: what ended periods left behind.
            self.give_back_left_behind(db, &state).await;
        }
        let non_durable = self.inner.non_durable;
        let batch = self.next_batch(spec, &state);
        let reserving = state.reserving(&period.text, D::Backend::NAME, "foreground");
        let reserved = match pool {
            Some(pool) if through_pool => {
                // The caller's database (its token only if it has one yet): the pool must
                // point at the same one. Only the token row is read, which no reservation
                // ever locks.
                let (expected, _) = identify(db, "", false).await?;
                pool.reserve(spec, scope, &period, need, batch, non_durable, &expected)
                    .await?
            }
            // Outside a transaction: the statement commits before it returns, so the block
            // may be cached.
            _ => reserve_block(db, spec, scope, &period, need, batch, non_durable, None).await?,
        };
        let took = reserving.took(reserved.count);
        self.inner.pressure.record(took, Instant::now());
        let block = self.accept_block(spec, &state, &period, reserved)?;
        // With a pool, the block after this one is reserved in the background before this one
        // runs dry (not on SQLite, whose one writer the app's own transactions need).
        let ahead = pool.is_some_and(|pool| pool.reserves_ahead());
        let mine = state.lock().refill(&period, block, need, ahead);
        emit(&period, checked(spec, &period, mine)?)
    }

    /// What `state`'s next reservation asks for: its block sized by its demand, a scope's from a
    /// few numbers up, all of them to last longer while reservations take more of the
    /// generator's time than their budget (`pressure.rs`).
    fn next_batch(&self, spec: &Spec, state: &KeyState) -> Batch {
        let sizing = Sizing {
            stretch: self.inner.pressure.stretch(Instant::now()),
            scoped: !state.scope().is_empty(),
        };
        state.batch(|batch| batch.next(self.inner.batch, spec, Instant::now(), sizing))
    }

    /// Counts `error` as a conflict of `spec`'s key if another transaction caused it.
    pub(super) fn count_conflict(&self, spec: &Spec, scope: &str, error: &Error) {
        if let Error::TransactionConflict(_) | Error::Busy { .. } = error {
            self.key_state(spec, scope).count_conflict();
        }
    }

    /// [`reserve_ahead`](Self::reserve_ahead) of the period `state` serves now. Out of line:
    /// once per block.
    #[cold]
    #[inline(never)]
    pub(super) fn reserve_ahead_of(&self, spec: &Spec, state: &Arc<KeyState>) {
        let period = state.lock().period.clone();
        self.reserve_ahead(spec, state, period);
    }

    /// Starts reserving the block after the current one of `state` on a pool connection in
    /// the background (on a thread with a blocking pool, on a task of the current Tokio
    /// runtime with an async one), unless a reservation of the key is under way. A caller that
    /// finds the current block empty before it arrives waits for it rather than reserving
    /// again.
    pub(super) fn reserve_ahead(&self, spec: &Spec, state: &Arc<KeyState>, period: Period) {
        let Some(pool) = self.pool() else {
            return;
        };
        #[cfg(not(seqgen_async))]
        let _ = pool; // only blocking pools exist without an async backend
                      // An async pool reserves on a task of the caller's Tokio runtime; a blocking caller
                      // of such a generator has none: the foreground refills, and the block stops asking.
        #[cfg(seqgen_async)]
        let runtime = match pool.blocking() {
            true => None,
            false => match tokio::runtime::Handle::try_current() {
                Ok(runtime) => Some(runtime),
                Err(_) => return state.lock().stop_ahead(&period),
            },
        };
        // Taken here, before the work starts, so that no caller can slip in between.
        let Some(turn) = KeyState::try_turn(state) else {
            return;
        };
        let (generator, spec, state) = (self.clone(), spec.clone(), Arc::clone(state));
        let work = async move {
            // A failure is left to the foreground: a caller that finds both blocks empty
            // reserves on its own connection and reports what fails there.
            let filled = generator.fill_spare(&spec, &state, &period).await;
            if let Err(_error) = &filled {
                event!(
                    warn,
                    key = spec.key(),
                    error = %_error,
                    "reserving the next block ahead failed; the foreground will reserve it"
                );
            }
            if !matches!(filled, Ok(true)) {
                // Still in the turn and without a spare: the block is the one that asked.
                state.lock().stop_ahead(&period);
            }
            drop(turn);
        };
        #[cfg(seqgen_async)]
        if let Some(runtime) = runtime {
            runtime.spawn(work);
            return;
        }
        // A thread that cannot start drops the turn with its work: the foreground refills.
        crate::sync::spawn("seqgen-ahead", move || drive(work));
    }

    /// Reserves the spare block of `state` through the pool, in the turn the caller took,
    /// with every check of a reservation in the foreground: the pool must reach the database
    /// this generator serves, and a block at or below numbers it held is dropped, never served.
    /// Returns whether a block was reserved (kept as the spare, or left behind to go back to
    /// its counter if the period ended meanwhile).
    async fn fill_spare(&self, spec: &Spec, state: &KeyState, period: &Period) -> Result<bool> {
        let Some(pool) = self.pool() else {
            return Ok(false);
        };
        if self.inner.database.get().is_none() {
            return Ok(false); // bound at the first reservation, in the foreground
        }
        if !state.lock().still_wants_ahead(period) {
            return Ok(false); // a foreground refill came first
        }
        let batch = self.next_batch(spec, state);
        let reserving = state.reserving(&period.text, pool.backend(), "ahead");
        let non_durable = self.inner.non_durable;
        let reserved = pool
            .reserve_ahead(spec, state.scope(), period, batch, non_durable)
            .await?;
        let Some(reserved) = reserved else {
            return Ok(false); // no idle connection: the foreground refills
        };
        let took = reserving.took(reserved.count);
        self.inner.pressure.record(took, Instant::now());
        let block = self.accept_block(spec, state, period, reserved)?;
        state.lock().keep_spare(period, block);
        Ok(true)
    }

    /// A reservation's bookkeeping, in the foreground or ahead: the database it was made on
    /// must be this generator's, and the block (the `count` numbers ending at `last`) must lie
    /// above every number this generator held in `period`, or serving it would repeat them.
    fn accept_block(
        &self,
        spec: &Spec,
        state: &KeyState,
        period: &Period,
        reserved: Reserved,
    ) -> Result<Range<u64>> {
        let Reserved {
            identity,
            timeline,
            last,
            count,
            batch_size,
        } = reserved;
        state.batch(|batch| batch.reserved(Instant::now(), batch_size));
        self.bind(identity)?;
        if let Some(timeline) = timeline {
            self.follow_timeline(timeline);
        }
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        let block = block_ending_at(last, count)?;
        state.note_block(period.counter(), &block).map_err(|held| {
            event!(
                warn,
                key = spec.key(),
                period = %period.text,
                held,
                got = block.start,
                "the counter went back below numbers this generator held: block refused"
            );
            Error::CounterWentBack {
                key: spec.key().to_owned(),
                period: period.text.clone(),
                held,
                got: block.start,
            }
        })?;
        self.watch_capacity(spec, state, period, block.end - 1);
        Ok(block)
    }

    /// Refuses a spec whose shape differs from the one recorded on its key, before a
    /// reservation inside the caller's transaction; once per generator and key. Returns
    /// whether no shape is recorded yet, so that [`claim_shape`](Self::claim_shape) records it
    /// after the reservation: recording it first would lock the key's row before the counter
    /// row, and a `nowait` transaction would then wait on that lock instead of saying busy.
    pub(super) async fn shape_before_reserving<D: Driver>(
        &self,
        db: &mut D,
        spec: &Spec,
        state: &KeyState,
        beside: Option<&dyn PoolReserve>,
    ) -> Result<bool> {
        if state.shape_known(spec.shape()) {
            return Ok(false);
        }
        match beside {
            // Claimed beside the transaction, in autocommit: no lock is held for the caller.
            Some(pool) if D::Backend::CREATES_ROWS_FIRST => pool.check_shape(spec).await?,
            _ if !D::Backend::READS_FIRST_IN_TRANSACTION => return Ok(true),
            _ => match db.identify(spec.key()).await?.shape {
                Some(recorded) => same_shape(spec, recorded)?,
                None => return Ok(true),
            },
        }
        state.remember_shape(spec.shape());
        Ok(false)
    }

    /// Records the spec's shape on its key inside the caller's transaction, when
    /// [`shape_before_reserving`](Self::shape_before_reserving) found none, or refuses the
    /// spec if another shape was recorded meanwhile (the caller then rolls back, which gives
    /// the number back).
    pub(super) async fn claim_shape<D: Driver>(
        &self,
        db: &mut D,
        spec: &Spec,
        state: &KeyState,
        claim: bool,
    ) -> Result<()> {
        if claim {
            if D::Backend::CREATES_ROWS_FIRST {
                // The locking read below would take a gap lock on a missing key row.
                db.create_row(Counter::of(spec, "", "")).await?;
            }
            // Read first (on SQLite the reservation holds the write lock by now, so reading is
            // safe): a recorded shape costs one statement, only a missing one is claimed.
            let recorded = db.read_shape(spec.key()).await?;
            check_shape(db, spec, recorded, Retry::No { gapless: None }).await?;
            state.remember_shape(spec.shape());
        }
        Ok(())
    }
}

impl Engine {
    /// Whether the row of `counter` must be created before a reservation inside the caller's
    /// transaction touches it ([`Backend::CREATES_ROWS_FIRST`](crate::Backend::CREATES_ROWS_FIRST))
    /// because this generator does not know it exists; the caller then remembers it once the
    /// reservation succeeded. (Should the caller roll back a row created in its transaction,
    /// the next reservation's update finds it missing and creates it, as outside a
    /// transaction.)
    pub(super) fn row_unknown<D: Driver>(&self, state: &KeyState, counter: Counter<'_>) -> bool {
        D::Backend::CREATES_ROWS_FIRST && !state.row_known(counter.period)
    }

    /// Creates the row of `counter` unless it exists: through the pool `beside` the caller's
    /// transaction, in autocommit, when there is one (the caller's transaction then only ever
    /// locks an existing row); else in the caller's transaction, by a statement that takes no
    /// gap lock.
    pub(super) async fn create_row_first<D: Driver>(
        &self,
        db: &mut D,
        counter: Counter<'_>,
        beside: Option<&dyn PoolReserve>,
    ) -> Result<()> {
        match beside {
            Some(pool) => pool.create_row(counter).await,
            None => Ok(db.create_row(counter).await?),
        }
    }
}
