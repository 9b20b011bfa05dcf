//! Why a spec is invalid: one variant per broken rule, each naming its [`Setting`].

use std::fmt;

/// The spec setting (builder method, or `#[distributed_id]` attribute key) an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Setting {
    /// `key`
    Key,
    /// `prefix`
    Prefix,
    /// `date`
    Date,
    /// `pad`
    Pad,
    /// `batch`
    Batch,
    /// `overflow`
    Overflow,
    /// the `max` of `overflow = "cycle"` or of `series`
    Max,
    /// `series`
    Series,
    /// `format` (the template)
    Format,
    /// `check`
    Check,
    /// `obfuscate`
    Obfuscate,
    /// `start`
    Start,
    /// `fiscal`
    Fiscal,
    /// `step`
    Step,
    /// `reset`
    Reset,
}

impl Setting {
    /// The setting's name, as the builder method and the attribute key spell it.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Key => "key",
            Setting::Prefix => "prefix",
            Setting::Date => "date",
            Setting::Pad => "pad",
            Setting::Batch => "batch",
            Setting::Overflow => "overflow",
            Setting::Max => "max",
            Setting::Series => "series",
            Setting::Format => "format",
            Setting::Check => "check",
            Setting::Obfuscate => "obfuscate",
            Setting::Start => "start",
            Setting::Fiscal => "fiscal",
            Setting::Step => "step",
            Setting::Reset => "reset",
        }
    }
}

/// Why an ID spec is invalid. Each variant breaks one rule and names the [`Setting`] it
/// concerns ([`SpecError::setting`]); the messages say what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SpecError {
    /// The key name is empty.
    EmptyKey,
    /// The key name is longer than the `db_key.key_name` column (191 characters).
    KeyTooLong(usize),
    /// The key name starts or ends with whitespace, or contains a control character: some
    /// collations compare `"pk "` equal to `"pk"`, so such a key would not be exact.
    KeyNotExact(String),
    /// `pad` is outside 1..=18.
    PadOutOfRange(u32),
    /// `batch` is 0.
    BatchZero,
    /// `start` is 0, or past the numbers the spec can print in a period.
    StartOutOfRange {
        /// The start asked for.
        start: u64,
        /// The largest number a period holds.
        capacity: u64,
    },
    /// The prefix contains a control or whitespace character.
    PrefixNotPrintable(String),
    /// The date pattern contains a specifier chrono does not know.
    UnknownDateSpecifier {
        /// The specifier.
        specifier: String,
        /// The whole pattern.
        pattern: String,
    },
    /// The date pattern changes faster than once a second (`%f`, `%.3f`, ...).
    SubSecondDate(String),
    /// The date part can format longer than `db_key.period` holds (64 bytes).
    DateTooLong(usize),
    /// The date pattern (or the specifier of it named) prints dates that cannot be read back
    /// from an ID (`%Z` followed by more text, `%l3`), or has a brace, which the shape recorded
    /// on the key could not hold: parsing, `seqgen check`, `gaps` and `adopt` would refuse the
    /// IDs it prints.
    UnreadableDate(String),
    /// The template does not parse.
    TemplateMalformed(String),
    /// The template leaves out a part the spec sets, or shows one it does not.
    TemplateIncomplete(String),
    /// `overflow = cycle` with a `max` of 0 or wider than `pad` digits.
    CycleMaxOutOfRange {
        /// The `max` given.
        max: u64,
        /// The pad width.
        pad: u32,
    },
    /// `widen` after a date part of varying width.
    WidenNeedsFixedDate,
    /// Series together with an overflow policy other than `error`.
    SeriesWithOverflow,
    /// A series `max` of 0 or wider than `pad` digits.
    SeriesMaxOutOfRange {
        /// The `max` given.
        max: u64,
        /// The pad width.
        pad: u32,
    },
    /// No series codes.
    SeriesEmpty,
    /// A series code that is empty or has whitespace or control characters.
    SeriesCodeNotPrintable(String),
    /// Series codes of different lengths.
    SeriesCodesUneven {
        /// The first code, whose length the others must have.
        first: String,
        /// The code of another length.
        code: String,
    },
    /// A series code given twice.
    SeriesCodeTwice(String),
    /// An `i64` form was required ([`SpecBuilder::numeric`](crate::SpecBuilder::numeric)),
    /// but the spec has a prefix.
    NumericWithPrefix,
    /// An `i64` form was required, but the overflow policy is `letters`.
    NumericWithLetters,
    /// An `i64` form was required, but the spec has series.
    NumericWithSeries,
    /// An `i64` form was required, but the spec has a template.
    NumericWithTemplate,
    /// An `i64` form was required, but the date part is not fixed-width digits.
    NumericDateNotDigits,
    /// An `i64` form with `widen` was required, but the date part does not start with `%Y`.
    NumericWidenDate,
    /// An `i64` form was required, but date digits + pad exceed 18.
    NumericTooWide {
        /// Digits of the date part.
        date_digits: u32,
        /// The pad width.
        pad: u32,
        /// Digits of the check, if any.
        check_digits: u32,
    },
    /// A check scheme, but a part of the ID that changes can hold other characters than
    /// digits, which the check would not cover: the reason names it.
    CheckNeedsDigits(&'static str),
    /// IDs are to be obfuscated, but the key is missing, too short, or (a shape read back)
    /// not there at all: the reason says which.
    ObfuscationKey(String),
    /// A template prints the scope (`{scope}`) with something it cannot be told apart from:
    /// the reason names it.
    ScopePrinted(&'static str),
    /// `step` is 0.
    StepZero,
    /// A step with a setting that has its own next number: the reason names it.
    StepWith(&'static str),
    /// A fiscal year that is not `MM-DD` (or `MM-DD,end`) with a day up to 28.
    FiscalYear(String),
    /// A fiscal year with a date pattern that is empty or prints more than years.
    FiscalPattern(String),
    /// A `reset` that is unknown, that the date part cannot tell, or that does not go with
    /// `fiscal`: the message says which and what to do.
    Reset(String),
    /// A setting that needs a feature this build leaves off (`check` needs
    /// `check-characters`, `obfuscate` needs `obfuscate`): the message says how to turn it on.
    FeatureOff {
        /// The setting asked for.
        setting: Setting,
        /// The feature of `diesel-seqgen` (and of this crate) it needs.
        feature: &'static str,
    },
}

impl SpecError {
    /// The setting this error is about.
    pub fn setting(&self) -> Setting {
        use SpecError::*;
        match self {
            EmptyKey | KeyTooLong(_) | KeyNotExact(_) => Setting::Key,
            PadOutOfRange(_) | NumericTooWide { .. } => Setting::Pad,
            BatchZero => Setting::Batch,
            StartOutOfRange { .. } => Setting::Start,
            StepZero | StepWith(_) => Setting::Step,
            ScopePrinted(_) => Setting::Format,
            ObfuscationKey(_) => Setting::Obfuscate,
            FiscalYear(_) | FiscalPattern(_) => Setting::Fiscal,
            Reset(_) => Setting::Reset,
            PrefixNotPrintable(_) | NumericWithPrefix => Setting::Prefix,
            UnknownDateSpecifier { .. }
            | SubSecondDate(_)
            | DateTooLong(_)
            | UnreadableDate(_)
            | NumericDateNotDigits => Setting::Date,
            TemplateMalformed(_) | TemplateIncomplete(_) | NumericWithTemplate => Setting::Format,
            CycleMaxOutOfRange { .. } | SeriesMaxOutOfRange { .. } => Setting::Max,
            WidenNeedsFixedDate | SeriesWithOverflow | NumericWithLetters | NumericWidenDate => {
                Setting::Overflow
            }
            SeriesEmpty
            | SeriesCodeNotPrintable(_)
            | SeriesCodesUneven { .. }
            | SeriesCodeTwice(_)
            | NumericWithSeries => Setting::Series,
            CheckNeedsDigits(_) => Setting::Check,
            FeatureOff { setting, .. } => *setting,
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use SpecError::*;
        let widest = |pad: u32| 10u64.saturating_pow(pad.min(19)) - 1;
        match self {
            EmptyKey => f.write_str("`key` must not be empty"),
            KeyTooLong(len) => write!(
                f,
                "`key` must be 1..={} characters, got {len}",
                crate::widths::MAX_KEY_LEN
            ),
            KeyNotExact(key) => write!(
                f,
                "`key` {key:?} must not start or end with whitespace or contain control \
                 characters: some databases compare such keys equal to others"
            ),
            PadOutOfRange(pad) => write!(f, "`pad` must be 1..=18 digits, got {pad}"),
            BatchZero => f.write_str("`batch` must be at least 1"),
            StepZero => f.write_str("`step` must be at least 1"),
            ScopePrinted(reason) => write!(f, "`{{scope}}` in the template: {reason}"),
            StepWith(with) => write!(f, "`step` cannot go with {with}: drop one of them"),
            StartOutOfRange { start, capacity } => write!(
                f,
                "`start` is {start}: it must be at least 1 and at most {capacity}, the numbers \
                 a period of this spec can print"
            ),
            PrefixNotPrintable(prefix) => write!(
                f,
                "`prefix` {prefix:?} must not contain whitespace or control characters"
            ),
            UnknownDateSpecifier { specifier, pattern } => write!(
                f,
                "unknown date specifier `{specifier}` in `{pattern}`; see \
                 chrono::format::strftime for the valid ones"
            ),
            SubSecondDate(specifier) => write!(
                f,
                "date specifier `{specifier}` changes faster than once a second; a period must \
                 last at least a second"
            ),
            DateTooLong(len) => write!(
                f,
                "the date part can be {len} bytes long; db_key.period holds 64"
            ),
            UnreadableDate(specifier) => write!(
                f,
                "the date pattern `{specifier}` cannot be read back from an ID or from the shape \
                 recorded on its key (parsing, `seqgen check`, `gaps` and `adopt` need both): \
                 use numeric specifiers such as %Y, %m, %d, and write braces in the template"
            ),
            TemplateMalformed(reason) | TemplateIncomplete(reason) => {
                write!(f, "`format`: {reason}")
            }
            CycleMaxOutOfRange { max, pad } => write!(
                f,
                "`max` must be 1..={} for pad {pad}, got {max}",
                widest(*pad)
            ),
            WidenNeedsFixedDate => f.write_str(
                "`widen` needs a date part of fixed width (digits without `-`/`_` modifiers), or \
                 none: a wider counter after a shorter date could read like another ID",
            ),
            SeriesWithOverflow => f.write_str("series roll over on their own: drop `overflow`"),
            SeriesMaxOutOfRange { max, pad } => write!(
                f,
                "`max` must be 1..={} for pad {pad}, got {max}",
                widest(*pad)
            ),
            SeriesEmpty => f.write_str("the series list is empty"),
            SeriesCodeNotPrintable(code) => {
                write!(
                    f,
                    "series code {code:?} must be printable, not empty, and without `{{`, `}}`, \
                     `,` or `/` (the shape recorded on the key lists the codes between them)"
                )
            }
            SeriesCodesUneven { first, .. } => {
                write!(f, "series codes must have the same length as {first:?}")
            }
            SeriesCodeTwice(code) => write!(f, "series code {code:?} appears twice"),
            NumericWithPrefix => f.write_str(
                "an `i64` ID cannot have a prefix: use a `String` field, or drop `prefix`",
            ),
            NumericWithLetters => {
                f.write_str("an `i64` ID cannot have letters: use a `String` field")
            }
            NumericWithSeries => {
                f.write_str("an `i64` ID cannot have series: use a `String` field")
            }
            NumericWithTemplate => {
                f.write_str("an `i64` ID cannot have a template: use a `String` field")
            }
            NumericDateNotDigits => f.write_str(
                "an `i64` ID needs a date part of fixed-width digits only, like `%Y%m%d` or \
                 `%y%m`, or none (`date = \"\"`)",
            ),
            NumericWidenDate => f.write_str(
                "`widen` on an `i64` ID needs a date part starting with `%Y` (or none): a \
                 leading 0 of the date would be lost in the number and two IDs could meet",
            ),
            NumericTooWide {
                date_digits,
                pad,
                check_digits: 0,
            } => write!(
                f,
                "an `i64` ID of {date_digits} date digits + pad {pad} = {} digits does not fit: \
                 at most 18",
                date_digits + pad
            ),
            NumericTooWide {
                date_digits,
                pad,
                check_digits,
            } => write!(
                f,
                "an `i64` ID of {date_digits} date digits + pad {pad} + {check_digits} check \
                 digit(s) = {} digits does not fit: at most 18",
                date_digits + pad + check_digits
            ),
            ObfuscationKey(reason) => write!(f, "`obfuscate`: {reason}"),
            FiscalYear(text) => write!(
                f,
                "`fiscal` must be the month and day the fiscal year starts, `MM-DD` with a day \
                 up to 28 (every year has it), or `MM-DD,end` for a year named by the calendar \
                 year it ends in; got {text:?}"
            ),
            FiscalPattern(pattern) => write!(
                f,
                "with `fiscal`, the date pattern prints the fiscal year's name with year \
                 specifiers, the fiscal quarter (`%q`) and text only (`FY%Y`, `%y`, \
                 `FY%Y-Q%q`); got {pattern:?}"
            ),
            Reset(message) => f.write_str(message),
            CheckNeedsDigits(reason) => write!(
                f,
                "`check` covers digits, but {reason}: a typing error there would go unseen"
            ),
            FeatureOff { setting, feature } => write!(
                f,
                "`{}` needs the `{feature}` feature: `diesel-seqgen = {{ version = \"0.2\", \
                 features = [\"{feature}\", ...] }}`",
                setting.name()
            ),
        }
    }
}

impl std::error::Error for SpecError {}
