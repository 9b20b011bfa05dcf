//! # The derive, and what an ID looks like
//!
//! `#[derive(DistributedId)]` on a Diesel model marks its ID fields; [`insert_into`] fills
//! the unset ones, one reservation for a whole bulk, and inserts on the same connection.
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { orders (order_no) { order_no -> Text, invoice_no -> Nullable<BigInt>, item -> Text } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = orders)]
//! struct NewOrder {
//!     #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4, batch = 50)]
//!     order_no: String,
//!     #[distributed_id(key = "invoices", date = "", pad = 10)]
//!     invoice_no: Option<i64>,
//!     item: String,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query(
//!     "CREATE TABLE orders (order_no TEXT PRIMARY KEY, invoice_no BIGINT, item TEXT NOT NULL)",
//! )
//! .execute(&mut conn)?;
//!
//! let mut orders: Vec<NewOrder> = ["tea", "cake"]
//!     .map(|item| NewOrder { order_no: String::new(), invoice_no: None, item: item.into() })
//!     .into();
//! diesel_seqgen::insert_into(orders::table).values(&mut orders).execute(&mut conn)?;
//! assert!(orders[1].order_no.starts_with("ORD") && orders[1].order_no.ends_with("0002"));
//! assert_eq!(orders[1].invoice_no, Some(2));
//!
//! // Or fill first and insert with plain Diesel.
//! let mut more = NewOrder { order_no: String::new(), invoice_no: None, item: "jam".into() };
//! diesel_seqgen::assign_ids(&mut conn, &mut more)?;
//! diesel::insert_into(orders::table).values(&more).execute(&mut conn)?;
//! assert_eq!(more.invoice_no, Some(3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## `#[distributed_id(...)]`
//!
//! The attribute's keys, all optional (this is their one table; the tidy test checks it names
//! every key the derive takes):
//!
//! | key | default | meaning |
//! |---|---|---|
//! | `prefix = "U"` | none | literal text before the date |
//! | `date = "%Y%m%d"` | `"%Y%m%d"` | chrono strftime pattern of the date part; `""` for none. The counter restarts at the start in every period |
//! | `pad = 6` | `6` | counter digits, 1..=18 |
//! | `batch = 100` | `100` | numbers reserved per database round trip |
//! | `key = "users"` | the Diesel table name | the `db_key` counter to draw from |
//! | `start = 1000` | `1` | the first number of every period (numbering from 1000 at go-live); the key row's `start_value`, set with `seqgen set-start`, wins |
//! | `reset = "year"` | the date's | when the counter starts again, apart from the printed date: `day`, `week`, `month`, `quarter`, `half-year`, `year`, `fiscal-year`, `never`. See [periods](super::periods#the-reset-apart-from-the-printed-date) |
//! | `step = 10` | `1` | numbers `start, start + step, …` (10, 20, 30 with `start = 10`); the counter counts IDs. See [policies](super::policies#steps-between-numbers) |
//! | `gapless` | batched | numbers taken in the inserting transaction: [gapless](super::gapless) |
//! | `nowait` | waits | with `gapless`: fail with `Error::Busy` instead of waiting for the counter row |
//! | `scope = "company_id"` | none | other fields of the struct (one, or several separated by commas) whose values each get their own counter: [scopes](super::scopes) |
//! | `overflow = "widen"` | an error | past `10^pad - 1`: `widen`, `letters`, `cycle` (with `max`): [policies](super::policies) |
//! | `max = 500` | none | the last number of a `cycle`, or of each series code |
//! | `series = ["AA", "AB"]` | none | series codes, each holding `max` numbers: [policies](super::policies) |
//! | `format = "{prefix}{date}-{seq}"` | `{prefix}{date}{seq}` | a template: [policies](super::policies); `{scope}` prints a scoped key's scope: [scopes](super::scopes#the-scope-in-the-id) |
//! | `fiscal = "04-01"` | calendar dates | count per fiscal year starting on that month and day (`"07-01,end"`: named by the year it ends in); the date part prints its name with year specifiers only (`date = "FY%Y"`), and fiscal quarters with `%q` (`date = "FY%Y-Q%q"`) |
//! | `period_from = "issued_on"` | the clock | another field of the struct (a `NaiveDate` or `DateTime<Utc>`) whose value is the document's date: its numbers are taken in that date's period, a back-dated invoice in its own month's (or fiscal year's) row |
//! | `max_days_ahead = 31` | `1` | with `period_from`: how many days ahead of the clock a document may be dated before it is refused (`Error::DateAhead`: more often a typing error than a document) |
//! | `tz = "Europe/Paris"` | UTC | the time zone periods begin in: `utc`, `local`, a fixed offset (`+08:00`) or an IANA zone (the `tz` feature), whose daylight-saving changes it follows |
//! | `check = "luhn"` | none | check character(s) at the end: `luhn`, `damm` or `iso7064-mod97-10` (the `check-characters` feature); [`Spec::verify`] then catches typing errors |
//! | `obfuscate = "ORDER_NUMBER_KEY"` | none | the environment variable holding a key: each period's numbers shown in an order only the key knows (the `obfuscate` feature; [adopting](super::adopting)) |
//!
//! The table name comes from `#[diesel(table_name = …)]`, or Diesel's inference from the struct
//! name (`NewUser` → `new_users`). Fields may be any type implementing [`IdValue`]: `String`,
//! `Option<String>`, `i64`, `Option<i64>`, aliases of them, and newtypes of your own (`struct
//! OrderNo(String)` implements it by handing out `self.0.id_slot()`). Only unset ones get an ID
//! (an empty `String`, `None`, or `0` for a plain `i64`), so a value you set is inserted as is.
//! Several annotated fields are fine, each with its own key.
//!
//! [`Id`](crate::Id) and [`NumericId`](crate::NumericId) are such fields that also refuse the
//! habit of a plain `diesel::insert_into(..).values(&record)` on a record seqgen has not filled:
//! Diesel's insert then fails with a `SerializationError` ([`NotFilled`](crate::NotFilled),
//! naming `insert_into` and `assign_ids`) before anything is sent, instead of inserting an
//! empty ID. `seqgen check` finds rows that got in without one anyway.
//!
//! `get_result` / `get_results` work where the backend has `RETURNING` (SQLite, PostgreSQL).
//! For anything else Diesel offers (`on_conflict`, …), `execute_with` fills the IDs and runs
//! your statement, with the same give-back for gapless fields on failure:
//!
//! ```
//! # use diesel::prelude::*;
//! # use diesel_seqgen::DistributedId;
//! # diesel::table! { tags (id) { id -> Text, name -> Text } }
//! # #[derive(Insertable, DistributedId)]
//! # #[diesel(table_name = tags)]
//! # struct NewTag { #[distributed_id(prefix = "T", date = "", pad = 4)] id: String, name: String }
//! # let mut conn = SqliteConnection::establish(":memory:")?;
//! # diesel_seqgen::run_migrations(&mut conn)?;
//! # diesel::sql_query("CREATE TABLE tags (id TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE)").execute(&mut conn)?;
//! let mut tag = NewTag { id: String::new(), name: "rust".into() };
//! let inserted = diesel_seqgen::insert_into(tags::table)
//!     .values(&mut tag)
//!     .execute_with(&mut conn, |table, row, conn| {
//!         diesel::insert_into(table).values(row).on_conflict_do_nothing().execute(conn)
//!     })?;
//! assert_eq!((inserted, tag.id.as_str()), (1, "T0001"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `.with_generator(&generator)` takes IDs from your own [`Generator`];
//! `#[distributed_id(crate = "my_app::diesel_seqgen")]` on the struct names seqgen for crates that
//! re-export it. Every mistake in the attribute is a compile error pointing at the token (see
//! `compile-fail/tests/ui/`), checked by the same rules as [`SpecBuilder::build`] (the derive builds
//! each spec with `diesel-seqgen-core` at compile time).
//!
//! ## What an ID looks like
//!
//! `prefix + date + counter`, the counter zero-padded to `pad` digits and starting at 1 in
//! every period (every distinct value of the date part). Defaults: no prefix, date `%Y%m%d`,
//! pad 6, batch 100.
//!
//! | spec | ID |
//! |---|---|
//! | prefix `U`, date `%Y%m%d`, pad 6 | `U20250702000001` |
//! | prefix `MENU`, no date (`""`), pad 6 | `MENU000001` |
//! | prefix `ORD`, date `%y%m`, pad 4 | `ORD25070001` |
//! | no prefix, date `%Y%m%d`, pad 8 | `2025070200000001`, also as `i64` |
//!
//! Specs are checked when built: pad 1..=18, batch at least 1, the date pattern must parse (an
//! unknown specifier is named in the error) and change at most once a second, the prefix must
//! be printable. A spec has an `i64` form ([`Generator::next_number`]) when it has no prefix
//! and its date part is digits only with date + pad at most 18 digits. The date is taken in
//! UTC unless the spec names a [time zone](super::policies).
//!
//! ```
//! use diesel_seqgen::Spec;
//!
//! let err = Spec::builder("users").date("%Y%Q").build().unwrap_err();
//! assert!(err.to_string().contains("%Q"), "{err}");
//! let menu = Spec::builder("menus").prefix("MENU").date("").build()?;
//! assert_eq!(menu.format("", 1), "MENU000001");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`insert_into`]: crate::insert_into
//! [`Spec::verify`]: crate::Spec::verify
//! [`IdValue`]: crate::IdValue
//! [`Generator`]: crate::Generator
//! [`Generator::next_number`]: crate::Generator::next_number
//! [`SpecBuilder::build`]: crate::SpecBuilder::build
