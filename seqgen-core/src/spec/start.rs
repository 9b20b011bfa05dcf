//! Numbering from a given number: the first number of every period (`start = 1000` at
//! go-live), which the key row's `start_value` overrides when an operator set one.

use super::{Spec, SpecBuilder};
use crate::error::SpecError;

impl SpecBuilder {
    /// The first number of every period (default 1): IDs start at `start`, e.g. `INV001000`
    /// with `start(1000)` and pad 6. It is the default of the key row's `start_value`: recorded
    /// there at the key's first use, and changed afterwards with `seqgen set-start` (an
    /// operator's value wins). Not part of the [shape](Spec::shape): numbers only move up, so
    /// a spec starting higher makes the counters jump to its start, never back.
    ///
    /// ```
    /// let invoices = diesel_seqgen_core::Spec::builder("invoices").prefix("INV").date("").start(1000).build()?;
    /// assert_eq!(invoices.start(), 1000);
    /// assert_eq!(invoices.format("", invoices.start()), "INV001000");
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn start(mut self, start: u64) -> Self {
        self.start = start;
        self
    }
}

impl Spec {
    /// The first number of every period ([`SpecBuilder::start`]); 1 by default.
    pub fn start(&self) -> u64 {
        self.start
    }
}

/// A start is a number the spec can print: 1 up to its capacity (`None` when the pad is out of
/// range, which is reported on its own: the start is not checked then).
pub(super) fn check_start(start: u64, capacity: Option<u64>) -> Option<SpecError> {
    let capacity = capacity?;
    (start == 0 || start > capacity).then_some(SpecError::StartOutOfRange { start, capacity })
}
