//! The rules between settings: the overflow policy and series against the pad width, and a
//! check scheme against what changes in an ID.

use crate::date_pattern::DateShape;
use crate::error::SpecError;
use crate::policy::{self, Overflow, Series};

pub(super) fn printable(text: &str) -> bool {
    !text.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The overflow policy and series must fit the pad width and keep IDs unambiguous. Every
/// series code is checked, so each bad one is reported.
/// A check covers digits: everything that changes in the ID must be digits.
pub(super) fn check_digits_only(
    overflow: Overflow,
    series: Option<&Series>,
    date: DateShape,
) -> Option<SpecError> {
    let reason = if overflow == Overflow::Letters {
        "`overflow = \"letters\"` puts letters in the counter"
    } else if series.is_some_and(|s| {
        s.codes
            .iter()
            .any(|c| !c.bytes().all(|b| b.is_ascii_digit()))
    }) {
        "the series codes are not digits"
    } else if !date.varies_in_digits {
        "the date part has fields that are not fixed-width digits (names, `-`/`_` modifiers)"
    } else {
        return None;
    };
    Some(SpecError::CheckNeedsDigits(reason))
}

pub(super) fn check_policy(
    pad: u32,
    overflow: Overflow,
    series: Option<&Series>,
    shape: DateShape,
) -> Vec<SpecError> {
    let widest = policy::pow10(pad) - 1;
    match overflow {
        Overflow::Cycle { max } if max == 0 || max > widest => {
            return vec![SpecError::CycleMaxOutOfRange { max, pad }];
        }
        Overflow::Widen if shape.fixed_width.is_none() => {
            return vec![SpecError::WidenNeedsFixedDate];
        }
        _ => {}
    }
    let Some(series) = series else {
        return Vec::new();
    };
    if overflow != Overflow::Error {
        return vec![SpecError::SeriesWithOverflow];
    }
    if series.max == 0 || series.max > widest {
        return vec![SpecError::SeriesMaxOutOfRange {
            max: series.max,
            pad,
        }];
    }
    let Some(first) = series.codes.first() else {
        return vec![SpecError::SeriesEmpty];
    };
    let mut errors = Vec::new();
    for (i, code) in series.codes.iter().enumerate() {
        if code.is_empty() || !printable(code) || code.contains(['{', '}', ',', '/']) {
            errors.push(SpecError::SeriesCodeNotPrintable(code.clone()));
        } else if code.len() != first.len() {
            errors.push(SpecError::SeriesCodesUneven {
                first: first.clone(),
                code: code.clone(),
            });
        } else if series.codes[..i].contains(code) {
            errors.push(SpecError::SeriesCodeTwice(code.clone()));
        }
    }
    errors
}
