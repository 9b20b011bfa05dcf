//! # Backends
//!
//! ## SQLite (`sqlite`, `bundled-sqlite`)
//! With `bundled-sqlite`, nothing to install. URL: a file path. A reservation is one
//! `INSERT … ON CONFLICT DO UPDATE … RETURNING` in autocommit; a single write statement takes the
//! write lock before it reads, like an immediate transaction. Configure every connection with
//! `diesel_seqgen::sqlite::configure(&mut conn)` (or `diesel_seqgen::sqlite::SqliteSetup` as an r2d2 connection
//! customizer): a 5 s busy timeout so writers queue instead of failing with "database is
//! locked", and WAL so readers never block the writer. SQLite has one writer per database, so
//! inside your transaction seqgen always takes the numbers in that transaction (a second
//! connection could not write until you commit); prefer `conn.immediate_transaction(…)` for
//! transactions that write. Tests: a new file per test, nothing to configure.
//!
//! ## PostgreSQL (`postgres`)
//! Needs libpq (`libpq-dev`). URL: `postgres://user@host:5432/db`. A reservation is one
//! `INSERT … ON CONFLICT DO UPDATE … RETURNING`, which creates the row when it is missing. Under
//! REPEATABLE READ or SERIALIZABLE sessions PostgreSQL aborts conflicting reservations with
//! serialization failures (40001): seqgen retries its own autocommit reservations (bounded), and
//! inside your transaction returns `Error::TransactionConflict` ("roll back and run it again").
//! Every reservation commits durably whatever `synchronous_commit` says (it sets it `on` for its
//! own transaction only); a server with `fsync = off` is refused (`Error::NotDurable`).
//! Give the generator a pool (`Generator::builder().pool(pool)`, or `diesel_seqgen::global::use_pool(pool)` for
//! the process-wide default behind `next_id` and the derive) so blocks needed inside your
//! transactions are reserved beside them and your transaction never holds the counter row lock,
//! and so the next block of a busy key is reserved in the background before the current one runs
//! dry (`BENCHMARKS.md` has the figures).
//! Through **pgbouncer in transaction pooling**, turn Diesel's prepared-statement cache off on
//! every connection (`conn.set_prepared_statement_cache_size(CacheSize::Disabled)`): pgbouncer
//! 1.18 cannot keep a client's named statements across server connections. seqgen keeps no
//! state in a session that it relies on: batched, gapless and the derive's insert work there
//! (tested with four instances on two shared server connections, `tests/suite/pgbouncer.rs`).
//! Tests: `PG_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test cargo test --features postgres`.
//!
//! ## MySQL and MariaDB (`mysql`)
//! Needs libmysqlclient or libmariadb (`libmariadb-dev libmariadb-dev-compat pkg-config`). URL:
//! `mysql://user:password@host:3306/db`. No RETURNING: a reservation is
//! `UPDATE db_key SET current_value = LAST_INSERT_ID(current_value + n) WHERE …` (a record lock
//! on the primary key, nothing else) then `SELECT LAST_INSERT_ID()` on the same connection, which
//! also reads the database's identity. For an undated, unscoped key the `UPDATE` checks on the
//! key's row that its shape is the spec's and that the block is the size its `batch_size` gives
//! (a new key, or a `batch_size` changed since the last reservation, is read first: three
//! statements instead of two, once). A dated or scoped counter is read first every time: its
//! settings are on another row, and an `UPDATE` of `db_key` joined to itself, tried, took MariaDB
//! longer than the three statements. Diesel prepares every statement and sends one per round
//! trip, so two is the least without a stored routine (`BENCHMARKS.md` has what the second
//! statement saved). A missing row is created and the update repeated; inside a transaction a
//! row the generator does not know of is created before the update, by an
//! `INSERT … ON DUPLICATE KEY UPDATE` that takes no gap lock (an `UPDATE` of a missing row takes
//! one, and transactions creating neighbouring rows then deadlock), so new keys, scopes and
//! periods never deadlock each other. Deadlocks (1213) of its own reservations are retried.
//! Pools work as for PostgreSQL. seqgen refuses a server with `innodb_flush_log_at_trx_commit`
//! other than 1 (`Error::NotDurable`): there a crash loses commits the server already
//! acknowledged. (MariaDB's Galera guide suggests 0 or 2 and
//! relies on the other nodes' copies; Jepsen's 2026 analysis showed such clusters losing
//! acknowledged commits, so seqgen refuses them there too: a lost reservation is a duplicate.)
//! **Galera**: the nodes of one cluster are one database to seqgen (it reads the cluster's name
//! and state UUID), so pools across nodes and a move to another node keep working; another
//! node's write certified first is a conflict (1213), retried like a deadlock.
//! **Prepared statements**: `diesel_seqgen::insert_into` keeps its insert prepared on the
//! connection for one row and for the first four bulk sizes of each table and row type (its
//! check of the database, on a connection that cannot remember it, adds one statement of each);
//! a bulk of another size, or of more than 1,000 rows, is prepared at every call as Diesel's
//! is. Count at most ten such statements per table and row type per connection against the
//! server's `max_prepared_stmt_count` (16,382 by default), beside Diesel's own. Tests:
//! `MYSQL_DATABASE_URL=mysql://root@127.0.0.1:3306/test cargo test --features mysql`.
//!
//!
//! ## Which statements an insert sends
//!
//! `insert_into(table).values(&mut rows).execute(conn)` sends, from what the call shows (one
//! module decides it: `insert/plan.rs`):
//!
//! | backend | connection | ID fields | generator | rows | statements |
//! |---|---|---|---|---|---|
//! | PostgreSQL | any | one, gapless, undated, unset | any | any | one `INSERT … WITH` that advances the counter and numbers its rows |
//! | PostgreSQL | plain | batched | default | any | the insert alone, checking a guessed database |
//! | MySQL, MariaDB | plain | batched | default | one | the insert alone, checking a guessed database |
//! | MySQL, MariaDB | plain | batched | default | several | a check of the guessed database (`SELECT @seqgen_identity = ?`), then the insert |
//! | any other | | | | | a reservation when the cache is empty (a query first to tell the database apart on a plain connection with the default generator), then the insert |
//!
//! A plain connection is one that cannot remember its database: `&mut PgConnection`,
//! `&mut *pooled`, every diesel-async connection; r2d2's `PooledConnection` passed as it comes
//! remembers it. The checking insert inserts nothing on another database than the one guessed
//! (the one last found at the connection's address); the insert then identifies the database
//! with a query and runs again: a wrong guess costs a statement and a query, never a number of
//! another database. A row the checking insert cannot carry (a model whose row the derive does
//! not write, see below, or an `Option` field `None` that Diesel writes as `DEFAULT`) is
//! refused before anything is sent, and takes the query first. The one-statement gapless
//! insert falls back to the reservation and the insert the first time a key is used in a
//! process (it checks the key's recorded shape), and after a failover. The insert itself is the one seqgen writes and keeps prepared on
//! PostgreSQL and MySQL when the derive writes the model's row (`#[diesel(table_name = ...)]`
//! named), else Diesel's own; with a gapless field it runs in a savepoint with its numbers.
