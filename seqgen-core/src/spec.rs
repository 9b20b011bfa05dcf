//! What an ID looks like: key, template (prefix, date part, series, counter), pad width,
//! overflow policy, time zone, batch size and mode.
//!
//! By default an ID is `prefix + period + counter`, where the period is the clock's time
//! formatted with the date pattern (empty without a date part) and the counter is zero-padded
//! to `pad` digits. The counter starts at 1 in every period.

use chrono::{DateTime, Utc};

use crate::date_pattern::{check_date_pattern, DatePatternError, DateShape};
use crate::error::SpecError;
use crate::policy::{self, Overflow, Series};
use crate::template::{check_template, default_template, parse_template, Part};
use crate::zone::TimeZone;

/// The longest key `db_key.key_name` holds.
pub const MAX_KEY_LEN: usize = 191;
/// The widest pad: 18 digits always fit an `i64`.
pub const MAX_PAD: u32 = 18;

/// An ID spec: which `db_key` counter to draw from and how to format what it gives.
///
/// Built with [`Spec::builder`], validated once; cheap to share by reference.
///
/// ```
/// use chrono::{TimeZone, Utc};
///
/// let spec = seqgen_core::Spec::builder("users").prefix("U").date("%Y%m%d").pad(6).build()?;
/// let period = spec.period_at(Utc.with_ymd_and_hms(2025, 7, 2, 9, 0, 0).unwrap());
/// assert_eq!(spec.format(&period, 1), "U20250702000001");
///
/// // A template with a series: series `aa` holds 1..=999, then `bb` starts at 1.
/// let tickets = seqgen_core::Spec::builder("tickets")
///     .format("T{date}-{series}{seq}")
///     .date("%y")
///     .pad(3)
///     .series(["aa", "bb"], 999)
///     .build()?;
/// assert_eq!(tickets.format("25", 999), "T25-aa999");
/// assert_eq!(tickets.format("25", 1000), "T25-bb001");
/// # Ok::<(), seqgen_core::SpecError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    key: String,
    prefix: String,
    date: String,
    tz: TimeZone,
    pad: u32,
    batch: u32,
    mode: Mode,
    overflow: Overflow,
    series: Option<Series>,
    template: Vec<Part>,
    custom_template: bool,
    date_shape: DateShape,
    /// The printed form of the IDs, recorded on the key's row: see [`Spec::shape`].
    shape: String,
    /// Computed once when built: both are read for every ID.
    numeric: bool,
    capacity: u64,
    /// Names this spec's block in a generator.
    cache_key: CacheKey,
}

/// Names a block in a generator: key and date pattern, length-prefixed so that no two
/// different pairs give the same text, with its hash computed once when the spec is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheKey {
    hash: u64,
    text: Box<str>,
}

impl CacheKey {
    fn new(key: &str, date: &str, tz: TimeZone) -> Self {
        use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
        let text: Box<str> = format!("{}:{key}{}:{date}{tz:?}", key.len(), date.len()).into();
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
pub struct PrehashedHasher(u64);

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
pub struct Period {
    /// The formatted date part.
    pub text: String,
    number: Option<i64>,
}

impl Default for Period {
    /// The empty period (specs without a date part), with its number.
    fn default() -> Self {
        Period::new(String::new())
    }
}

impl Period {
    /// A period from its formatted date part.
    pub fn new(text: String) -> Self {
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

/// Builds a [`Spec`]; see [`Spec::builder`]. Defaults: no prefix, date `%Y%m%d` in UTC,
/// pad 6, batch 100, batched mode, overflow is an error.
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct SpecBuilder {
    key: String,
    prefix: String,
    date: String,
    tz: TimeZone,
    pad: u32,
    batch: u32,
    mode: Mode,
    overflow: Overflow,
    series: Option<(Vec<String>, u64)>,
    format: Option<String>,
    numeric: bool,
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
        /// Fail with [`Error::Busy`](https://docs.rs/seqgen/latest/seqgen/enum.Error.html#variant.Busy) instead of waiting when another
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
            tz: TimeZone::Utc,
            pad: 6,
            batch: 100,
            mode: Mode::Batched,
            overflow: Overflow::Error,
            series: None,
            format: None,
            numeric: false,
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

    /// The time zone the date part is computed in.
    pub fn time_zone(&self) -> TimeZone {
        self.tz
    }

    /// How many digits the counter is padded to.
    pub fn pad(&self) -> u32 {
        self.pad
    }

    /// How many numbers one database round trip reserves (batched mode).
    pub fn batch(&self) -> u32 {
        self.batch
    }

    /// Batched or gapless.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// What comes after counter `10^pad - 1`.
    pub fn overflow(&self) -> Overflow {
        self.overflow
    }

    /// The series, if the spec has them.
    pub fn series(&self) -> Option<&Series> {
        self.series.as_ref()
    }

    /// Which block of a generator serves this spec: specs with the same key, date pattern
    /// and time zone draw from the same `db_key` rows and so share a block.
    #[doc(hidden)]
    pub fn cache_key(&self) -> &CacheKey {
        &self.cache_key
    }

    pub(crate) fn template(&self) -> &[Part] {
        &self.template
    }

    pub(crate) fn date_shape(&self) -> DateShape {
        self.date_shape
    }

    /// The printed form of this spec's IDs, e.g. `U{date:%Y%m%d}{seq:6}`: everything that
    /// decides how a counter is printed (prefix, date pattern, pad, overflow policy, series,
    /// template), and nothing that does not (batch, mode, time zone). seqgen records it on the
    /// key's row at first use and refuses a spec of another shape on that key
    /// ([`Error::ShapeChanged`](https://docs.rs/seqgen/latest/seqgen/enum.Error.html#variant.ShapeChanged)): two shapes could print the same ID
    /// from different counters.
    pub fn shape(&self) -> &str {
        &self.shape
    }

    fn compute_shape(&self) -> String {
        let mut shape = String::new();
        let literal = |shape: &mut String, text: &str| {
            shape.push_str(&text.replace('{', "{{").replace('}', "}}"));
        };
        for part in &self.template {
            match part {
                Part::Literal(text) => literal(&mut shape, text),
                Part::Prefix => literal(&mut shape, &self.prefix),
                Part::Date => shape.push_str(&format!("{{date:{}}}", self.date)),
                Part::Series => {
                    if let Some(series) = &self.series {
                        shape.push_str(&format!(
                            "{{series:{}/{}}}",
                            series.codes.join(","),
                            series.max
                        ));
                    }
                }
                Part::Seq => {
                    let policy = match self.overflow {
                        Overflow::Error => String::new(),
                        Overflow::Widen => ",widen".to_owned(),
                        Overflow::Letters => ",letters".to_owned(),
                        Overflow::Cycle { max } => format!(",cycle={max}"),
                    };
                    shape.push_str(&format!("{{seq:{}{policy}}}", self.pad));
                }
            }
        }
        shape
    }

    /// How many counters a period can hand out before the spec overflows (`10^pad - 1` with
    /// the default policy; unbounded for `cycle`).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether IDs of this spec also have an `i64` form: no prefix, template or series, no
    /// letters, a date part of digits only, and date + pad at most 18 digits (with `widen`,
    /// a date part that starts with `%Y`, so no digit of it is lost as a number).
    pub fn is_numeric(&self) -> bool {
        self.numeric
    }

    /// Why IDs of this spec have no `i64` form, if they have none.
    fn why_not_numeric(&self) -> Option<SpecError> {
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
            if date_digits + self.pad <= MAX_PAD {
                return None;
            }
            SpecError::NumericTooWide {
                date_digits,
                pad: self.pad,
            }
        })
    }

    /// The period at `now`: the date part as it appears in IDs (empty without a date part).
    pub fn period_at(&self, now: DateTime<Utc>) -> String {
        if self.date.is_empty() {
            String::new()
        } else {
            self.tz.format(now, &self.date)
        }
    }

    /// Formats counter `counter` (1..=[`capacity`](Spec::capacity)) of `period`.
    pub fn format(&self, period: &str, counter: u64) -> String {
        let shown = policy::show(counter, self.overflow, self.series.as_ref());
        let mut id = String::with_capacity(self.prefix.len() + period.len() + 24);
        for part in &self.template {
            match part {
                Part::Literal(text) => id.push_str(text),
                Part::Prefix => id.push_str(&self.prefix),
                Part::Date => id.push_str(period),
                Part::Series => {
                    let codes = self.series.as_ref().map(Series::codes).unwrap_or_default();
                    id.push_str(
                        shown
                            .series
                            .and_then(|i| codes.get(i))
                            .map_or("", String::as_str),
                    );
                }
                Part::Seq => policy::push_seq(&mut id, shown.seq, self.pad, self.overflow),
            }
        }
        id
    }

    /// The `i64` form of counter `counter` of `period`, or `None` when the spec
    /// [is not numeric](Spec::is_numeric) or the value does not fit.
    pub fn numeric(&self, period: &str, counter: u64) -> Option<i64> {
        self.numeric_in(&Period::new(period.to_owned()), counter)
    }

    /// [`Spec::numeric`] with the period's number already parsed.
    #[doc(hidden)]
    pub fn numeric_in(&self, period: &Period, counter: u64) -> Option<i64> {
        if !self.is_numeric() || counter == 0 || counter > self.capacity() {
            return None;
        }
        let seq = policy::show(counter, self.overflow, None).seq;
        let digits = decimal_digits(seq).max(self.pad);
        let date_digits = u32::from(self.date_shape.numeric_width?);
        if date_digits + digits > MAX_PAD {
            return None;
        }
        period
            .number?
            .checked_mul(10i64.pow(digits))?
            .checked_add(i64::try_from(seq).ok()?)
    }
}

fn decimal_digits(n: u64) -> u32 {
    n.checked_ilog10().map_or(1, |d| d + 1)
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

    /// The time zone the date part is computed in (default UTC).
    pub fn time_zone(mut self, tz: TimeZone) -> Self {
        self.tz = tz;
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

    /// Gapless mode that fails with [`Error::Busy`](https://docs.rs/seqgen/latest/seqgen/enum.Error.html#variant.Busy) instead of waiting
    /// for another transaction holding the counter.
    pub fn gapless_nowait(mut self) -> Self {
        self.mode = Mode::Gapless { nowait: true };
        self
    }

    /// What comes after counter `10^pad - 1` (default: an error).
    pub fn overflow(mut self, overflow: Overflow) -> Self {
        self.overflow = overflow;
        self
    }

    /// Series rollover: counters 1..=`max` show the first code, the next `max` the second,
    /// and so on; after the last, [`Error::SeriesExhausted`](https://docs.rs/seqgen/latest/seqgen/enum.Error.html#variant.SeriesExhausted).
    /// Codes must have the same length. Without a [`format`](SpecBuilder::format) the code
    /// sits between the date and the counter.
    pub fn series<I>(mut self, codes: I, max: u64) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        self.series = Some((codes.into_iter().map(Into::into).collect(), max));
        self
    }

    /// A template with placeholders `{prefix}`, `{date}`, `{series}`, `{seq}` and literal
    /// text (`{{` and `}}` for braces), e.g. `"INV-{date}-{seq}"`. The default is
    /// `{prefix}{date}{seq}` (`{prefix}{date}{series}{seq}` with series).
    pub fn format(mut self, template: impl Into<String>) -> Self {
        self.format = Some(template.into());
        self
    }

    /// Requires that IDs of this spec have an `i64` form ([`Spec::is_numeric`]): the build
    /// fails otherwise, saying which setting stands in the way. The derive asks for it on
    /// `i64` fields.
    pub fn numeric(mut self) -> Self {
        self.numeric = true;
        self
    }

    /// Checks the spec and builds it; the error is the first broken rule.
    pub fn build(self) -> Result<Spec, SpecError> {
        self.build_reporting_all()
            .map_err(|mut errors| errors.swap_remove(0))
    }

    /// [`build`](SpecBuilder::build), with every broken rule at once (at most one per
    /// setting, in the order of [`Setting`](crate::Setting)s met): for
    /// `#[derive(DistributedId)]`, which shows each as a compile error at its own token.
    #[doc(hidden)]
    pub fn build_reporting_all(self) -> Result<Spec, Vec<SpecError>> {
        let mut errors = Vec::new();
        let mut check = |result: Result<(), SpecError>| {
            if let Err(e) = result {
                errors.push(e);
            }
        };
        check(check_key(&self.key));
        check(check_prefix(&self.prefix));
        let pad_ok = (1..=MAX_PAD).contains(&self.pad);
        check(if pad_ok {
            Ok(())
        } else {
            Err(SpecError::PadOutOfRange(self.pad))
        });
        check(if self.batch == 0 {
            Err(SpecError::BatchZero)
        } else {
            Ok(())
        });
        let date_shape = check_date_pattern(&self.date).map_err(|e| match e {
            DatePatternError::Unknown(specifier) => SpecError::UnknownDateSpecifier {
                specifier,
                pattern: self.date.clone(),
            },
            DatePatternError::SubSecond(spec) => SpecError::SubSecondDate(spec),
            DatePatternError::TooLong(len) => SpecError::DateTooLong(len),
        });
        let series = self.series.map(|(codes, max)| Series { codes, max });
        let custom_template = self.format.is_some();
        let template = match &self.format {
            Some(text) => {
                parse_template(text).map_err(|e| SpecError::TemplateMalformed(e.to_string()))
            }
            None => Ok(default_template(series.is_some())),
        };
        if let Ok(template) = &template {
            check(
                check_template(
                    template,
                    !self.prefix.is_empty(),
                    !self.date.is_empty(),
                    series.is_some(),
                )
                .map_err(|reason| SpecError::TemplateIncomplete(reason.to_owned())),
            );
        }
        let (date_shape, template) = match (date_shape, template) {
            (Ok(shape), Ok(template)) => (shape, template),
            (shape, template) => {
                errors.extend(shape.err());
                errors.extend(template.err());
                return Err(errors);
            }
        };
        if pad_ok {
            // The policies are measured in pad digits.
            errors.extend(check_policy(
                self.pad,
                self.overflow,
                series.as_ref(),
                date_shape,
            ));
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let capacity = policy::capacity(self.pad, self.overflow, series.as_ref());
        let mut spec = Spec {
            cache_key: CacheKey::new(&self.key, &self.date, self.tz),
            key: self.key,
            prefix: self.prefix,
            date: self.date,
            tz: self.tz,
            pad: self.pad,
            batch: self.batch,
            mode: self.mode,
            overflow: self.overflow,
            series,
            template,
            custom_template,
            date_shape,
            shape: String::new(),
            numeric: false,
            capacity,
        };
        spec.numeric = spec.why_not_numeric().is_none();
        if self.numeric {
            if let Some(reason) = spec.why_not_numeric() {
                return Err(vec![reason]);
            }
        }
        spec.shape = spec.compute_shape();
        Ok(spec)
    }
}

fn check_key(key: &str) -> Result<(), SpecError> {
    let len = key.chars().count();
    if len == 0 {
        Err(SpecError::EmptyKey)
    } else if len > MAX_KEY_LEN {
        Err(SpecError::KeyTooLong(len))
    } else if key.starts_with(char::is_whitespace)
        || key.ends_with(char::is_whitespace)
        || key.chars().any(char::is_control)
    {
        // MariaDB's PAD SPACE collations compare `"pk "` equal to `"pk"`.
        Err(SpecError::KeyNotExact(key.to_owned()))
    } else {
        Ok(())
    }
}

fn check_prefix(prefix: &str) -> Result<(), SpecError> {
    if printable(prefix) {
        Ok(())
    } else {
        Err(SpecError::PrefixNotPrintable(prefix.to_owned()))
    }
}

fn printable(text: &str) -> bool {
    !text.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// The overflow policy and series must fit the pad width and keep IDs unambiguous. Every
/// series code is checked, so each bad one is reported.
fn check_policy(
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
        if code.is_empty() || !printable(code) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Setting;

    fn spec(prefix: &str, date: &str, pad: u32) -> Spec {
        Spec::builder("k")
            .prefix(prefix)
            .date(date)
            .pad(pad)
            .build()
            .unwrap()
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
            SpecError::UnknownDateSpecifier {
                specifier: "%Q".into(),
                pattern: "%Y%Q%d".into()
            }
        );
        assert_eq!(
            err(Spec::builder("k").date("%Y%")),
            SpecError::UnknownDateSpecifier {
                specifier: "%".into(),
                pattern: "%Y%".into()
            }
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
        assert_eq!(
            err(Spec::builder("k")
                .pad(2)
                .overflow(Overflow::Cycle { max: 100 })),
            SpecError::CycleMaxOutOfRange { max: 100, pad: 2 }
        );
        assert_eq!(
            err(Spec::builder("k").date("%-d").overflow(Overflow::Widen)),
            SpecError::WidenNeedsFixedDate
        );
        assert!(matches!(
            err(Spec::builder("k").series(["a", "bb"], 9)),
            SpecError::SeriesCodesUneven { .. }
        ));
        assert_eq!(
            err(Spec::builder("k").series(["a", "a"], 9)),
            SpecError::SeriesCodeTwice("a".into())
        );
        assert_eq!(
            err(Spec::builder("k").series(Vec::<String>::new(), 9)),
            SpecError::SeriesEmpty
        );
        assert!(matches!(
            err(Spec::builder("k").date("%A %B ".repeat(4))),
            SpecError::DateTooLong(_)
        ));
        let template = |b: SpecBuilder| {
            matches!(
                b.build(),
                Err(SpecError::TemplateMalformed(_) | SpecError::TemplateIncomplete(_))
            )
        };
        assert!(template(Spec::builder("k").format("{seq}")));
        assert!(template(
            Spec::builder("k").date("").format("{series}{seq}")
        ));
        assert!(template(Spec::builder("k").date("").format("{sequence}")));
    }

    #[test]
    fn every_broken_rule_is_reported_with_its_setting() {
        let errors = Spec::builder(" k")
            .prefix("A B")
            .pad(0)
            .batch(0)
            .date("%Q")
            .build_reporting_all()
            .unwrap_err();
        let settings: Vec<Setting> = errors.iter().map(SpecError::setting).collect();
        assert_eq!(
            settings,
            [
                Setting::Key,
                Setting::Prefix,
                Setting::Pad,
                Setting::Batch,
                Setting::Date
            ]
        );
        let numeric = |b: SpecBuilder| b.numeric().build().unwrap_err();
        assert_eq!(
            numeric(Spec::builder("k").prefix("U")),
            SpecError::NumericWithPrefix
        );
        assert_eq!(
            numeric(Spec::builder("k").date("%Y%m%d%H%M").pad(9)),
            SpecError::NumericTooWide {
                date_digits: 12,
                pad: 9
            }
        );
        assert_eq!(
            numeric(Spec::builder("k").date("%y-%m")),
            SpecError::NumericDateNotDigits
        );
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
        let widen = |date: &str| {
            Spec::builder("k")
                .date(date)
                .pad(4)
                .overflow(Overflow::Widen)
                .build()
                .unwrap()
        };
        assert_eq!(widen("%Y").numeric("2025", 10_000), Some(202510000));
        assert!(
            !widen("%m%d").is_numeric(),
            "a leading zero of the date would be lost"
        );
    }

    #[test]
    fn time_zones_move_midnight() {
        use chrono::TimeZone as _;
        let at = Utc.with_ymd_and_hms(2025, 7, 2, 17, 30, 0).unwrap();
        let utc = spec("", "%Y%m%d", 6);
        let east = Spec::builder("k")
            .time_zone(TimeZone::parse("+08:00").unwrap())
            .build()
            .unwrap();
        assert_eq!(utc.period_at(at), "20250702");
        assert_eq!(east.period_at(at), "20250703");
    }
}
