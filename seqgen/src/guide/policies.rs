//! # Policies: overflow, cycles, series, templates, time zones, check characters, steps
//!
//! Each is a pure function of the counter, which in `db_key` only ever grows: nothing is ever
//! reset or rewound, so none of them can hand out a number twice (except `cycle`, by design).
//!
//! | attribute (runtime) | what it does |
//! |---|---|
//! | `overflow = "error"` (`Overflow::Error`, default) | past `10^pad - 1`: `Error::Overflow` naming key and period |
//! | `overflow = "widen"` (`Overflow::Widen`) | the counter grows a digit: `U20250702999999` → `U202507021000000`. Needs a fixed-width date part (or none); on `i64` fields a date starting with `%Y` (or none), until 18 digits |
//! | `overflow = "letters"` (`Overflow::Letters`) | same length, letters take over from the left, still sorted in issue order within a period (digits sort before capitals): pad 3 gives `998`, `999`, `A00` … `A99`, `B00` … `Z99`, `ZA0` … `ZZ9`, `ZZA` … `ZZZ` (3,885 IDs in all). Not on `i64` fields |
//! | `overflow = "cycle", max = 99` (`Overflow::Cycle { max }`) | `1 … 99, 1 … 99, …` within a period. **IDs repeat by design** every `max` numbers: ticket or queue numbers, never a unique key. `max` is required and must fit in `pad` digits (1..=99 for `pad = 2`) |
//! | `series = ["aa", "bb"], max = 999` (`.series(codes, max)`) | `aa001 … aa999, bb001 …`; after the last series, `Error::SeriesExhausted`. Codes of equal length; works in batched and gapless mode |
//! | `format = "INV-{date}/{series}{seq}"` (`.format(..)`) | a template with `{prefix}`, `{date}`, `{series}`, `{seq}`, `{scope}` (a scoped key's scope, see [scopes](super::scopes#the-scope-in-the-id)) and literal text (`{{`, `}}` for braces). Default `{prefix}{date}{seq}` (`{prefix}{date}{series}{seq}` with series). Every part the spec sets must appear: a template without `{date}` for a dated spec is refused, since IDs of two periods would look alike |
//! | `tz = "utc"` / `"local"` / `"+08:00"` / `"Europe/Paris"` (`.time_zone(..)`) | the zone the date part is computed in: at 16:00 UTC it is already tomorrow at `+08:00`. An IANA zone (the `tz` feature) follows its daylight-saving changes: the period changes at local midnight all year. Default UTC, the same on every instance; `local` only if every instance runs in the same zone |
//! | `check = "luhn"` / `"damm"` / `"iso7064-mod97-10"` (`.check(Check::..)`) | check character(s) over the digits of the rest of the ID, at the end (or where a template puts `{check}`): `ORD0572` + Damm = `ORD05724`. The `check-characters` feature. See below |
//!
//! `Spec::parse(id)` reads an ID back into its parts (prefix, period, series, sequence number) or
//! says why the spec could not have produced it; a property test round-trips random specs and
//! counters through `format` and `parse`.
//!
//! ```
//! use diesel_seqgen::{Overflow, Spec};
//!
//! let widen = Spec::builder("w").prefix("U").date("").pad(2).overflow(Overflow::Widen).build()?;
//! assert_eq!((widen.format("", 99), widen.format("", 100)), ("U99".into(), "U100".into()));
//! let letters = Spec::builder("l").date("").pad(3).overflow(Overflow::Letters).build()?;
//! assert_eq!(letters.format("", 1000), "A00");
//! let tickets = Spec::builder("t").date("").pad(2).overflow(Overflow::Cycle { max: 99 }).build()?;
//! assert_eq!(tickets.format("", 100), "01");
//! let series = Spec::builder("s").date("").pad(3).series(["aa", "bb"], 999).build()?;
//! assert_eq!(series.format("", 1000), "bb001");
//! let template = Spec::builder("i").format("INV-{date}/{seq}").date("%Y").pad(4).build()?;
//! assert_eq!(template.format("2026", 7), "INV-2026/0007");
//! let parts = template.parse("INV-2026/0007")?;
//! assert_eq!((parts.period.as_str(), parts.seq), ("2026", 7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Steps between numbers
//!
//! `step = 10` (`.step(10)`) numbers `10, 20, 30, …` with `start = 10`, or `1, 11, 21, …` from
//! the default start, as Odoo's `number_increment` does: room between documents for the ones
//! inserted later by hand. The counter in `db_key` still counts IDs one by one, so batches,
//! gapless mode (committed numbers exactly `start, start + step, …` with no number skipped),
//! [`last_value`](crate::Generator::last_value), [`capacity`](crate::Spec::capacity) and the
//! capacity warnings count IDs: pad 4 on a step of 10 holds 999 of them (10 to 9990).
//! [`Spec::parse`](crate::Spec::parse) refuses a number off the step, and `seqgen gaps`
//! shows the numbers as printed. `seqgen set-start` takes a number on the step (1000), and the
//! row stores the counter that prints it (100). The step and its remainder are in the key's
//! shape (`{seq:4,step=10}`, `{seq:4,step=10+1}`): another step on a key that printed IDs is
//! refused like any other change of shape, while a later start on the same step is not
//! (it only skips ahead). Not with series, `letters`, `cycle` or obfuscation.
//!
//! ```
//! // On a model: #[distributed_id(prefix = "L", date = "", pad = 4, step = 10, start = 10)]
//! let lines = diesel_seqgen::Spec::builder("lines").prefix("L").date("").pad(4)
//!     .step(10).start(10).build()?;
//! assert_eq!(lines.format("", 1), "L0010");
//! assert_eq!(lines.format("", 2), "L0020");
//! assert_eq!(lines.capacity(), 999);
//! assert_eq!(lines.counter_of(&lines.parse("L0030")?), Some(3));
//! assert!(!lines.verify("L0035"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Check characters
//!
//! An order or invoice number typed by a person (over the phone, from paper) can be checked
//! before any lookup: `spec.verify(id)` answers "could this be one of ours, and is it intact?"
//! without a database, and `Spec::parse` says what is wrong.
//!
//! ```
//! // On a model: #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4, check = "damm")]
//! let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("%y%m").pad(4)
//!     .check(diesel_seqgen::Check::Damm).build()?;
//! assert!(spec.verify("ORD251100414"));
//! assert!(!spec.verify("ORD251100144")); // two digits swapped
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | scheme | adds | catches |
//! |---|---|---|
//! | `luhn` (as on payment cards) | 1 digit | every single-digit error; every swap of adjacent digits but `09` ↔ `90` |
//! | `damm` | 1 digit | every single-digit error and every swap of adjacent digits |
//! | `iso7064-mod97-10` (as in IBAN, LEI) | 2 digits | every single-digit error and every swap of adjacent digits |
//!
//! The check is computed over the digits of the ID; prefix and literal text are compared as they
//! are. So every part that changes must be digits: `check` is refused (a compile error at the
//! token, or `SpecError::CheckNeedsDigits`) with `overflow = "letters"`, letter series codes, and
//! date parts with names or `-`/`_` modifiers. `i64` fields carry the check as their last digits,
//! which count toward the 18. Luhn and MOD 97-10 come from the `iso-7064` crate, Damm from its
//! ten-by-ten table (`seqgen-core/src/check.rs`; no maintained crate has it); a property test (`seqgen-core/tests/check.rs`) tries every single-digit error and adjacent swap
//! of random IDs.
//!
//! ## Settings in the table
//!
//! An operator can change two things per key in `db_key`, without a redeploy; both apply at the
//! next reservation ([`crate::admin::set`], `seqgen set-batch`, `seqgen set-start`, or SQL). They live on the key's row, the one with `period = ''` (for an undated key
//! that is its counter row; for a dated key insert one):
//!
//! ```sql
//! -- reserve 1,000 numbers per round trip for a hot key (batched mode)
//! UPDATE db_key SET batch_size = 1000 WHERE key_name = 'orders' AND period = '';
//! -- start every new period of a dated key at 1000 (and jump an undated counter forward to it)
//! INSERT INTO db_key (key_name, period, current_value, start_value) VALUES ('invoices', '', 0, 1000);
//! ```
//!
//! A start value only ever moves a counter forward: setting it below the current value changes
//! nothing.
//!
