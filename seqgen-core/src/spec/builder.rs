//! Building a spec: every rule a spec must keep, checked once, each broken one reported with
//! the setting it names.

use super::rules::{check_digits_only, check_policy, printable};
use super::{CacheKey, Memo, Mode, Spec, MAX_KEY_LEN, MAX_PAD};
use crate::check::Check;
use crate::date_pattern::{check_date_pattern, DatePatternError};
use crate::error::{Setting, SpecError};
use crate::policy::{self, Overflow, Series};
use crate::template::{check_template, default_template, parse_template};
use crate::zone::TimeZone;

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
            check: None,
            numeric: false,
            scoped: false,
            obfuscate: None,
            start: 1,
            step: 1,
            fiscal: None,
            reset: None,
            max_days_ahead: super::DEFAULT_MAX_DAYS_AHEAD,
        }
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
    check: Option<Check>,
    numeric: bool,
    scoped: bool,
    /// Where the key of obfuscated numbers comes from (`obfuscated.rs`).
    pub(super) obfuscate: Option<super::obfuscated::KeySource>,
    /// The first number of every period (`start.rs`).
    pub(super) start: u64,
    /// The step between numbers (`step.rs`).
    pub(super) step: u64,
    /// The fiscal year the periods follow (`fiscal.rs`).
    pub(super) fiscal: Option<super::FiscalYear>,
    /// When the counter starts again (`reset.rs`).
    pub(super) reset: Option<super::Reset>,
    /// How far ahead of the clock a document's date may be (`dated.rs`).
    pub(super) max_days_ahead: u32,
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

    /// Gapless mode that fails with [`Error::Busy`](https://docs.rs/diesel-seqgen/latest/diesel_seqgen/enum.Error.html#variant.Busy) instead of waiting
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
    /// and so on; after the last, [`Error::SeriesExhausted`](https://docs.rs/diesel-seqgen/latest/diesel_seqgen/enum.Error.html#variant.SeriesExhausted).
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

    /// A template with placeholders `{prefix}`, `{date}`, `{series}`, `{seq}`, `{check}`,
    /// `{scope}` (a [scoped](SpecBuilder::scoped) spec's scope: [`Spec::format_in_scope`]) and
    /// literal text (`{{` and `}}` for braces), e.g. `"INV-{date}-{seq}"`. The default is
    /// `{prefix}{date}{seq}` (`{prefix}{date}{series}{seq}` with series).
    pub fn format(mut self, template: impl Into<String>) -> Self {
        self.format = Some(template.into());
        self
    }

    /// Check character(s) computed over the digits of the rest of the ID, at the end (or where
    /// a template puts `{check}`): [`Spec::parse`] and [`Spec::verify`] then catch typing
    /// errors. Every part of the ID that changes must be digits: no `letters` overflow, digit
    /// series codes, a date part of numeric fields. Needs the `check-characters` feature
    /// ([`SpecError::FeatureOff`] without it).
    ///
    /// ```
    /// # #[cfg(feature = "check-characters")] {
    /// use diesel_seqgen_core::{Check, Spec};
    ///
    /// let orders = Spec::builder("orders").prefix("ORD").date("").pad(4).check(Check::Damm).build()?;
    /// assert_eq!(orders.format("", 572), "ORD05724");
    /// assert!(orders.verify("ORD05724"));
    /// assert!(!orders.verify("ORD05274"), "two digits swapped");
    /// # }
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn check(mut self, check: Check) -> Self {
        self.check = Some(check);
        self
    }

    /// Counts per scope: each scope value (a company, an order, a tenant...) gets its own
    /// counter, starting at 1 in every period, as invoice numbers per company do. IDs are then
    /// taken with a scope (`generator.next_id(conn, invoices.scope("acme"))`); the scope is not printed
    /// (unless a [template](SpecBuilder::format) says `{scope}`), so IDs repeat across scopes
    /// and are unique together with it. Recorded in the
    /// [shape](Spec::shape): a key cannot switch between one counter and counters per scope.
    ///
    /// ```
    /// let invoices = diesel_seqgen_core::Spec::builder("invoices").prefix("INV").date("%Y").scoped().build()?;
    /// assert!(invoices.is_scoped());
    /// assert_eq!(invoices.shape(), "INV{date:%Y}{seq:6}{scoped}");
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn scoped(mut self) -> Self {
        self.scoped = true;
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
            DatePatternError::Unreadable(spec) => SpecError::UnreadableDate(spec),
        });
        let series = self.series.map(|(codes, max)| Series { codes, max });
        let custom_template = self.format.is_some();
        let template = match &self.format {
            Some(text) => {
                parse_template(text).map_err(|e| SpecError::TemplateMalformed(e.to_string()))
            }
            None => Ok(default_template(series.is_some(), self.check.is_some())),
        };
        if let Ok(template) = &template {
            check(
                check_template(
                    template,
                    !self.prefix.is_empty(),
                    !self.date.is_empty(),
                    series.is_some(),
                    self.check.is_some(),
                    self.scoped,
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
        if self.check.is_some() && !cfg!(feature = "check-characters") {
            errors.push(SpecError::FeatureOff {
                setting: Setting::Check,
                feature: "check-characters",
            });
        }
        if self.check.is_some() {
            errors.extend(check_digits_only(
                self.overflow,
                series.as_ref(),
                date_shape,
            ));
        }
        errors.extend(super::printed_scope::check_printed_scope(
            &template,
            self.overflow,
            date_shape,
            self.check.is_some(),
        ));
        // The largest number the pad and policy print; the capacity counts the IDs up to it.
        let largest = pad_ok.then(|| policy::capacity(self.pad, self.overflow, series.as_ref()));
        errors.extend(super::start::check_start(self.start, largest));
        errors.extend(super::step::check_step(
            self.step,
            self.overflow,
            series.as_ref(),
            self.obfuscate.is_some(),
        ));
        if self.fiscal.is_some() && self.reset.is_none() {
            errors.extend(super::fiscal::check_fiscal_pattern(&self.date));
        }
        errors.extend(super::reset::check_reset(
            self.reset,
            &self.date,
            self.fiscal,
        ));
        let obfuscation = self.obfuscate.as_ref().map(|source| source.resolve());
        errors.extend(obfuscation.clone().and_then(Result::err));
        if !errors.is_empty() {
            return Err(errors);
        }
        let stepping = super::step::Stepping::new(self.step, self.start);
        let capacity = stepping.counters_up_to(largest.expect("a valid pad: checked above"));
        let mut spec = Spec {
            cache_key: CacheKey::default(),
            memo: Memo::default(),
            key: self.key,
            prefix: self.prefix,
            date: self.date,
            tz: self.tz,
            pad: self.pad,
            batch: self.batch,
            mode: self.mode,
            overflow: self.overflow,
            series,
            check: self.check,
            template,
            custom_template,
            date_shape,
            shape: String::new(),
            numeric: false,
            scoped: self.scoped,
            obfuscation: obfuscation.and_then(Result::ok).map(Box::new),
            capacity,
            start: self.start,
            stepping,
            fiscal: self.fiscal,
            reset: self.reset,
            max_days_ahead: self.max_days_ahead,
        };
        spec.numeric = spec.why_not_numeric().is_none();
        if self.numeric {
            if let Some(reason) = spec.why_not_numeric() {
                return Err(vec![reason]);
            }
        }
        spec.shape = spec.compute_shape();
        spec.cache_key = CacheKey::new(&spec);
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
