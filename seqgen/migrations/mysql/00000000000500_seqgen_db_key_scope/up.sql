-- Scoped counters: `scope` is part of a counter's key, so that each company (order, tenant...)
-- of a scoped key counts on its own: one row per (key, scope, period). Every existing row,
-- and every unscoped key, has scope ''. The key's row (scope '' and period '') keeps the key's
-- settings and shape for all its scopes. The void ledger gets the same column.
-- Upgrade every instance of seqgen with the table: an older version's statements name rows
-- by key and period only.
-- MySQL runs DDL outside the migration's transaction: a run cut off midway (a crash, a
-- conflict with another node) leaves part of it applied and unrecorded. On MariaDB every
-- step is therefore idempotent (`/*M! IF NOT EXISTS */`), so that the next run completes it.
ALTER TABLE db_key
    ADD COLUMN /*M! IF NOT EXISTS */ scope VARCHAR(191) NOT NULL DEFAULT '' AFTER key_name,
    DROP PRIMARY KEY,
    ADD PRIMARY KEY (key_name, scope, period);
ALTER TABLE db_key_void
    ADD COLUMN /*M! IF NOT EXISTS */ scope VARCHAR(191) NOT NULL DEFAULT '' AFTER key_name,
    DROP PRIMARY KEY,
    ADD PRIMARY KEY (key_name, scope, period, number);
