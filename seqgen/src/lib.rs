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
//! # Features
//! - `sqlite` (default): SQLite, bundled: no system library needed.
//! - `postgres`: PostgreSQL, through libpq.
//! - `mysql`: MySQL and MariaDB, through libmysqlclient or libmariadb.
//!
//! They are additive: enable any combination.
#![warn(missing_docs)]

pub mod backend;
mod block;
mod clock;
mod error;
mod generator;
mod migrations;
mod schema;
mod spec;

#[cfg(feature = "sqlite")]
pub use backend::sqlite;
pub use backend::Backend;
pub use clock::{Clock, FixedClock, OffsetClock, SystemClock};
pub use error::{Error, Result, SpecError};
pub use generator::{next_id, next_ids, next_number, next_numbers, Generator, GeneratorBuilder};
pub use migrations::{backend_migrations, run_migrations, with_app_migrations, WithAppMigrations};
pub use spec::{Spec, SpecBuilder};
