//! # Production numbering: existing IDs, counters that never go back, hidden volume
//!
//! ## Adopting a table that already has IDs
//!
//! A table written by an app's old code already holds `U20261121000001 … U20261121000523`: the
//! first ID seqgen hands out would be `U20261121000001` again. Before seqgen takes over, let it
//! read the table and raise each counter (every period, every scope) past the highest ID found:
//!
//! ```sh
//! seqgen adopt --key users --table users --column id \
//!     --shape 'U{date:%Y%m%d}{seq:6}' --dry-run      # what it would raise
//! seqgen adopt --key users --table users --column id \
//!     --shape 'U{date:%Y%m%d}{seq:6}' [--scope-column company_id]
//! ```
//!
//! `--shape` says how the IDs look (as `seqgen keys` shows a spec's shape; `Spec::shape` prints
//! yours) for a key seqgen has not used yet; without it, the shape recorded on the key's row.
//! Values that are no ID of the key are counted and the first few shown. The same from Rust,
//! with the spec your model uses ([`admin::check`](crate::admin::check) reads only):
//!
//! ```
//! use diesel::connection::SimpleConnection;
//! use diesel::prelude::*;
//! use diesel_seqgen::admin::{self, IdColumn};
//!
//! diesel::table! { users (id) { id -> Text } }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! conn.batch_execute("CREATE TABLE users (id TEXT PRIMARY KEY);
//!     INSERT INTO users VALUES ('U20261121000523'), ('U20261120000017');")?;
//! let spec = diesel_seqgen::Spec::builder("users").prefix("U").build()?;
//!
//! let found = admin::adopt(&mut conn, &spec, IdColumn::of(users::id))?;
//! assert_eq!(found.counters.len(), 2); // one per period, each raised to its highest number
//! assert_eq!(admin::peek(&mut conn, &spec, "20261121")?.next, 524);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `adopt` runs in one transaction, never lowers a counter, and is safe while instances run:
//! each sees the raised counter at its next reservation. A block an instance reserved before
//! (numbers at or below the old counter) is still served; if the table holds IDs in that range
//! that seqgen did not hand out, those can come out again until the block runs out. `adopt`
//! reports such counters ([`CounterCheck::in_use`](crate::admin::CounterCheck::in_use)) and
//! warns: restart those instances after adopting. Reading is streamed: 1,000,000 IDs over four
//! periods take 0.5–0.7 s on SQLite, PostgreSQL and MariaDB (`BENCHMARKS.md`).
//!
//! ## Checking a table against its counters
//!
//! `seqgen check` (same arguments, `--json` for monitoring) exits with 1 when a counter is
//! behind its table: the next reservation would hand out an ID the table holds. That is the
//! state a restore, a hand edit or an import leaves; `seqgen adopt` fixes it.
//!
//! ## Counters never go back
//!
//! The database refuses an `UPDATE` that lowers `current_value` (migration 600: a trigger on each
//! backend), whoever runs it, with a message that says what to do instead:
//!
//! ```text
//! UPDATE db_key SET current_value = current_value - 5000 WHERE key_name = 'orders';
//! ERROR: seqgen: a db_key counter may not go back (…), its numbers may be in use.
//!        Use a new key, `seqgen adopt` or `seqgen renumber`.
//! ```
//!
//! The one lowering let through names the value it lowers from (`lowered_from`, a
//! compare-and-set the trigger clears again): seqgen's own
//! [`release`](crate::Generator::release), and the deliberate path for a key nobody uses any
//! more, `seqgen renumber --key K [--scope S] [--period P] --to N`
//! ([`admin::renumber`](crate::admin::renumber)), which refuses a counter that took a number
//! within `--min-idle-secs` (default an hour). Raising stays free. Deleting a row is not
//! covered (a deleted row starts again from its start value): only `seqgen prune` should.
//!
//! ## Numbers that do not reveal volume
//!
//! Consecutive order numbers tell a customer who orders twice a month apart how many orders
//! were taken between. With `obfuscate`, the n-th number of each period is shown as the image
//! of n under a permutation of the range the pad can show, keyed by a secret: IDs stay unique,
//! keep their width and parse back to n with the key; `db_key`, the void ledger, `gaps`,
//! `check` and `adopt` keep counting n.
//!
//! ```
//! use diesel_seqgen::DistributedId;
//!
//! #[derive(DistributedId)]
//! struct NewOrder {
//!     // The environment variable holding the key (`openssl rand -hex 32`), read when the
//!     // model is first used; never the key itself.
//!     #[distributed_id(prefix = "ORD", date = "%y%m", pad = 6, obfuscate = "ORDER_NUMBER_KEY")]
//!     no: String,
//! }
//!
//! // Or with the builder, the key from wherever the app keeps its secrets:
//! let key = b"0f3a9c1e5b7d2f4a6c8e0b1d3f5a7c9e";
//! let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("%y%m").pad(6).obfuscate(key).build()?;
//! let first = spec.format("2611", 1);
//! assert_eq!(first.len(), "ORD2611000001".len());
//! assert_eq!(spec.counter_of(&spec.parse(&first)?), Some(1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The permutation is a Feistel network of HMAC-SHA-256 rounds, tweaked by the period, with
//! cycle walking onto the exact range (`1..=10^pad - 1`; past it, with `widen`, each further
//! number of digits, with `letters` the lettered range; one cycle of `cycle`). It works with
//! batched and gapless mode, scopes, check characters and every overflow policy; not with the
//! one-statement gapless insert of PostgreSQL, which prints IDs in SQL (such a key takes its
//! number in two statements). The key's fingerprint (32 bits of an HMAC) is part of the shape
//! recorded on the key's row: an instance given another key is refused with
//! [`Error::ShapeChanged`](crate::Error::ShapeChanged), and a missing key (an unset variable,
//! fewer than 16 bytes) fails with [`Error::InvalidSpec`](crate::Error::InvalidSpec) — never
//! other IDs. Keep the key: without it, IDs cannot be parsed back, and the command line,
//! which has only the shape, refuses obfuscated keys.
//!
//! ### What the permutation guarantees, and where it is weak
//!
//! - **Stable for years.** The construction is fixed: known-answer vectors (key, period, range,
//!   number → ID) are committed in `seqgen-core/tests/obfuscation_vectors.rs`, and a change that
//!   would renumber an existing ID fails them.
//! - **Unique and reversible, always**: a permutation of the exact range, whatever the pad.
//! - **Hidden volume, up to a point.** Each period has its own permutation (the period and the
//!   range are its tweak). Someone who learns the numbers behind many IDs of one period (not
//!   only the IDs: the n each stands for) learns more of that period's permutation, and with a
//!   small range that is within reach. NIST SP 800-38G rev. 1 sets a floor of 10^6 values for
//!   the domain of its format-preserving encryption (FF1, FF3-1) for that reason. A pad of 6
//!   is at that floor (`1..=999_999`); pads of 3 to 5 are below it: they stop a customer from
//!   reading the volume off two order numbers, not a determined adversary who collects many.
//!   seqgen warns once per key and generator (with `tracing`) when an obfuscated key's range is
//!   below the floor: use a pad of 6 or more where the volume must stay secret.
//! - **Why not FF1** (the `fpe` crate): FF1 is specified for domains of at least 10^6, so it
//!   cannot serve the pads of 3 to 5 digits order numbers use, and it permutes digit strings
//!   (`0..10^pad`, with 0), not seqgen's ranges (`1..10^pad`, the lettered range, a cycle), so
//!   it would need the same cycle walking. An 8-round Feistel network of HMAC-SHA-256 rounds
//!   with cycle walking (Black and Rogaway's construction) covers every range alike, and
//!   changing it now would renumber every obfuscated ID already handed out.
