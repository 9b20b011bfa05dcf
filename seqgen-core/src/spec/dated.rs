//! The document's own date: an invoice dated March 31st numbers in March's period (or its
//! fiscal year) whatever the clock says when it is saved (`period_from = "issued_on"` in the
//! derive, `spec.dated(date)` in a call).

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

use super::{Scoped, Spec};

/// A document's date, as a calendar day (in the spec's time zone) or a moment.
///
/// ```
/// use chrono::NaiveDate;
/// use diesel_seqgen_core::{DocumentDate, Spec};
///
/// let orders = Spec::builder("orders").prefix("ORD").date("%y%m").pad(4).build()?;
/// let march = NaiveDate::from_ymd_opt(2026, 3, 31).unwrap();
/// assert_eq!(orders.period_on(DocumentDate::from(march)), "2603");
/// assert_eq!(orders.dated(march).date(), Some(DocumentDate::Day(march)));
/// # Ok::<(), diesel_seqgen_core::SpecError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DocumentDate {
    /// A calendar day: its period is the one its first moment falls in, in the spec's zone.
    Day(NaiveDate),
    /// A moment.
    Moment(DateTime<Utc>),
}

impl From<NaiveDate> for DocumentDate {
    fn from(day: NaiveDate) -> Self {
        DocumentDate::Day(day)
    }
}

impl<Tz: chrono::TimeZone> From<DateTime<Tz>> for DocumentDate {
    fn from(moment: DateTime<Tz>) -> Self {
        DocumentDate::Moment(moment.with_timezone(&Utc))
    }
}

impl<T: Copy + Into<DocumentDate>> From<&T> for DocumentDate {
    fn from(date: &T) -> Self {
        (*date).into()
    }
}

/// How far ahead of the clock a document's date may be by default: a day, for clocks and time
/// zones that disagree; see [`SpecBuilder::max_days_ahead`](super::SpecBuilder::max_days_ahead).
pub const DEFAULT_MAX_DAYS_AHEAD: u32 = 1;

impl Spec {
    /// This spec, numbering in the period of the document's `date` instead of the clock's
    /// (see [`DocumentDate`]); with [`scope`](Spec::scope) as well:
    /// `spec.scope("acme").dated(date)`.
    pub fn dated(&self, date: impl Into<DocumentDate>) -> Scoped<'_> {
        Scoped::from(self).dated(date)
    }

    /// The period of a document dated `date`: the date part as it appears in IDs.
    pub fn period_on(&self, date: DocumentDate) -> String {
        self.period_at(self.moment_of(date))
    }

    /// The moment a document's date stands for: a day's first moment in the spec's zone.
    pub fn moment_of(&self, date: DocumentDate) -> DateTime<Utc> {
        match date {
            DocumentDate::Moment(moment) => moment,
            DocumentDate::Day(day) => self.tz.start_of_day(day),
        }
    }

    /// Whether a document dated `date` is further ahead of `now` than the spec allows
    /// ([`SpecBuilder::max_days_ahead`](super::SpecBuilder::max_days_ahead)).
    pub fn too_far_ahead(&self, date: DocumentDate, now: DateTime<Utc>) -> bool {
        self.moment_of(date) > now + TimeDelta::days(i64::from(self.max_days_ahead))
    }

    /// How many days ahead of the clock a document's date may be.
    pub fn max_days_ahead(&self) -> u32 {
        self.max_days_ahead
    }
}

impl super::SpecBuilder {
    /// How many days ahead of the clock a document's date may be before a call numbering in
    /// its period is refused (default [`DEFAULT_MAX_DAYS_AHEAD`]: a day, for clocks and time
    /// zones that disagree). A document dated further ahead is more often a typing error
    /// (2062 for 2026) than a document: it would open a period years early. Raise it for
    /// documents that are dated ahead on purpose (a quote valid from next month).
    pub fn max_days_ahead(mut self, days: u32) -> Self {
        self.max_days_ahead = days;
        self
    }
}
