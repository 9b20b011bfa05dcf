//! Checks a chrono strftime pattern for an ID's date part.
//!
//! Shared, as source, by the runtime (`Spec::builder(..).build()`) and by `seqgen-derive`
//! (compile errors on `#[distributed_id(date = "…")]`), so both accept exactly the same
//! patterns. It depends on chrono only.

use chrono::format::{Item, StrftimeItems};

/// Why a date pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DatePatternError {
    /// A specifier chrono does not know, e.g. `%Q`, or a lone `%` at the end.
    Unknown(String),
    /// A specifier that changes faster than once a second (`%f`, `%.3f`, `%+`).
    SubSecond(String),
}

/// Checks `pattern` specifier by specifier, and returns how many digits it formats to when
/// it is digits only and of fixed width (for the `i64` form of IDs).
pub(crate) fn check_date_pattern(pattern: &str) -> Result<Option<u8>, DatePatternError> {
    let mut width: Option<u8> = Some(0);
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if c != '%' {
            width = if c.is_ascii_digit() {
                width.map(|w| w.saturating_add(1))
            } else {
                None
            };
            rest = &rest[c.len_utf8()..];
            continue;
        }
        // A specifier: `%`, modifiers (`-_0#.:` and digits), then one conversion character.
        let body = &rest[1..];
        let modifiers = body
            .find(|c: char| !matches!(c, '-' | '_' | '#' | '.' | ':' | '0'..='9'))
            .unwrap_or(body.len());
        let Some(conv) = body[modifiers..].chars().next() else {
            return Err(DatePatternError::Unknown(rest.to_owned()));
        };
        let len = 1 + modifiers + conv.len_utf8();
        let spec = &rest[..len];
        rest = &rest[len..];
        if StrftimeItems::new(spec).any(|item| matches!(item, Item::Error)) {
            return Err(DatePatternError::Unknown(spec.to_owned()));
        }
        if matches!(conv, 'f' | '+') {
            return Err(DatePatternError::SubSecond(spec.to_owned()));
        }
        let digits = match (modifiers, conv) {
            (0, 'Y' | 'G') => Some(4),
            (0, 'j') => Some(3),
            (0, 'C' | 'y' | 'g' | 'm' | 'd' | 'H' | 'I' | 'M' | 'S' | 'U' | 'W' | 'V') => Some(2),
            (0, 'u' | 'w') => Some(1),
            _ => None,
        };
        width = width.zip(digits).map(|(w, d)| w.saturating_add(d));
    }
    Ok(width.filter(|&w| w > 0 || pattern.is_empty()))
}
