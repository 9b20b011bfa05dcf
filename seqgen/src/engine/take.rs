//! Batched mode, from memory: a number from the key's window, else under its lock from the
//! block (and the block reserved ahead); what memory cannot serve is left to `refill`.

use std::ops::Range;
use std::sync::{Arc, PoisonError};

use super::{check_scope, Engine};
use crate::backend::IdConnection;
use crate::cache::{serve, KeyState, Locked};
use crate::counter_range::{largest, refused};
use crate::driver::{drive, Blocking, Driver};
use crate::error::{Error, Result};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::{DocumentDate, Mode, Scoped, Spec};

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

impl Engine {
    /// Takes `n` counters of `target`'s spec in its scope (`""` unscoped), of the current
    /// period or its document date's, and hands them to `emit` as ranges in order: from the
    /// cached block, the block reserved ahead, then a new reservation on `conn`.
    pub(crate) fn take<C, F>(
        &self,
        conn: &mut C,
        target: Scoped<'_>,
        n: u64,
        mut emit: F,
    ) -> Result<()>
    where
        C: IdConnection,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if target.date().is_none() {
            match self.serve_one(target.spec(), target.scope(), n, &mut emit) {
                Some(Ok(())) => return Ok(()),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        match self.serve(target, n, &mut emit)? {
            Rest::Nothing => Ok(()),
            rest => self.take_rest_blocking(conn, target, n, rest, emit),
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
        target: Scoped<'_>,
        n: u64,
        rest: Rest,
        emit: F,
    ) -> Result<()>
    where
        C: IdConnection,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        drive(self.take_rest(&mut Blocking(conn), target, n, rest, emit))
    }

    /// [`take`](Self::take) on `db`.
    pub(crate) async fn take_on<D, F>(
        &self,
        db: &mut D,
        target: Scoped<'_>,
        n: u64,
        mut emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if target.date().is_none() {
            match self.serve_one(target.spec(), target.scope(), n, &mut emit) {
                Some(Ok(())) => return Ok(()),
                Some(Err(e)) => return Err(e),
                None => {}
            }
        }
        match self.serve(target, n, &mut emit)? {
            Rest::Nothing => Ok(()),
            rest => self.take_rest(db, target, n, rest, emit).await,
        }
    }

    /// The usual call in a few steps: one number of an unscoped batched spec whose key state
    /// this generator keeps in the spec's slot, from the key's window; `None` when that does
    /// not apply, and [`serve`](Self::serve) handles the call. Returns nothing larger than a
    /// `Result<()>`: moving [`Rest`] out of `serve` cost the cached `i64` path a tenth of its
    /// time in a stalled copy.
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
    /// map under a read lock; the key's window, else its lock; no allocation but the caller's;
    /// no database.
    pub(super) fn serve<F>(&self, target: Scoped<'_>, n: u64, emit: &mut F) -> Result<Rest>
    where
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let (spec, scope) = (target.spec(), target.scope());
        if spec.is_scoped() || !scope.is_empty() {
            check_scope(spec, scope)?;
        }
        if let Some(date) = target.date() {
            self.check_date(spec, date)?;
        }
        if spec.is_scoped() || !scope.is_empty() || target.date().is_some() {
            // Kept in the map of scopes: now and then, the states nobody used go.
            self.drop_idle_scopes();
        }
        if n == 0 {
            return Ok(Rest::Nothing);
        }
        if let Mode::Gapless { nowait } = spec.mode() {
            return Ok(Rest::Gapless { nowait });
        }
        if let Some(date) = target.date() {
            return self.serve_dated(spec, scope, date, n, emit);
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
                    if n == 1 {
                        if let Some(served) = state.serve_one(spec, clock, emit) {
                            if served? {
                                self.reserve_ahead_of(spec, state);
                            }
                            return Ok(Rest::Nothing);
                        }
                    }
                    let mut cursor = state.lock_now(spec, clock);
                    serve(&mut cursor, spec, &mut need, emit)?;
                    // Its next numbers from the window, formatted without the lock.
                    cursor.share_period();
                    if need == 0 {
                        return Ok(self.served(spec, state, cursor));
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
                let period = state.lock_now(spec, clock).period.clone();
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

    /// [`serve`](Self::serve) for a document dated `date`: from the block of its period's own
    /// state (see `dated_state`), whatever the clock says.
    fn serve_dated<F>(
        &self,
        spec: &Spec,
        scope: &str,
        date: DocumentDate,
        n: u64,
        emit: &mut F,
    ) -> Result<Rest>
    where
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let at = spec.moment_of(date);
        let period = spec.period(spec.period_at(at));
        let state = self.dated_state(spec, scope, period.counter());
        let mut need = n;
        let mut cursor = state.lock_in(spec, &*self.inner.clock, &period);
        serve(&mut cursor, spec, &mut need, emit)?;
        if need == 0 {
            return Ok(self.served(spec, &state, cursor));
        }
        let period = cursor.period.clone();
        drop(cursor);
        if need > largest(spec) {
            return Err(refused(spec, &period, need));
        }
        Ok(Rest::Reserve {
            state,
            period,
            need,
        })
    }

    /// Refuses a document dated further ahead of the clock than `spec` allows.
    pub(crate) fn check_date(&self, spec: &Spec, date: DocumentDate) -> Result<()> {
        if !spec.too_far_ahead(date, self.inner.clock.now()) {
            return Ok(());
        }
        Err(Error::DateAhead {
            key: spec.key().to_owned(),
            date: match date {
                DocumentDate::Day(day) => day.to_string(),
                DocumentDate::Moment(moment) => moment.to_rfc3339(),
                _ => format!("{date:?}"),
            },
            days: spec.max_days_ahead(),
        })
    }

    /// Ends serving from `cursor` once every number was served: starts reserving the next
    /// block ahead if it is due.
    #[inline]
    fn served(&self, spec: &Spec, state: &Arc<KeyState>, cursor: Locked<'_>) -> Rest {
        let ahead = cursor.wants_ahead().then(|| cursor.period.clone());
        drop(cursor);
        if let Some(period) = ahead {
            self.reserve_ahead(spec, state, period);
        }
        Rest::Nothing
    }

    /// What [`serve`](Self::serve) left to do, on `db`: the gapless numbers, or a reservation.
    pub(super) async fn take_rest<D, F>(
        &self,
        db: &mut D,
        target: Scoped<'_>,
        n: u64,
        rest: Rest,
        emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let (spec, scope) = (target.spec(), target.scope());
        match rest {
            Rest::Nothing => Ok(()),
            Rest::Gapless { nowait } => {
                let pool = self.pool_for::<D>();
                self.take_gapless(db, target, n, nowait, pool.as_deref(), emit)
                    .await
                    .inspect_err(|e| self.count_conflict(spec, scope, e))
            }
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
}
