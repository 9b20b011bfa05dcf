//! How much of its time a generator spends reserving, and how much longer its blocks should
//! last because of it. A block is sized to last about the policy's target (a second); when
//! reservations take more than [`BUDGET`] of the time (many scopes served in turn, each
//! reserving for itself; many instances queueing on one key's row), blocks are made to last
//! longer in proportion (up to ten seconds of demand), so that the reservations' share comes
//! back toward the budget instead of the generator spending its time reserving blocks that run
//! out before the next turn. At that bound the generator is saturated: a scope back for more
//! then gets at least the spec's batch, whatever its last block lasted (`batch.rs`).

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::batch::MAX_STRETCH;

/// The share of the time reservations may take before blocks are made to last longer.
pub(super) const BUDGET: f64 = 0.05;

/// How long reservations are summed before their share is looked at again.
const WINDOW: Duration = Duration::from_secs(1);

/// A generator's reservations over time (see the module's documentation).
#[derive(Debug)]
pub(super) struct Pressure(Mutex<Window>);

#[derive(Debug)]
struct Window {
    started: Instant,
    /// The time reservations took since `started` (several at once count several times).
    busy: Duration,
    /// The share of the time they took, smoothed over the last windows.
    share: f64,
}

impl Default for Pressure {
    fn default() -> Self {
        Pressure(Mutex::new(Window {
            started: Instant::now(),
            busy: Duration::ZERO,
            share: 0.0,
        }))
    }
}

impl Pressure {
    /// Counts a reservation that took `took`, ending at `now`.
    pub(super) fn record(&self, took: Duration, now: Instant) {
        let mut window = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        window.busy += took;
        window.roll(now);
    }

    /// How many times longer than the target blocks should last at `now`: 1 within the
    /// budget, in proportion past it, up to [`MAX_STRETCH`].
    pub(super) fn stretch(&self, now: Instant) -> f64 {
        let mut window = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        window.roll(now);
        (window.share / BUDGET).clamp(1.0, MAX_STRETCH)
    }
}

impl Window {
    /// Closes the window if it is over: each window that passed halves what came before it
    /// (a burst moves the share, one alone does not keep it up, and time without
    /// reservations brings it down).
    fn roll(&mut self, now: Instant) {
        let elapsed = now.saturating_duration_since(self.started);
        if elapsed < WINDOW {
            return;
        }
        let share = self.busy.as_secs_f64() / elapsed.as_secs_f64();
        let windows = (elapsed.as_secs_f64() / WINDOW.as_secs_f64())
            .min(64.0)
            .floor();
        let kept = 0.5f64.powf(windows);
        self.share = self.share * kept + share * (1.0 - kept);
        self.started = now;
        self.busy = Duration::ZERO;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_past_their_budget_stretch_blocks_in_proportion() {
        let (pressure, t0) = (Pressure::default(), Instant::now());
        pressure.record(Duration::from_millis(10), t0 + Duration::from_secs(1));
        assert_eq!(
            pressure.stretch(t0 + Duration::from_secs(1)),
            1.0,
            "1 % of the time: within the budget"
        );
        // A fifth of the time, then a fifth more: the share smoothed over the windows.
        pressure.record(Duration::from_millis(200), t0 + Duration::from_secs(2));
        let stretch = pressure.stretch(t0 + Duration::from_secs(2));
        assert!((stretch - 0.1025 / BUDGET).abs() < 1e-6, "{stretch}");
        pressure.record(Duration::from_millis(200), t0 + Duration::from_secs(3));
        let stretch = pressure.stretch(t0 + Duration::from_secs(3));
        assert!((stretch - 0.15125 / BUDGET).abs() < 1e-6, "{stretch}");
        // Eight threads reserving all the time: ten seconds of demand at most.
        pressure.record(Duration::from_secs(8), t0 + Duration::from_secs(4));
        assert_eq!(pressure.stretch(t0 + Duration::from_secs(4)), MAX_STRETCH);
        // Then ten seconds without a reservation: back within the budget.
        assert_eq!(pressure.stretch(t0 + Duration::from_secs(13)), 1.0);
    }

    /// The load `bench-report --report scopes` makes at 30,000 scopes on MariaDB, in virtual
    /// time: 8 threads serve the scopes in turn, an ID from memory costs 2 µs, a reservation
    /// 2.4 ms. Sized only by how long its last block lasted, each scope settled at a block of
    /// one (a reservation per ID, 9 s a turn of all scopes): the threads reserving for the
    /// others made every block look as if it lasted the target. Saturated, a scope back for
    /// more gets at least the spec's batch.
    #[test]
    fn thirty_thousand_scopes_in_turn_do_not_settle_into_a_reservation_per_id() {
        use crate::batch::{BatchPolicy, BatchState, Sizing};
        use diesel_seqgen_core::Spec;

        let (scopes, threads) = (30_000, 8u32);
        let (served, reserving) = (Duration::from_micros(2), Duration::from_micros(2400));
        let spec = Spec::builder("k").date("").pad(12).build().unwrap();
        let pressure = Pressure::default();
        let mut states: Vec<(BatchState, u64)> = (0..scopes).map(|_| Default::default()).collect();
        let mut now = Instant::now();
        let (mut ids, mut reservations) = (0u64, 0u64);
        for turn in 0..400 {
            if turn == 200 {
                (ids, reservations) = (0, 0);
            }
            for (batch, left) in &mut states {
                if *left == 0 {
                    let sizing = Sizing {
                        stretch: pressure.stretch(now),
                        scoped: true,
                    };
                    *left = batch
                        .next(BatchPolicy::default(), &spec, now, sizing)
                        .generator;
                    now += reserving / threads;
                    pressure.record(reserving, now);
                    batch.reserved(now, None);
                    reservations += 1;
                }
                *left -= 1;
                ids += 1;
                now += served / threads;
            }
        }
        let per_thousand = reservations as f64 * 1000.0 / ids as f64;
        // A reservation per spec batch (100 numbers) at most: 10 per 1,000. Blocks sized only by
        // what they lasted: 200 to 300 (30 with the rounding up alone).
        assert!(
            per_thousand <= 10.5,
            "{per_thousand} reservations per 1,000 IDs"
        );
    }
}
