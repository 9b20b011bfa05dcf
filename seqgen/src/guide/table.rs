//! # The `db_key` table
//!
//! ```sql
//! CREATE TABLE IF NOT EXISTS db_key (
//!     key_name      VARCHAR(191) NOT NULL,          -- the counter: usually the table name
//!     period        VARCHAR(64)  NOT NULL DEFAULT '',-- the formatted date part; '' without one
//!     current_value BIGINT       NOT NULL DEFAULT 0, -- the last number handed out; only grows
//!     created_at    TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
//!     updated_at    TIMESTAMP    NOT NULL DEFAULT CURRENT_TIMESTAMP,
//!     PRIMARY KEY (key_name, period)
//! );
//! -- 00000000000200: settings an operator may set on a key's row (period '')
//! ALTER TABLE db_key ADD COLUMN batch_size  BIGINT;  -- numbers per reservation
//! ALTER TABLE db_key ADD COLUMN start_value BIGINT;  -- first number of a new period
//! -- 00000000000300: integrity
//! ALTER TABLE db_key ADD COLUMN shape TEXT;          -- what the key's IDs look like, see below
//! -- CHECK (current_value >= 0), CHECK (batch_size IS NULL OR batch_size > 0),
//! -- CHECK (start_value IS NULL OR start_value >= 1); on SQLite also an integer current_value
//! -- 00000000000400: the void ledger (diesel_seqgen::ledger)
//! CREATE TABLE db_key_void (key_name, period, number, reason, voided_at,
//!                           PRIMARY KEY (key_name, period, number));
//! -- 00000000000500: scoped counters; '' for every row before it
//! ALTER TABLE db_key      ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '';
//! ALTER TABLE db_key_void ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '';
//! -- primary keys (key_name, scope, period) and (key_name, scope, period, number); SQLite
//! -- rebuilds both tables to change them, copying every row
//! ```
//!
//! A bad edit of a setting fails at your `UPDATE`. Upgrading an existing table keeps every counter;
//! settings the new checks refuse (a `batch_size` of 0, a `start_value` of 0) are cleared to NULL,
//! which means "the spec's own".
//!
//! The migrations live in `seqgen/migrations/{sqlite,postgres,mysql}/` and are embedded in the crate:
//! [`diesel_seqgen::run_migrations(&mut conn)`](crate::run_migrations) runs them (idempotent; safe when several processes start
//! at once). The row with an empty key and period is reserved: it identifies the database to
//! seqgen's caches. MySQL and MariaDB run DDL outside the migration's transaction, so a run cut
//! off midway (a process killed at start-up, a Galera conflict) leaves part of a migration
//! applied and unrecorded; on MariaDB every step is idempotent and the next run completes it
//! (`tests/suite/migrations.rs`). On MySQL 8, which has no `ADD COLUMN IF NOT EXISTS`, finish
//! that migration's remaining statements by hand and insert its version into
//! `__diesel_schema_migrations`.
//!
//! On a Galera cluster, processes migrate one at a time: started at once on several nodes,
//! MariaDB can hang a node on the trigger of `00000000000600` (a `CREATE TRIGGER` holds its
//! metadata lock while it waits for its turn in the cluster, and the applier of another node's
//! DDL waits for that lock). A process there first inserts the one row of
//! `db_key_migration_lease` (created then, on Galera only), which one process of the cluster can
//! hold at a time, and deletes it when done; the others wait, then find nothing pending. A
//! holder that died leaves its lease for 60 seconds. Nothing of this runs when nothing is
//! pending.
//!
//! Next to your own embedded migrations, run and revert both through one source, so reverting
//! yours does not trip over seqgen's version in `__diesel_schema_migrations`:
//!
//! ```
//! use diesel::prelude::*;
//! use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
//!
//! const APP: EmbeddedMigrations = embed_migrations!("tests/app_migrations/sqlite");
//!
//! let mut conn = SqliteConnection::establish(":memory:")?;
//! conn.run_pending_migrations(diesel_seqgen::migrations::with_app_migrations(APP))?;
//! conn.revert_all_migrations(diesel_seqgen::migrations::with_app_migrations(APP))?; // yours, then db_key
//! # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
//! ```
//!
//! ## Beside the diesel CLI
//!
//! `diesel print-schema` (and `diesel migration run`, which rewrites your `schema.rs`) writes
//! every table it finds, seqgen's too. Leave them out in `diesel.toml` (the names are regular
//! expressions):
//!
//! ```toml
//! [print_schema]
//! file = "src/schema.rs"
//! filter = { except_tables = ["^db_key$", "^db_key_void$", "^db_key_migration_lease$"] }
//! ```
//!
//! seqgen's migrations are embedded in the crate, not in your `migrations/` folder: create
//! `db_key` with `diesel_seqgen::run_migrations` at start-up, or `seqgen migrate` in your
//! deployment next to `diesel migration run`. Both record their versions in
//! `__diesel_schema_migrations`, which the diesel CLI reads as follows (checked against
//! diesel_migrations 2.3's `MigrationHarness`, which it runs):
//!
//! - `diesel migration run` applies your pending migrations and ignores seqgen's recorded
//!   versions;
//! - `diesel migration revert` and `redo` take the highest version applied, which is always
//!   one of yours (seqgen's are `00000000000100` to `00000000000600`, below any timestamp);
//! - `diesel migration revert --all` reverts all of yours, then stops with "unknown migration
//!   version" at seqgen's, leaving `db_key` in place: the counters outlive your schema on
//!   purpose. To drop seqgen's tables too, revert through
//!   [`with_app_migrations`](crate::migrations::with_app_migrations) (above), or run their
//!   `down.sql` by hand.
//!
//! Migration `00000000000500` changes `db_key`'s primary key: seqgen versions from before it
//! fail at their first reservation on an upgraded table on PostgreSQL and SQLite (their `ON
//! CONFLICT` names the old key; loudly, never a repeated number), and on MySQL keep working for
//! unscoped keys only. Upgrade every instance together with the table.
//!
//! seqgen's migrations have the versions `00000000000100` to `00000000000600`, far from the
//! timestamps Diesel's CLI gives; do not give one of yours those versions (Diesel records
//! versions only).
//!
