//! A spec from arbitrary input: every setting a user can type (steps, starts, printed scopes,
//! quarters, fiscal years and resets too), with values drawn both from
//! the ones seqgen documents and from arbitrary text.

use arbitrary::Arbitrary;
use diesel_seqgen_core::{Check, FiscalYear, Overflow, Reset, Spec, SpecBuilder, TimeZone};

/// Date patterns users write, and arbitrary text beside them.
const DATES: &[&str] = &[
    "", "%Y", "%y", "%y%m", "%Y%m%d", "%Y%m%d%H", "%-d", "%j", "%G-W%V", "%q-%Y", "FY%Y-Q%q",
    "%Y%m%d-", "%d.%m.%Y", "Q%q-%Y", "%Y-W%W",
];
const TEMPLATES: &[&str] = &[
    "{prefix}{date}{seq}",
    "T{date}-{series}{seq}",
    "{date}/{seq}{check}",
    "{{{prefix}}}{seq}",
    "{seq}{date}",
    "{scope}-{date}-{seq}",
    "{prefix}{scope}{seq}",
];
const KEY: &[u8; 32] = b"0123456789abcdef0123456789abcdef";

#[derive(Arbitrary, Debug)]
pub enum Text {
    Known(u8),
    Typed(String),
}

impl Text {
    fn pick(&self, known: &[&str]) -> String {
        match self {
            Text::Known(i) => known[usize::from(*i) % known.len()].to_owned(),
            Text::Typed(text) => text.clone(),
        }
    }
}

#[derive(Arbitrary, Debug)]
pub enum Policy {
    Error,
    Widen,
    Letters,
    Cycle(u64),
}

#[derive(Arbitrary, Debug)]
pub struct SpecInput {
    pub prefix: String,
    pub date: Text,
    pub time_zone: Option<String>,
    pub pad: u8,
    pub policy: Policy,
    pub series: Option<(Vec<String>, u64)>,
    pub check: Option<u8>,
    pub template: Option<Text>,
    pub scoped: bool,
    pub obfuscate: bool,
    pub gapless: bool,
    /// `step` and `start`: small steps (what users write) and any.
    pub step: Option<Step>,
    pub start: Option<u64>,
    /// A fiscal year's first month and day, and whether its end names it.
    pub fiscal: Option<(u8, u8, bool)>,
    /// A reset apart from the printed date, one of [`Reset::ALL`].
    pub reset: Option<u8>,
}

#[derive(Arbitrary, Debug)]
pub enum Step {
    Small(u8),
    Any(u64),
}

impl SpecInput {
    /// The builder these settings make (the key name is fixed: keys are checked apart).
    pub fn builder(&self) -> SpecBuilder {
        let mut builder = Spec::builder("fuzz")
            .prefix(self.prefix.clone())
            .date(self.date.pick(DATES))
            .pad(u32::from(self.pad % 24))
            .overflow(match self.policy {
                Policy::Error => Overflow::Error,
                Policy::Widen => Overflow::Widen,
                Policy::Letters => Overflow::Letters,
                Policy::Cycle(max) => Overflow::Cycle { max },
            });
        if let Some(zone) = &self.time_zone {
            if let Some(zone) = TimeZone::parse(zone) {
                builder = builder.time_zone(zone);
            }
        }
        if let Some((codes, max)) = &self.series {
            builder = builder.series(codes.iter().take(8).cloned(), *max);
        }
        if let Some(check) = self.check {
            let name = ["luhn", "damm", "iso7064-mod97-10", "mod97"][usize::from(check) % 4];
            if let Some(check) = Check::parse(name) {
                builder = builder.check(check);
            }
        }
        if let Some(template) = &self.template {
            builder = builder.format(template.pick(TEMPLATES));
        }
        if self.scoped {
            builder = builder.scoped();
        }
        if self.obfuscate {
            builder = builder.obfuscate(KEY);
        }
        if self.gapless {
            builder = builder.gapless();
        }
        match self.step {
            Some(Step::Small(step)) => builder = builder.step(u64::from(step)),
            Some(Step::Any(step)) => builder = builder.step(step),
            None => {}
        }
        if let Some(start) = self.start {
            builder = builder.start(start);
        }
        if let Some((month, day, end)) = self.fiscal {
            if let Ok(year) = FiscalYear::starting(u32::from(month % 13), u32::from(day % 30)) {
                builder = builder.fiscal_year(if end { year.named_by_end() } else { year });
            }
        }
        if let Some(reset) = self.reset {
            builder = builder.reset(Reset::ALL[usize::from(reset) % Reset::ALL.len()]);
        }
        builder
    }
}
