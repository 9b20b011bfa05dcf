//! The `i64` form of a spec's IDs: whether it has one, and the number of a counter.

use super::{Period, Spec, MAX_PAD};
use crate::check::Check;
use crate::error::SpecError;
use crate::policy::{self, Overflow};

impl Spec {
    /// Whether IDs of this spec also have an `i64` form: no prefix, template or series, no
    /// letters, a date part of digits only, and date + pad at most 18 digits (with `widen`,
    /// a date part that starts with `%Y`, so no digit of it is lost as a number).
    pub fn is_numeric(&self) -> bool {
        self.numeric
    }

    /// Why IDs of this spec have no `i64` form, if they have none.
    pub(super) fn why_not_numeric(&self) -> Option<SpecError> {
        Some(if !self.prefix.is_empty() {
            SpecError::NumericWithPrefix
        } else if self.overflow == Overflow::Letters {
            SpecError::NumericWithLetters
        } else if self.series.is_some() {
            SpecError::NumericWithSeries
        } else if self.custom_template {
            SpecError::NumericWithTemplate
        } else if self.overflow == Overflow::Widen
            && !self.date.is_empty()
            && !self.date_shape.leading_nonzero
        {
            SpecError::NumericWidenDate
        } else {
            let Some(width) = self.date_shape.numeric_width else {
                return Some(SpecError::NumericDateNotDigits);
            };
            let date_digits = u32::from(width);
            let check_digits = self.check.map_or(0, Check::width);
            if date_digits + self.pad + check_digits <= MAX_PAD {
                return None;
            }
            SpecError::NumericTooWide {
                date_digits,
                pad: self.pad,
                check_digits,
            }
        })
    }

    /// The `i64` form of counter `counter` of `period`, or `None` when the spec
    /// [is not numeric](Spec::is_numeric) or the value does not fit.
    pub fn numeric(&self, period: &str, counter: u64) -> Option<i64> {
        self.numeric_in(&Period::new(period.to_owned()), counter)
    }

    /// [`Spec::numeric`] with the period's number already parsed.
    #[doc(hidden)]
    #[inline]
    pub fn numeric_in(&self, period: &Period, counter: u64) -> Option<i64> {
        if !self.is_numeric() || counter == 0 || counter > self.capacity() {
            return None;
        }
        // The usual case, once per cached `i64` ID: the counter is shown as it is, in the pad.
        let scale = policy::pow10(self.pad);
        if counter < scale
            && self.stepping.step == 1
            && self.check.is_none()
            && !matches!(self.overflow, Overflow::Cycle { .. })
            && self.obfuscation.is_none()
        {
            return period
                .number?
                .checked_mul(scale as i64)?
                .checked_add(counter as i64);
        }
        self.numeric_otherwise(period, counter)
    }

    /// [`Spec::numeric_in`] past the usual case. Out of line: the usual case is inlined into
    /// every cached `i64` ID.
    #[inline(never)]
    fn numeric_otherwise(&self, period: &Period, counter: u64) -> Option<i64> {
        let counter = self.stepped(self.obfuscated(&period.text, counter));
        let scale = policy::pow10(self.pad);
        let seq = policy::show(counter, self.overflow, None).seq;
        let digits = if seq < scale {
            self.pad
        } else {
            decimal_digits(seq)
        };
        let date_digits = u32::from(self.date_shape.numeric_width?);
        let check_digits = self.check.map_or(0, Check::width);
        if date_digits + digits + check_digits > MAX_PAD {
            return None;
        }
        let number = period
            .number?
            .checked_mul(policy::pow10(digits) as i64)?
            .checked_add(i64::try_from(seq).ok()?)?;
        let Some(check) = self.check else {
            return Some(number);
        };
        // Over the number's digits: the leading zeros it drops change no scheme's check.
        let value: i64 = check.of(&number.to_string()).parse().ok()?;
        number
            .checked_mul(10i64.pow(check_digits))?
            .checked_add(value)
    }
}

fn decimal_digits(n: u64) -> u32 {
    n.checked_ilog10().map_or(1, |d| d + 1)
}
