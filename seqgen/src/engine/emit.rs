//! How the numbers taken are handed to the caller: formatted IDs, or their `i64` form; and the
//! scope a spec may count in.

use std::ops::Range;

use crate::error::{Error, Result};
use diesel_seqgen_core::__private::Period;
use diesel_seqgen_core::{Scoped, Spec};

/// What hands counters of `target` out as formatted IDs (with its scope, where the template
/// prints it), appended to `ids`.
pub(crate) fn formatted<'a>(
    target: Scoped<'a>,
    ids: &'a mut Vec<String>,
) -> impl FnMut(&Period, Range<u64>) -> Result<()> + 'a {
    let (spec, scope) = (target.spec(), target.scope());
    move |period, counters| {
        ids.extend(counters.map(|c| spec.format_in_scope(scope, &period.text, c)));
        Ok(())
    }
}

/// What hands one counter out as a formatted ID, into `id` (the hot path of `next_id`: no
/// `Vec` for one ID).
pub(crate) fn formatted_one<'a>(
    target: Scoped<'a>,
    id: &'a mut String,
) -> impl FnMut(&Period, Range<u64>) -> Result<()> + 'a {
    let (spec, scope) = (target.spec(), target.scope());
    move |period, counters| {
        *id = spec.format_in_scope(scope, &period.text, counters.start);
        Ok(())
    }
}

/// What hands counters out as `i64` IDs to `push`; refuses a spec that is not
/// [numeric](Spec::is_numeric).
pub(crate) fn numeric<'a>(
    spec: &'a Spec,
    mut push: impl FnMut(i64) + 'a,
) -> Result<impl FnMut(&Period, Range<u64>) -> Result<()> + 'a> {
    if !spec.is_numeric() {
        return Err(Error::NotNumeric {
            key: spec.key().to_owned(),
        });
    }
    Ok(move |period: &Period, counters: Range<u64>| {
        for c in counters {
            match spec.numeric_in(period, c) {
                Some(id) => push(id),
                None => return Err(too_wide(spec, period, c)),
            }
        }
        Ok(())
    })
}

/// `take` refused counters past the capacity; a widened counter can still outgrow the 18
/// digits of an `i64`. Out of line, so that the closure of [`numeric`] stays small.
#[cold]
#[inline(never)]
fn too_wide(spec: &Spec, period: &Period, counter: u64) -> Error {
    Error::Overflow {
        key: spec.key().to_owned(),
        period: period.text.clone(),
        max: counter - 1,
    }
}

/// Refuses a scope `spec` cannot count in: any for an unscoped spec, none (`""`) for a scoped
/// one, and text `db_key.scope` cannot hold exactly.
pub(crate) fn check_scope(spec: &Spec, scope: &str) -> Result<()> {
    if spec.is_scoped() == scope.is_empty() {
        return Err(Error::ScopeMismatch {
            key: spec.key().to_owned(),
            scoped: spec.is_scoped(),
        });
    }
    // As for keys: MariaDB's PAD SPACE collations compare `"a "` equal to `"a"`.
    if scope.chars().count() > diesel_seqgen_core::MAX_KEY_LEN
        || scope.starts_with(char::is_whitespace)
        || scope.ends_with(char::is_whitespace)
        || scope.chars().any(char::is_control)
    {
        return Err(Error::InvalidScope {
            key: spec.key().to_owned(),
            scope: scope.to_owned(),
        });
    }
    Ok(())
}
