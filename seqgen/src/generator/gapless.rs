//! Gapless mode: numbers taken inside the caller's transaction, never cached.

use std::ops::Range;
use std::sync::atomic::Ordering;

use diesel::connection::LoadConnection;

use super::Generator;
use crate::backend::Backend;
use crate::cache::{block_ending_at, checked, largest, refused};
use crate::error::{Error, Result};
use crate::reserve::{lock_nowait, reserve_fitting, Retry};
use crate::transaction::in_transaction;
use seqgen_core::__private::Period;
use seqgen_core::Spec;

impl Generator {
    /// Gapless mode: the numbers are taken in the caller's transaction, which holds the
    /// counter row locked until it ends; nothing is cached, so a rollback gives them back.
    pub(super) fn take_gapless<C, F>(
        &self,
        conn: &mut C,
        spec: &Spec,
        scope: &str,
        n: u64,
        nowait: bool,
        mut emit: F,
    ) -> Result<()>
    where
        C: LoadConnection,
        C::Backend: Backend,
        F: FnMut(&Period, Range<u64>) -> Result<()>,
    {
        if !in_transaction(conn) {
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
        let claim = self.shape_before_reserving(conn, spec, &state)?;
        // MySQL with a pool: a missing row is created beside the caller's transaction, in
        // autocommit, so the transaction only ever locks an existing row. Looked for on the
        // pool's connection too: in the caller's transaction, under SERIALIZABLE, the read
        // would take a lock that the creation then waits for.
        let beside = match self.inner.pool.as_deref() {
            Some(pool) if C::Backend::CREATE_ROWS_BESIDE_TRANSACTION => Some(pool),
            _ => None,
        };
        if let Some(pool) = beside {
            if !state.row_known(&period.text) {
                pool.create_row(counter)?;
            }
        }
        if nowait {
            lock_nowait(conn, counter)?;
        }
        // Not retried: a serialization failure aborts the caller's whole transaction, which
        // only the caller can run again (`Error::TransactionConflict`).
        let reserving = state.reserving(&period.text, C::Backend::NAME, "gapless");
        let (last, _) = reserve_fitting(conn, spec, scope, &period, n, n, Retry::No)?;
        reserving.took(n);
        self.claim_shape(conn, spec, &state, claim)?;
        self.inner.reservations.fetch_add(1, Ordering::Relaxed);
        if beside.is_some() {
            state.remember_row(&period.text);
        }
        let mine = block_ending_at(last, n)?;
        emit(&period, checked(spec, &period, mine)?)
    }
}
