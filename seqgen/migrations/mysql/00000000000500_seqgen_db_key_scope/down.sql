-- Only the unscoped counters survive going back: scoped ones have no place in the old key.
DELETE FROM db_key WHERE scope <> '';
DELETE FROM db_key_void WHERE scope <> '';
ALTER TABLE db_key DROP PRIMARY KEY, ADD PRIMARY KEY (key_name, period), DROP COLUMN scope;
ALTER TABLE db_key_void DROP PRIMARY KEY, ADD PRIMARY KEY (key_name, period, number),
    DROP COLUMN scope;
