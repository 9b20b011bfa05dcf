//! Gapless mode: numbers taken inside the caller's transaction, never cached.

use std::ops::Range;
use std::sync::atomic::Ordering;

use super::Generator;
use crate::backend::Backend;
use crate::cache::{block_ending_at, checked, largest, refused};
use crate::driver::Driver;
use crate::error::{Error, Result};
use crate::reserve::{lock_nowait, reserve_fitting, Retry};
use seqgen_core::__private::Period;
use seqgen_core::Spec;

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
}
