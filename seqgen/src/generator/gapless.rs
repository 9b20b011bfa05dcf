//! Gapless mode: numbers taken inside the caller's transaction, never cached.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use super::Generator;
use crate::backend::Backend;
use crate::cache::{block_ending_at, checked, largest, refused, KeyState};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::model::IdField;
use crate::one_statement::{is_not_one_statement, Plan};
use crate::reserve::{lock_nowait, reserve_fitting, Retry};
use seqgen_core::__private::Period;
use seqgen_core::{Mode, Overflow, Spec};

impl Generator {
    /// Gapless mode: the numbers are taken in the caller's transaction, which holds the
    /// counter row locked until it ends; nothing is cached, so a rollback gives them back.
    pub(super) async fn take_gapless<D, F>(
        &self,
        db: &mut D,
        spec: &Spec,
        scope: &str,
        n: u64,
        nowait: bool,
        mut emit: F,
    ) -> Result<()>
    where
        D: Driver,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if !db.in_transaction() {
            return Err(Error::OutsideTransaction {
                key: spec.key().to_owned(),
            });
        }
        let period = Period::new(spec.period_at(self.inner.clock.now()));
        if n > largest(spec) {
            return Err(refused(spec, &period, n));
        }
        let state = self.key_state(spec, scope);
        let counter = state.counter(&period.text);
        let claim = self.shape_before_reserving(db, spec, &state).await?;
        // MySQL with a pool: a missing row is created beside the caller's transaction, in
        // autocommit, so the transaction only ever locks an existing row. Looked for on the
        // pool's connection too: in the caller's transaction, under SERIALIZABLE, the read
        // would take a lock that the creation then waits for.
        let beside = match db.pool(self.inner.pool.as_deref()) {
            Some(pool) if D::Backend::CREATE_ROWS_BESIDE_TRANSACTION => Some(pool),
            _ => None,
        };
        if let Some(pool) = beside {
            if !state.row_known(&period.text) {
                pool.create_row(counter).await?;
            }
        }
        if nowait {
            lock_nowait(db, counter).await?;
        }
        // Not retried: a serialization failure aborts the caller's whole transaction, which
        // only the caller can run again (`Error::TransactionConflict`).
        let reserving = state.reserving(&period.text, D::Backend::NAME, "gapless");
        let (last, _) = reserve_fitting(db, spec, scope, &period, n, n, Retry::No).await?;
        reserving.took(n);
        self.claim_shape(db, spec, &state, claim).await?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        if beside.is_some() {
            state.remember_row(&period.text);
        }
        let mine = block_ending_at(last, n)?;
        emit(&period, checked(spec, &period, mine)?)
    }

    /// Starts taking gapless numbers for the `n` rows of an insert that takes them itself, in
    /// one statement (`one_statement.rs`): the plan to build that statement from, or `None`
    /// when this key cannot be numbered that way (the caller takes the usual path, which also
    /// records or checks the key's shape the first time). Nothing is sent; the caller sends
    /// the statement and hands what came back to [`end_in_insert`](Self::end_in_insert).
    /// Two steps rather than one taking the statement as a closure, so that a caller can send
    /// it on either driver (diesel-async's `execute` would await it in between).
    pub(crate) fn start_in_insert<B: Backend>(
        &self,
        field: &'static IdField,
        numeric: bool,
        n: u64,
    ) -> Result<Option<(InInsert, Plan)>> {
        let spec = &field.spec;
        if !B::ONE_STATEMENT_GAPLESS_INSERT || !fits_one_statement(spec, numeric) || n == 0 {
            return Ok(None);
        }
        let state = self.key_state(spec, "");
        if !state.shape_known(spec.shape()) {
            return Ok(None);
        }
        let period = Period::new(spec.period_at(self.inner.clock.now()));
        if n > largest(spec) {
            return Err(refused(spec, &period, n));
        }
        let plan = Plan {
            key: spec.key(),
            period: period.text.clone(),
            // Both fit: `n <= largest <= i64::MAX`.
            count: n as i64,
            limit: (largest(spec) - n) as i64,
            prefix: spec.prefix(),
            pad: i64::from(spec.pad()),
            column: field.column,
            index: field.index,
            struct_fields: field.struct_fields,
            numeric,
        };
        let started = Instant::now();
        Ok(Some((
            InInsert {
                state,
                period,
                n,
                started,
            },
            plan,
        )))
    }

    /// Ends what [`start_in_insert`](Self::start_in_insert) started, with what the statement
    /// returned: the counter's new value (`None`: it could not advance, nothing was
    /// inserted). `emit` gets the numbers the rows were given. `Ok(false)` when the statement
    /// was refused before anything was sent: the caller takes the usual path.
    pub(crate) fn end_in_insert<B, F>(
        &self,
        spec: &Spec,
        taking: InInsert,
        sent: diesel::QueryResult<Option<i64>>,
        emit: F,
    ) -> Result<bool>
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
        let last = match sent {
            Err(e) if is_not_one_statement(&e) => return Ok(false),
            Err(e) => return Err(e.into()),
            Ok(None) => return Err(refused(spec, &period, n)),
            Ok(Some(last)) => last,
        };
        // Counted once it returned (its span starts late; its time counts from the start).
        state
            .reserving(&period.text, B::NAME, "gapless")
            .since(started)
            .took(n);
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        emit(&period, checked(spec, &period, block_ending_at(last, n)?)?)?;
        Ok(true)
    }
}

/// A one-statement insert's numbers between [`Generator::start_in_insert`] and
/// [`Generator::end_in_insert`].
pub(crate) struct InInsert {
    state: Arc<KeyState>,
    period: Period,
    n: u64,
    started: Instant,
}

/// Whether IDs of `spec` can be taken by the insert itself (`one_statement.rs`, which prints
/// them in SQL): a gapless spec that waits, of a plain form ([`Spec::is_plain`]).
pub(crate) fn fits_one_statement(spec: &Spec, numeric: bool) -> bool {
    spec.is_plain()
        && matches!(spec.mode(), Mode::Gapless { nowait: false })
        // A widened counter can outgrow what the i64 form holds; `numeric` refuses it.
        && (!numeric || (spec.is_numeric() && spec.overflow() == Overflow::Error))
}
