-- Only the unscoped counters survive going back: scoped ones have no place in the old key.
DELETE FROM db_key WHERE scope <> '';
DELETE FROM db_key_void WHERE scope <> '';
ALTER TABLE db_key DROP CONSTRAINT db_key_pkey, ADD PRIMARY KEY (key_name, period);
ALTER TABLE db_key DROP COLUMN scope;
ALTER TABLE db_key_void DROP CONSTRAINT db_key_void_pkey, ADD PRIMARY KEY (key_name, period, number);
ALTER TABLE db_key_void DROP COLUMN scope;
