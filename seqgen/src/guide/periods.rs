//! # Periods: calendar dates, quarters and ISO weeks, fiscal years, resets and the document's own date
//!
//! A spec with a date part counts from 1 (or its `start`) in every period, each period its own
//! `db_key` row: `date = "%y%m"` a month, `date = "%Y"` a calendar year, in the time zone `tz`
//! says. By default the period is what the date prints; `reset` counts per a longer one (below),
//! and fiscal years and the document's own date change which period a number is taken in.
//!
//! ## Quarters and ISO weeks
//!
//! The period is what the date part prints, so any strftime field makes one: `%q` the
//! quarter (1 to 4), `%G-W%V` the ISO week with its ISO year. `format = "Q{date}-{seq}"` with
//! `date = "%q-%Y"` numbers `Q3-2026-0001`, and counts from 1 again at the first local midnight
//! of October in the spec's zone. An ISO week belongs to the ISO year of its Thursday: 31
//! December 2026 and 1 January 2027 are both week 53 of 2026, and share its counter; use `%G`
//! with `%V`, never `%Y`, or that week would be two periods printed alike. Fiscal quarters are
//! below; half-years have no strftime field: count per half-year with `reset = "half-year"`.
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
//! ## The reset apart from the printed date
//!
//! `reset` says when the counter starts again, whatever the date prints: `day`, `week` (ISO),
//! `month`, `quarter`, `half-year`, `year`, `fiscal-year` (with `fiscal`) or `never`. With
//! `date = "%Y%m%d-"` and `reset = "year"`, `SO20261127-00042` prints the day and is the 42nd
//! order of 2026; `reset = "never"` keeps one counter for ever under a date prefix
//! (`DOC-2026-11-27-000123`, CosId's default). Without it, the counter starts again whenever the
//! printed date changes, as before. On the builder:
//! [`SpecBuilder::reset`](crate::SpecBuilder::reset) with a [`Reset`](crate::Reset).
//!
//! The counter is read off the printed date: the date an ID prints is read back, and the
//! counter is that of the reset's period of the day it names (`db_key.period` holds `2026`,
//! `2026-Q3`, `2026-H2`, `2026-W53`, `2026-11`, `2026-11-27`, `FY2026`, or `""` for `never`).
//! So two IDs printing the same date always draw from the same counter, and a reset the date
//! cannot tell is a compile error at the token: `reset = "day"` under `date = "%Y%m"` (every
//! day of a month would print the same IDs from its own counter), `reset = "year"` under
//! `%G-W%V` (the ISO year is not the calendar year around New Year). `never` goes with any date.
//! A batched key's block belongs to its counter, not to a printed date: when the clock's date
//! changes within the reset's period, the block goes on serving under the new date, and
//! documents dated with `period_from` on any date of the counter are served from the same
//! block, each ID printing its own document's date. A batched key's holes are those of any
//! batched key (a block's unused numbers when the process ends without `release`); a key whose
//! IDs must run on without holes is gapless, as the `doc` number below.
//!
//! The key's recorded shape says it (`{reset:year}`), so `seqgen keys` shows one row per year,
//! and `gaps`, `check` and `adopt` read every ID of the year into the year's counter (`seqgen
//! gaps --period 20261127-` checks all of 2026; a missing number has no date of its own, so it
//! is shown without an ID). `prune --before 2025` deletes the rows of years before 2025. The
//! capacity is the counter's: `pad = 5` holds 99,999 orders a year, not a day.
//!
//! ```
//! use chrono::NaiveDate;
//! use diesel::prelude::*;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { orders (number) { number -> Text, doc -> Text, issued_on -> Date } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = orders)]
//! struct NewOrder {
//!     #[distributed_id(prefix = "SO", date = "%Y%m%d-", pad = 5, reset = "year", period_from = "issued_on")]
//!     number: String,
//!     #[distributed_id(key = "docs", prefix = "DOC-", date = "%Y-%m-%d-", reset = "never", gapless, period_from = "issued_on")]
//!     doc: String,
//!     issued_on: NaiveDate,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query("CREATE TABLE orders (number TEXT PRIMARY KEY, doc TEXT, issued_on DATE NOT NULL)")
//!     .execute(&mut conn)?;
//! let on = |y, m, d| NewOrder { number: String::new(), doc: String::new(), issued_on: NaiveDate::from_ymd_opt(y, m, d).unwrap() };
//! for day in [on(2025, 12, 31), on(2026, 1, 1), on(2026, 1, 2)] {
//!     let mut order = vec![day];
//!     conn.transaction(|conn| diesel_seqgen::insert_into(orders::table).values(&mut order).execute(conn))?;
//! }
//! let numbers: Vec<String> = orders::table.select(orders::number).order(orders::issued_on).load(&mut conn)?;
//! assert_eq!(numbers[0], "SO20251231-00001");
//! assert_eq!(numbers[1], "SO20260101-00001", "2026 starts again at 1");
//! let docs: Vec<String> = orders::table.select(orders::doc).order(orders::issued_on).load(&mut conn)?;
//! assert_eq!(docs, ["DOC-2025-12-31-000001", "DOC-2026-01-01-000002", "DOC-2026-01-02-000003"]);
//!
//! // Refused when built: a reset the printed date cannot tell.
//! let daily = diesel_seqgen::Spec::builder("x").date("%Y%m").reset(diesel_seqgen::Reset::Day).build();
//! assert!(daily.is_err());
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
