//! # Async (diesel-async)
//!
//! The same API on [diesel-async](https://docs.rs/diesel-async) 0.9's connections, in
//! [`diesel_seqgen::nonblocking`](crate::nonblocking): `AsyncPgConnection` (`async-postgres`), `AsyncMysqlConnection`
//! (`async-mysql`) and SQLite through `SyncConnectionWrapper` (`async-sqlite`, which turns on
//! `sqlite`), plain or from a deadpool or bb8 pool. The features follow diesel-async's names and
//! are additive with the blocking ones; `async-postgres` and `async-mysql` alone link no C
//! library (no libpq, no libmysqlclient). `deadpool` and `bb8` let a generator reserve through
//! diesel-async's pools.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use diesel::prelude::*;
//! use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
//! use diesel_async::AsyncConnection;
//! use diesel_seqgen::{nonblocking, DistributedId, Spec};
//!
//! diesel::table! { orders (order_no) { order_no -> Text, item -> Text } }
//!
//! #[derive(Insertable, DistributedId)]
//! #[diesel(table_name = orders)]
//! struct NewOrder {
//!     #[distributed_id(prefix = "ORD", date = "", pad = 4)]
//!     order_no: String,
//!     item: String,
//! }
//!
//! # let dir = tempfile::tempdir()?;
//! # let url = dir.path().join("app.db").display().to_string();
//! // Migrations on a blocking connection, at start-up.
//! let mut setup = SqliteConnection::establish(&url)?;
//! diesel_seqgen::run_migrations(&mut setup)?;
//! diesel::sql_query("CREATE TABLE orders (order_no TEXT PRIMARY KEY, item TEXT NOT NULL)")
//!     .execute(&mut setup)?;
//!
//! // In a handler: `conn` would come from a deadpool or bb8 pool.
//! let mut conn = SyncConnectionWrapper::<SqliteConnection>::establish(&url).await?;
//! let mut order = NewOrder { order_no: String::new(), item: "tea".into() };
//! nonblocking::insert_into(orders::table).values(&mut order).execute(&mut conn).await?;
//! assert_eq!(order.order_no, "ORD0001");
//!
//! // A number of your own, or a gapless one inside your transaction:
//! let tickets = Spec::builder("tickets").prefix("T").date("").pad(3).build()?;
//! let invoices = Spec::builder("invoices").prefix("INV").date("").gapless().build()?;
//! assert_eq!(nonblocking::next_id(&mut conn, &tickets).await?, "T001");
//! let invoice = conn
//!     .transaction(async |conn| nonblocking::next_id(conn, &invoices).await)
//!     .await?;
//! assert_eq!(invoice, "INV000001");
//! # Ok(())
//! # }
//! ```
//!
//! - **One allocator, two drivers.** Blocks, periods, policies, the identity and durability
//!   checks and every [guarantee](super::guarantees) are the blocking code, not a copy: the logic
//!   that decides, and every statement, is written once over a driver (`driver/`); the
//!   blocking driver's futures are ready at once, the async one awaits diesel-async. What you
//!   get: `diesel_seqgen::nonblocking::{insert_into, assign_ids, next_id(s), next_number(s),
//!   next_value(s), next_values_of, release}` on the process-wide default generators, and
//!   `diesel_seqgen::nonblocking::Generator` (`From<diesel_seqgen::Generator>`: configure it with
//!   `Generator::builder()`, and it shares its blocks with the blocking face). The derive is the
//!   same.
//! - **Tasks.** When a key's block runs dry, one task reserves and the others await that
//!   reservation (no lock is held across an await). Every future is `Send`, so axum, actix-web
//!   and `tokio::spawn` take them, also inside diesel-async's own `conn.transaction(…)`.
//! - **Cancellation.** A future dropped anywhere (a timeout, a client gone) never leaves a number
//!   to be served twice: the cache changes only after a reservation has returned, and a block the
//!   database took for a dropped future is a hole. A future dropped inside an insert's gapless
//!   savepoint leaves that transaction open, which diesel-async's pools detect (they discard the
//!   connection), and sets the records' IDs back to unset, as a rollback does: a retry of the same
//!   records takes new numbers rather than inserting ones the next caller also gets. Tested by dropping a reservation and a task waiting for its turn while another
//!   connection holds the counter row.
//! - **Pools.** `Generator::builder().async_pool(pool)` (or `diesel_seqgen::nonblocking::use_pool(pool).await`
//!   for the default generators) takes diesel-async's deadpool or bb8 pool: on PostgreSQL and MySQL
//!   blocks needed inside your transactions are then reserved beside them, and the next block of a
//!   busy key on a Tokio task before the current one runs dry. **Give the generator a pool of its
//!   own** (2 connections): if it shares your handlers' pool and they hold every connection inside
//!   transactions, each waits for one more. Without an async pool, numbers needed inside a
//!   transaction are taken in it, uncached, and refills happen in the foreground.
//! - **Migrations.** Run them on a blocking connection at start-up, as diesel-async advises:
//!   diesel-async's `AsyncConnectionWrapper` (its `async-connection-wrapper` feature) is one
//!   without a C library: `diesel_seqgen::run_migrations(&mut AsyncConnectionWrapper::<AsyncPgConnection>::establish(url)?)`
//!   inside `spawn_blocking`; with the blocking features, `PgConnection` does as well. SQLite pools:
//!   `ManagerConfig { custom_setup: Box::new(diesel_seqgen::sqlite::establish_async), .. }` applies the
//!   busy timeout and WAL, as `SqliteSetup` does for r2d2.
//! - **The default generators** serve `insert_into(..).execute` on async connections (plain,
//!   deadpool's, bb8's) without a query for cached IDs: the insert checks the database it
//!   reaches itself (see `guide::guarantees`). Their other functions (`next_id`, `assign_ids`,
//!   `get_result`) tell databases apart with one query per call: hold a
//!   `diesel_seqgen::nonblocking::Generator` per database, as the example does, and cached IDs cost no
//!   query anywhere.
//!
//! ## deadpool-diesel (blocking Diesel in an async app)
//!
//! axum's Diesel example pools blocking connections with `deadpool-diesel` and runs Diesel in
//! `conn.interact(|conn| …)` on a blocking thread. seqgen takes no `deadpool-diesel` pool (its
//! connections exist only inside `interact`, where a generator reserving ahead on a thread of its
//! own cannot get one), and needs none: inside `interact` the connection is a plain blocking one,
//! and seqgen's blocking API works there as in any blocking app.
//!
//! ```ignore
//! // At start-up: seqgen's own r2d2 pool, 2 connections (the `r2d2` feature).
//! let seqgen_pool = r2d2::Pool::builder().max_size(2).build(ConnectionManager::<PgConnection>::new(&url))?;
//! diesel_seqgen::global::use_pool(seqgen_pool)?;
//! // In a handler, on deadpool-diesel's connection:
//! let conn = state.pool.get().await?;
//! let order = conn
//!     .interact(move |conn| diesel_seqgen::insert_into(orders::table).values(&mut new_order).execute(conn).map(|_| new_order))
//!     .await??;
//! ```
//!
//! What it costs, against an r2d2 app: two connections per instance for seqgen's pool, which
//! reserves the next block of a busy key beside your handlers (80 % into the current one) and
//! takes the blocks needed inside your transactions beside them, exactly as in a blocking app.
//! Without it (no `use_pool`) everything still works and holds the same promises: the handler
//! whose insert finds the block empty reserves in its own `interact`, one statement more
//! (0.4 ms on PostgreSQL, 0.8 ms on MariaDB: `BENCHMARKS.md`) once per block, while the other
//! handlers needing that key wait for it; inside your transactions the numbers are then taken
//! in them, uncached, and the counter's row stays locked until you commit (`guide::guarantees`).
//! The async API (`nonblocking`, the `async-*` features) is the
//! other way: diesel-async's connections and pools, no blocking thread per query.
//!
//! What async costs against blocking, with numbers: `BENCHMARKS.md`.
//!
//! Try it: `cargo run --example orders-service --features async-sqlite` serves `POST /orders`
//! (`{"item":"tea","quantity":2}` → `201` with `ORD` + `%y%m` + 4 digits) and
//! `GET /orders/{order_no}` on `127.0.0.1:3000`; `examples/tests/orders_service.rs` posts 40 orders
//! at once over HTTP and checks their numbers. Tests: `seqgen/tests/suite/nonblocking.rs` (13 scenarios
//! × 3 async backends, plus the pools, migrations through `AsyncConnectionWrapper` and a
//! compile-time `Send` check per connection type) and
//! the multi-process harness's `async_*` scenarios (`loadgen --async`: 4 processes × 32 tasks).
//!
