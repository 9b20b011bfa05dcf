//! # Gapless mode
//!
//! For invoices, receipts and anything an auditor counts: add `gapless` to the field, or use
//! `.gapless()` on a `Spec`, or plain counters without a model ([`crate::sequence`]):
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_seqgen::DistributedId;
//!
//! diesel::table! { invoices (number) { number -> Text, amount -> BigInt } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = invoices)]
//! struct NewInvoice {
//!     #[distributed_id(prefix = "INV", date = "", pad = 6, gapless)]
//!     number: String,
//!     amount: i64,
//! }
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! diesel::sql_query("CREATE TABLE invoices (number TEXT PRIMARY KEY, amount BIGINT NOT NULL)")
//!     .execute(&mut conn)?;
//!
//! let mut invoice = NewInvoice { number: String::new(), amount: 120 };
//! diesel_seqgen::insert_into(invoices::table).values(&mut invoice).execute(&mut conn)?;
//! assert_eq!(invoice.number, "INV000001");
//!
//! // A rolled-back transaction gives its number to the next one: no gap.
//! let rolled_back = conn.transaction(|conn| {
//!     let mut invoice = NewInvoice { number: String::new(), amount: 7 };
//!     diesel_seqgen::insert_into(invoices::table).values(&mut invoice).execute(conn)?;
//!     Err::<(), _>(diesel_seqgen::Error::Database(diesel::result::Error::RollbackTransaction))
//! });
//! assert!(rolled_back.is_err());
//! let mut next = NewInvoice { number: String::new(), amount: 8 };
//! diesel_seqgen::insert_into(invoices::table).values(&mut next).execute(&mut conn)?;
//! assert_eq!(next.number, "INV000002");
//!
//! let n = conn.transaction(|conn| diesel_seqgen::sequence::next_value(conn, "receipt"))?; // 1, 2, 3, …
//! let v = conn.transaction(|conn| diesel_seqgen::sequence::next_values(conn, "receipt", 5))?;
//! assert_eq!((n, v), (1, vec![2, 3, 4, 5, 6]));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! - The counter row is locked and incremented **inside the caller's transaction**; the ID and the
//!   row commit or roll back together. A rollback gives the number to the next caller: the
//!   committed numbers of a period are exactly 1..N, no gap, no repeat.
//! - `diesel_seqgen::insert_into(..)` opens a transaction around fill + insert when none is open; if it
//!   fails, the fields it filled are set back to unset, so a retry takes a fresh number. When a
//!   transaction of your own rolls back, do the same before retrying (clear the gapless fields,
//!   or build the records again): the rollback gave their numbers to the next caller. The
//!   low-level calls (`assign_ids`, `Generator::next_id`, `next_value`) refuse to run outside a
//!   transaction ([`Error::OutsideTransaction`](crate::Error::OutsideTransaction)): a number taken in autocommit could be lost before
//!   the row that uses it is written. [`Sequence::new(key)?.allow_outside_transaction()`](crate::sequence::Sequence::allow_outside_transaction) opts in.
//! - Same key: callers queue on the row lock, in order. Different keys: different rows, never
//!   blocking each other (on PostgreSQL and MySQL; SQLite has one writer per database). Several
//!   gapless keys of one record are always locked in key order, so two writers never deadlock.
//! - `#[distributed_id(gapless, nowait)]` / `Spec::builder(..).gapless_nowait()` /
//!   `Sequence::new(key)?.nowait()`: instead of waiting for a transaction holding the counter,
//!   fail at once with [`Error::Busy`](crate::Error::Busy); the attempt runs in a savepoint, so your transaction stays
//!   usable.
//! - Periods work as in batched mode; gapless and batched fields can share a struct and the
//!   `db_key` table.
//! - Cost: the counter row is locked until your transaction commits, so a hot key allows one
//!   transaction at a time. Keep those transactions short.
//! - **On PostgreSQL the insert takes the number itself.** `diesel_seqgen::insert_into(..).execute(..)`
//!   (and `diesel_seqgen::nonblocking::insert_into(..).execute(..)` on diesel-async)
//!   of records whose only ID field is gapless, with a spec of prefix, date part and zero-padded
//!   number (`widen` included; no template, series, check characters, letters, cycle, scope or
//!   `nowait`), is one statement: a data-modifying CTE advances the counter and the `INSERT`
//!   reads it, so the row is locked from that statement to your `COMMIT`, with no round trip of
//!   yours in between. Like any failed statement on PostgreSQL, a failed insert (a unique
//!   violation) then aborts your transaction, which gives the number back; to go on after one,
//!   run the insert in a nested `conn.transaction(..)` (a savepoint). Everything else (other
//!   backends, `get_result`, `execute_with`, `assign_ids`, a key's first insert in a process, a
//!   record with a `None` that Diesel writes as `DEFAULT`, a struct with no
//!   `#[diesel(table_name = ...)]` of its own, with `embed`ded or skipped fields, or an ID column
//!   whose `table!` `sql_name` is not its field's name) takes the number with its
//!   own statement first, in a savepoint when your transaction is open, so that a failed insert
//!   gives it back while your transaction goes on.
//! - **Fastest: the insert alone.** Outside any transaction of yours, that one statement is its
//!   own transaction (autocommit): the number and the row commit together or not at all, with
//!   no `BEGIN` and `COMMIT` round trips, and the counter row is locked for no round trip. With
//!   8 workers on one key that is 2.6× django-sequences and 0.83× pgbench's bare
//!   `UPDATE … RETURNING`, against 1.8× and 0.60× inside a transaction (`BENCHMARKS.md`, "Gapless
//!   mode"). Open a transaction only when the insert must commit with other work.
//!
//! Isolation levels:
//!
//! | backend | READ COMMITTED | REPEATABLE READ | SERIALIZABLE |
//! |---|---|---|---|
//! | PostgreSQL | supported | a counter changed since your snapshot aborts your transaction: `Error::TransactionConflict`, run it again | same as REPEATABLE READ |
//! | MySQL / MariaDB | supported | supported (the update reads the latest row under its lock) | supported; plain reads take share locks here, so transactions taking numbers of one key deadlock more often: InnoDB aborts one (`Error::TransactionConflict`), run it again |
//! | SQLite | (always serializable) | | use `immediate_transaction` for transactions that read before they take a number |
//!
//! On MySQL/MariaDB under REPEATABLE READ (its default), creating a counter row inside a
//! transaction could deadlock with transactions creating neighbouring rows (InnoDB's gap
//! locks): seqgen creates a row it does not know of before it updates it, with a statement that
//! takes no gap lock, so the first numbers of new keys, scopes (two tenants' first invoices) and
//! periods never deadlock each other (`tests/suite/new_keys.rs`). Transactions under
//! SERIALIZABLE (plain reads take share locks) and transactions that lock rows in opposite
//! orders can still be aborted by InnoDB (1213, `Error::TransactionConflict`): run the transaction again —
//! [`diesel_seqgen::retry_transaction(&mut conn, |conn| { … })`](crate::retry_transaction) does that in
//! one call (up to 30 attempts, with a growing jittered pause). Batched mode's own reservations
//! run in autocommit and retry these conflicts themselves.
//!
//! ## The number inside the transaction, or shortly after it
//!
//! A gapless number taken inside your transaction keeps its counter row locked until the
//! transaction ends: every other writer of that key waits. An invoice transaction that inserts
//! the invoice, then spends 20 ms on its lines, stock moves and a payment call lets at most
//! about 50 invoices a second through one key, whatever the hardware.
//!
//! `#[distributed_id(gapless = "deferred")]` (an `Option<String>` field) takes no number at
//! the insert: the row commits with NULL, no lock of seqgen's is held, and a follower numbers
//! committed rows afterwards in short transactions of its own, in the order it sees them
//! committed ([`pending`](crate::pending)). The promises are the same per period and scope:
//! exactly 1..N, no hole, no number twice, none for a row rolled back; followers of one key
//! (threads or processes) take turns, and a follower killed midway leaves its batch for the
//! next (`seqgen-cli/tests/pending.rs` kills them with SIGKILL).
//!
//! | | inside the transaction (`gapless`) | after the commit (`gapless = "deferred"`) |
//! |---|---|---|
//! | the number | when the insert returns, in your transaction | a moment after the commit (read it back, below) |
//! | other writers of the key | wait for your commit | never wait |
//! | committed rows a second, 8 writers, 20 ms of other work after the insert (`BENCHMARKS.md`) | 42 (PostgreSQL), 43 (MariaDB): one key lets one transaction through at a time | 336 and 343, 8×: every writer at its own pace (32 writers: 1,335 and 1,316, 32×) |
//! | from the commit to the number | none: the number is there at the insert | p99 4.8 ms woken by `NOTIFY` (PostgreSQL), 12.3 ms polling every 10 ms (MariaDB) |
//! | needs | nothing else | a follower running, an integer column ordering the rows |
//! | the period | the clock's at the insert, or the document's date | the document's date (`period_from`), else the clock's when numbered |
//!
//! Choose the deferred mode when the number is not needed inside the transaction that creates
//! the row (printed on the invoice later, sent to the customer afterwards) and writers of one
//! key are many or their transactions long; keep the number inside the transaction when it
//! must be known before the commit.
//!
//! Running the follower: [`pending::spawn_follower`](crate::pending::spawn_follower) in the
//! service (a thread), or `seqgen number --follow --key invoices --table invoices --column
//! number --order-by id` as a sidecar (`contrib/` has a systemd unit and a Kubernetes sidecar).
//! Both run [`pending::keep_following`](crate::pending::keep_following): after a lost
//! connection, a server restart, a failover, a lock wait that timed out or a deadlock they
//! connect again, after a pause growing from 100 ms to 10 s, and go on; they stop only on what
//! no new attempt can fix (a table or column that does not exist, `db_key` missing, a spec the
//! key refuses), the command with exit code 2. SIGTERM ends the command after its batch, with
//! exit code 0 (`tools/tests/crash.rs` and `tools/tests/patroni.rs` run two through server
//! crashes and a Patroni failover, never restarted). `seqgen metrics --listen … --pending
//! invoices:invoices:number:id` exports the rows waiting and how long the oldest has waited,
//! for the `SeqgenFollowerLagging` and `SeqgenFollowerStopped` alerts. On PostgreSQL, run
//! [`pending::notify_on_commit`](crate::pending::notify_on_commit) once per table (a statement
//! trigger): each commit then wakes followers at once through `LISTEN`; elsewhere they look at
//! the table every `poll` (50 ms for the command). Rows committed while no follower ran are
//! numbered at the next start. Give the table an index that finds the rows without a number
//! (`CREATE INDEX … ON invoices (id) WHERE number IS NULL` on PostgreSQL, `(number, id)`
//! elsewhere).
//!
//! Reading the number back: the row's id is known at the insert (`RETURNING id`,
//! `LAST_INSERT_ID()`); select its number column until it is not NULL (a few milliseconds with
//! a follower running), or show the document as "numbering…" and let the page refresh.
