-- Scoped counters: `scope` is part of a counter's key, so that each company (order, tenant...)
-- of a scoped key counts on its own: one row per (key, scope, period). Every existing row,
-- and every unscoped key, has scope ''. The key's row (scope '' and period '') keeps the key's
-- settings and shape for all its scopes. The void ledger gets the same column.
-- Upgrade every instance of seqgen with the table: an older version's statements name rows
-- by key and period only.
ALTER TABLE db_key
    ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '' AFTER key_name,
    DROP PRIMARY KEY,
    ADD PRIMARY KEY (key_name, scope, period);
ALTER TABLE db_key_void
    ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '' AFTER key_name,
    DROP PRIMARY KEY,
    ADD PRIMARY KEY (key_name, scope, period, number);
