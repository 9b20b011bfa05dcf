//! Business serial numbers such as `U20261121000001`, `ORD25070001` or `MENU000001`, from a
//! `db_key` counter table in your own database, through your own Diesel connection.
//!
//! - **Never a duplicate**, across threads, processes, machines, restarts, rollbacks, clock
//!   skew and dropped connections.
//! - **Fast**: `batch` numbers are reserved per database round trip and the rest served from
//!   memory. Numbers cached by a process that stops are never handed out: batched mode leaves
//!   holes, never duplicates.
//!
//! ```
//! use diesel::prelude::*;
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! seqgen::run_migrations(&mut conn)?;
//!
//! let users = seqgen::Spec::builder("users").prefix("U").date("%Y%m%d").pad(6).build()?;
//! let id = seqgen::next_id(&mut conn, &users)?; // e.g. "U20261121000001"
//! assert!(id.starts_with('U') && id.ends_with("000001"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Where to start
//! - [`#[derive(DistributedId)]`](derive@DistributedId) on a Diesel model, then
//!   [`insert_into`] (or [`DistributedId::assign_ids`] and plain Diesel).
//! - [`run_migrations`] creates the `db_key` table; [`with_app_migrations`] runs it beside
//!   yours.
//! - Without a model: a [`Spec`] and [`next_id`] / [`next_ids`] / [`next_number`], or your own
//!   [`Generator`] per database (with a pool for transactions on PostgreSQL and MySQL).
//! - Gapless numbering: [`Spec::builder`]`(..).gapless()`, `#[distributed_id(gapless)]`, or
//!   [`next_value`] for plain counters.
//! - A counter per company, per order: [`SpecBuilder::scoped`],
//!   `#[distributed_id(scope = "company_id")]`, and [`next_id_in`] and the other `_in` forms.
//! - Policies: [`Overflow`], series, templates, [`TimeZone`]; [`Spec::parse`] reads IDs back.
//! - Operations: [`Generator::stats`], [`void`], and [`admin`] (what the `seqgen` command of
//!   crate `seqgen-cli` runs: list counters, change settings, prune, audit gaps).
//!
//! # Features
//! Like Diesel, no backend is on by default; turn on the ones you use:
//! - `sqlite`: SQLite, through the system's libsqlite3 (Diesel's `sqlite`);
//!   `bundled-sqlite` builds SQLite from source instead, so nothing needs installing.
//! - `postgres`: PostgreSQL, through libpq.
//! - `mysql`: MySQL and MariaDB, through libmysqlclient or libmariadb.
//! - `r2d2`: pools ([`GeneratorBuilder::pool`], `use_pool`), through `diesel::r2d2`.
//!
//! They are additive and forward to Diesel's features of the same names.
//!
//! ```toml
//! [dependencies]
//! seqgen = { version = "0.1", features = ["postgres", "r2d2"] }
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// Without a backend feature there is nothing to reserve on: the crate still builds (as Diesel
// does), with its database code unused.
#![cfg_attr(
    not(any(feature = "sqlite", seqgen_pg, seqgen_mysql)),
    allow(dead_code, unused_imports, unused_macros)
)]

pub mod admin;
#[cfg(seqgen_async)]
pub mod r#async;
pub mod backend;
mod batch;
mod cache;
mod capacity;
mod clock;
mod driver;
mod error;
mod generator;
mod global;
mod insert;
pub mod meter;
mod migrations;
mod model;
mod one_statement;
mod reserve;
mod sequence;
mod stats;
mod sync;
mod trace;
mod transaction;
mod void;

#[cfg(feature = "sqlite")]
pub use backend::sqlite;
pub use backend::Backend;
pub use clock::{Clock, FixedClock, OffsetClock, SystemClock};
pub use error::{Error, Result};
pub use generator::{Generator, GeneratorBuilder};
#[cfg(feature = "r2d2")]
pub use global::use_pool;
pub use global::{
    last_value, last_value_in, next_id, next_id_in, next_ids, next_ids_in, next_number,
    next_number_in, next_numbers, next_numbers_in, peek_next, peek_next_in, release, stats,
};
pub use insert::{insert_into, IncompleteInsert, InsertWithIds, Records};
pub use migrations::{backend_migrations, run_migrations, with_app_migrations, WithAppMigrations};
pub use model::{assign_ids, assign_ids_with, DistributedId, IdSlot, IdValue};
pub use reserve::identity::accept_non_durable_server;
pub use seqgen_core::{
    Check, IdParts, Mode, Overflow, ParseIdError, Series, Spec, SpecBuilder, SpecError, TimeZone,
};
pub use sequence::{next_value, next_values, Sequence};
pub use stats::{KeyStats, Timings};
pub use transaction::retry_transaction;
pub use void::{void, void_in, voided, voided_in, Voided};

/// Fills a Diesel model's ID fields from seqgen's `db_key` counters, just before the insert,
/// on the insert's own connection.
///
/// ```
/// use diesel::prelude::*;
/// use seqgen::DistributedId;
///
/// diesel::table! { orders (order_no) { order_no -> Text, invoice_no -> Nullable<BigInt> } }
///
/// #[derive(Insertable, DistributedId)]
/// #[diesel(table_name = orders)]
/// struct NewOrder {
///     #[distributed_id(prefix = "ORD", date = "%y%m", pad = 4, batch = 50)]
///     order_no: String,
///     #[distributed_id(key = "invoices", date = "", pad = 10)]
///     invoice_no: Option<i64>,
/// }
///
/// let mut conn = SqliteConnection::establish(":memory:")?;
/// seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY, invoice_no BIGINT)")
///     .execute(&mut conn)?;
///
/// let mut order = NewOrder { order_no: String::new(), invoice_no: None };
/// seqgen::insert_into(orders::table).values(&mut order).execute(&mut conn)?;
/// assert!(order.order_no.starts_with("ORD") && order.order_no.ends_with("0001"));
/// assert_eq!(order.invoice_no, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # `#[distributed_id(...)]`
///
/// | key | default | meaning |
/// |---|---|---|
/// | `prefix = "U"` | none | literal text before the date |
/// | `date = "%Y%m%d"` | `"%Y%m%d"` | chrono strftime pattern of the date part (UTC); `""` for none. The counter restarts at 1 when it changes |
/// | `pad = 6` | `6` | counter digits, 1..=18 |
/// | `batch = 100` | `100` | numbers reserved per database round trip |
/// | `key = "users"` | the Diesel table name | the `db_key` counter to draw from |
/// | `check = "luhn"` | none | check character(s) at the end: `luhn`, `damm` or `iso7064-mod97-10` ([`Check`]); [`Spec::verify`] then catches typing errors |
/// | `scope = "company_id"` | none | other fields of the struct (one, or several separated by commas) whose values each get their own counter, as [`Generator::next_id_in`] does: invoice numbers per company, line numbers per order. Their types implement `Display`; a bulk makes one reservation per scope |
///
/// The table name comes from `#[diesel(table_name = ...)]`, or Diesel's own inference from the
/// struct name (`NewUser` → `new_users`) when that is absent.
///
/// # Fields
/// Any type implementing [`IdValue`]: `String`, `Option<String>`, `i64`, `Option<i64>`, type
/// aliases of them, and your own newtypes. Only unset fields get an ID: an empty `String`,
/// `None`, or `0` for a plain `i64`. An `i64` field needs a spec without prefix whose date
/// part is digits only, with date + pad (+ check digits) at most 18 digits. Several annotated fields are fine,
/// each with its own key; their IDs are taken in key order.
///
/// Mistakes are compile errors pointing at the offending token.
///
/// # `#[distributed_id(crate = "...")]`
/// On the struct: the path seqgen is reached by, for crates that re-export it (like serde's
/// `crate` attribute), e.g. `#[distributed_id(crate = "my_app::seqgen")]`.
pub use seqgen_derive::DistributedId;

/// What `#[derive(DistributedId)]` expands to reaches seqgen only through here.
#[doc(hidden)]
pub mod __private {
    pub use crate::model::{scope_text, IdField};
    pub use crate::one_statement::OneStatement;
    pub use seqgen_core::{Check, Overflow, Spec, TimeZone};
    pub use std::sync::LazyLock;
}
