//! # Guarantees
//!
//! **Never a duplicate**: across threads, processes, machines, restarts, rollbacks, clock skew and
//! dropped connections.
//!
//! - Every reservation is one atomic statement that adds `n` to the counter row (creating it if
//!   missing) and returns the new value: SQLite and PostgreSQL
//!   `INSERT … ON CONFLICT DO UPDATE … RETURNING`, MySQL
//!   `UPDATE … SET current_value = LAST_INSERT_ID(current_value + n)`. Two instances always get
//!   disjoint blocks.
//! - **Periods are rows**, keyed by `(key_name, period)`: a counter is never reset in place. An
//!   instance whose clock is a day behind stamps IDs with its (wrong) date and draws from that
//!   date's counter, which only grows: it can never reissue a number. A block reserved for one
//!   period never issues IDs stamped with another; at midnight the rest of it goes back to that
//!   period's counter at the key's next reservation (a hole only if another instance reserved
//!   after it).
//! - **Only committed numbers are cached.** When the connection is inside a transaction
//!   (Diesel's `conn.transaction`) and the cache is empty, seqgen either reserves through the
//!   generator's r2d2 pool on another connection in autocommit (PostgreSQL, MySQL:
//!   `Generator::builder().pool(pool)`), or takes exactly the numbers asked for inside your
//!   transaction and caches nothing: a rollback gives them back. The second way holds the
//!   counter's row lock until you commit; on SQLite it is always the way (one writer per database).
//!   A transaction opened with a raw `BEGIN` is invisible to Diesel and so to seqgen: use
//!   `conn.transaction`. Numbers given back by a rollback go to the next caller, so after your
//!   transaction rolls back, clear the ID fields it filled (or build the records again) before
//!   retrying; a record that keeps such a number would share it.
//! - **Overflow is an error** naming the key and period (`Error::Overflow`), never a truncated or
//!   wrapped ID. A request that cannot fit (`next_ids(5000)` on a 3-digit key) is refused before
//!   anything is reserved, so the key keeps working. Counters never pass `i64::MAX`: a
//!   reservation that would (an operator's huge `batch_size`, a `start_value` near the end with
//!   `widen`) takes only what is needed, or fails with `Error::CounterOutOfRange` naming the key;
//!   on every backend, SQLite included, nothing wraps or clamps.
//! - **Databases are told apart.** A database is known by what the server says it is plus a
//!   token stored in it: PostgreSQL's cluster `system_identifier` and the database's oid; MySQL's
//!   host, port, data directory, `server_id` and schema (on a MariaDB Galera node, the cluster's
//!   `wsrep_cluster_name` and `wsrep_cluster_state_uuid` instead of the node's, so that every
//!   node of one cluster is one database: a pool across nodes and a move to another node keep
//!   their cache; tested on three nodes of the test's own, `seqgen/tests/suite/galera.rs`);
//!   SQLite's file with its device and inode;
//!   and the random token in the reserved `db_key` row `('', '')`. A copy (a copied SQLite file,
//!   `CREATE DATABASE … TEMPLATE`, a dump restored elsewhere) carries the token but not the rest,
//!   so it is another database. The functions of [`crate::global`] use a process-wide
//!   default that keeps one cache per database, so a test suite with a database per test just
//!   works: a connection checked out of an r2d2 pool is identified at its first use and then
//!   remembers its database (in the pool's per-connection extensions, which live as long as the
//!   physical connection). On any other connection (a plain one, `&mut *pooled`, diesel-async's)
//!   `insert_into(..).execute` guesses the database (the one last found at the connection's
//!   address, or the only one connections of its type reach) and the insert checks the guess
//!   itself: after identifying a session's database, seqgen marks the session
//!   (`set_config('seqgen.identity', …)` on PostgreSQL, undone by a rollback; a user variable on
//!   MySQL) with a marker only this process's generator for that database has, and the rewritten
//!   insert inserts nothing unless the session carries it (a bulk on MySQL asks the session
//!   first, then inserts on it). A wrong guess then costs a statement that inserts nothing,
//!   a query and a few holes, never another database's numbers (`tests/suite/guess.rs`).
//!   Everything else on such a connection (`next_id`, `assign_ids`, `get_result`, an insert
//!   Diesel writes with `DEFAULT`, the insert of a struct that names no
//!   `#[diesel(table_name = ...)]` or `embed`s another) is identified with one query per call. A `Generator` you create serves one database and refuses another
//!   (`Error::DifferentDatabase`) at its next reservation.
//! - **Reservations are durable.** On PostgreSQL every reservation commits with
//!   `synchronous_commit = on` (its own transaction only: your other writes keep your setting).
//!   A server that cannot commit durably is refused with `Error::NotDurable`, naming the setting:
//!   MySQL/MariaDB with `innodb_flush_log_at_trx_commit` other than 1, PostgreSQL with
//!   `fsync = off`. For a development database, accept it with
//!   `Generator::builder().accept_non_durable_server()` or
//!   `diesel_seqgen::global::accept_non_durable_server()`.
//! - **A counter that went back is refused.** A generator remembers the highest number it held
//!   per key and period (the last 16 periods); a reservation that returns a block at or below it
//!   (an operator lowered `current_value`, `db_key` was restored from an old backup) is
//!   `Error::CounterWentBack` and none of its numbers is served. It sees only its own history:
//!   a process started after the edit cannot know what was handed out before.
//! - **One key, one shape.** The first use of a key records its shape on the key's row (`db_key.shape`,
//!   e.g. `U{date:%Y%m%d}{seq:6}`: prefix, date pattern, width, overflow, series, template); a
//!   spec of another shape on the same key is refused with `Error::ShapeChanged`, since two
//!   shapes can print the same ID from different period rows (`%Y%m%d` + 8 digits and
//!   `%Y%m%d%H` + 6). To change the format, use a new key.
//! - **Keys are exact.** A key with leading or trailing whitespace or a control character is
//!   refused by `Spec::build` and by the derive (MariaDB's `PAD SPACE` collations compare `"pk "`
//!   equal to `"pk"`, and `" "` to the reserved row `''`).
//! - **Gapless numbers of a failed insert go back.** `diesel_seqgen::insert_into` runs the fill and the
//!   insert of a gapless record in a savepoint when a transaction is open, so an insert that fails
//!   (a unique violation you catch) gives its number back on every backend; on PostgreSQL, where
//!   the insert takes the number in the same statement (see [gapless](super::gapless)), the failed statement
//!   aborts your transaction instead, which gives it back as well. With `assign_ids`, do the
//!   same yourself: `conn.transaction(|conn| { assign…; insert… })` inside yours.
//!
//! ## What can still produce a duplicate
//!
//! seqgen detects what it can see; these it cannot, and they are yours to avoid:
//!
//! - **Deleting `db_key` rows by hand.** Lowering `current_value` is refused by the database
//!   itself (migration 600, [adopting](super::adopting)); a deleted row starts again from its
//!   start value. Only `seqgen prune` should delete rows; to renumber, `seqgen renumber`.
//! - **Restoring the whole database to an earlier point** (a backup, a point-in-time recovery, a
//!   VM snapshot) while app instances hold blocks reserved after that point: the restored server
//!   keeps its identity, and the numbers in those blocks come again. Restart every instance after
//!   a restore, and raise the counters past what was issued: `seqgen adopt` (`seqgen check` tells).
//! - **A physical copy of a PostgreSQL cluster** (a promoted replica after failover,
//!   `pg_basebackup`, a file-system copy) has the same system identifier and oid: it is the same
//!   database to seqgen, which is right for a failover. seqgen reads the server's **timeline**
//!   (one more at each promotion) with every reservation: after a failover a generator drops
//!   the blocks it reserved before (an asynchronous standby may not have received them), and a
//!   server on an older timeline than the process saw for the database (the old primary
//!   restarted writable beside the promoted one: a split brain) is refused with
//!   `Error::OldTimeline`. Inside a transaction (gapless numbers, a block without a pool) the
//!   session carries the timeline seqgen checked it on, and the reservation's statement writes
//!   nothing unless the server is still on it; a new session is checked once. What it cannot see: a process that only ever talks to the old
//!   primary, numbers an asynchronous standby lost that were already served before the
//!   failover, and a clone used beside the original on the same timeline. Fail over to a
//!   synchronous standby (`synchronous_standby_names`), and fence the old primary. Gapless keys
//!   are refused on a primary with standbys connected and `synchronous_standby_names` empty
//!   (`Error::AsyncReplication`; `accept_async_replication` accepts the risk), checked with each
//!   key's first number in a generator (`seqgen/tests/suite/replication.rs`). One URL
//!   can name both servers, libpq keeping the first that accepts writes:
//!   `postgres://app@db1:5432,db2:5432/shop?target_session_attrs=read-write` (tested: crash,
//!   promote, go on, old primary back and refused, `seqgen/tests/suite/failover.rs`).
//! - **MariaDB has no server UUID**: a clone on another host or port, or in another schema, is
//!   told apart, but a data directory copied to the same host, port and path and started in place
//!   of the original (with the same `server_id`) is not. MySQL 8's `@@server_uuid` would tell them
//!   apart; seqgen does not read it yet. A Galera cluster started from a copy of another's data
//!   directory (`--wsrep-new-cluster` on the copy) keeps its state UUID: give the copy another
//!   `wsrep_cluster_name`.
//! - **Switching database on a connection** (`USE other` on MySQL) after a `Generator` was bound
//!   to it, or after a pooled connection was identified: seqgen checks the database at each
//!   reservation and once per pooled connection, not at every cached number.
//! - **SQLite with `synchronous = NORMAL`** (what `diesel_seqgen::sqlite::configure` sets, with WAL)
//!   survives a crash of the process, not a power cut: the last commits can be lost with the
//!   machine. Use `PRAGMA synchronous = FULL` where the machine can lose power.
//! - **Servers configured not to be durable** that you accepted with
//!   `accept_non_durable_server`.
//! - **A transaction a Galera node rolled back without the client hearing of it.** A node that
//!   aborts an idle client's transaction (another node's write set needed its rows) reports the
//!   abort to the client's next command; when that command is the close of a prepared
//!   statement, which has no reply (Diesel closes every statement it does not cache), nobody
//!   hears of it, and each of the client's next statements commits alone, its `COMMIT` too
//!   (MariaDB 10.11, Galera 4: the nemesis's numbers after the commit had holes, and once a
//!   counter behind its rows, until seqgen checked for it). seqgen's reservation inside a
//!   transaction changes nothing unless MariaDB still holds the transaction
//!   (`@@in_transaction`), and fails as a conflict; the follower's write of a batch writes
//!   nothing then, and the batch is refused (`Error::NumberedMeanwhile`), which the follower
//!   runs again (`suite/lost_transaction.rs`, `suite/lost_batch.rs`); a gapless insert whose
//!   savepoint went with the transaction is a conflict too. The app's own statements in that
//!   transaction are beyond seqgen: keep a gapless key's writers on one node, as the table
//!   below says.
//!
//! ## Under partitions, paused processes and moved clocks
//!
//! The nemesis (`tools/src/nemesis`, `BENCHMARKS.md`, "Reliability") runs apps through every
//! door (`insert_into` after `use_pool`, `next_id` on a key dated by the hour, gapless keys,
//! numbers after the commit with a follower per app) while it cuts them off from the server
//! (both ways or one), drops their packets, slows their link, pauses them (SIGSTOP), moves
//! their clock by hours, kills them and crashes the server (under Patroni it also isolates
//! the leader, cuts it from etcd, from its standbys or from half the apps); a checker reads
//! what each app was handed and the tables. In 30 minutes on PostgreSQL, on MariaDB, on a
//! Galera cluster and under Patroni: no number repeated, every gapless key and every key
//! numbered after the commit exactly 1..N, no counter behind its table. What is correct but
//! may surprise:
//!
//! | what happens | figure | why |
//! |---|---|---|
//! | a gapless writer cut off or paused inside its transaction keeps the key's counter row locked until the server drops its session: the key's other writers wait | PostgreSQL's gapless key took no number for 28.4 s while a writer was cut off for 19.8 s (seed 5907); MariaDB refused one writer with `Lock wait timeout exceeded` (1205) after `innodb_lock_wait_timeout`, 50 s (once in 30 minutes, seed 5902; on Galera too, seed 5905): run the transaction again; PostgreSQL's writers waited (no `lock_timeout` by default) | the server keeps the transaction of a client it has not seen go, until its TCP gives up (minutes). Numbers after the commit (`gapless = "deferred"`) hold no lock in the writer's transaction; batched keys never wait (each reservation is one short statement) |
//! | an insert whose connection dropped at its commit does not know whether it committed | 87 to 136 such inserts per key in 30 minutes, each the table's to tell | the commit reached the server, or not (a failed insert leaves its records unset): look the row up by a key of the app's own before inserting it again, or a retried insert makes a second row with another number |
//! | under Patroni, a leader isolated from etcd and its standbys (its apps still reaching it) stops every key, gapless or not | 29–31 s without a commit on any key (leader key 10 s, loop 2 s; seed 5906) | it demotes itself about 3 s after it lost etcd; a standby takes over once the key expires and names its synchronous standby, then the apps' connections find it. Commits the old leader made alone were not acknowledged (unknown outcomes, resolved by the table) and `pg_rewind` removes them: none was a number anyone kept |
//! | under Patroni, a leader cut from its standbys alone keeps its key, and its commits wait | 27 s without a commit on the gapless keys for one cut of 15 s (seed 5906); 55 s on every key for three cuts in 50 s (seed 5909) | `synchronous_mode`: a commit waits for the synchronous standby's answer (that is what makes a failover lose nothing); numbers are taken, not kept, until it comes |
//! | an app whose clock moved prints the moved clock's period | ±1 to 6 hours, 17 and 27 jumps: IDs of other hours, none repeated | a period is a row of its own; an ID's date is the instance's clock's (or the document's) |
//!
//! ## Clusters and replicas
//!
//! What each setup promises, and the test that shows it (servers each test starts itself):
//!
//! | setup | never a duplicate | gapless | configure | test |
//! |---|---|---|---|---|
//! | MariaDB Galera, any node a writer | yes: the nodes are one database (cluster name and state UUID); another node's write to a counter is a conflict, retried (30 attempts, pauses doubling to 50 ms) | yes with one writer node per key (its transactions queue on the counter row: `tools/tests/galera_faults.rs`); writers of one gapless key on several nodes fail certification and must run again inside [`retry_transaction`](crate::retry_transaction), and there MariaDB 10.11 left some clients waiting forever (`BENCHMARKS.md`): not recommended. A writer on a second node sees its lost race as `Error::TransactionConflict` (errno 1213: certification failed, or another node's write set aborted it), which `retry_transaction` runs again, also where the abort came between two statements under seqgen's savepoint (until 0.2 that ended the writer with "SAVEPOINT diesel_savepoint_1 does not exist": `suite/lost_transaction.rs`); the retry takes new numbers (until 0.2, records keeping the number of an aborted attempt were inserted again and met the table's unique violation, 1062: the nemesis found it, `suite/retried_insert.rs`). The table stays exactly 1..N. Numbers given after the commit (`gapless = "deferred"`) with followers on several nodes: exactly 1..N (until 0.2 they left holes). A node may roll a transaction back without the client hearing of it ("What can still produce a duplicate", above): seqgen's own statements check they are still in it, the app's cannot | `innodb_flush_log_at_trx_commit = 1` on every node (seqgen refuses other values: acknowledged commits can be lost); a `wsrep_cluster_name` of its own per cluster | `suite/galera.rs`, `tools/tests/galera_faults.rs` |
//! | PostgreSQL, failover to a synchronous standby | yes: blocks reserved before a promotion are dropped; a server on an older timeline than the process saw (the old primary restarted writable beside the promoted one) is refused with `Error::OldTimeline`, for batched and gapless numbers; a process that never reached the promoted server cannot tell, so fence the old primary | yes, on the promoted server; the old primary refuses them as above | `synchronous_standby_names`; one URL naming both servers with `target_session_attrs=read-write`; fence the old primary | `suite/failover.rs`, `tools/tests/pg_failover.rs` (crash and promotion under 4 processes; the old primary back under 4 processes: all 4 refused, 0 repeated) |
//! | PostgreSQL, asynchronous standbys | no: the numbers of blocks the standby never received are handed out again by the promoted server, to any instance: one started after the failover, or one that lived through it and reserved there before it saw a counter go back (`Error::CounterWentBack` stops it then; a repeat between two processes that both lived through a Patroni failover was measured) | refused (`Error::AsyncReplication`) unless `accept_async_replication` | make the standby synchronous | `suite/replication.rs`, `tools/tests/pg_failover.rs` (a standby stopped 2 s under load, then promoted: thousands of IDs repeated, and the check sees them) |
//! | pgbouncer, transaction pooling | yes | yes | `CacheSize::Disabled` on every Diesel connection | `suite/pgbouncer.rs` |
//! | PostgreSQL under Patroni (etcd, HAProxy) | yes, with `synchronous_mode`: the leader's crash, a switchover and the old leader's return (0 repeated) | yes, exactly 1..N through the same faults; a gapless user starting while Patroni has not named the new primary's synchronous standby yet waits for it (below) | below | `tools/tests/patroni.rs`; the nemesis's `--setup patroni` (partitions of the leader from etcd, its standbys, some apps: above) |
//!
//! ### PostgreSQL under Patroni
//!
//! The setup that keeps both promises:
//!
//! - `synchronous_mode: true` in Patroni's DCS settings, so that a failover only promotes the
//!   synchronous standby; `synchronous_mode_strict: true` if writes should stop rather than
//!   commit without a standby when the last replica is gone.
//! - Writes routed to the leader by HAProxy asking Patroni (`option httpchk GET /primary`,
//!   `on-marked-down shutdown-sessions`), or a libpq multi-host URL with
//!   `target_session_attrs=read-write`.
//! - A watchdog (`watchdog: mode: required`), so that a leader whose Patroni died cannot go on
//!   accepting writes: fencing.
//!
//! What each choice risks, as measured on a 3-node cluster on loopback (4 loadgen processes):
//!
//! - **A new leader names its synchronous standby a loop later** (Patroni promotes with
//!   `synchronous_standby_names = ''`; 10 s by default): a process taking its first gapless
//!   number in that window saw a primary with standbys and no synchronous one, and was refused
//!   (`Error::AsyncReplication`: 48 of 51 probes over 6 s with the default timing). seqgen
//!   now waits while the standbys connected in the last 15 s, asking every 200 ms, for up to
//!   15 s: accepted as soon as a synchronous standby is named, refused if none is by then. A
//!   primary whose standbys have been connected longer is refused at once; where
//!   `pg_stat_replication`'s `backend_start` is hidden (a role without `pg_read_all_stats`),
//!   the first refusal comes after the 15 s. A process that lived through the failover is
//!   checked again on the new primary before its next gapless number, as a new one is.
//! - **HAProxy or the multi-host URL, without a watchdog.** With Patroni killed and its
//!   PostgreSQL left running and writable (no watchdog), HAProxy stops routing to it (Patroni
//!   no longer answers `/primary`): nothing repeated. A multi-host URL still reaches it, and
//!   in asynchronous mode 8,845,942 IDs repeated; with `synchronous_mode`, the old primary's
//!   commits wait for a standby that follows the new leader, and seqgen refuses its older
//!   timeline once a process saw the new one. Route through HAProxy, or fence with a watchdog.
//! - **Asynchronous mode** (no `synchronous_mode`): gapless processes are refused, as
//!   documented; batched numbers can repeat after a crash (the row above).
//!
//! Through a failover, an app tries again, on a new connection, what a lost connection
//! returns, and also a read-only transaction's refusal (`cannot execute INSERT in a read-only
//! transaction`, Diesel's `DatabaseErrorKind::ReadOnlyTransaction`): HAProxy routes to the new
//! leader as soon as Patroni names it, a moment before its promotion ends. Trying again
//! repeats nothing: a gapless number rolls back with the refused transaction, a batched one
//! it took is a hole, as after any rollback. `BENCHMARKS.md` gives the write stall and
//! reconnects of each fault.
//!
//! ## Voiding a number
//!
//! Auditors ask "why is 1041 missing?". `diesel_seqgen::ledger::void(&mut conn, &spec,
//! "INV2026001041", "customer cancelled")?` records an issued number as cancelled, with its reason, in the `db_key_void`
//! ledger (migration `00000000000400`), on your connection: inside your transaction it commits or
//! rolls back with the rest. It refuses an ID the spec could not have produced
//! (`Error::InvalidId`), a number the counter never handed out (`Error::NotIssued`) and a second
//! void (`Error::AlreadyVoided`); `diesel_seqgen::ledger::voided(&mut conn, &spec, period)?` lists the
//! ledger of a period. For a scoped key, pass `spec.scope("acme")`: each scope has its ledger.
//! Voiding explains a gap, it does not fill it: the number is never handed out again.
//!
//! ## Looking without taking
//!
//! `diesel_seqgen::global::last_value(&mut conn, &spec)?` is the last counter the database handed out in the
//! current period (`None` before the first), `diesel_seqgen::global::peek_next(&mut conn, &spec)?` the one it
//! hands out next if nothing else takes one first (after the last, or at the key's `start_value`);
//! neither reserves nor locks anything (`Generator::last_value` / `peek_next` use a generator's
//! clock). In gapless mode they show what committed: the next committing transaction gets
//! `peek_next`, unless another commits first. In batched mode they show the database's view, in
//! whole blocks: numbers an instance still holds in memory count as handed out, and `peek_next` is
//! where the next *reservation* starts. Format a counter with `spec.format(&spec.period_at(now), n)`.
//! For a scoped key, pass `spec.scope("acme")`.
//!
//! ## Giving numbers back
//!
//! On a clean shutdown, `generator.release(&mut conn)?` (or `diesel_seqgen::global::release(&mut conn)?` for
//! the process-wide default) gives each block's unused tail back to its counter with one
//! compare-and-set per key (`SET current_value = <first unused - 1> WHERE current_value = <block
//! end>`): it succeeds only when no other instance reserved after this one, and then the next
//! instance continues without a hole; otherwise those numbers stay holes. Either way the
//! generator serves none of them afterwards. It refuses a connection to another database
//! (`Error::DifferentDatabase`), since lowering a counter there would repeat its numbers.
//!
//! **A running process loses no number.** Every thread and task takes numbers from a key's block in
//! order (one compare-and-swap each; `BENCHMARKS.md` has what it costs), so what a generator holds is always
//! the end of its blocks: nothing is stranded with a thread that ends, the block reserved ahead is
//! served before any later one, and the rest of a period's block goes back to its counter when the
//! period ends. One process, many threads, then `release`: the numbers handed out are exactly
//! `1..=n` (`seqgen/tests/suite/invariant.rs`, and a loom model check of every interleaving of a small
//! case, `seqgen/src/engine/model_check.rs`).
//!
//! ```
//! use diesel::prelude::*;
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! let orders = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).build()?;
//!
//! let generator = diesel_seqgen::Generator::new();
//! assert_eq!(generator.next_id(&mut conn, &orders)?, "ORD0001"); // a block of 100: 2..=100 held
//! assert_eq!(generator.release(&mut conn)?, 99);
//! assert_eq!(diesel_seqgen::global::peek_next(&mut conn, &orders)?, 2); // the next instance goes on at 2
//!
//! // An auditor's answer for a number that was issued and cancelled.
//! diesel_seqgen::ledger::void(&mut conn, &orders, "ORD0001", "entered twice; cancelled")?;
//! let ledger = diesel_seqgen::ledger::voided(&mut conn, &orders, "")?;
//! assert_eq!((ledger[0].number, ledger[0].reason.as_str()), (1, "entered twice; cancelled"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! **Holes are still possible in batched mode**, by design: numbers a process had cached when it
//! stopped (or a generator it dropped), numbers taken in a call that then failed, numbers of a
//! transaction that rolled back after taking them from the cache, and unused numbers that could not
//! go back because another instance reserved after them. A larger batch means fewer round trips and
//! bigger holes; blocks grow with demand (about a second's worth), so a crash of a
//! busy instance leaves about a second's worth of numbers unused (up to ten seconds' worth, or
//! the spec's batch per busy scope, while reserving takes much of its time:
//! [scopes](super::scopes)), and `release` on a clean shutdown leaves none. Where holes are not
//! acceptable, use gapless mode.
//!
