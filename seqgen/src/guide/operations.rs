//! # Operations
//!
//! ## The `seqgen` command
//!
//! An operator looks at and changes the counters with `seqgen` (crate `diesel-seqgen-cli`), without
//! writing SQL against `db_key`. Like the diesel CLI it takes `--database-url` (or `--url`), else
//! `DATABASE_URL`, which a `.env` file in the working directory or above may set:
//! `postgres://…`, `mysql://…`, or a SQLite file.
//!
//! ```sh
//! cargo install diesel-seqgen-cli                                # SQLite (built in, nothing to install)
//! cargo install diesel-seqgen-cli --features postgres,mysql      # and the servers (libpq, libmariadb)
//! ```
//!
//! | command | what it does |
//! |---|---|
//! | `seqgen migrate` | creates or upgrades `db_key` and the void ledger, naming each migration it applies |
//! | `seqgen keys [--key K] [--tz Z] [--json]` | every key with its scopes and periods: current value, batch size, start value, capacity, how much is used, when it runs out, shape, last change |
//! | `seqgen capacity [--key K] [--warn 80] [--critical 95] [--tz Z]` | the current counters past the thresholds, as a monitoring plugin (exit 0/1/2/3) |
//! | `seqgen metrics [--listen ADDRESS] [--tz Z]` | every key's capacity in Prometheus' format, printed or served at `/metrics` |
//! | `seqgen peek --key K [--scope S] [--period P] [--tz Z] [--json]` | the last number and the next one of a period (the current one by default), as numbers and IDs |
//! | `seqgen set-batch --key K N\|default` | the key's `batch_size`, printed before -> after |
//! | `seqgen set-start --key K N\|default` | the key's `start_value`, refused past what its IDs can print |
//! | `seqgen gaps --key K --table T --column C [--scope S --scope-column SC] [--period P] [--json]` | the numbers of a period missing from your table, each voided (with its reason) or unexplained; duplicates and IDs past the counter too. For a scoped key, one scope: the rows whose `SC` holds `S` |
//! | `seqgen void --key K [--scope S] --reason R ID` | records in the void ledger that an issued ID was cancelled, and why (`diesel_seqgen::ledger::void`): refused for an ID the key could not have issued, a number past the counter, or one voided already |
//! | `seqgen adopt --key K --table T --column C [--scope-column SC] [--shape S] [--dry-run] [--json]` | raises every counter of the key (each period, each scope) past the highest ID the table holds; never lowers one ([`adopting`](super::adopting)) |
//! | `seqgen check --key K --table T --column C [--scope-column SC] [--shape S] [--json] [--textfile PATH]` | exit code 1 when a counter is behind its table or rows have no ID, with the rows and counters; `--textfile` also writes it for node_exporter |
//! | `seqgen renumber --key K [--scope S] [--period P] --to N [--min-idle-secs S]` | sets a counter back deliberately, for a key nobody uses: refused while it took a number within `S` seconds (default 3600); the database refuses any other lowering |
//! | `seqgen number --key K --table T --column C --order-by ID [--scope-column SC] [--date-column D] [--shape S] [--batch N] [--follow [--poll-ms MS]]` | numbers the table's committed rows whose `C` is NULL with the key's gapless numbers, in order of `ID`, in transactions of `N` rows ([gapless numbers after the commit](super::gapless)); with `--follow`, as they commit, until stopped: the sidecar of `gapless = "deferred"` (on PostgreSQL woken by `NOTIFY`) |
//! | `seqgen prune --key K --before P [--tz Z] [--min-age-secs S]` | deletes the key's rows of periods before `P`, but never the current period nor the newest one in the table (the last one in use); refuses a period whose row took a number less than `S` seconds ago (default 3600, on the database's clock) or takes one while it runs, an undated key (its only row is its counter) and date patterns whose periods do not sort as dates |
//!
//! Exit codes (but `capacity`'s, above): 0 done; 1 `gaps` found something unexplained, or `check` a counter behind its table (for a job to alert on); 2
//! bad input or a refused change; 3 the database failed or could not be reached. Every change is one transaction and is
//! checked before it is made: a refused change changes nothing, and a mistyped key is an error,
//! not a new key. `seqgen` reads the key's IDs from the shape recorded on its row, so it needs no
//! application code; periods are taken in UTC unless `--tz` says otherwise. Prune only periods
//! long past: an instance whose clock lags would create a deleted period's row again and hand
//! its numbers out a second time; `prune` refuses a period that took a number within the last
//! hour (`--min-age-secs`), far more than any clock an instance should run on. On SQLite a change waits for the write lock like any writer;
//! on MySQL it locks the key's row before anything else, so it never deadlocks with an app
//! taking numbers (both tested with an app writing without pause). The same functions are
//! the library's [`crate::admin`], for an admin screen of your own.
//!
//! After `cargo run --example quickstart`:
//!
//! ```text
//! $ seqgen keys --database-url /tmp/seqgen-quickstart.db
//!  KEY     SCOPE  PERIOD    CURRENT  BATCH  START  CAPACITY  USED %             RUNS OUT       SHAPE                  UPDATED
//!  menus   -      -               3      -      -    999999  ░░░░░░░░░░   0.0%  not known yet  MENU{date:}{seq:6}     2026-11-25 15:29:20
//!  orders  -      -               0      -      -         -  -                  -              ORD{date:%y%m}{seq:4}  2026-11-25 15:29:20
//!  orders  -      2611            4      -      -      9999  ░░░░░░░░░░   0.0%  not known yet  -                      2026-11-25 15:29:20
//!  users   -      -               0      -      -         -  -                  -              U{date:%Y%m%d}{seq:6}  2026-11-25 15:29:20
//!  users   -      20261125        4      -      -    999999  ░░░░░░░░░░   0.0%  not known yet  -                      2026-11-25 15:29:20
//! $ seqgen peek --database-url /tmp/seqgen-quickstart.db --key orders
//! key:    orders
//! period: 2611
//! last:   4 (ORD26110004)
//! next:   5 (ORD26110005)
//! $ seqgen set-batch --database-url /tmp/seqgen-quickstart.db --key orders 1000
//! orders: batch_size unset -> 1000
//! ```
//!
//! The row with period `-` is the key's row: its settings and shape, and for an undated key
//! (`menus`) its counter. A scoped key has a row per scope and period beside it (`SCOPE`).
//! `peek` shows the database's view: the quickstart reserved a block of 100 and gave back the
//! 96 it did not use when it ended (`release`).
//!
//! ## Running out of numbers
//!
//! A monthly key `ORD{yymm}{seq:4}` stops every insert at 9,999 until the month ends. seqgen
//! says so before: `seqgen keys` shows each counter's CAPACITY (under its policy: `letters` and
//! series extend it, `widen` and `cycle` go on instead of stopping), how much is USED, and when
//! it RUNS OUT at the rate its period went so far (numbers taken since its row was created; a
//! minute at least to go by). The same is [`admin::capacity`](crate::admin::capacity).
//!
//! - `seqgen capacity --warn 80 --critical 95` is a monitoring plugin (Nagios' convention: exit
//!   0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN), naming the counters past the thresholds. Only
//!   counters that stop in their current period are watched; a key whose shape cannot be read
//!   (none recorded yet, or obfuscated) is listed as such, not guessed.
//! - `seqgen metrics --listen 127.0.0.1:9899` serves `/metrics` for Prometheus, reading
//!   `db_key` at each scrape, so one exporter sees every service's keys:
//!   `seqgen_capacity_fullest_used_ratio{key}` (the fullest of a key's current counters: one
//!   series per key, whatever its scopes) and `seqgen_capacity_runs_out_timestamp_seconds{key}`. `seqgen
//!   metrics` alone prints them, for node_exporter's textfile collector; `seqgen check
//!   --textfile PATH` writes `seqgen_check_counters_behind` and `seqgen_check_rows_without_id`.
//! - With the `metrics` feature the application sets `seqgen_capacity_used_ratio` at each
//!   reservation (never on the cached path; for a scoped key, the scope reserved from last),
//!   and every metric has a help text and, but for that ratio, a unit ([`meter::describe`](crate::meter::describe)).
//! - With `tracing`, a `warn` once per counter and period as it passes 80 % and 95 %, naming the
//!   key, scope, period and when it runs out at the rate the generator saw.
//! - `contrib/prometheus/seqgen.rules.yml` holds alert rules for all of it (capacity at 80 %
//!   and 95 %, running out within 7 days, `seqgen check` failing, retries climbing) with their
//!   `promtool` unit tests, and `contrib/grafana/seqgen-dashboard.json` a dashboard.
//!
//! After `cargo run --example audit` (five gapless invoices; the second voided with
//! `diesel_seqgen::ledger::void` and deleted, the fourth deleted by hand), and once the fourth is accounted for:
//!
//! ```text
//! $ seqgen gaps --database-url /tmp/seqgen-audit.db --key invoices --table invoices --column number
//! invoices, period 2026: numbers 1..=5 handed out, 3 found in invoices.number
//!          2  INV2026000002  voided: customer cancelled the order
//!          4  INV2026000004  unexplained
//! 1 unexplained, 0 duplicated, 0 past the counter
//! $ echo $?
//! 1
//! $ seqgen void --database-url /tmp/seqgen-audit.db --key invoices --reason "shredded by mistake; reissued as INV2026000006" INV2026000004
//! invoices: INV2026000004 voided (shredded by mistake; reissued as INV2026000006)
//! $ seqgen gaps --database-url /tmp/seqgen-audit.db --key invoices --table invoices --column number
//! invoices, period 2026: numbers 1..=5 handed out, 3 found in invoices.number
//!          2  INV2026000002  voided: customer cancelled the order
//!          4  INV2026000004  voided: shredded by mistake; reissued as INV2026000006
//! every missing number is voided
//! ```
//!
//! After `cargo run --example scoped` (six invoices of three companies), and company 2's first
//! invoice deleted by hand:
//!
//! ```text
//! $ seqgen keys --database-url /tmp/seqgen-scoped.db --key invoices
//!  KEY       SCOPE  PERIOD  CURRENT  BATCH  START  SHAPE                        UPDATED
//!  invoices  -      -             0      -      -  INV{date:%Y}{seq:4}{scoped}  2026-11-23 06:17:49
//!  invoices  1      2026          3      -      -  -                            2026-11-23 06:17:49
//!  invoices  2      2026          2      -      -  -                            2026-11-23 06:17:49
//!  invoices  3      2026          1      -      -  -                            2026-11-23 06:17:49
//! $ seqgen gaps --database-url /tmp/seqgen-scoped.db --key invoices --table invoices --column number --scope 2 --scope-column company_id
//! invoices (scope 2), period 2026: numbers 1..=2 handed out, 1 found in invoices.number
//!          1  INV20260001  unexplained
//! 1 unexplained, 0 duplicated, 0 past the counter
//! ```
//!
//! `gaps` is meant for gapless keys, where every number up to the counter committed; on a
//! batched key holes are expected. It reads the column whole (IDs as text, or as integers for a
//! numeric spec), so run it against a replica for a large table.
//!
//! ## Statistics
//!
//! `Generator::stats()` (and `diesel_seqgen::global::stats()` for the process-wide default generators, summed
//! over databases) tells what a generator did for each key since it was built:
//!
//! ```
//! use diesel::prelude::*;
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! diesel_seqgen::run_migrations(&mut conn)?;
//! let spec = diesel_seqgen::Spec::builder("orders").prefix("ORD").date("").pad(4).batch(10).build()?;
//!
//! let generator = diesel_seqgen::Generator::new();
//! generator.next_ids(&mut conn, &spec, 3)?; // one reservation: 1..=10, serves 1..=3
//! generator.next_id(&mut conn, &spec)?;     // 4, from memory
//! for key in generator.stats() {
//!     println!(
//!         "{}: {} from memory, {} reservations of {} numbers ({:?} on average, {:?} at most), \
//!          {} abandoned, {} given back, {} retries, {} conflicts",
//!         key.key, key.served_from_memory, key.reservations, key.numbers_reserved,
//!         key.reservation_time.mean(), key.reservation_time.max,
//!         key.numbers_abandoned, key.numbers_given_back, key.retries, key.conflicts,
//!     );
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `served_from_memory` counts the hits. Without a pool, every batched reservation is one miss (a
//! caller waited for it); with a pool, most are made ahead in the background and nobody waits.
//! `numbers_abandoned` counts the holes this instance made (unused numbers that could not go back to
//! their counter because another instance reserved after them); `numbers_given_back` what went back
//! (at `release`, at a new period, for dropped scopes); `conflicts`
//! counts `Error::Busy` and `Error::TransactionConflict`. Counting costs the cached path nothing:
//! IDs served from memory are counted under the lock that serves them, the rest once per
//! reservation.
//!
//! ## Metrics
//!
//! With the `metrics` feature the same counts go to the [`metrics`](https://docs.rs/metrics)
//! facade, labelled `key`, so whatever recorder the app installs picks them up, e.g. a Prometheus
//! endpoint with `metrics-exporter-prometheus`:
//!
//! ```text
//! # Cargo.toml: diesel-seqgen = { version = "0.2", features = ["postgres", "r2d2", "metrics"] }
//! use diesel_seqgen::meter::{RESERVATION_SECONDS, RESERVATION_SECONDS_BUCKETS};
//! use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
//!
//! PrometheusBuilder::new()
//!     // A histogram, not the summary it renders by default: the dashboard's p99 reads buckets.
//!     .set_buckets_for_metric(Matcher::Full(RESERVATION_SECONDS.into()), RESERVATION_SECONDS_BUCKETS)?
//!     .install()?; // GET :9000/metrics
//! ```
//!
//! (`seqgen-cli/tests/app_metrics.rs` does this and reads the buckets back from a real
//! Prometheus.)
//!
//! Counters `seqgen_reservations_total`, `seqgen_numbers_reserved_total`,
//! `seqgen_ids_served_from_memory_total`, `seqgen_numbers_abandoned_total`,
//! `seqgen_numbers_given_back_total`, `seqgen_retries_total`, `seqgen_conflicts_total`, and the
//! histogram `seqgen_reservation_seconds` (names in [`crate::meter`]). They are published at each
//! reservation and at `release`, never on the cached path, so the IDs served from memory and the
//! numbers a new period left unused arrive with the next reservation: they lag by up to a block
//! (about a second for a busy key); `Generator::stats()` is exact at any moment.
//!
//! ## Tracing
//!
//! With the `tracing` feature, every reservation is a `debug` span `reserve` with the key, the
//! period, the backend, how it was made (`foreground`, `ahead`, `in transaction`, `gapless`)
//! and the count of numbers it took; events say when a period ends with
//! numbers unused (`debug`), a reservation is retried after a serialization failure (`debug`),
//! `release` cannot give a block back (`debug`), a reservation ahead fails and the foreground
//! takes over (`warn`), a counter went back or a spec of another shape was refused (`warn`, the
//! caller also gets the error). `info` stays quiet in a healthy app. Their target is the crate's
//! path, `diesel_seqgen`, as `RUST_LOG` users filter (`EnvFilter`: `RUST_LOG=diesel_seqgen=debug`
//! shows them, `RUST_LOG=warn` only the warnings). With `tracing_subscriber`'s
//! `fmt` at `debug` and span close events (`tests/traces.rs` on PostgreSQL, the test's key
//! name shortened to `traced`):
//!
//! ```text
//! 2026-11-23T03:39:44.661602Z DEBUG reserve{key="traced" period="20261123" backend="postgres" how="foreground" count=10}: diesel_seqgen: close time.busy=955µs time.idle=5.21µs
//! 2026-11-23T03:39:44.661642Z DEBUG diesel_seqgen: a new period: the numbers left of the last one go back to its counter key="traced" from=20261123 to=20261124 unused=9
//! 2026-11-23T03:39:44.662476Z DEBUG reserve{key="traced" period="20261124" backend="postgres" how="foreground" count=10}: diesel_seqgen: close time.busy=810µs time.idle=4.51µs
//! ```
//!
