//! What a spec's counter can hold, and the errors for what it cannot: shared by the cache
//! (serving), the reservations and the gapless paths.

use std::ops::Range;

use crate::error::{Error, Result};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::Spec;

/// Refuses counters past the spec's capacity: an overflow, or the last series full.
pub(crate) fn checked(spec: &Spec, period: &Period, counters: Range<u64>) -> Result<Range<u64>> {
    if counters.end - 1 <= spec.capacity() {
        return Ok(counters);
    }
    Err(capacity_error(spec, period))
}

/// The spec's capacity is used up in `period`: an overflow, or the last series full.
pub(crate) fn capacity_error(spec: &Spec, period: &Period) -> Error {
    match spec.series() {
        Some(series) => Error::SeriesExhausted {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            last: series.codes().last().cloned().unwrap_or_default(),
        },
        None => Error::Overflow {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            max: spec.capacity(),
        },
    }
}

/// The largest counter a spec can take: its capacity, within an `i64`.
pub(crate) fn largest(spec: &Spec) -> u64 {
    spec.capacity().min(i64::MAX as u64)
}

/// The error for `count` numbers that do not fit: past the spec's capacity, or past `i64`.
pub(crate) fn refused(spec: &Spec, period: &Period, count: u64) -> Error {
    if spec.capacity() <= i64::MAX as u64 {
        capacity_error(spec, period)
    } else {
        Error::CounterOutOfRange {
            key: spec.key().to_owned(),
            period: period.text.clone(),
            count,
        }
    }
}

/// The counters `last - count + 1 ..= last`.
pub(crate) fn block_ending_at(last: i64, count: u64) -> Result<Range<u64>> {
    let end = u64::try_from(last)
        .ok()
        .and_then(|last| last.checked_add(1))
        .filter(|&end| end > count)
        .ok_or_else(|| {
            Error::Database(diesel::result::Error::DeserializationError(
                format!("db_key returned {last} after adding {count}: the row was changed by hand")
                    .into(),
            ))
        })?;
    Ok(end - count..end)
}
