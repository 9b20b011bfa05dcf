//! Gapless mode: numbers taken inside the caller's transaction, never cached.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::take::Rest;
use super::Engine;
use crate::backend::Backend;
use crate::backend::Counter;
use crate::cache::KeyState;
use crate::counter_range::{block_ending_at, checked, largest, refused};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::reserve::pool::PoolReserve;
use crate::reserve::timeline::failovers_seen;
use crate::reserve::{lock_nowait, reserve_fitting, Retry};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::{Scoped, Spec};

impl Engine {
    /// Gapless numbers of `target` (its spec must be gapless) in a transaction seqgen opened
    /// itself and in which it holds the key's row (the follower's batch, `pending`): as
    /// [`take_on`](Self::take_on), but everything on `db`. A pool's connection beside it
    /// (`use_pool`) would wait for that very row, and only the lock's timeout would end the
    /// wait: no database sees a wait across two connections of one process.
    pub(crate) async fn take_holding_key<D, F>(
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
        match self.serve(target, n, &mut emit)? {
            Rest::Nothing => Ok(()),
            Rest::Gapless { nowait } => self
                .take_gapless(db, target, n, nowait, None, emit)
                .await
                .inspect_err(|e| self.count_conflict(target.spec(), target.scope(), e)),
            Rest::Reserve { .. } => Err(Error::Refused {
                key: target.spec().key().to_owned(),
                reason:
                    "numbers given after the commit are gapless: build the spec with `.gapless()`"
                        .to_owned(),
            }),
        }
    }

    /// Gapless mode: the numbers are taken in the caller's transaction, which holds the
    /// counter row locked until it ends; nothing is cached, so a rollback gives them back.
    /// With a pool `beside` the transaction, a missing row is created and the key's shape
    /// claimed there, in autocommit, so that the caller's transaction locks only its counter
    /// row.
    pub(super) async fn take_gapless<D, F>(
        &self,
        db: &mut D,
        target: Scoped<'_>,
        n: u64,
        nowait: bool,
        beside: Option<&dyn PoolReserve>,
        mut emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        let (spec, scope) = (target.spec(), target.scope());
        if !db.in_transaction() {
            return Err(Error::OutsideTransaction {
                key: spec.key().to_owned(),
            });
        }
        // The document's period, or the clock's (the date was checked by `serve`).
        let at = match target.date() {
            Some(date) => spec.moment_of(date),
            None => self.inner.clock.now(),
        };
        let period = spec.period(spec.period_at(at));
        if n > largest(spec) {
            return Err(refused(spec, &period, n));
        }
        let state = self.key_state(spec, scope);
        let counter = Counter::of(spec, scope, period.counter());
        // Once per key, with the first number (the shape is known from then on: the
        // one-statement insert, which never asks, is only used after), and again after each
        // failover this process lived through. A session checked anew is checked in
        // `reserve_in_transaction`.
        let failovers = failovers_seen();
        let replication_checked = self.inner.replication_checked.load(Ordering::Acquire);
        if !state.shape_known(spec.shape()) || replication_checked < failovers {
            (self.inner.async_replication)
                .check_replication(db, spec.key())
                .await?;
            (self.inner.replication_checked).fetch_max(failovers, Ordering::AcqRel);
        }
        let claim = self
            .shape_before_reserving(db, spec, &state, beside)
            .await?;
        // Without a pool, a `nowait` call leaves a missing row to `lock_nowait`: creating it
        // here would wait for a transaction that holds it.
        let unknown = self.row_unknown::<D>(&state, counter);
        if unknown && (!nowait || beside.is_some()) {
            self.create_row_first(db, counter, beside).await?;
        }
        if nowait {
            lock_nowait(db, counter).await?;
        }
        // Not retried: a serialization failure aborts the caller's whole transaction, which
        // only the caller can run again (`Error::TransactionConflict`).
        let reserving = state.reserving(&period.text, D::Backend::NAME, "gapless");
        let gapless = Retry::No {
            gapless: Some(self.inner.async_replication),
        };
        let (last, _) = reserve_fitting(db, spec, scope, &period, n, n, gapless).await?;
        reserving.took(n);
        self.claim_shape(db, spec, &state, claim).await?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        if unknown {
            state.remember_row(period.counter());
        }
        let mine = block_ending_at(last, n)?;
        self.watch_capacity(spec, &state, &period, mine.end - 1);
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Starts taking `n` gapless numbers of `spec` for an insert that takes them itself, in
    /// one statement (`model/numbering.rs`), or `None` when the key's shape is not known yet:
    /// the caller then takes the usual path, which records or checks it. Nothing is sent; the
    /// caller sends the statement and hands the counter value it returned to
    /// [`end_in_insert`](Self::end_in_insert). Two steps rather than one taking the statement
    /// as a closure, so that a caller can send it on either driver.
    pub(crate) fn start_in_insert(&self, spec: &Spec, n: u64) -> Result<Option<InInsert>> {
        let state = self.key_state(spec, "");
        // The usual path checks the shape, and the replication after a failover.
        let replication_checked = self.inner.replication_checked.load(Ordering::Acquire);
        if !state.shape_known(spec.shape()) || replication_checked < failovers_seen() {
            return Ok(None);
        }
        let period = spec.period(spec.period_at(self.inner.clock.now()));
        if n > largest(spec) {
            return Err(refused(spec, &period, n));
        }
        Ok(Some(InInsert {
            state,
            period,
            n,
            started: Instant::now(),
        }))
    }

    /// Ends what [`start_in_insert`](Self::start_in_insert) started, with the counter's new
    /// value the statement returned: `emit` gets the numbers the rows were given.
    pub(crate) fn end_in_insert<B, F>(
        &self,
        spec: &Spec,
        taking: InInsert,
        last: i64,
        emit: F,
    ) -> Result<()>
    where
        B: Backend,
        F: FnOnce(&Period, Range<u64>) -> Result<()>,
    {
        let InInsert {
            state,
            period,
            n,
            started,
        } = taking;
        // Counted once it returned (its span starts late; its time counts from the start).
        state
            .reserving(&period.text, B::NAME, "gapless")
            .since(started)
            .took(n);
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        let mine = block_ending_at(last, n)?;
        self.watch_capacity(spec, &state, &period, mine.end - 1);
        emit(&period, checked(spec, &period, mine)?)
    }
}

/// A one-statement insert's numbers between [`Engine::start_in_insert`] and
/// [`Engine::end_in_insert`].
pub(crate) struct InInsert {
    state: Arc<KeyState>,
    period: Period,
    n: u64,
    started: Instant,
}

impl InInsert {
    /// The period the numbers are taken in.
    pub(crate) fn period(&self) -> &Period {
        &self.period
    }
}
