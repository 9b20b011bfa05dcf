//! # Scoped counters
//!
//! Invoice numbers that start at 1 for every company, line numbers per order: name the fields
//! whose values each get their own counter with `scope` (one field, or several separated by
//! commas; any type that implements `Display`), or build the spec with `.scoped()` and take IDs
//! in a scope, a value you pass: `spec.scope("42")` ([`Scoped`](crate::Scoped)).
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::{DistributedId, Spec};
//!
//! diesel::table! { invoices (company_id, number) { company_id -> BigInt, number -> Text, amount -> BigInt } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = invoices)]
//! struct NewInvoice {
//!     company_id: i64,
//!     #[distributed_id(prefix = "INV", date = "", pad = 4, gapless, scope = "company_id")]
//!     number: String,
//!     amount: i64,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query(
//!     "CREATE TABLE invoices (company_id BIGINT NOT NULL, number TEXT NOT NULL, \
//!      amount BIGINT NOT NULL, PRIMARY KEY (company_id, number))",
//! )
//! .execute(&mut conn)?;
//!
//! let mut invoices: Vec<NewInvoice> = [1, 2, 1]
//!     .map(|company_id| NewInvoice { company_id, number: String::new(), amount: 10 })
//!     .into();
//! diesel_seqgen::insert_into(invoices::table).values(&mut invoices).execute(&mut conn)?;
//! let numbers: Vec<&str> = invoices.iter().map(|i| i.number.as_str()).collect();
//! assert_eq!(numbers, ["INV0001", "INV0001", "INV0002"]);
//!
//! // The same counters without a model: the scope is a value you pass.
//! let spec = Spec::builder("invoices").prefix("INV").date("").pad(4).gapless().scoped().build()?;
//! let id = conn.transaction(|conn| diesel_seqgen::global::next_id(conn, spec.scope("2")))?;
//! assert_eq!(id, "INV0002");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `cargo run --example scoped` inserts six invoices of three companies in one bulk:
//!
//! ```text
//! company 1: INV20260001
//! company 2: INV20260001
//! company 1: INV20260002
//! company 3: INV20260001
//! company 2: INV20260002
//! company 1: INV20260003
//! company 2 issues number 3 next
//! ```
//!
//! - Each scope value has its own counter row in `db_key` (`key_name`, `scope`, `period`), in
//!   both modes and with periods as usual: every scope starts at 1 (or the key's `start_value`)
//!   in every period. The key's settings and shape stay on its key row and apply to all scopes.
//! - The scope is not printed unless the template says so: the same ID appears in every
//!   scope, and is unique together with the scope. Make that pair your table's unique key
//!   (`PRIMARY KEY (company_id, number)`), or print the scope (below).
//! - A bulk insert whose records span several scopes takes one reservation per scope, not per
//!   record, scopes in order (so gapless writers lock them in the same order and never
//!   deadlock). Gapless transactions of different scopes lock different rows and never wait for
//!   each other on PostgreSQL and MySQL (SQLite has one writer per database).
//! - Every call that takes, previews or voids numbers takes a scope the same way, as a value:
//!   `next_id`, `next_ids`, `next_number`, `next_numbers` (on [`Generator`](crate::Generator)
//!   and in [`crate::global`]), `last_value`, `peek_next`, [`crate::ledger::void`],
//!   [`crate::admin::gaps`] (`seqgen gaps --scope S --scope-column C`), and
//!   `Sequence::new(key)?.scoped()?.scope("north").next_value(conn)`; `release` gives each
//!   scope's unused numbers back, where this instance reserved last in that scope.
//! - A scope is 1 to 191 characters, without control characters or white space at either end
//!   (MariaDB's collations would take `"acme "` for `"acme"`): [`Error::InvalidScope`](crate::Error::InvalidScope). Several
//!   fields make one scope of their values joined by `/`, a `/` or `\` inside a value escaped
//!   with `\`: `scope = "order_no, year"` names scope `A-17/2026`.
//! - A key has one counter or counters per scope, never both: the shape records which
//!   (`{scoped}`), and a spec of the other kind is refused ([`Error::ShapeChanged`](crate::Error::ShapeChanged)), since scope
//!   1's first ID would be the key's first ID again. A scoped spec without a scope, or an
//!   unscoped one with a scope, is [`Error::ScopeMismatch`](crate::Error::ScopeMismatch).
//! - In batched mode each scope reserves its own blocks, sized by its own demand: a new scope's
//!   first block is 4 numbers, and each reservation sizes the next by how long the last one
//!   lasted (at most 16 times larger or smaller, down to one while the scope is quiet). While
//!   reserving takes most of the generator's time (many busy scopes at once), what a block
//!   lasted measures that load more than the scope's demand: a scope back for more then gets
//!   at least the spec's batch, as an unscoped key does, so that small blocks cannot keep the
//!   generator reserving for ever. Many busy scopes starting at once (a restart under load)
//!   take a while to reach their steady state: up to about a minute for 10,000 scopes served
//!   in turn by 8 threads (`BENCHMARKS.md`, with the figures at 30,000). Every scope used in
//!   the last minutes leaves at most its block unused when the process stops. A scope nobody
//!   used for five minutes is dropped
//!   ([`GeneratorBuilder::scope_idle`](crate::GeneratorBuilder::scope_idle)), and a generator
//!   keeps blocks for at most 65,536 scopes of a spec
//!   ([`GeneratorBuilder::max_scopes`](crate::GeneratorBuilder::max_scopes)); past that, the
//!   least recently used eighth is dropped. A dropped scope's unused numbers go back to their
//!   counters (16 scopes at each later reservation, the rest at `release`; holes only if
//!   another instance reserved after them, or the process stops first), so a long-running
//!   process does not grow without end.
//!
//! ## The scope in the ID
//!
//! `format = "{scope}-{date}-{seq}"` prints the scope: `ACME-2026-0001` and `GLOBEX-2026-0001`
//! are then two IDs, unique on their own. Every other part of such a template has a fixed
//! width, so an ID reads back by taking them from both ends and the scope is what is left,
//! whatever it holds (`AC-ME-2026-0001` is scope `AC-ME`): every ID is exactly one (scope,
//! period, number), and [`Spec::parse`](crate::Spec::parse) returns the scope. That is why a
//! printed scope is refused with `overflow = "widen"`, with a date part of varying width
//! (`%-d`, names) and with a check character (which covers digits only); and why a template
//! with `{scope}` needs `scope = "..."`. The shape records `{scope}` (`seqgen keys`, `gaps`,
//! `check` and `adopt` read it back).
//!
//! ```
//! // On a model: #[distributed_id(format = "{scope}-{date}-{seq}", date = "%Y", pad = 4,
//! //                              scope = "company", gapless)]
//! let invoices = diesel_seqgen::Spec::builder("invoices")
//!     .format("{scope}-{date}-{seq}").date("%Y").pad(4).scoped().gapless().build()?;
//! assert_eq!(invoices.format_in_scope("ACME", "2026", 1), "ACME-2026-0001");
//! assert_eq!(invoices.format_in_scope("GLOBEX", "2026", 1), "GLOBEX-2026-0001");
//! let parts = invoices.parse("AC-ME-2026-0007")?;
//! assert_eq!(parts.scope.as_deref(), Some("AC-ME"));
//! assert_eq!(invoices.counter_of(&parts), Some(7));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
