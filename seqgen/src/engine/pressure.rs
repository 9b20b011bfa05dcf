//! How much of its time a generator spends reserving, and how much longer its blocks should
//! last because of it. A block is sized to last about the policy's target (a second); when
//! reservations take more than [`BUDGET`] of the time (many scopes served in turn, each
//! reserving for itself; many instances queueing on one key's row), blocks are made to last
//! longer in proportion, so that the reservations' share comes back to the budget instead of
//! the generator spending its time reserving blocks that run out before the next turn.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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
        let elapsed = now.saturating_duration_since(window.started);
        if elapsed >= WINDOW {
            let share = window.busy.as_secs_f64() / elapsed.as_secs_f64();
            // Half the last window, half what came before: a burst moves it, one alone does
            // not keep it up.
            window.share = (window.share + share) / 2.0;
            window.started = now;
            window.busy = Duration::ZERO;
        }
    }

    /// How many times longer than the target blocks should last: 1 within the budget, in
    /// proportion past it.
    pub(super) fn stretch(&self) -> f64 {
        let share = self.0.lock().unwrap_or_else(PoisonError::into_inner).share;
        (share / BUDGET).max(1.0)
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
            pressure.stretch(),
            1.0,
            "1 % of the time: within the budget"
        );
        // Reserving all the time (one thread), then with two threads at once.
        pressure.record(Duration::from_secs(1), t0 + Duration::from_secs(2));
        let stretch = pressure.stretch();
        assert!((stretch - 0.5025 / BUDGET).abs() < 1e-6, "{stretch}");
        pressure.record(Duration::from_secs(2), t0 + Duration::from_secs(3));
        let stretch = pressure.stretch();
        assert!((stretch - 1.25125 / BUDGET).abs() < 1e-6, "{stretch}");
    }
}
