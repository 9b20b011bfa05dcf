-- Scoped counters: `scope` is part of a counter's key, so that each company (order, tenant...)
-- of a scoped key counts on its own: one row per (key, scope, period). Every existing row,
-- and every unscoped key, has scope ''. The key's row (scope '' and period '') keeps the key's
-- settings and shape for all its scopes. The void ledger gets the same column.
-- After this migration, seqgen versions before it fail at their first reservation here
-- (their ON CONFLICT names the old key): upgrade every instance with the table.
ALTER TABLE db_key ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '';
ALTER TABLE db_key DROP CONSTRAINT db_key_pkey, ADD PRIMARY KEY (key_name, scope, period);
ALTER TABLE db_key_void ADD COLUMN scope VARCHAR(191) NOT NULL DEFAULT '';
ALTER TABLE db_key_void DROP CONSTRAINT db_key_void_pkey,
    ADD PRIMARY KEY (key_name, scope, period, number);
