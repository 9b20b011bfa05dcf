//! Batched mode: serve from the cached block, refill it with one reservation when it runs dry.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::{Arc, MutexGuard, PoisonError};
use std::time::Instant;

use diesel::connection::LoadConnection;

use super::{check_scope, Generator};
use crate::backend::Backend;
use crate::cache::{block_ending_at, checked, largest, refused, serve, Cursor, KeyState};
use crate::driver::{drive, Blocking, Driver};
use crate::error::{Error, Result};
use crate::identity::identify;
use crate::lease;
use crate::reserve::{check_shape, reserve_block, reserve_fitting, same_shape, Reserved, Retry};
use crate::trace::event;
use seqgen_core::__private::Period;
use seqgen_core::{Mode, Spec};

/// What serving from memory left to do.
pub(super) enum Rest {
    /// Nothing: every number was served from the cached block.
    Nothing,
    /// Gapless mode: the numbers are taken in the caller's transaction.
    Gapless { nowait: bool },
    /// `need` more numbers of `period`, from a reservation of `state`'s key.
    Reserve {
        state: Arc<KeyState>,
        period: Period,
        need: u64,
    },
}

impl Generator {
    /// Takes `n` counters of `spec`'s current period in `scope` (`""` unscoped) and hands them
    /// to `emit` as ranges in order: from the cached block, the block reserved ahead, then a
    /// new reservation on `conn`.
    pub(super) fn take<C, F>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: u64,
        mut emit: F,
    ) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        match self.serve_one(spec, scope, n, &mut emit) {
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => return Err(e),
            None => {}
        }
        match self.serve(spec, scope, n, &mut emit)? {
            Rest::Nothing => Ok(()),
            rest => self.take_rest_blocking(conn, spec, scope, n, rest, emit),
        }
    }

    /// [`take_rest`](Self::take_rest) on a blocking connection. Not inlined: the future it
    /// drives is large, and on the stack of `take` it would cost every cached call a probe of
    /// that much stack.
    #[cold]
    #[inline(never)]
    fn take_rest_blocking<C, F>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: u64,
        rest: Rest,
        emit: F,
    ) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        drive(self.take_rest(&mut Blocking(conn), spec, scope, n, rest, emit))
    }

    /// [`take`](Self::take) on `db`.
    pub(crate) async fn take_on<D, F>(
        &self,
        db: &mut D,
        spec: &Spec,
        scope: &str,
        n: u64,
        mut emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        match self.serve_one(spec, scope, n, &mut emit) {
            Some(Ok(())) => return Ok(()),
            Some(Err(e)) => return Err(e),
            None => {}
        }
        match self.serve(spec, scope, n, &mut emit)? {
            Rest::Nothing => Ok(()),
            rest => self.take_rest(db, spec, scope, n, rest, emit).await,
        }
    }

    /// The usual call in a few steps: one number of an unscoped batched spec whose key state
    /// this generator keeps in the spec's slot, served as [`KeyState::serve_one`] can; `None`
    /// when that does not apply, and [`serve`](Self::serve) handles the call. Returns nothing
    /// larger than a `Result<()>`: moving [`Rest`] out of `serve` cost the cached `i64` path
    /// a tenth of its time in a stalled copy.
    #[inline]
    fn serve_one<F>(&self, spec: &Spec, scope: &str, n: u64, emit: &mut F) -> Option<Result<()>>
    where
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if n != 1 || !scope.is_empty() || spec.is_scoped() || spec.mode() != Mode::Batched {
            return None;
        }
        let state = self.memoized(spec)?;
        match state.serve_one(spec, &*self.inner.clock, emit)? {
            Ok(false) => {}
            Ok(true) => self.reserve_ahead_of(spec, state),
            Err(e) => return Some(Err(e)),
        }
        Some(Ok(()))
    }

    /// Serves what it can of `n` counters from memory, and says what is left to do. This is
    /// the hot path: the key's state from the spec's memo slot (a plain load), else from the
    /// map under a read lock; one mutex; no allocation but the caller's; no database.
    pub(super) fn serve<F>(&self, spec: &Spec, scope: &str, n: u64, emit: &mut F) -> Result<Rest>
    where
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if spec.is_scoped() || !scope.is_empty() {
            check_scope(spec, scope)?;
        }
        if n == 0 {
            return Ok(Rest::Nothing);
        }
        if let Mode::Gapless { nowait } = spec.mode() {
            return Ok(Rest::Gapless { nowait });
        }
        let clock = &*self.inner.clock;
        let mut need = n;

        // Numbers from the committed block, if it belongs to the current period. The read
        // guard, if taken, ends with this block: `insert_key` takes the write lock.
        let known = {
            let keys;
            let scoped;
            let found = if !scope.is_empty() {
                // A scope's state from the map of scopes (a memo slot holds one state only).
                scoped = self
                    .inner
                    .scoped
                    .read()
                    .unwrap_or_else(PoisonError::into_inner);
                self.scope_state(&scoped, spec, scope)
            } else {
                match self.memoized(spec) {
                    Some(state) => Some(state),
                    None => {
                        keys = self
                            .inner
                            .keys
                            .read()
                            .unwrap_or_else(PoisonError::into_inner);
                        keys.get(spec.cache_key())
                    }
                }
            };
            match found {
                Some(state) => {
                    // Single IDs of a key other threads are waiting for: from this thread's
                    // lease, without the key's lock (see `lease`).
                    let single = n == 1 && scope.is_empty();
                    if single && state.is_leased() {
                        if let Some(served) = lease::serve(state, clock.unix_second(), emit) {
                            return served.map(|()| Rest::Nothing);
                        }
                    }
                    let mut cursor = state.cursor_now(spec, clock);
                    let contended = state.is_contended();
                    let leased = single && (contended || state.has_leases());
                    if leased {
                        // A lease that waited for the period to be checked in a new second:
                        // a thread serves its lease before the numbers above it.
                        if let Some(second) = lease::renew(state, &cursor) {
                            drop(cursor);
                            if let Some(served) = lease::serve(state, second, emit) {
                                return served.map(|()| Rest::Nothing);
                            }
                            cursor = state.cursor_now(spec, clock);
                        }
                    }
                    serve(&mut cursor, spec, &mut need, emit)?;
                    if need == 0 {
                        if leased {
                            let pushed_out =
                                lease::after_serving(state, &mut cursor, spec, contended);
                            let done = self.served(spec, state, cursor);
                            drop(pushed_out); // another key's: its lock after this one's
                            return done;
                        }
                        return self.served(spec, state, cursor);
                    }
                    if scope.is_empty() {
                        self.memoize(spec, state);
                    }
                    Some((Arc::clone(state), cursor.period.clone()))
                }
                None => None,
            }
        };
        let (state, period) = match known {
            Some(known) => known,
            None => {
                let state = self.insert_key(spec, scope);
                let cursor = state.cursor_now(spec, clock);
                let period = cursor.period.clone();
                drop(cursor);
                (state, period)
            }
        };
        // A request that can never fit is refused before anything is reserved.
        if need > largest(spec) {
            return Err(refused(spec, &period, need));
        }
        Ok(Rest::Reserve {
            state,
            period,
            need,
        })
    }

    /// Ends serving from `cursor` once every number was served: starts reserving the next
    /// block ahead if it is due.
    #[inline]
    fn served(
        &self,
        spec: &Spec,
        state: &Arc<KeyState>,
        cursor: MutexGuard<'_, Cursor>,
    ) -> Result<Rest> {
        let ahead = cursor.wants_ahead().then(|| cursor.period.clone());
        drop(cursor);
        if let Some(period) = ahead {
            self.reserve_ahead(spec, state, period);
        }
        Ok(Rest::Nothing)
    }

    /// What [`serve`](Self::serve) left to do, on `db`: the gapless numbers, or a reservation.
    pub(super) async fn take_rest<D, F>(
        &self,
        db: &mut D,
        spec: &Spec,
        scope: &str,
        n: u64,
        rest: Rest,
        emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        match rest {
            Rest::Nothing => Ok(()),
            Rest::Gapless { nowait } => self
                .take_gapless(db, spec, scope, n, nowait, emit)
                .await
                .inspect_err(|e| self.count_conflict(spec, scope, e)),
            Rest::Reserve {
                state,
                period,
                need,
            } => {
                self.reserve_rest(db, spec, scope, state, period, need, emit)
                    .await
            }
        }
    }

    /// Reserves the `need` numbers the cached block of `state` could not serve.
    #[allow(clippy::too_many_arguments)] // what `serve` found
    async fn reserve_rest<D, F>(
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
        let pool = db.pool(self.inner.pool.as_deref());
        // 1. Inside the caller's transaction without a second connection: take exactly what
        // is needed in that transaction and cache nothing, since a rollback takes it back.
        let in_transaction = db.in_transaction();
        let through_pool =
            in_transaction && D::Backend::RESERVE_BESIDE_TRANSACTION && pool.is_some();
        if in_transaction && !through_pool {
            let claim = self.shape_before_reserving(db, spec, &state).await?;
            let reserving = state.reserving(&period.text, D::Backend::NAME, "in transaction");
            let (last, _) = reserve_fitting(db, spec, scope, &period, need, need, Retry::No)
                .await
                .inspect_err(|e| self.count_conflict(spec, scope, e))?;
            reserving.took(need);
            self.claim_shape(db, spec, &state, claim).await?;
            self.inner.reservations.fetch_add(1, Ordering::Relaxed);
            let mine = block_ending_at(last, need)?;
            return emit(&period, checked(spec, &period, mine)?);
        }

        // 2. Refill: one caller reserves (here, or ahead in the background), the others wait
        // here and then find the new block. Nothing below holds a lock across an await: a
        // task dropped while reserving ends its turn, and its block is a hole.
        let _turn = state.turn(db).await;
        {
            let mut cursor = state.cursor();
            if cursor.period == period {
                serve(&mut cursor, spec, &mut need, &mut emit)?;
            }
        }
        if need == 0 {
            return Ok(());
        }
        let non_durable = self.inner.non_durable;
        let batch = state.batch().next(self.inner.batch, spec, Instant::now());
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
        reserving.took(reserved.count);
        let block = self.accept_block(spec, &state, &period, reserved)?;
        let mine = block.start..block.start + need;
        // With a pool, the block after this one is reserved in the background before this one
        // runs dry (not on SQLite, whose one writer the app's own transactions need).
        let ahead = pool.is_some() && D::Backend::RESERVE_BESIDE_TRANSACTION;
        state
            .cursor()
            .refill(&period, mine.end..block.end, &block, ahead);
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Counts `error` as a conflict of `spec`'s key if another transaction caused it.
    fn count_conflict(&self, spec: &Spec, scope: &str, error: &Error) {
        if let Error::TransactionConflict(_) | Error::Busy { .. } = error {
            self.key_state(spec, scope).count_conflict();
        }
    }

    /// [`reserve_ahead`](Self::reserve_ahead) of the period `state` serves now. Out of line:
    /// once per block.
    #[cold]
    #[inline(never)]
    fn reserve_ahead_of(&self, spec: &Spec, state: &Arc<KeyState>) {
        let period = state.cursor().period.clone();
        self.reserve_ahead(spec, state, period);
    }

    /// Starts reserving the block after the current one of `state` on a pool connection in
    /// the background (on a thread with a blocking pool, on a task of the current Tokio
    /// runtime with an async one), unless a reservation of the key is under way. A caller that
    /// finds the current block empty before it arrives waits for it rather than reserving
    /// again.
    fn reserve_ahead(&self, spec: &Spec, state: &Arc<KeyState>, period: Period) {
        let Some(pool) = self.inner.pool.as_deref() else {
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
                Err(_) => return state.cursor().stop_ahead(&period),
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
                state.cursor().stop_ahead(&period);
            }
            drop(turn);
        };
        #[cfg(seqgen_async)]
        if let Some(runtime) = runtime {
            runtime.spawn(work);
            return;
        }
        // A thread that cannot start drops the turn with its work: the foreground refills.
        let _ = std::thread::Builder::new()
            .name("seqgen-ahead".into())
            .spawn(move || drive(work));
    }

    /// Reserves the spare block of `state` through the pool, in the turn the caller took,
    /// with every check of a reservation in the foreground: the pool must reach the database
    /// this generator serves, and a block at or below numbers it held is dropped, never served.
    /// Returns whether a spare block is kept.
    async fn fill_spare(&self, spec: &Spec, state: &KeyState, period: &Period) -> Result<bool> {
        let Some(pool) = self.inner.pool.as_deref() else {
            return Ok(false);
        };
        if self.inner.database.get().is_none() {
            return Ok(false); // bound at the first reservation, in the foreground
        }
        if !state.cursor().still_wants_ahead(period) {
            return Ok(false); // a foreground refill came first
        }
        let batch = state.batch().next(self.inner.batch, spec, Instant::now());
        let reserving = state.reserving(&period.text, pool.backend(), "ahead");
        let non_durable = self.inner.non_durable;
        let reserved = pool
            .reserve_ahead(spec, state.scope(), period, batch, non_durable)
            .await?;
        let Some(reserved) = reserved else {
            return Ok(false); // no idle connection: the foreground refills
        };
        reserving.took(reserved.count);
        let block = self.accept_block(spec, state, period, reserved)?;
        let kept = state.cursor().keep_spare(period, &block);
        if !kept {
            state.count_abandoned(block.end - block.start);
        }
        Ok(kept)
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
            last,
            count,
            batch_size,
        } = reserved;
        state.batch().reserved(Instant::now(), batch_size);
        self.bind(identity)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        let block = block_ending_at(last, count)?;
        state.note_block(&period.text, &block).map_err(|held| {
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
    ) -> Result<bool> {
        if state.shape_known(spec.shape()) {
            return Ok(false);
        }
        match db.pool(self.inner.pool.as_deref()) {
            // Claimed beside the transaction, in autocommit: no lock is held for the caller.
            Some(pool) if D::Backend::CREATE_ROWS_BESIDE_TRANSACTION => {
                pool.check_shape(spec).await?
            }
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
            // Read first (on SQLite the reservation holds the write lock by now, so reading is
            // safe): a recorded shape costs one statement, only a missing one is claimed.
            let recorded = db.read_shape(spec.key()).await?;
            check_shape(db, spec, recorded, Retry::No).await?;
            state.remember_shape(spec.shape());
        }
        Ok(())
    }
}
