//! # Architecture
//!
//! Three crates, in the order an ID flows through them:
//!
//! | crate | what |
//! |---|---|
//! | `diesel-seqgen-core` | what an ID looks like, no database: `spec/` (the `Spec`, its `builder` with every rule, `period`, `scoped`, `memo`: the slot where the first generator to serve a spec keeps its state), `error` (`SpecError`, one variant per rule, each naming its `Setting`), `policy` (overflow, series), `template`, `date_pattern`, `zone`, `check`, `parse` |
//! | `diesel-seqgen-derive` | `#[derive(DistributedId)]`: `attr` (syntax) → `ast` (model) → `valid` (builds each spec with `diesel-seqgen-core`'s builder; a `SpecError` becomes a compile error at its setting's token) → `expand` (code, through `diesel_seqgen::__private`, `DistributedId` and `IdValue` only) |
//! | `seqgen` | the runtime, in layers (below) |
//! | `diesel-seqgen-cli` | the `seqgen` command: `main.rs` (arguments, exit codes), `connection.rs` (URL → backend), `commands/` (each command a `diesel_seqgen::admin` call, printed) |
//!
//! The runtime's layers, top to bottom. A file imports its own layer (never in a circle) and
//! the layers below, never one above; `cache` and `reserve` never import each other. CI checks
//! all three, and that no source file passes 400 lines (`.ci/house.py`).
//!
//! | layer | files | what |
//! |---|---|---|
//! | face | `lib.rs`, `insert.rs`, `global.rs`, `nonblocking/`, `admin/`, `ledger.rs`, `sequence.rs`, `migrations.rs`, `transaction.rs`, `guide/` | what users call: the insert, the default generators, the async API, operations, the void ledger, plain gapless counters, migrations, `retry_transaction`, this guide |
//! | model | `model/` | the `DistributedId` trait, ID field types, records; filling them (`fill.rs`) and the gapless insert that numbers its own rows (`one_statement.rs`) |
//! | generator | `generator/` | the handle users hold: `builder`, the key states it keeps (`keys`), how numbers are handed out (`emit`), serving from memory (`take`), refilling and reserving ahead (`refill`), giving back (`release`), gapless, previews, and the loom model check (`model_check`) |
//! | cache | `cache/` | memory only: a key's block (and the next, reserved ahead) served in order from a lock-free window (`window.rs`) or under the key's lock (`cursor.rs`, with what ended periods left behind), the periods a thread formats with (`periods.rs`), the turn to reserve (`mod.rs`), the key's counts (`counts.rs`) |
//! | reserve | `reserve/` | the database side, no memory state: reservations (`mod.rs`), which database a connection reaches (`identity.rs`), the one retry policy (`retry.rs`), pools beside the caller's transaction (`pool/`: r2d2, deadpool, bb8) |
//! | driver | `driver.rs` | one async core, two drivers: `Blocking` (Diesel) and `NonBlocking` (diesel-async) |
//! | backend | `backend/` | per database: the `Backend` trait with each core statement declared once (`mod.rs`), the rows (`rows.rs`), what an error means (`classify.rs`), the statements' bodies (`queries.rs`, `admin_queries.rs`, `statement.rs`, `one_statement.rs`), the schema, and `sqlite.rs`, `pg.rs`, `mysql.rs` |
//! | leaves | `error.rs`, `capacity.rs`, `batch.rs`, `clock.rs`, `stats.rs`, `meter.rs`, `trace.rs`, `sync.rs` | errors; what a counter can hold; block sizes; time; statistics, metrics, tracing; std's or loom's synchronisation |
//!
//! `seqgen/migrations/` holds the `db_key` table per backend, embedded in the crate.
//! `examples/` holds the quickstart, the load generator and its multi-process and crash tests,
//! `bench_report` (the figures of `BENCHMARKS.md`) and `audit` (a gap for `seqgen gaps`);
//! `seqgen/tests/` the behaviour suite over every backend (`common/mod.rs`), the invariant of
//! batched mode (`invariant.rs`), and the compile-fail tests (`ui/`).
