//! Business serial numbers such as `U20261121000001`, `ORD25070001` or `MENU000001` for your
//! Diesel models, from a `db_key` counter table in your own database, on the connection of the
//! insert itself.
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { users (id) { id -> Text, name -> Text } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = users)]
//! struct NewUser {
//!     #[distributed_id(prefix = "U", date = "%Y%m%d", pad = 6)]
//!     id: String,
//!     name: String,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?; // the `db_key` table
//! diesel::sql_query("CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL)")
//!     .execute(&mut conn)?;
//!
//! let mut user = NewUser { id: String::new(), name: "Ada".into() };
//! diesel_seqgen::insert_into(users::table).values(&mut user).execute(&mut conn)?;
//! assert!(user.id.starts_with('U') && user.id.ends_with("000001")); // e.g. U20261121000001
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - **Never a duplicate**, across threads, processes, machines, restarts, rollbacks, clock
//!   skew and dropped connections.
//! - **Fast**: numbers are reserved a block per database round trip and served from memory;
//!   a running process loses none of them, and one that stops leaves holes, never duplicates.
//!   Where holes are not acceptable, gapless mode takes each number in your transaction.
//!
//! # The main path
//! - [`#[derive(DistributedId)]`](derive@DistributedId) on a Diesel model, then
//!   [`insert_into`] (or [`assign_ids`] and plain Diesel).
//! - [`run_migrations`] creates the `db_key` table (see [`migrations`] to run it beside
//!   yours).
//! - A [`Spec`] says what an ID looks like; a [`Generator`] hands them out for one database
//!   (the functions of [`global`] use a process-wide default one per database).
//! - A scope (a counter per company, per order) is a value you pass: `spec.scope("acme")`,
//!   see [`Scoped`].
//! - Every failure is an [`Error`] that says what to do.
//!
//! The [`guide`] covers the rest, with an example for each: gapless numbering, scopes,
//! policies (overflow, cycles, series, templates, time zones, check characters), async
//! ([`nonblocking`]), operations ([`admin`], statistics, metrics, tracing), and the guarantees.
//!
//! # Features
//! Like Diesel, no backend is on by default; turn on the ones you use. They are additive, and
//! the backend features forward to Diesel's of the same names.
//!
//! ```toml
//! [dependencies]
//! diesel-seqgen = { version = "0.2", features = ["postgres", "r2d2"] }
//! ```
//!
//! In code the crate is `diesel_seqgen` (`use diesel_seqgen::DistributedId;`).
//!
#![doc = document_features::document_features!()]
#![forbid(unsafe_code)]
#![warn(missing_docs)]
// On docs.rs (`--cfg docsrs`, nightly): every feature-gated item labelled with its feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The build script's shorthands (`build.rs`) are no feature a user turns on: items behind them
// name their features themselves.
#![cfg_attr(
    docsrs,
    doc(auto_cfg(hide(seqgen_pg, seqgen_mysql, seqgen_async, seqgen_async_pool, seqgen_pool)))
)]
// Without a backend feature there is nothing to reserve on: the crate still builds (as Diesel
// does), with its database code unused.
#![cfg_attr(
    not(any(feature = "sqlite", seqgen_pg, seqgen_mysql)),
    allow(dead_code, unused_imports, unused_macros)
)]

// A pool feature with no backend to pool would do nothing, silently: say so when building.
#[cfg(all(any(feature = "deadpool", feature = "bb8"), not(seqgen_async)))]
compile_error!(
    "diesel-seqgen's `deadpool` and `bb8` features pool diesel-async connections: turn on \
     `async-postgres`, `async-mysql` or `async-sqlite` beside them (the blocking API's pools \
     are the `r2d2` feature)"
);

pub mod admin;
pub mod backend;
mod batch;
mod cache;
pub mod clock;
mod counter_range;
mod driver;
mod engine;
mod error;
mod generator;
pub mod global;
pub mod guide;
pub mod insert;
pub mod ledger;
pub mod meter;
pub mod migrations;
mod model;
#[cfg(seqgen_async)]
#[cfg_attr(
    docsrs,
    doc(cfg(any(
        feature = "async-sqlite",
        feature = "async-postgres",
        feature = "async-mysql"
    )))
)]
pub mod nonblocking;
pub mod pending;
mod reserve;
pub mod sequence;
pub mod stats;
mod sync;
mod trace;
mod transaction;

#[cfg(feature = "sqlite")]
pub use backend::sqlite;
pub use backend::{Backend, IdConnection, MigrateConnection};
pub use diesel_seqgen_core::{
    Check, DocumentDate, FiscalYear, IdParts, Mode, Overflow, ParseIdError, Reset, Scoped, Series,
    Spec, SpecBuilder, SpecError, TimeZone,
};
pub use error::{Error, Result};
pub use generator::{Generator, GeneratorBuilder};
pub use global::assign_ids;
pub use insert::insert_into;
pub use migrations::run_migrations;
pub use model::{DistributedId, Id, IdSlot, IdValue, NotFilled, NumericId, Records};
pub use transaction::retry_transaction;

/// Fills a Diesel model's ID fields from seqgen's `db_key` counters, just before the insert,
/// on the insert's own connection.
///
/// ```
/// use diesel::prelude::*;
/// use diesel_seqgen::DistributedId;
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
/// diesel_seqgen::run_migrations(&mut conn)?;
/// diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY, invoice_no BIGINT)")
///     .execute(&mut conn)?;
///
/// let mut order = NewOrder { order_no: String::new(), invoice_no: None };
/// diesel_seqgen::insert_into(orders::table).values(&mut order).execute(&mut conn)?;
/// assert!(order.order_no.starts_with("ORD") && order.order_no.ends_with("0001"));
/// assert_eq!(order.invoice_no, Some(1));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # `#[distributed_id(...)]`
///
/// Every key of the attribute (`prefix`, `date`, `pad`, `batch`, `key`, `start`, `gapless`,
/// `scope`, the policies, `tz`, `check`, `obfuscate`), with its default: the table in
/// [`guide::derive`]. The table name comes from `#[diesel(table_name = ...)]`, or Diesel's own
/// inference from the struct name (`NewUser` → `new_users`) when that is absent.
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
/// `crate` attribute), e.g. `#[distributed_id(crate = "my_app::diesel_seqgen")]`.
pub use diesel_seqgen_derive::DistributedId;

/// What `#[derive(DistributedId)]` expands to reaches seqgen only through here.
#[doc(hidden)]
pub mod __private {
    pub use crate::backend::one_statement::OneStatement;
    pub use crate::backend::row_values::{ColumnValue, InsertRow, NotWritten};
    pub use crate::model::{build_field_spec, scope_text, IdField};
    pub use diesel::expression::AsExpression;
    pub use diesel::{Column, Expression};
    pub use diesel_seqgen_core::{
        Check, DocumentDate, FiscalYear, Overflow, Reset, Spec, TimeZone,
    };
    pub use std::sync::LazyLock;
}
