//! Internet scale on paper: N app instances taking IDs of one key at a steady rate each, against
//! the key's one `db_key` row, where reservations queue (the row's lock lets one through at a
//! time, each taking the measured latency of a reservation). Each instance sizes its blocks as
//! a generator does (`seqgen/src/batch.rs`, `seqgen/src/engine/pressure.rs`): doubled when a
//! block lasted less than the target (a second), halved when more than twice it, the target
//! stretched while reservations (queueing included) take more than 5 % of the instance's time
//! (up to ten times).
//! Deterministic (instances start evenly spread over one block's time), a discrete-event run of
//! simulated minutes in well under a second of real time: `cargo run --release -p seqgen-tools
//! --bin simulate`.
//!
//! Its assumptions, which `BENCHMARKS.md` quotes: one key, no reserve-ahead (`Generator::new()`
//! without a pool: an instance waits for its block), every instance at the same rate, no
//! network or CPU limit but the row's queue, blocks between the spec's batch (100) and 100,000.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a simulation is given.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// App instances on the key.
    pub instances: usize,
    /// IDs each takes per second.
    pub rate: f64,
    /// How long one reservation holds the row, seconds (measured, uncontended).
    pub reservation: f64,
    /// Simulated seconds; the second half is measured.
    pub seconds: f64,
}

/// What it found, over the measured half.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Outcome {
    pub instances: usize,
    /// Reservations per second on the key's row.
    pub reservations_per_second: f64,
    /// IDs per second in all (less than instances × rate when they wait for blocks).
    pub ids_per_second: f64,
    /// The mean block reserved.
    pub mean_block: f64,
    /// Numbers held unserved at the end, all instances together: lost if all were killed.
    pub holes: f64,
    /// The mean wait of an instance for its block (queue and reservation), milliseconds.
    pub mean_wait_ms: f64,
}

const BATCH: f64 = 100.0;
const MAX_BLOCK: f64 = 100_000.0;
const TARGET: f64 = 1.0;
const BUDGET: f64 = 0.05;
/// The most times longer a block is made to last (`engine/pressure.rs`' `MAX_STRETCH`).
const MAX_STRETCH: f64 = 10.0;

#[derive(Debug, Clone, Copy)]
struct Instance {
    block: f64,
    /// When its current block arrived.
    got_at: f64,
    /// Its reservations' share of its time, smoothed per second (as `pressure.rs`).
    window_start: f64,
    busy: f64,
    share: f64,
}

/// Runs `setup`.
pub fn simulate(setup: Setup) -> Outcome {
    let Setup {
        instances,
        rate,
        reservation,
        seconds,
    } = setup;
    let mut state: Vec<Instance> = Vec::with_capacity(instances);
    // (when its block runs out, in nanoseconds; which instance)
    let mut events = BinaryHeap::new();
    for i in 0..instances {
        let phase = BATCH / rate * i as f64 / instances as f64;
        state.push(Instance {
            block: BATCH,
            got_at: -phase,
            window_start: 0.0,
            busy: 0.0,
            share: 0.0,
        });
        events.push(Reverse((((BATCH / rate - phase) * 1e9) as u64, i)));
    }
    let (measured_from, mut row_free_at) = (seconds / 2.0, 0.0_f64);
    let (mut reservations, mut reserved, mut waited, mut served) = (0u64, 0.0, 0.0, 0.0);
    while let Some(Reverse((at, i))) = events.pop() {
        let at = at as f64 / 1e9;
        if at >= seconds {
            break;
        }
        let instance = &mut state[i];
        // The next block, sized at the request from how long the last one lasted.
        let target = TARGET * (instance.share / BUDGET).clamp(1.0, MAX_STRETCH);
        let lasted = at - instance.got_at;
        let block = if lasted < target {
            (instance.block * 2.0).min(MAX_BLOCK)
        } else if lasted > 2.0 * target {
            (instance.block / 2.0).max(BATCH)
        } else {
            instance.block
        };
        let start = at.max(row_free_at);
        let done = start + reservation;
        row_free_at = done;
        let wait = done - at;
        instance.busy += wait;
        if done - instance.window_start >= 1.0 {
            let share = instance.busy / (done - instance.window_start);
            instance.share = (instance.share + share) / 2.0;
            instance.window_start = done;
            instance.busy = 0.0;
        }
        if at >= measured_from {
            reservations += 1;
            reserved += block;
            waited += wait;
            served += instance.block;
        }
        instance.block = block;
        instance.got_at = done;
        events.push(Reverse((((done + block / rate) * 1e9) as u64, i)));
    }
    let measured = seconds - measured_from;
    let holes: f64 = state
        .iter()
        .map(|s| (s.block - (seconds - s.got_at).max(0.0) * rate).max(0.0))
        .sum();
    Outcome {
        instances,
        reservations_per_second: reservations as f64 / measured,
        ids_per_second: served / measured,
        mean_block: if reservations == 0 {
            BATCH
        } else {
            reserved / reservations as f64
        },
        holes,
        mean_wait_ms: if reservations == 0 {
            0.0
        } else {
            waited / reservations as f64 * 1e3
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few instances far from the row's limit: each settles on blocks of about a second of
    /// its demand, one reservation a second; a thousand saturate the row (0.5 ms a
    /// reservation: 2,000 a second at most) and their blocks grow until they fit under it.
    #[test]
    fn blocks_grow_until_the_row_keeps_up() {
        let run = |instances| {
            simulate(Setup {
                instances,
                rate: 10_000.0,
                reservation: 0.0005,
                seconds: 120.0,
            })
        };
        let few = run(4);
        assert!(
            (2.0..=8.0).contains(&few.reservations_per_second),
            "{few:?}"
        );
        assert!((5_000.0..=20_000.0).contains(&few.mean_block), "{few:?}");
        let many = run(1000);
        assert!(many.reservations_per_second < 2_000.0, "{many:?}");
        assert!(many.mean_block > 10_000.0, "{many:?}");
        assert!(
            simulate(Setup {
                instances: 4,
                rate: 10_000.0,
                reservation: 0.0005,
                seconds: 120.0
            })
            .holes
                > 0.0
        );
    }
}
