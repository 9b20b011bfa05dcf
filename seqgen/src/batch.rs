//! How many numbers a reservation asks for: the spec's batch, grown for a key in demand and
//! shrunk back for a quiet one, with the operator's `batch_size` in `db_key` over both.

use std::time::{Duration, Instant};

use diesel_seqgen_core::Spec;

/// How a generator sizes the blocks it reserves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BatchPolicy {
    /// Always the spec's batch.
    Fixed,
    /// Doubled (up to `max`) when a block lasted less than `target`, halved back toward the
    /// spec's batch when one lasted more than twice that.
    Adaptive { target: Duration, max: u64 },
}

impl Default for BatchPolicy {
    fn default() -> Self {
        // About a second of demand per block: a busy key makes about one round trip a
        // second, and a crash leaves about a second's worth of holes.
        BatchPolicy::Adaptive {
            target: Duration::from_secs(1),
            max: 100_000,
        }
    }
}

/// What sizes a key's next block besides the policy: how busy the generator's reservations are,
/// and whether the counter is a scope's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sizing {
    /// How many times longer than the policy's target blocks should last: more than 1 when
    /// reserving takes more of the generator's time than its budget (`engine/pressure.rs`).
    pub(crate) stretch: f64,
    /// A scope's counter: its blocks are sized by its own demand from a few numbers up,
    /// down to one, rather than from the spec's batch, so that a scope used once an hour
    /// holds (and a crash loses) one or a few numbers, not a hundred.
    pub(crate) scoped: bool,
}

/// The most times longer blocks are made to last (`engine/pressure.rs`): about ten seconds of
/// demand, which bounds the numbers a crash leaves unserved (with the spec's batch, which a
/// saturated generator's scopes get at least).
pub(crate) const MAX_STRETCH: f64 = 10.0;

impl Sizing {
    /// An unscoped key on a generator whose reservations are within their budget.
    #[cfg(test)]
    pub(crate) const PLAIN: Sizing = Sizing {
        stretch: 1.0,
        scoped: false,
    };

    /// Reservations take so much of the generator's time that the stretch is at its bound:
    /// what a scope's last block lasted then measures the load, not the scope's demand, and
    /// its blocks are at least the spec's batch.
    pub(crate) fn saturated(self) -> bool {
        self.stretch >= MAX_STRETCH
    }
}

/// The first block of a scope's counter: a few numbers. A scope in demand doubles it at each
/// reservation (one a few milliseconds after the other), a quiet one halves it down to one.
pub(crate) const SCOPE_FIRST_BLOCK: u64 = 4;

/// One key's block sizing, kept under the key's refill lock.
#[derive(Debug, Default)]
pub(crate) struct BatchState {
    /// The batch the last reservation asked for; 0 before the first.
    batch: u64,
    /// When the last block was reserved.
    reserved_at: Option<Instant>,
    /// The key row's `batch_size` as the last reservation read it, if an operator set one.
    operator: Option<u64>,
}

impl BatchState {
    /// What to ask for at `now`: the generator's batch, from how long the last block lasted,
    /// and the operator's `batch_size` the last reservation read.
    pub(crate) fn next(
        &mut self,
        policy: BatchPolicy,
        spec: &Spec,
        now: Instant,
        sizing: Sizing,
    ) -> Batch {
        Batch {
            generator: self.next_generator(policy, spec, now, sizing),
            operator: self.operator,
        }
    }

    /// The generator's batch at `now`, from how long the last block lasted.
    fn next_generator(
        &mut self,
        policy: BatchPolicy,
        spec: &Spec,
        now: Instant,
        sizing: Sizing,
    ) -> u64 {
        let base = u64::from(spec.batch());
        let BatchPolicy::Adaptive { target, max } = policy else {
            return base;
        };
        let target = target.mul_f64(sizing.stretch.max(1.0));
        let (floor, first) = match sizing.scoped {
            // A scope back for more while reserving is saturated: what its last block lasted
            // measured the threads reserving for the other scopes meanwhile, not its demand;
            // sized by that, blocks would shrink, reservations grow, and the load feed itself
            // until every ID is a reservation. At least the spec's batch then, as an unscoped
            // key always has (a scope seen once still starts with a few numbers).
            true if sizing.saturated() => (base, base.min(SCOPE_FIRST_BLOCK)),
            true => (1, base.min(SCOPE_FIRST_BLOCK)),
            false => (base, base),
        };
        // Never above a hundredth of what a period can hold: a narrow counter (pad 4, say)
        // must not lose a large share of its numbers to one crash.
        let max = max.min(spec.capacity() / 100).max(base);
        let current = if self.batch == 0 {
            first
        } else {
            self.batch.clamp(floor, max)
        };
        let lasted = self.reserved_at.map(|at| now.saturating_duration_since(at));
        self.batch = match lasted {
            Some(lasted) if sizing.scoped => scope_block(current, lasted, target).clamp(floor, max),
            Some(lasted) if lasted < target => current.saturating_mul(2).min(max),
            Some(lasted) if lasted > target.saturating_mul(2) => (current / 2).max(floor),
            _ => current,
        };
        self.batch
    }

    /// Notes that a block was reserved at `now`, and the key row's `batch_size` it read.
    pub(crate) fn reserved(&mut self, now: Instant, operator: Option<u64>) {
        self.reserved_at = Some(now);
        self.operator = operator;
    }
}

/// A scope's next block after one of `current` numbers lasted `lasted`, blocks meant to last
/// `target`. A scope is one of many served in turn, each reserving for itself: it goes most of
/// the way to its demand at once (up to 16 times more or less than the last block), not a
/// doubling per reservation. Rounded away from the current size: a block of one that lasted
/// 0.9 of the target grows to two, not back to one.
fn scope_block(current: u64, lasted: Duration, target: Duration) -> u64 {
    let factor = target.as_secs_f64() / lasted.as_secs_f64().max(1e-6);
    let factor = factor.clamp(1.0 / 16.0, 16.0);
    if (0.5..=1.0).contains(&factor) {
        return current; // lasted between one and two targets
    }
    let scaled = current as f64 * factor;
    (if factor > 1.0 {
        scaled.ceil()
    } else {
        scaled.floor()
    }) as u64
}

/// What a reservation asks for.
///
/// `pub` in a private module: a pool's reservations take it through `PoolReserve`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// The generator's choice for the key, which the key row's `batch_size` overrides.
    pub(crate) generator: u64,
    /// The key row's `batch_size` the last reservation read, if an operator had set one. The
    /// database applies the current setting; this is what the caller expects it to be
    /// (MySQL's statement for a known key checks that, rather than reading it first).
    pub(crate) operator: Option<u64>,
}

impl Batch {
    /// The batch the caller expects the reservation to take (before `need` and the limit).
    pub(crate) fn expected(self) -> u64 {
        self.operator.unwrap_or(self.generator)
    }
}

/// How many numbers a reservation takes: what is needed, or the batch if that is more. The
/// batch is the key row's `batch_size` when an operator set one (a positive value), else
/// `batch`, the generator's choice for this key.
pub(crate) fn block_size(batch_override: Option<i64>, batch: u64, need: u64) -> u64 {
    let batch = batch_override
        .and_then(|b| u64::try_from(b).ok())
        .filter(|&b| b > 0)
        .unwrap_or(batch);
    need.max(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(batch: u32, pad: u32) -> Spec {
        Spec::builder("k")
            .date("")
            .pad(pad)
            .batch(batch)
            .build()
            .unwrap()
    }

    #[test]
    fn a_busy_key_doubles_up_to_the_bound_and_a_quiet_one_halves_back() {
        let policy = BatchPolicy::Adaptive {
            target: Duration::from_secs(1),
            max: 1000,
        };
        let (spec, mut state, t0) = (spec(100, 12), BatchState::default(), Instant::now());
        assert_eq!(
            state.next(policy, &spec, t0, Sizing::PLAIN).generator,
            100,
            "the first block: the spec's"
        );
        let mut now = t0;
        let mut sizes = Vec::new();
        for _ in 0..5 {
            state.reserved(now, None);
            now += Duration::from_millis(10); // each block gone in 10 ms
            sizes.push(state.next(policy, &spec, now, Sizing::PLAIN).generator);
        }
        assert_eq!(sizes, [200, 400, 800, 1000, 1000]);
        for expected in [1000, 500, 250, 125, 100, 100] {
            state.reserved(now, None);
            now += Duration::from_millis(1500); // between one and two targets: kept
            assert_eq!(
                state.next(policy, &spec, now, Sizing::PLAIN).generator,
                expected
            );
            state.reserved(now, None);
            now += Duration::from_secs(3); // past two targets: halved
            let _ = state.next(policy, &spec, now, Sizing::PLAIN).generator;
        }
    }

    #[test]
    fn a_narrow_counter_grows_to_a_hundredth_of_its_capacity_at_most() {
        let (spec, mut state, mut now) = (spec(10, 4), BatchState::default(), Instant::now());
        for _ in 0..10 {
            state.next(BatchPolicy::default(), &spec, now, Sizing::PLAIN);
            state.reserved(now, None);
            now += Duration::from_millis(1);
        }
        assert_eq!(
            state
                .next(BatchPolicy::default(), &spec, now, Sizing::PLAIN)
                .generator,
            99
        );
    }

    #[test]
    fn the_operators_batch_size_last_seen_is_what_a_reservation_expects() {
        let (spec, mut state, now) = (spec(100, 12), BatchState::default(), Instant::now());
        state.reserved(now, Some(25));
        let batch = state.next(BatchPolicy::Fixed, &spec, now, Sizing::PLAIN);
        assert_eq!((batch.generator, batch.expected()), (100, 25));
        state.reserved(now, None);
        let batch = state.next(BatchPolicy::Fixed, &spec, now, Sizing::PLAIN);
        assert_eq!((batch.generator, batch.expected()), (100, 100));
    }

    /// A scope's counter starts at a few numbers and grows with demand, up to 16 times at a
    /// reservation; a quiet one shrinks the same way to one; a stretch (the generator's
    /// reservations over their budget) makes blocks last longer before they grow.
    #[test]
    fn a_scope_is_sized_by_its_own_demand() {
        let policy = BatchPolicy::default();
        let scoped = Sizing {
            stretch: 1.0,
            scoped: true,
        };
        let (spec, mut state, mut now) = (spec(100, 12), BatchState::default(), Instant::now());
        assert_eq!(
            state.next(policy, &spec, now, scoped).generator,
            SCOPE_FIRST_BLOCK
        );
        let mut sizes = Vec::new();
        for _ in 0..4 {
            state.reserved(now, None);
            now += Duration::from_millis(10);
            sizes.push(state.next(policy, &spec, now, scoped).generator);
        }
        assert_eq!(sizes, [64, 1024, 16_384, 100_000], "the bound at most");
        let mut sizes = Vec::new();
        for _ in 0..5 {
            state.reserved(now, None);
            now += Duration::from_secs(3600); // used once an hour
            sizes.push(state.next(policy, &spec, now, scoped).generator);
        }
        assert_eq!(sizes, [6250, 390, 24, 1, 1]);
        // Lasting 0.25 s, a quarter of the target: four times bigger.
        state.reserved(now, None);
        now += Duration::from_millis(250);
        assert_eq!(state.next(policy, &spec, now, scoped).generator, 4);
        // Lasting 4.5 s: grown only with reservations at nine times their budget (a stretch
        // under the bound: at it, the generator is saturated).
        let stretched = Sizing {
            stretch: 9.0,
            ..scoped
        };
        state.reserved(now, None);
        now += Duration::from_millis(4500);
        assert_eq!(state.next(policy, &spec, now, scoped).generator, 1);
        state.reserved(now, None);
        now += Duration::from_millis(4500);
        assert_eq!(state.next(policy, &spec, now, stretched).generator, 2);
    }

    /// While the generator's reservations are saturated, a scope back for more gets at least
    /// the spec's batch however long its last block lasted (a new scope still starts with a
    /// few numbers); once they are not, demand sizes it again. A block of one that lasted a
    /// little less than the target grows to two (rounded up, it cannot stay at one).
    #[test]
    fn a_saturated_generator_gives_a_scope_back_for_more_the_spec_batch() {
        let policy = BatchPolicy::default();
        let saturated = Sizing {
            stretch: MAX_STRETCH,
            scoped: true,
        };
        let (spec, mut state, mut now) = (spec(100, 12), BatchState::default(), Instant::now());
        assert_eq!(state.next(policy, &spec, now, saturated).generator, 4);
        let mut sizes = Vec::new();
        for _ in 0..3 {
            state.reserved(now, None);
            now += Duration::from_secs(60); // six times the stretched target
            sizes.push(state.next(policy, &spec, now, saturated).generator);
        }
        assert_eq!(sizes, [100, 100, 100]);
        let quiet = Sizing {
            stretch: MAX_STRETCH - 0.001, // just under the bound: the same target
            ..saturated
        };
        state.reserved(now, None);
        now += Duration::from_secs(60);
        assert_eq!(
            state.next(policy, &spec, now, quiet).generator,
            16,
            "100 / 6"
        );
        let mut state = BatchState::default();
        for _ in 0..3 {
            state.next(policy, &spec, now, quiet);
            state.reserved(now, None);
            now += Duration::from_secs(40); // four times the target: down to one
        }
        state.reserved(now, None);
        now += Duration::from_secs(9);
        assert_eq!(state.next(policy, &spec, now, quiet).generator, 2);
    }

    #[test]
    fn fixed_is_the_spec_batch_and_the_operator_wins() {
        let (spec, mut state, now) = (spec(100, 12), BatchState::default(), Instant::now());
        state.reserved(now, None);
        assert_eq!(
            state
                .next(BatchPolicy::Fixed, &spec, now, Sizing::PLAIN)
                .generator,
            100
        );
        assert_eq!(block_size(Some(7), 400, 1), 7);
        assert_eq!(block_size(Some(7), 400, 50), 50, "what is needed, at least");
        assert_eq!(block_size(None, 400, 1), 400);
        assert_eq!(
            block_size(Some(0), 400, 1),
            400,
            "a non-positive setting is none"
        );
    }
}
