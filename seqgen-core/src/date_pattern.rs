//! Checks a chrono strftime pattern for an ID's date part.
//!
//! Used by `Spec::builder(..).build()`, which the runtime and `diesel-seqgen-derive`
//! (compile errors on `#[distributed_id(date = "…")]`) both call, so both accept exactly the same
//! patterns. It depends on chrono only.

use chrono::format::{Item, StrftimeItems};

/// Why a date pattern is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DatePatternError {
    /// A specifier chrono does not know, e.g. `%Q`, or a lone `%` at the end.
    Unknown(String),
    /// A specifier that changes faster than once a second (`%f`, `%.3f`, `%+`).
    SubSecond(String),
    /// The formatted date can be longer than `db_key.period` holds (64 bytes).
    TooLong(usize),
    /// What the specifier prints cannot be read back (`%Z`): an ID's period would not parse.
    Unreadable(String),
}

/// The most `db_key.period` holds.
const MAX_PERIOD_LEN: usize = 64;

/// What a valid date pattern formats to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct DateShape {
    /// Digits, when it formats to digits only, of fixed width.
    pub(crate) numeric_width: Option<u8>,
    /// Bytes, when every date formats to the same width.
    pub(crate) fixed_width: Option<usize>,
    /// Whether its first character is never `0` (it starts with `%Y` or `%G`), so its value
    /// as a number keeps every digit.
    pub(crate) leading_nonzero: bool,
    /// Whether every specifier formats to digits of fixed width (literal text aside): what
    /// changes from one period to the next is digits, which a check digit covers.
    pub(crate) varies_in_digits: bool,
}

/// Checks `pattern` specifier by specifier, and tells what it formats to.
pub(crate) fn check_date_pattern(pattern: &str) -> Result<DateShape, DatePatternError> {
    let mut numeric: Option<u8> = Some(0);
    let mut fixed: Option<usize> = Some(0);
    let mut leading_nonzero = None;
    let mut varies_in_digits = true;
    let mut rest = pattern;
    while let Some(c) = rest.chars().next() {
        if c != '%' {
            numeric = if c.is_ascii_digit() {
                numeric.map(|w| w.saturating_add(1))
            } else {
                None
            };
            fixed = fixed.map(|w| w + c.len_utf8());
            leading_nonzero.get_or_insert(matches!(c, '1'..='9'));
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
        if !formats(spec) {
            // Known to chrono's parser only (`%#z`): formatting it fails.
            return Err(DatePatternError::Unknown(spec.to_owned()));
        }
        if !reads_back(spec) {
            return Err(DatePatternError::Unreadable(spec.to_owned()));
        }
        let digits: Option<u8> = match (modifiers, conv) {
            (0, 'Y' | 'G') => Some(4),
            (0, 'j') => Some(3),
            (0, 'C' | 'y' | 'g' | 'm' | 'd' | 'H' | 'I' | 'M' | 'S' | 'U' | 'W' | 'V') => Some(2),
            // `%q`: the quarter, 1 to 4.
            (0, 'u' | 'w' | 'q') => Some(1),
            _ => None,
        };
        leading_nonzero.get_or_insert(modifiers == 0 && matches!(conv, 'Y' | 'G'));
        varies_in_digits &= digits.is_some();
        numeric = numeric.zip(digits).map(|(w, d)| w.saturating_add(d));
        fixed = fixed.zip(digits).map(|(w, d)| w + usize::from(d));
    }
    // A date with long names (Wednesday, September) and two-digit everything, as a bound.
    let longest = format_at((2026, 9, 30, 23, 59, 59), pattern).map_or(0, |text| text.len());
    if longest > MAX_PERIOD_LEN {
        return Err(DatePatternError::TooLong(longest));
    }
    // Braces would end the date's placeholder in the shape recorded on the key.
    if pattern.contains(['{', '}']) || !reads_back(pattern) {
        return Err(DatePatternError::Unreadable(pattern.to_owned()));
    }
    Ok(DateShape {
        numeric_width: numeric.filter(|&w| w > 0 || pattern.is_empty()),
        fixed_width: fixed,
        leading_nonzero: leading_nonzero.unwrap_or(false),
        varies_in_digits,
    })
}

/// Whether what `pattern` prints for dates of one and two digits in every field parses back
/// with `pattern`, as an ID's period is read (`Spec::parse`).
fn reads_back(pattern: &str) -> bool {
    use chrono::format::{parse, Parsed};
    [
        (2026, 9, 30, 23, 59, 59),
        (1999, 1, 4, 0, 0, 0),
        (2024, 2, 29, 12, 5, 9),
        (2026, 5, 5, 5, 5, 5),
        (2030, 12, 31, 9, 9, 9),
        (2001, 10, 1, 1, 10, 10),
        (2026, 3, 9, 13, 30, 30),
        (2026, 7, 14, 21, 45, 0),
    ]
    .iter()
    .all(|&at| {
        format_at(at, pattern).is_some_and(|text| {
            parse(&mut Parsed::new(), &text, StrftimeItems::new(pattern)).is_ok()
        })
    })
}

/// Whether `pattern` formats a date (chrono's `Display` fails on specifiers only its parser
/// knows, such as `%#z`).
fn formats(pattern: &str) -> bool {
    format_at((2026, 9, 30, 23, 59, 59), pattern).is_some()
}

/// What `pattern` prints at (year, month, day, hour, minute, second) in UTC; `None` when chrono
/// cannot format it.
fn format_at(at: (i32, u32, u32, u32, u32, u32), pattern: &str) -> Option<String> {
    use std::fmt::Write;
    let (y, mo, d, h, mi, s) = at;
    let at = chrono::NaiveDate::from_ymd_opt(y, mo, d)?.and_hms_opt(h, mi, s)?;
    let mut text = String::new();
    write!(text, "{}", at.and_utc().format(pattern)).ok()?;
    Some(text)
}

/// A time zone as written in a spec, other than an IANA name: `utc`, `local`, or a fixed offset
/// `+08:00` / `-05:30`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ZoneSpec {
    Utc,
    Local,
    /// Seconds east of UTC.
    Offset(i32),
}

/// Reads `utc`, `local` or `±HH:MM` (hours up to 23).
pub(crate) fn parse_time_zone(text: &str) -> Option<ZoneSpec> {
    match text {
        "utc" | "UTC" | "Z" => return Some(ZoneSpec::Utc),
        "local" => return Some(ZoneSpec::Local),
        _ => {}
    }
    let (sign, rest) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => return None,
    };
    let (hours, minutes) = rest.split_once(':')?;
    if hours.len() != 2 || minutes.len() != 2 {
        return None;
    }
    let hours: i32 = hours.parse().ok().filter(|h| (0..24).contains(h))?;
    let minutes: i32 = minutes.parse().ok().filter(|m| (0..60).contains(m))?;
    Some(ZoneSpec::Offset(sign * (hours * 3600 + minutes * 60)))
}
