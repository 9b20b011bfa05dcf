//! The scope printed in IDs: `{scope}` in a template (`ACME-2026-0001`, `GLOBEX-2026-0001`).
//!
//! Every other part of such a template has a fixed width, so an ID reads back by taking them
//! from both ends: the scope is what is left between, whatever its characters. That is what
//! keeps every ID one (scope, period, number), even with a scope holding the separator
//! (`AC-ME-2026-0001` is scope `AC-ME`) or digits next to `{seq}`. The scope's own text is
//! checked where every scope is (`diesel-seqgen`'s `check_scope`: not empty, no surrounding
//! whitespace, no control characters, at most 191 characters).

use super::Spec;
use crate::date_pattern::DateShape;
use crate::error::SpecError;
use crate::policy::Overflow;
use crate::template::Part;

impl Spec {
    /// Whether this spec's IDs print their scope (`{scope}` in the template): they are then
    /// formatted with [`Spec::format_in_scope`], and [`Spec::parse`] reads the scope back.
    pub fn prints_scope(&self) -> bool {
        self.template.contains(&Part::Scope)
    }
}

/// `{scope}` must be the only part of variable width, and digits only are what a check covers.
pub(super) fn check_printed_scope(
    template: &[Part],
    overflow: Overflow,
    date: DateShape,
    check: bool,
) -> Option<SpecError> {
    if !template.contains(&Part::Scope) {
        return None;
    }
    let reason = if overflow == Overflow::Widen {
        "with `overflow = \"widen\"` the counter's width varies too, and an ID would not say where the scope ends"
    } else if template.contains(&Part::Date) && date.fixed_width.is_none() {
        "the date part's width varies too (`%-d`, names), and an ID would not say where the scope ends"
    } else if check {
        "a check covers digits, and a scope can hold letters"
    } else {
        return None;
    };
    Some(SpecError::ScopePrinted(reason))
}
