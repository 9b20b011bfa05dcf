//! What an ID looks like: key, prefix, date part, pad width and batch size.
//!
//! An ID is `prefix + period + counter`, where the period is the clock's time formatted with
//! the date pattern (empty without a date part) and the counter is zero-padded to `pad`
//! digits. The counter starts at 1 in every period.

use chrono::{DateTime, Utc};

use crate::date_pattern::{check_date_pattern, DatePatternError};
use crate::error::SpecError;

/// The longest key `db_key.key_name` holds.
const MAX_KEY_LEN: usize = 191;
/// The widest pad: 18 digits always fit an `i64`.
const MAX_PAD: u32 = 18;

/// An ID spec: which `db_key` counter to draw from and how to format what it gives.
///
/// Built with [`Spec::builder`], validated once; cheap to share by reference.
///
/// ```
/// use chrono::{TimeZone, Utc};
///
/// let spec = seqgen::Spec::builder("users").prefix("U").date("%Y%m%d").pad(6).build()?;
/// let period = spec.period_at(Utc.with_ymd_and_hms(2025, 7, 2, 9, 0, 0).unwrap());
/// assert_eq!(spec.format(&period, 1), "U20250702000001");
/// # Ok::<(), seqgen::SpecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    key: String,
    prefix: String,
    date: String,
    pad: u8,
    batch: u32,
    mode: Mode,
    /// Digits of the date part when it is digits only and of fixed width.
    numeric_date_width: Option<u8>,
    /// Names this spec's block in a generator.
    cache_key: CacheKey,
}

/// Names a block in a generator: key and date pattern, length-prefixed so that no two
/// different pairs give the same text, with its hash computed once when the spec is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CacheKey {
    hash: u64,
    text: Box<str>,
}

impl CacheKey {
    fn new(key: &str, date: &str) -> Self {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let text: Box<str> = format!("{}:{key}{date}", key.len()).into();
        let hash = BuildHasherDefault::<DefaultHasher>::default().hash_one(&text);
        CacheKey { hash, text }
    }
}

impl std::hash::Hash for CacheKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// A hasher that passes on the hash a [`CacheKey`] already carries.
#[derive(Default)]
pub(crate) struct PrehashedHasher(u64);

impl std::hash::Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is ever called; fold anything else in, to stay a correct hasher.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// A period: the formatted date part, and its value as a number when it is digits only
/// (computed once per period, not once per ID).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Period {
    pub(crate) text: String,
    number: Option<i64>,
}

impl Default for Period {
    /// The empty period (specs without a date part), with its number.
    fn default() -> Self {
        Period::new(String::new())
    }
}

impl Period {
    pub(crate) fn new(text: String) -> Self {
        let number = if text.is_empty() {
            Some(0)
        } else if text.bytes().all(|b| b.is_ascii_digit()) {
            text.parse().ok()
        } else {
            None
        };
        Period { text, number }
    }
}

/// Builds a [`Spec`]; see [`Spec::builder`]. Defaults: no prefix, date `%Y%m%d`, pad 6,
/// batch 100 (the defaults of `#[distributed_id]`).
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct SpecBuilder {
    key: String,
    prefix: String,
    date: String,
    pad: u32,
    batch: u32,
    mode: Mode,
}

/// How numbers are taken from `db_key`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Mode {
    /// `batch` numbers per round trip, served from memory: fast, holes possible.
    #[default]
    Batched,
    /// One number at a time, taken inside the caller's transaction: the counter row stays
    /// locked until the transaction ends, and a rollback gives the number back. Committed
    /// numbers are exactly 1..N per period.
    Gapless {
        /// Fail with [`Error::Busy`](crate::Error::Busy) instead of waiting when another
        /// transaction holds the counter.
        nowait: bool,
    },
}

impl Spec {
    /// Starts a spec drawing from the `db_key` counter named `key` (usually the table name).
    pub fn builder(key: impl Into<String>) -> SpecBuilder {
        SpecBuilder {
            key: key.into(),
            prefix: String::new(),
            date: "%Y%m%d".to_owned(),
            pad: 6,
            batch: 100,
            mode: Mode::Batched,
        }
    }

    /// The `db_key` key name.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The literal prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The chrono strftime pattern of the date part; empty for none.
    pub fn date(&self) -> &str {
        &self.date
    }

    /// How many digits the counter is padded to.
    pub fn pad(&self) -> u32 {
        u32::from(self.pad)
    }

    /// How many numbers one database round trip reserves (batched mode).
    pub fn batch(&self) -> u32 {
        self.batch
    }

    /// Batched or gapless.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Which block of a generator serves this spec: specs with the same key and date pattern
    /// draw from the same `db_key` rows and so share a block.
    pub(crate) fn cache_key(&self) -> &CacheKey {
        &self.cache_key
    }

    /// The largest counter this spec can format (`10^pad - 1`).
    pub fn max_counter(&self) -> u64 {
        10u64.pow(u32::from(self.pad)) - 1
    }

    /// Whether IDs of this spec also have an `i64` form: no prefix, a date part of digits
    /// only, and date + pad at most 18 digits.
    pub fn is_numeric(&self) -> bool {
        self.prefix.is_empty()
            && self
                .numeric_date_width
                .is_some_and(|w| u32::from(w) + u32::from(self.pad) <= MAX_PAD)
    }

    /// The period at `now`: the date part as it appears in IDs (empty without a date part).
    pub fn period_at(&self, now: DateTime<Utc>) -> String {
        if self.date.is_empty() {
            String::new()
        } else {
            now.format(&self.date).to_string()
        }
    }

    /// Formats counter `counter` of `period` as `prefix + period + zero-padded counter`.
    pub fn format(&self, period: &str, counter: u64) -> String {
        let mut id = String::with_capacity(self.prefix.len() + period.len() + 20);
        id.push_str(&self.prefix);
        id.push_str(period);
        push_padded(&mut id, counter, usize::from(self.pad));
        id
    }

    /// The `i64` form of counter `counter` of `period`, or `None` when the spec
    /// [is not numeric](Spec::is_numeric) or the value does not fit.
    pub fn numeric(&self, period: &str, counter: u64) -> Option<i64> {
        self.numeric_in(&Period::new(period.to_owned()), counter)
    }

    /// [`Spec::numeric`] with the period's number already parsed.
    pub(crate) fn numeric_in(&self, period: &Period, counter: u64) -> Option<i64> {
        if !self.is_numeric() || counter > self.max_counter() {
            return None;
        }
        period
            .number?
            .checked_mul(10i64.pow(u32::from(self.pad)))?
            .checked_add(i64::try_from(counter).ok()?)
    }
}

impl SpecBuilder {
    /// Literal text before the date part, e.g. `"U"`.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// A chrono strftime pattern for the date part, e.g. `"%Y%m%d"`; `""` for none.
    pub fn date(mut self, pattern: impl Into<String>) -> Self {
        self.date = pattern.into();
        self
    }

    /// The counter's width in digits, 1..=18.
    pub fn pad(mut self, pad: u32) -> Self {
        self.pad = pad;
        self
    }

    /// Numbers reserved per database round trip, at least 1. Larger batches mean fewer round
    /// trips and bigger holes when a process stops with numbers still cached.
    pub fn batch(mut self, batch: u32) -> Self {
        self.batch = batch;
        self
    }

    /// Gapless mode: numbers are taken inside the caller's transaction, one round trip per
    /// call, and never skipped. See [`Mode::Gapless`].
    pub fn gapless(mut self) -> Self {
        self.mode = Mode::Gapless { nowait: false };
        self
    }

    /// Gapless mode that fails with [`Error::Busy`](crate::Error::Busy) instead of waiting
    /// for another transaction holding the counter.
    pub fn gapless_nowait(mut self) -> Self {
        self.mode = Mode::Gapless { nowait: true };
        self
    }

    /// Checks the spec and builds it.
    pub fn build(self) -> Result<Spec, SpecError> {
        if self.key.is_empty() {
            return Err(SpecError::EmptyKey);
        }
        let key_len = self.key.chars().count();
        if key_len > MAX_KEY_LEN {
            return Err(SpecError::KeyTooLong(key_len));
        }
        if !(1..=MAX_PAD).contains(&self.pad) {
            return Err(SpecError::PadOutOfRange(self.pad));
        }
        if self.batch == 0 {
            return Err(SpecError::BatchZero);
        }
        if self
            .prefix
            .chars()
            .any(|c| c.is_control() || c.is_whitespace())
        {
            return Err(SpecError::PrefixNotPrintable(self.prefix));
        }
        let numeric_date_width = check_date_pattern(&self.date).map_err(|e| match e {
            DatePatternError::Unknown(spec) => SpecError::UnknownDateSpecifier(spec),
            DatePatternError::SubSecond(spec) => SpecError::SubSecondDate(spec),
        })?;
        let cache_key = CacheKey::new(&self.key, &self.date);
        Ok(Spec {
            cache_key,
            key: self.key,
            prefix: self.prefix,
            date: self.date,
            pad: self.pad as u8,
            batch: self.batch,
            mode: self.mode,
            numeric_date_width,
        })
    }
}

/// Appends `n` zero-padded to at least `pad` digits, without going through `fmt`.
pub(crate) fn push_padded(out: &mut String, mut n: u64, pad: usize) {
    let mut buf = [b'0'; 20];
    let mut start = buf.len();
    loop {
        start -= 1;
        buf[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let start = start.min(buf.len() - pad.min(buf.len()));
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[start..]).expect("ASCII digits"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(prefix: &str, date: &str, pad: u32) -> Spec {
        Spec::builder("k")
            .prefix(prefix)
            .date(date)
            .pad(pad)
            .build()
            .unwrap()
    }

    #[test]
    fn pads_and_keeps_wider_counters_whole() {
        let mut s = String::new();
        push_padded(&mut s, 42, 6);
        assert_eq!(s, "000042");
        s.clear();
        push_padded(&mut s, 1234567, 3);
        assert_eq!(s, "1234567");
        s.clear();
        push_padded(&mut s, u64::MAX, 18);
        assert_eq!(s, u64::MAX.to_string());
    }

    #[test]
    fn rejects_bad_specs_with_the_reason() {
        let err = |b: SpecBuilder| b.build().unwrap_err();
        assert_eq!(err(Spec::builder("")), SpecError::EmptyKey);
        assert_eq!(err(Spec::builder("k").pad(0)), SpecError::PadOutOfRange(0));
        assert_eq!(
            err(Spec::builder("k").pad(19)),
            SpecError::PadOutOfRange(19)
        );
        assert_eq!(err(Spec::builder("k").batch(0)), SpecError::BatchZero);
        assert_eq!(
            err(Spec::builder("k").date("%Y%Q%d")),
            SpecError::UnknownDateSpecifier("%Q".into())
        );
        assert_eq!(
            err(Spec::builder("k").date("%Y%")),
            SpecError::UnknownDateSpecifier("%".into())
        );
        assert_eq!(
            err(Spec::builder("k").date("%S%.3f")),
            SpecError::SubSecondDate("%.3f".into())
        );
        assert_eq!(
            err(Spec::builder("k").prefix("A B")),
            SpecError::PrefixNotPrintable("A B".into())
        );
        assert!(matches!(
            err(Spec::builder("x".repeat(192))),
            SpecError::KeyTooLong(192)
        ));
    }

    #[test]
    fn numeric_form_needs_digits_only() {
        assert!(spec("", "%Y%m%d", 8).is_numeric());
        assert!(spec("", "", 18).is_numeric());
        assert!(spec("", "%y%m", 4).is_numeric());
        assert!(!spec("U", "%Y%m%d", 6).is_numeric());
        assert!(!spec("", "%Y-%m-%d", 6).is_numeric());
        assert!(!spec("", "%-d", 6).is_numeric());
        assert!(!spec("", "%b", 6).is_numeric());
        assert!(!spec("", "%Y%m%d", 11).is_numeric());
        assert_eq!(
            spec("", "%Y%m%d", 8).numeric("20250702", 1),
            Some(2025070200000001)
        );
        assert_eq!(spec("", "", 6).numeric("", 42), Some(42));
    }
}
