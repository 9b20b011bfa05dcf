//! Numbers that leave room between them: `start, start + step, start + 2 × step, …` (Odoo's
//! `number_increment`). The `db_key` counter still counts IDs one by one; the step is applied
//! when an ID is printed and taken off when one is read back, so reservations, gapless mode and
//! capacity work in IDs, and a spec's numbers are the counter's values mapped onto the step.

use super::{Spec, SpecBuilder};
use crate::error::SpecError;
use crate::policy::{Overflow, Series};

impl SpecBuilder {
    /// Numbers `start, start + step, …` (default step 1): `step(10)` numbers 10, 20, 30, or
    /// 1, 11, 21 with `start(1)`. The counter counts IDs (so `batch`, gapless mode and the
    /// capacity count IDs too); the printed numbers are the ones on the step, and reading an ID
    /// back ([`Spec::parse`]) refuses one off it. Recorded in the [shape](Spec::shape), with
    /// the remainder the numbers leave (`{seq:4,step=10}` for multiples of ten,
    /// `{seq:4,step=10+1}` for 1, 11, 21): a later start on the same step keeps the numbers
    /// apart, another step or remainder is another shape. Not with series, `letters`, `cycle`
    /// or obfuscation, which have their own idea of the next number.
    ///
    /// ```
    /// use diesel_seqgen_core::Spec;
    ///
    /// let lines = Spec::builder("order_lines").prefix("L").date("").pad(4).step(10).start(10).build()?;
    /// assert_eq!(lines.format("", lines.counter_start()), "L0010");
    /// assert_eq!(lines.format("", lines.counter_start() + 1), "L0020");
    /// assert_eq!(lines.capacity(), 999, "10, 20, … 9990: 999 IDs in four digits");
    /// assert_eq!(lines.counter_of(&lines.parse("L0030")?), Some(3));
    /// assert!(lines.parse("L0035").is_err(), "off the step");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn step(mut self, step: u64) -> Self {
        self.step = step;
        self
    }
}

/// The numbers a spec prints: every `step`-th from `first` (1 and 1 without a step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Stepping {
    pub(super) step: u64,
    /// The smallest number on the step: `start`'s remainder, or the step itself when the
    /// numbers are its multiples.
    pub(super) first: u64,
}

impl Stepping {
    /// The numbers on `step` through `start` (a step of 0 is refused by [`check_step`]).
    pub(super) fn new(step: u64, start: u64) -> Self {
        let step = step.max(1);
        Stepping {
            step,
            first: (start.max(1) - 1) % step + 1,
        }
    }

    /// The number counter `counter` (from 1) prints.
    #[inline]
    pub(super) fn shown(self, counter: u64) -> u64 {
        if self.step == 1 {
            return counter;
        }
        counter
            .saturating_sub(1)
            .saturating_mul(self.step)
            .saturating_add(self.first)
    }

    /// The counter that prints `shown`; `None` off the step.
    pub(super) fn counter(self, shown: u64) -> Option<u64> {
        let on_step = shown >= self.first && (shown - self.first) % self.step == 0;
        on_step.then(|| self.counters_up_to(shown))
    }

    /// How many counters print a number up to `largest`.
    pub(super) fn counters_up_to(self, largest: u64) -> u64 {
        largest
            .checked_sub(self.first)
            .map_or(0, |above| above / self.step + 1)
    }

    /// What the shape's `{seq}` adds: nothing without a step.
    pub(super) fn shape(self) -> String {
        match self.step {
            1 => String::new(),
            step if self.first == step => format!(",step={step}"),
            step => format!(",step={step}+{}", self.first),
        }
    }

    /// Reads [`Stepping::shape`]'s `step=…` back: the step and a start on it.
    pub(super) fn parse_shape(setting: &str) -> Option<(u64, u64)> {
        let (step, first) = match setting.split_once('+') {
            Some((step, first)) => (step.parse().ok()?, first.parse().ok()?),
            None => {
                let step = setting.parse().ok()?;
                (step, step)
            }
        };
        (step > 1 && (1..=step).contains(&first)).then_some((step, first))
    }
}

impl Spec {
    /// The step between numbers ([`SpecBuilder::step`]); 1 by default.
    pub fn step(&self) -> u64 {
        self.stepping.step
    }

    /// The counter value of a period's first ID: the `db_key` row's `start_value` unless an
    /// operator set one. The [start](Spec::start) itself without a step; with one, the
    /// counter that prints it (`start(1000)` on `step(10)` is counter 100).
    pub fn counter_start(&self) -> u64 {
        // The stepping is taken from the start: it is always on it.
        self.stepping.counter(self.start).unwrap_or(self.start)
    }

    /// The number counter `counter` prints: itself without a step, the `counter`-th number
    /// on it with one (before a policy shows it: past the pad, `widen` prints it in full).
    ///
    /// ```
    /// let lines = diesel_seqgen_core::Spec::builder("lines").date("").step(10).start(10).build()?;
    /// assert_eq!(lines.stepped(3), 30);
    /// assert_eq!(lines.unstepped(30), Some(3));
    /// assert_eq!(lines.unstepped(35), None);
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    #[inline]
    pub fn stepped(&self, counter: u64) -> u64 {
        self.stepping.shown(counter)
    }

    /// The counter that prints number `number`: the inverse of [`Spec::stepped`], `None` off
    /// the step. What `seqgen set-start` stores for a number an operator gives.
    pub fn unstepped(&self, number: u64) -> Option<u64> {
        self.stepping.counter(number)
    }
}

/// A step is at least 1, and only with settings that count in ones.
pub(super) fn check_step(
    step: u64,
    overflow: Overflow,
    series: Option<&Series>,
    obfuscated: bool,
) -> Option<SpecError> {
    let with = if step == 0 {
        return Some(SpecError::StepZero);
    } else if step == 1 {
        return None;
    } else if series.is_some() {
        "series, which count from 1 in each code"
    } else if overflow == Overflow::Letters {
        "`overflow = \"letters\"`, which counts on in letters"
    } else if matches!(overflow, Overflow::Cycle { .. }) {
        "`overflow = \"cycle\"`, which counts from 1 again"
    } else if obfuscated {
        "obfuscation, which spreads the numbers over the whole pad"
    } else {
        return None;
    };
    Some(SpecError::StepWith(with))
}
