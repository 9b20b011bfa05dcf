//! The guide: how seqgen works and how to use each part of it, one chapter per subject. Every
//! Rust example in it is compiled and run by `cargo test` (on SQLite, in memory); the async
//! chapter's by `cargo test --all-features`, as CI runs it (it needs `async-sqlite`).
//!
//! | chapter | what |
//! |---|---|
//! | [`derive`](mod@derive) | `#[derive(DistributedId)]`, its keys, and what an ID looks like |
//! | [`gapless`] | numbers taken inside your transaction, none skipped: invoices, receipts |
//! | [`scopes`] | a counter per company, per order |
//! | [`periods`] | calendar dates, fiscal years, the document's own date |
//! | [`policies`] | overflow, cycles, series, templates, time zones, check characters, settings in the table |
//! | [`nonblocking`] | the same on diesel-async's connections (feature `async-sqlite` to build this chapter) |
//! | [`guarantees`] | never a duplicate, and what it takes; holes; voiding; looking without taking; giving numbers back |
//! | [`adopting`] | taking over a table that has IDs, checking it, counters that never go back, numbers that do not reveal volume |
//! | [`table`] | the `db_key` table and its migrations |
//! | [`backends`] | SQLite, PostgreSQL, MySQL and MariaDB |
//! | [`operations`] | the `seqgen` command, statistics, metrics, tracing |
//! | [`limits`] | known limits |
//!
//! What the numbers cost (the cached path, inserts against plain Diesel, gapless against
//! django-sequences and pgbench) is in `BENCHMARKS.md`, with the commands that measure it. How
//! the code is laid out, for contributors: `ARCHITECTURE.md`.

pub mod adopting;
pub mod backends;
pub mod derive;
pub mod gapless;
pub mod guarantees;
pub mod limits;
#[cfg(feature = "async-sqlite")]
pub mod nonblocking;
pub mod operations;
pub mod periods;
pub mod policies;
pub mod scopes;
pub mod table;
