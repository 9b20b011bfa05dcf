//! # Periods: calendar dates, quarters and ISO weeks, fiscal years and the document's own date
//!
//! A spec with a date part counts from 1 (or its `start`) in every period, each period its own
//! `db_key` row: `date = "%y%m"` a month, `date = "%Y"` a calendar year, in the time zone `tz`
//! says. Two things accountants ask for change what the period is.
//!
//! ## Quarters and ISO weeks
//!
//! The period is what the date part prints, so any strftime field makes one: `%q` the
//! quarter (1 to 4), `%G-W%V` the ISO week with its ISO year. `format = "Q{date}-{seq}"` with
//! `date = "%q-%Y"` numbers `Q3-2026-0001`, and counts from 1 again at the first local midnight
//! of October in the spec's zone. An ISO week belongs to the ISO year of its Thursday: 31
//! December 2026 and 1 January 2027 are both week 53 of 2026, and share its counter; use `%G`
//! with `%V`, never `%Y`, or that week would be two periods printed alike. Fiscal quarters are
//! below; half-years have no strftime field, and are not periods seqgen knows yet.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//!
//! let quarterly = diesel_seqgen::Spec::builder("q").format("Q{date}-{seq}").date("%q-%Y").pad(4)
//!     .time_zone(diesel_seqgen::TimeZone::parse("+09:00").unwrap()).build()?;
//! let midnight_in_tokyo = Utc.with_ymd_and_hms(2026, 9, 30, 15, 0, 0).unwrap();
//! assert_eq!(quarterly.period_at(midnight_in_tokyo), "4-2026");
//! let weekly = diesel_seqgen::Spec::builder("w").format("{date}-{seq}").date("%G-W%V").pad(3).build()?;
//! let new_year = Utc.with_ymd_and_hms(2027, 1, 1, 12, 0, 0).unwrap();
//! assert_eq!(weekly.format(&weekly.period_at(new_year), 1), "2026-W53-001");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Fiscal years
//!
//! `fiscal = "04-01"` counts per fiscal year starting on April 1st: the date part prints the
//! year that names it, with year specifiers only (`date = "FY%Y"`, `%y`), or counts per fiscal
//! quarter with `%q` (`date = "FY%Y-Q%q"`: quarters begin on the fiscal year's day, every
//! three months, so `FY2026-Q1` is April to June 2026). A year is named by the
//! calendar year it starts in (April 2026 to March 2027 is `FY2026`, as Japan and Odoo's fiscal
//! year ranges name it); `fiscal = "07-01,end"` names it by the year it ends in (Australia's
//! `FY2027` runs from July 2026). The first day goes up to the 28th, so that every year has it;
//! the year begins at midnight of that day in the spec's time zone. On the builder:
//! [`SpecBuilder::fiscal_year`](crate::SpecBuilder::fiscal_year) with a
//! [`FiscalYear`](crate::FiscalYear). The key's recorded shape says it (`{fiscal:04-01}`), so
//! `seqgen keys`, `capacity`, `gaps`, `check` and `adopt` read the fiscal year back.
//!
//! ```
//! use chrono::{TimeZone, Utc};
//! use diesel_seqgen::{FiscalYear, Spec};
//!
//! let invoices = Spec::builder("invoices")
//!     .prefix("INV-")
//!     .date("FY%Y-")
//!     .fiscal_year(FiscalYear::starting(4, 1)?)
//!     .pad(5)
//!     .build()?;
//! let march = invoices.period_at(Utc.with_ymd_and_hms(2027, 3, 31, 23, 59, 59).unwrap());
//! let april = invoices.period_at(Utc.with_ymd_and_hms(2027, 4, 1, 0, 0, 0).unwrap());
//! assert_eq!(invoices.format(&march, 1), "INV-FY2026-00001");
//! assert_eq!(invoices.format(&april, 1), "INV-FY2027-00001");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## The document's own date
//!
//! By default a number's period is the clock's when it is taken. An invoice entered on April 2nd
//! but dated March 31st belongs to March (and to the fiscal year March closes): name the field
//! holding the document's date with `period_from`, and its number is taken in that date's period.
//! The field is a `NaiveDate` (a calendar day, in the spec's time zone; Diesel's `chrono` feature
//! maps it to a `Date` column) or a `DateTime<Utc>`. Without the derive, pass the date with the
//! spec: `spec.dated(date)`, `spec.scope("acme").dated(date)`
//! ([`DocumentDate`](crate::DocumentDate)).
//!
//! ```
//! use chrono::NaiveDate;
//! use diesel::prelude::*;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { invoices (number) { number -> Text, issued_on -> Date } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = invoices)]
//! struct NewInvoice {
//!     #[distributed_id(prefix = "INV", date = "%y%m-", pad = 4, gapless, period_from = "issued_on")]
//!     number: String,
//!     issued_on: NaiveDate,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query("CREATE TABLE invoices (number TEXT PRIMARY KEY, issued_on DATE NOT NULL)")
//!     .execute(&mut conn)?;
//! let dated = |y, m, d| NewInvoice { number: String::new(), issued_on: NaiveDate::from_ymd_opt(y, m, d).unwrap() };
//! let mut invoices = vec![dated(2026, 3, 31), dated(2026, 4, 2), dated(2026, 3, 30)];
//! conn.transaction(|conn| diesel_seqgen::insert_into(invoices::table).values(&mut invoices).execute(conn))?;
//! let numbers: Vec<&str> = invoices.iter().map(|i| i.number.as_str()).collect();
//! assert_eq!(numbers, ["INV2603-0001", "INV2604-0001", "INV2603-0002"]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A back-dated document continues its period's row, which never goes back: March's next
//! invoice is March's next number, whether it is entered in March or in May. Gapless keys keep
//! exactly 1..N per period; batched keys hold a block per period in use (each given back at
//! `release`, or when a generator keeps too many, as scopes' are: at most 4,096 per spec).
//!
//! A date far in the future is more often a typing error (2062 for 2026) than a document, and
//! it would open a period years early: a document dated more than a day ahead of the clock is
//! refused before anything is taken ([`Error::DateAhead`](crate::Error::DateAhead)). Allow
//! more with `max_days_ahead = 31` (or
//! [`SpecBuilder::max_days_ahead`](crate::SpecBuilder::max_days_ahead)), for documents dated
//! ahead on purpose.
//!
//! On PostgreSQL, a gapless insert of a key with `period_from` takes its number before the
//! insert, as other keys do with the first insert of a process, not in the insert statement
//! itself (which numbers in the clock's period).
