//! # Known limits
//!
//! - Async: the API has no `execute_with` (your own statement on the filled records: use
//!   `assign_ids` and your statement). diesel-async's SQLite wrapper has no multi-row insert:
//!   insert a `Vec` row by row, after one `assign_ids` for all. The `retries` statistic counts the
//!   retries of the thread a reservation ended on; a task that moved threads meanwhile reports an
//!   approximate figure.
//!
//! - A scope is printed only where a template says `{scope}`; otherwise a scoped key's IDs are
//!   unique only together with their scope (see [scopes](super::scopes)). A printed scope
//!   cannot go with `widen`, a date part of varying width or a check character.
//! - `seqgen gaps --scope` compares with one column of the business table; a scope made of
//!   several fields (`scope = "order_no, year"`) has no single column to compare with.
//!
//! - With a `reset` apart from the printed date, a two-digit year (`%y`) alone reads as 1970 to
//!   2069, so under `reset = "year"` the counter of 2070 is 1970's row (never a repeat: the
//!   printed `70` is the same). Half-years are a reset, not a date field.
//!
//! - A transaction opened with raw SQL (`BEGIN`) is invisible to Diesel and so to seqgen.
//! - On SQLite, transactions that read before they take a number should be
//!   `immediate_transaction`s.
//! - Gapless mode holds the counter row from the moment it takes a number until your commit is
//!   flushed: on PostgreSQL, with the insert taking the number itself, about 0.6× what a
//!   single-row `UPDATE … RETURNING` in autocommit reaches with 8 writers on one key (your
//!   `COMMIT` is one round trip under the lock; see `BENCHMARKS.md`), and about a
//!   third of it on the usual path. Keep gapless transactions short, and take the number last.
//! - The `db_key` shape does not record the time zone a key's periods begin in: `seqgen peek`,
//!   `gaps` and `prune` take the current period in UTC unless given `--tz` (or `--period`).
//! - `seqgen gaps` reads the whole ID column of the business table into memory (a few bytes per
//!   row); for tables of hundreds of millions of rows, run it against a replica.
//! - Under valgrind a process using seqgen dies at its first ID: seqgen reads the coarse clock
//!   through rustix, whose own vDSO lookup reads the auxiliary vector valgrind fakes
//!   ([rustix#1559](https://github.com/bytecodealliance/rustix/issues/1559)). While you run under
//!   valgrind, add `rustix = { version = "1", features = ["use-libc"] }` to your app's
//!   dependencies: Cargo then builds seqgen's rustix on libc too, which valgrind understands
//!   (checked with valgrind 3.19).
//! - The mode (batched or gapless) is not recorded in `db_key` either, so `seqgen gaps` cannot
//!   tell a batched key's expected holes from a gapless key's missing numbers: run it on gapless
//!   keys.
//!
