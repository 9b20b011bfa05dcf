//! What an ID looks like: key, template (prefix, date part, series, counter), pad width,
//! overflow policy, time zone, batch size and mode.
//!
//! By default an ID is `prefix + period + counter`, where the period is the clock's time
//! formatted with the date pattern (empty without a date part) and the counter is zero-padded
//! to `pad` digits. The counter starts at 1 in every period.

use chrono::{DateTime, Utc};

use crate::check::Check;
use crate::date_pattern::DateShape;
use crate::policy::{self, Overflow, Series};
use crate::template::Part;
use crate::zone::TimeZone;

mod builder;
mod dated;
mod ends;
mod fiscal;
mod memo;
mod numeric;
mod obfuscated;
mod period;
mod printed_scope;
mod reset;
mod rules;
mod scoped;
mod shape;
mod start;
mod step;
#[cfg(test)]
mod tests;

pub use builder::SpecBuilder;
pub use dated::{DocumentDate, DEFAULT_MAX_DAYS_AHEAD};
pub use fiscal::FiscalYear;
pub use memo::Memo;
pub use period::{CacheKey, Period, PrehashedHasher};
pub use reset::Reset;
pub use scoped::Scoped;

pub use crate::widths::{MAX_KEY_LEN, MAX_PAD};

/// An ID spec: which `db_key` counter to draw from and how to format what it gives.
///
/// Built with [`Spec::builder`], validated once; cheap to share by reference.
///
/// ```
/// use chrono::{TimeZone, Utc};
///
/// let spec = diesel_seqgen_core::Spec::builder("users").prefix("U").date("%Y%m%d").pad(6).build()?;
/// let period = spec.period_at(Utc.with_ymd_and_hms(2025, 7, 2, 9, 0, 0).unwrap());
/// assert_eq!(spec.format(&period, 1), "U20250702000001");
///
/// // A template with a series: series `aa` holds 1..=999, then `bb` starts at 1.
/// let tickets = diesel_seqgen_core::Spec::builder("tickets")
///     .format("T{date}-{series}{seq}")
///     .date("%y")
///     .pad(3)
///     .series(["aa", "bb"], 999)
///     .build()?;
/// assert_eq!(tickets.format("25", 999), "T25-aa999");
/// assert_eq!(tickets.format("25", 1000), "T25-bb001");
/// # Ok::<(), diesel_seqgen_core::SpecError>(())
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
    check: Option<Check>,
    template: Vec<Part>,
    custom_template: bool,
    date_shape: DateShape,
    /// The printed form of the IDs, recorded on the key's row: see [`Spec::shape`].
    shape: String,
    /// Computed once when built: both are read for every ID.
    numeric: bool,
    capacity: u64,
    /// Whether each scope value has its own counter ([`SpecBuilder::scoped`]).
    scoped: bool,
    /// The key of obfuscated numbers ([`SpecBuilder::obfuscate`]); boxed, so that the fields
    /// every cached ID reads stay together.
    obfuscation: Option<Box<crate::obfuscate::Obfuscation>>,
    /// The first number of every period ([`SpecBuilder::start`]).
    start: u64,
    /// The numbers printed: every step-th ([`SpecBuilder::step`]).
    stepping: step::Stepping,
    /// The fiscal year the periods follow ([`SpecBuilder::fiscal_year`]).
    fiscal: Option<FiscalYear>,
    /// When the counter starts again, if not with the printed date ([`SpecBuilder::reset`]).
    reset: Option<Reset>,
    /// How far ahead of the clock a document's date may be ([`SpecBuilder::max_days_ahead`]).
    max_days_ahead: u32,
    /// Names this spec's block in a generator.
    cache_key: CacheKey,
    /// The state of the first generator that served this spec.
    memo: Memo,
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
        /// Fail with [`Error::Busy`](https://docs.rs/diesel-seqgen/latest/diesel_seqgen/enum.Error.html#variant.Busy) instead of waiting when another
        /// transaction holds the counter.
        nowait: bool,
    },
}

impl Spec {
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

    /// The check character scheme, if IDs carry one.
    pub fn check(&self) -> Option<Check> {
        self.check
    }

    /// Whether each scope value has its own counter ([`SpecBuilder::scoped`]).
    pub fn is_scoped(&self) -> bool {
        self.scoped
    }

    /// Which block of a generator serves this spec: specs with the same key, date pattern,
    /// time zone and shape draw from the same `db_key` rows and print them alike, and so share
    /// a block.
    #[doc(hidden)]
    pub fn cache_key(&self) -> &CacheKey {
        &self.cache_key
    }

    /// Where the first generator that serves this spec keeps its state for it.
    #[doc(hidden)]
    #[inline]
    pub fn memo(&self) -> &Memo {
        &self.memo
    }

    pub(crate) fn template(&self) -> &[Part] {
        &self.template
    }

    pub(crate) fn date_shape(&self) -> DateShape {
        self.date_shape
    }

    /// The printed form of this spec's IDs, e.g. `U{date:%Y%m%d}{seq:6}`: everything that
    /// decides how a counter is printed (prefix, date pattern, pad, overflow policy, series,
    /// template), which counter a printed date draws from (scopes, fiscal year, reset), and
    /// nothing else (batch, mode, time zone). seqgen records it on the
    /// key's row at first use and refuses a spec of another shape on that key
    /// ([`Error::ShapeChanged`](https://docs.rs/diesel-seqgen/latest/diesel_seqgen/enum.Error.html#variant.ShapeChanged)): two shapes could print the same ID
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
                    let obfuscated = self.obfuscated_shape();
                    let step = self.stepping.shape();
                    shape.push_str(&format!("{{seq:{}{policy}{obfuscated}{step}}}", self.pad));
                }
                Part::Check => {
                    if let Some(check) = self.check {
                        shape.push_str(&format!("{{check:{}}}", check.name()));
                    }
                }
                Part::Scope => shape.push_str("{scope}"),
            }
        }
        // Not printed, but two counters per scope print what one counter would: the same ID
        // for scope 1 as for the key without scopes.
        if self.scoped {
            shape.push_str("{scoped}");
        }
        // Not printed either, but the same pattern names other periods in a fiscal year.
        if let Some(year) = self.fiscal {
            shape.push_str(&format!("{{fiscal:{year}}}"));
        }
        // Nor this, but one printed date draws from another counter with it.
        if let Some(reset) = self.reset {
            shape.push_str(&format!("{{reset:{reset}}}"));
        }
        shape
    }

    /// How many counters a period can hand out before the spec overflows (`10^pad - 1` with
    /// the default policy, the numbers on the [step](SpecBuilder::step) up to it with one;
    /// unbounded for `cycle`).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Whether an ID is the prefix, the period and the counter zero-padded to `pad` (in full
    /// past it, with `widen`), and nothing else: a form SQL can print as well (seqgen's
    /// one-statement gapless insert on PostgreSQL). No template, series, check digit, letters,
    /// cycle, scope, step or reset.
    #[doc(hidden)]
    pub fn is_plain(&self) -> bool {
        !self.custom_template
            && self.stepping.step == 1
            && self.series.is_none()
            && self.check.is_none()
            && !self.scoped
            && matches!(self.overflow, Overflow::Error | Overflow::Widen)
            && self.obfuscation.is_none()
            && self.reset.is_none()
    }

    /// The period at `now`: the date part as it appears in IDs (empty without a date part).
    pub fn period_at(&self, now: DateTime<Utc>) -> String {
        match self.fiscal {
            _ if self.date.is_empty() => String::new(),
            // With a fiscal-year reset, the date prints the calendar's date.
            Some(year) if self.reset.is_none() => self.fiscal_period_at(year, now),
            _ => self.tz.format(now, &self.date),
        }
    }

    /// Formats counter `counter` (1..=[`capacity`](Spec::capacity)) of `period`. For a spec
    /// whose template prints its scope (`{scope}`), [`Spec::format_in_scope`].
    pub fn format(&self, period: &str, counter: u64) -> String {
        self.format_in_scope("", period, counter)
    }

    /// Formats counter `counter` of `period` in `scope`, which a template's `{scope}` prints
    /// (and nothing else does).
    ///
    /// ```
    /// let invoices = diesel_seqgen_core::Spec::builder("invoices")
    ///     .format("{scope}-{date}-{seq}").date("%Y").pad(4).scoped().build()?;
    /// assert_eq!(invoices.format_in_scope("ACME", "2026", 1), "ACME-2026-0001");
    /// let parts = invoices.parse("GLOBEX-2026-0001")?;
    /// assert_eq!(parts.scope.as_deref(), Some("GLOBEX"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn format_in_scope(&self, scope: &str, period: &str, counter: u64) -> String {
        // Obfuscation and a step are never together (`step.rs`).
        let counter = self.stepped(self.obfuscated(period, counter));
        let shown = policy::show(counter, self.overflow, self.series.as_ref());
        let capacity = self.prefix.len() + scope.len() + period.len() + 24;
        let mut id = String::with_capacity(capacity);
        // Where `{check}` goes: it is computed once the rest is written.
        let mut check_at = None;
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
                Part::Check => check_at = Some(id.len()),
                Part::Scope => id.push_str(scope),
            }
        }
        if let (Some(at), Some(check)) = (check_at, self.check) {
            let digits = check.of(&id);
            id.insert_str(at, &digits);
        }
        id
    }
}
