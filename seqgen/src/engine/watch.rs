//! Capacity watched at each reservation, never on the cached path: the gauge of how full the
//! counter is (feature `metrics`), and a warning once per counter and period when it passes
//! 80 % and 95 % of what it holds (feature `tracing`), naming when it runs out at the rate this
//! generator saw.

use chrono::TimeDelta;

use super::Engine;
use crate::cache::KeyState;
use crate::meter;
use crate::trace::event;
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::{Overflow, Spec};

/// The parts of a counter's capacity past which a warning is given.
const WARN_AT: [f64; 2] = [0.8, 0.95];

impl Engine {
    /// After a reservation of `spec`'s key in `period` that ended at `last`: the gauge, and
    /// the warnings. Only for keys whose numbers stop at the end (the default policy,
    /// `letters`, series): `widen` and `cycle` go on.
    pub(super) fn watch_capacity(&self, spec: &Spec, state: &KeyState, period: &Period, last: u64) {
        let stops = matches!(spec.overflow(), Overflow::Error | Overflow::Letters)
            || spec.series().is_some();
        if !stops || spec.capacity() == 0 {
            return;
        }
        let capacity = spec.capacity();
        let ratio = (last as f64 / capacity as f64).min(1.0);
        meter::capacity_used(spec.key(), ratio);
        let now = self.inner.clock.now();
        let level = WARN_AT.iter().filter(|&&at| ratio >= at).count() as u8;
        let Some(watch) = state.watch(period.counter(), last, now, level) else {
            return;
        };
        // At the rate this generator saw since its first reservation in the period.
        let (since, from) = watch.first;
        let seconds = (now - since).num_seconds();
        let _runs_out = (seconds > 0 && last > from).then(|| {
            let left = capacity.saturating_sub(last) as f64;
            let rate = (last - from) as f64 / seconds as f64;
            now + TimeDelta::seconds((left / rate).min(1e11) as i64)
        });
        event!(
            warn,
            key = spec.key(),
            scope = state.scope(),
            period = %period.text,
            used = last,
            capacity,
            percent = (ratio * 100.0).round() as u64,
            runs_out = %_runs_out.map_or_else(|| "not known yet".to_owned(), |at| at.to_rfc3339()),
            "a counter passed {}% of what it holds: it stops at its end (Overflow) until its period ends",
            (WARN_AT[usize::from(level) - 1] * 100.0) as u64
        );
    }
}
