//! When the counter starts again, apart from the date an ID prints: `SO20261127-00042`
//! numbering per year (`date = "%Y%m%d", reset = "year"`), or `DOC-2026-11-27-000123` never
//! starting again (`reset = "never"`).
//!
//! The counter row an ID draws from is read off the date the ID prints: the printed date is
//! read back, and the reset period is taken of the day it names. Two IDs that print the same
//! date therefore always draw from the same counter, and so never repeat a number, whatever the
//! clock or the document's date did. A reset the printed date cannot tell (`reset = "day"`
//! under `date = "%Y%m"`) is refused when the spec is built.

use chrono::format::{parse, Parsed, StrftimeItems};
use chrono::{Datelike, NaiveDate, Weekday};

use super::{FiscalYear, Spec, SpecBuilder};
use crate::error::SpecError;

/// When a counter starts again at its first number ([`SpecBuilder::reset`]). Without one, it
/// starts again whenever the printed date changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Reset {
    /// Every day.
    Day,
    /// Every ISO week (Monday to Sunday; the week of 31 December 2026 is `2026-W53`).
    Week,
    /// Every month.
    Month,
    /// Every calendar quarter.
    Quarter,
    /// Every half-year (January and July).
    HalfYear,
    /// Every calendar year.
    Year,
    /// Every fiscal year ([`SpecBuilder::fiscal_year`] says when it starts).
    FiscalYear,
    /// Never: one counter for ever, whatever the date prints (CosId's date prefix).
    Never,
}

impl Reset {
    /// Every reset, in the order of [`Reset::name`]s a message lists.
    pub const ALL: [Reset; 8] = [
        Reset::Day,
        Reset::Week,
        Reset::Month,
        Reset::Quarter,
        Reset::HalfYear,
        Reset::Year,
        Reset::FiscalYear,
        Reset::Never,
    ];

    /// As the derive's `reset = "…"` and the recorded shape spell it.
    pub fn name(self) -> &'static str {
        match self {
            Reset::Day => "day",
            Reset::Week => "week",
            Reset::Month => "month",
            Reset::Quarter => "quarter",
            Reset::HalfYear => "half-year",
            Reset::Year => "year",
            Reset::FiscalYear => "fiscal-year",
            Reset::Never => "never",
        }
    }

    /// Reads a [`Reset::name`].
    pub fn parse(text: &str) -> Result<Reset, SpecError> {
        Reset::ALL
            .into_iter()
            .find(|reset| reset.name() == text)
            .ok_or_else(|| {
                let names = Reset::ALL.map(|r| format!("\"{r}\"")).join(", ");
                SpecError::Reset(format!("`reset` must be one of {names}; got {text:?}"))
            })
    }

    /// What a printed date must tell for this reset.
    fn needs(self, fiscal: Option<FiscalYear>) -> &'static [Grain] {
        use Grain::*;
        match self {
            Reset::Day => &[Day],
            Reset::Week => &[Day, Week],
            Reset::Month => &[Day, Month],
            Reset::Quarter | Reset::HalfYear => &[Day, Month, Quarter],
            Reset::Year => &[Day, Month, Quarter, Year],
            // A year starting on the 1st of a month is told by the month.
            Reset::FiscalYear if fiscal.is_some_and(|f| f.day() == 1) => &[Day, Month],
            Reset::FiscalYear => &[Day],
            Reset::Never => &[],
        }
    }

    /// The counter row of the period `day` falls in: text that sorts as the periods do.
    fn row(self, day: NaiveDate, fiscal: Option<FiscalYear>) -> String {
        let quarter = day.month0() / 3 + 1;
        match self {
            Reset::Day => day.format("%Y-%m-%d").to_string(),
            Reset::Week => day.format("%G-W%V").to_string(),
            Reset::Month => day.format("%Y-%m").to_string(),
            Reset::Quarter => format!("{}-Q{quarter}", day.year()),
            Reset::HalfYear => format!("{}-H{}", day.year(), quarter.div_ceil(2)),
            Reset::Year => day.year().to_string(),
            Reset::FiscalYear => match fiscal {
                Some(year) => format!("FY{}", year.name_year(day)),
                None => day.year().to_string(), // refused when built
            },
            Reset::Never => String::new(),
        }
    }
}

impl std::fmt::Display for Reset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How much of a day a printed date tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Grain {
    Day,
    /// The ISO week (`%G`/`%g` with `%V`): not the month nor, around New Year, the calendar
    /// year.
    Week,
    Month,
    Quarter,
    Year,
}

/// A day the printed date `text` (of `pattern`) names, and how much of it the text tells: the
/// day itself when the text names one (every field printed agreeing), else the first day of
/// the finest period its fields tell, read from those fields alone.
fn read(pattern: &str, text: &str) -> Option<(NaiveDate, Grain)> {
    let mut parsed = Parsed::new();
    parse(&mut parsed, text, StrftimeItems::new(pattern)).ok()?;
    let year = full_year(
        parsed.year(),
        parsed.year_div_100(),
        parsed.year_mod_100(),
        parsed.isoyear(),
    );
    let isoyear = full_year(
        parsed.isoyear(),
        parsed.isoyear_div_100(),
        parsed.isoyear_mod_100(),
        year,
    );
    if let Some(day) = whole_day(&parsed, year, isoyear) {
        return Some((day, Grain::Day));
    }
    let week = isoyear
        .zip(parsed.isoweek())
        .and_then(|(y, w)| NaiveDate::from_isoywd_opt(y, w, Weekday::Mon));
    let first_month = |month| year.and_then(|y| NaiveDate::from_ymd_opt(y, month, 1));
    week.map(|day| (day, Grain::Week))
        .or_else(|| Some((first_month(parsed.month()?)?, Grain::Month)))
        .or_else(|| {
            let month = parsed.quarter()?.checked_mul(3)?.checked_sub(2)?;
            Some((first_month(month)?, Grain::Quarter))
        })
        .or_else(|| Some((first_month(1)?, Grain::Year)))
}

/// The day `parsed` names, with a two-digit year (or ISO year) in the century of the full one
/// printed beside it, or else in the first of 1970–2069, 2000s, 2100s and 1900s that agrees
/// with what else is printed (a weekday); chrono checks every field printed against it. The
/// order is fixed, so a text always reads to the same day.
fn whole_day(parsed: &Parsed, year: Option<i32>, isoyear: Option<i32>) -> Option<NaiveDate> {
    let two_digits = |full: Option<i32>, century: Option<i32>, two: Option<i32>| {
        full.is_none() && century.is_none() && two.is_some()
    };
    let year_open = two_digits(parsed.year(), parsed.year_div_100(), parsed.year_mod_100());
    let iso_open = two_digits(
        parsed.isoyear(),
        parsed.isoyear_div_100(),
        parsed.isoyear_mod_100(),
    );
    let centuries = [
        year.map(|y| y.div_euclid(100)),
        Some(20),
        Some(21),
        Some(19),
    ];
    let iso_centuries = [
        isoyear.map(|y| y.div_euclid(100)),
        Some(20),
        Some(21),
        Some(19),
    ];
    centuries
        .into_iter()
        .zip(iso_centuries)
        .find_map(|(century, iso_century)| {
            let mut parsed = parsed.clone();
            if year_open {
                parsed.set_year_div_100(i64::from(century?)).ok()?;
            }
            if iso_open {
                parsed.set_isoyear_div_100(i64::from(iso_century?)).ok()?;
            }
            parsed.to_naive_date().ok()
        })
}

/// A year from its printed fields: in full, as century and two digits, or two digits alone,
/// in the century nearest `near` (a full year printed beside it), else 1970 to 2069 as chrono
/// reads them.
fn full_year(
    full: Option<i32>,
    century: Option<i32>,
    two: Option<i32>,
    near: Option<i32>,
) -> Option<i32> {
    if full.is_some() {
        return full;
    }
    let two = two?;
    if let Some(century) = century {
        return century.checked_mul(100)?.checked_add(two);
    }
    Some(match near {
        Some(near) => {
            let century = near.div_euclid(100);
            (century - 1..=century + 1)
                .filter_map(|c| c.checked_mul(100)?.checked_add(two))
                .min_by_key(|y| y.abs_diff(near))
                .unwrap_or(near)
        }
        None if two < 70 => 2000 + two,
        None => 1900 + two,
    })
}

impl SpecBuilder {
    /// When the counter starts again (default: whenever the printed date changes). The date
    /// still prints as its pattern says: `date("%Y%m%d").reset(Reset::Year)` prints the day
    /// and numbers per year, `reset(Reset::Never)` keeps one counter for ever. The printed date
    /// must tell the reset's period apart (a day for `Day`, a year for `Year`), so that two
    /// periods never print the same IDs from two counters; without a date part, only `Never`.
    /// Recorded in the [shape](Spec::shape) (`{reset:year}`).
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use diesel_seqgen_core::{Reset, Spec};
    ///
    /// let orders = Spec::builder("orders").prefix("SO").date("%Y%m%d-").pad(5).reset(Reset::Year).build()?;
    /// let day = orders.period_at(Utc.with_ymd_and_hms(2026, 11, 27, 9, 0, 0).unwrap());
    /// assert_eq!(orders.format(&day, 42), "SO20261127-00042");
    /// assert_eq!(orders.counter_period(&day), "2026", "one counter for all of 2026");
    ///
    /// let docs = Spec::builder("docs").prefix("DOC-").date("%Y-%m-%d-").reset(Reset::Never).build()?;
    /// assert_eq!(docs.counter_period("2026-11-27-"), "");
    /// assert!(Spec::builder("x").date("%Y%m").reset(Reset::Day).build().is_err());
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn reset(mut self, reset: Reset) -> Self {
        self.reset = Some(reset);
        self
    }
}

impl Spec {
    /// When the counter starts again, if not whenever the printed date changes
    /// ([`SpecBuilder::reset`]).
    pub fn reset(&self) -> Option<Reset> {
        self.reset
    }

    /// The `db_key` period of the counter that IDs printing the date part `printed` draw
    /// from: `printed` itself without a [reset](SpecBuilder::reset), else the reset's period
    /// of the day it names (`2026` for `20261127` under `Reset::Year`, empty under
    /// `Reset::Never`).
    pub fn counter_period(&self, printed: &str) -> String {
        let Some(reset) = self.reset else {
            return printed.to_owned();
        };
        if reset == Reset::Never {
            return String::new();
        }
        match read(&self.date, printed) {
            Some((day, grain)) if reset.needs(self.fiscal).contains(&grain) => {
                reset.row(day, self.fiscal)
            }
            // Never for a date this spec printed (the build read its dates back): a counter
            // of its own, apart from every reset's rows.
            _ => format!("?{printed}"),
        }
    }

    /// A period of this spec from its printed date part, with the counter it draws from.
    pub fn period(&self, printed: String) -> super::Period {
        let counter = self.reset.map(|_| self.counter_period(&printed).into());
        super::Period::with_counter(printed, counter)
    }
}

/// Refuses a reset the date pattern cannot tell, or that does not go with `fiscal`.
pub(super) fn check_reset(
    reset: Option<Reset>,
    pattern: &str,
    fiscal: Option<FiscalYear>,
) -> Option<SpecError> {
    let reset = reset?;
    if reset == Reset::FiscalYear && fiscal.is_none() {
        return Some(SpecError::Reset(
            "`reset = \"fiscal-year\"` needs `fiscal = \"MM-DD\"`, the day the fiscal year starts"
                .to_owned(),
        ));
    }
    if fiscal.is_some() && reset != Reset::FiscalYear {
        return Some(SpecError::Reset(format!(
            "`fiscal` goes with `reset = \"fiscal-year\"` (print any date, number per fiscal year) \
             or with no reset (print the fiscal year); not with `reset = \"{reset}\"`"
        )));
    }
    if reset == Reset::Never {
        return None;
    }
    // Days a pattern reads back differently from, if any: a leap day, New Year's ISO week,
    // two-digit years past 2069, and the last years a period is taken in (`u32` seconds).
    let tells = [
        (2026, 9, 30),
        (2024, 2, 29),
        (2026, 12, 31),
        (2027, 1, 1),
        (2070, 1, 1),
        (2105, 8, 31),
        (2106, 1, 5),
    ]
    .into_iter()
    .all(|(y, m, d)| {
        use std::fmt::Write;
        let Some(moment) = NaiveDate::from_ymd_opt(y, m, d).and_then(|d| d.and_hms_opt(9, 0, 0))
        else {
            return false;
        };
        let mut printed = String::new();
        // A pattern chrono cannot format is refused as a date pattern already.
        write!(printed, "{}", moment.and_utc().format(pattern)).is_ok()
            && read(pattern, &printed)
                .is_some_and(|(_, grain)| reset.needs(fiscal).contains(&grain))
    });
    let what = match reset {
        Reset::FiscalYear => "fiscal year",
        other => other.name(),
    };
    (!tells).then(|| {
        SpecError::Reset(format!(
            "`reset = \"{reset}\"` starts the counter again every {what}, but the date part \
             {pattern:?} does not print which {what} it is: two of them would print the same IDs \
             from two counters. Print it (`%Y%m%d` tells every reset), or reset less often \
             (`reset = \"never\"` goes with any date)"
        ))
    })
}
