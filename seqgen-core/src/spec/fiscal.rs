//! Fiscal years: a period of one year that starts on a given month and day (`fiscal =
//! "04-01"`), named by the calendar year it starts in, or the one it ends in. Its date part
//! prints only years (`FY%Y`, `%y`), and fiscal quarters (`FY%Y-Q%q`): each fiscal year (or
//! quarter) is its own counter row.

use chrono::format::{Item, Numeric, StrftimeItems};
use chrono::{DateTime, Datelike, NaiveDate, Utc};

use super::{Spec, SpecBuilder};
use crate::error::SpecError;

/// When a fiscal year starts, and which of its calendar years names it.
///
/// ```
/// use chrono::NaiveDate;
/// use diesel_seqgen_core::FiscalYear;
///
/// let japan = FiscalYear::starting(4, 1)?; // April to March, named by its start
/// let day = NaiveDate::from_ymd_opt(2027, 3, 31).unwrap();
/// assert_eq!(japan.name_year(day), 2026);
/// let australia = FiscalYear::starting(7, 1)?.named_by_end(); // FY2027: July 2026 to June 2027
/// assert_eq!(australia.name_year(NaiveDate::from_ymd_opt(2026, 7, 1).unwrap()), 2027);
/// # Ok::<(), diesel_seqgen_core::SpecError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FiscalYear {
    month: u32,
    day: u32,
    named_by_end: bool,
}

impl FiscalYear {
    /// A fiscal year starting every year on `month`-`day`, named by the calendar year it
    /// starts in. `day` goes up to 28, so that every year has the date.
    pub fn starting(month: u32, day: u32) -> Result<FiscalYear, SpecError> {
        if !(1..=12).contains(&month) || !(1..=28).contains(&day) {
            return Err(SpecError::FiscalYear(format!("{month:02}-{day:02}")));
        }
        Ok(FiscalYear {
            month,
            day,
            named_by_end: false,
        })
    }

    /// The day of the month it starts on.
    pub(super) fn day(self) -> u32 {
        self.day
    }

    /// Named by the calendar year it ends in instead.
    pub fn named_by_end(mut self) -> FiscalYear {
        self.named_by_end = true;
        self
    }

    /// Reads `MM-DD`, or `MM-DD,end` for a year named by its end: the derive's `fiscal = "…"`
    /// and the recorded shape's `{fiscal:…}`.
    pub fn parse(text: &str) -> Result<FiscalYear, SpecError> {
        let refused = || SpecError::FiscalYear(text.to_owned());
        let (date, end) = match text.split_once(',') {
            Some((date, "end")) => (date, true),
            Some(_) => return Err(refused()),
            None => (text, false),
        };
        let (month, day) = date.split_once('-').ok_or_else(refused)?;
        let two_digits = |s: &str| (s.len() == 2).then(|| s.parse::<u32>().ok()).flatten();
        let (Some(month), Some(day)) = (two_digits(month), two_digits(day)) else {
            return Err(refused());
        };
        let year = FiscalYear::starting(month, day).map_err(|_| refused())?;
        Ok(if end { year.named_by_end() } else { year })
    }

    /// The first day of the fiscal year `date` falls in.
    pub fn start_of(self, date: NaiveDate) -> NaiveDate {
        let start_in = |year| {
            NaiveDate::from_ymd_opt(year, self.month, self.day)
                .expect("day <= 28: every year has it")
        };
        let this_year = start_in(date.year());
        if date >= this_year {
            this_year
        } else {
            start_in(date.year() - 1)
        }
    }

    /// The quarter (1 to 4) of the fiscal year `date` falls in: each starts on the fiscal
    /// year's day, three months after the one before (April, July, October and January for a
    /// year starting on April 1st).
    pub fn quarter(self, date: NaiveDate) -> u32 {
        let start = self.start_of(date);
        let months = |d: NaiveDate| d.year() * 12 + d.month0() as i32;
        let mut elapsed = months(date) - months(start);
        if date.day() < self.day {
            elapsed -= 1; // the fiscal month has not begun yet
        }
        (elapsed.clamp(0, 11) / 3) as u32 + 1
    }

    /// The calendar year that names the fiscal year `date` falls in.
    pub fn name_year(self, date: NaiveDate) -> i32 {
        let start = self.start_of(date).year();
        // A year starting on January 1st ends in the year it starts in.
        if self.named_by_end && (self.month, self.day) != (1, 1) {
            start + 1
        } else {
            start
        }
    }
}

impl std::fmt::Display for FiscalYear {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:02}-{:02}", self.month, self.day)?;
        if self.named_by_end {
            f.write_str(",end")?;
        }
        Ok(())
    }
}

impl SpecBuilder {
    /// Counts per fiscal year instead of per calendar date: the period is the fiscal year
    /// `year` says, in the spec's time zone, and the date part prints its name with year
    /// specifiers only (`%Y`, `%y`, `%C`: `FY%Y` gives `FY2026` for April 2026 to March
    /// 2027 with [`FiscalYear::starting(4, 1)`](FiscalYear::starting)).
    ///
    /// ```
    /// use chrono::{TimeZone, Utc};
    /// use diesel_seqgen_core::{FiscalYear, Spec};
    ///
    /// let invoices = Spec::builder("invoices")
    ///     .prefix("INV")
    ///     .date("FY%Y-")
    ///     .fiscal_year(FiscalYear::starting(4, 1)?)
    ///     .pad(5)
    ///     .build()?;
    /// let march = invoices.period_at(Utc.with_ymd_and_hms(2027, 3, 31, 12, 0, 0).unwrap());
    /// let april = invoices.period_at(Utc.with_ymd_and_hms(2027, 4, 1, 12, 0, 0).unwrap());
    /// assert_eq!(invoices.format(&march, 7), "INVFY2026-00007");
    /// assert_eq!(april, "FY2027-");
    /// # Ok::<(), diesel_seqgen_core::SpecError>(())
    /// ```
    pub fn fiscal_year(mut self, year: FiscalYear) -> Self {
        self.fiscal = Some(year);
        self
    }
}

impl Spec {
    /// The fiscal year the spec counts by, if any ([`SpecBuilder::fiscal_year`]).
    pub fn fiscal_year(&self) -> Option<FiscalYear> {
        self.fiscal
    }

    /// The period of a fiscal spec at `now`: its date pattern applied to a day of the year that
    /// names the fiscal year, in the calendar quarter that prints as the fiscal quarter (only
    /// year and quarter specifiers print).
    pub(super) fn fiscal_period_at(&self, year: FiscalYear, now: DateTime<Utc>) -> String {
        let local = self.tz.local_date(now);
        let first_month = (year.quarter(local) - 1) * 3 + 1;
        let naming = NaiveDate::from_ymd_opt(year.name_year(local), first_month, 1);
        naming.unwrap_or(local).format(&self.date).to_string()
    }
}

/// Refuses a fiscal year whose date pattern is empty or prints anything but years, fiscal
/// quarters (`%q`) and text.
pub(super) fn check_fiscal_pattern(pattern: &str) -> Option<SpecError> {
    let years_only = StrftimeItems::new(pattern).all(|item| match item {
        Item::Literal(_) | Item::OwnedLiteral(_) | Item::Space(_) | Item::OwnedSpace(_) => true,
        Item::Numeric(numeric, _) => {
            matches!(
                numeric,
                Numeric::Year | Numeric::YearDiv100 | Numeric::YearMod100 | Numeric::Quarter
            )
        }
        _ => false,
    });
    (pattern.is_empty() || !years_only).then(|| SpecError::FiscalPattern(pattern.to_owned()))
}
