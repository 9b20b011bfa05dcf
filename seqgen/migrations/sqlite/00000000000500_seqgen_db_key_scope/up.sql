-- Scoped counters: `scope` is part of a counter's key, so that each company (order, tenant...)
-- of a scoped key counts on its own: one row per (key, scope, period). Every existing row,
-- and every unscoped key, has scope ''. The key's row (scope '' and period '') keeps the key's
-- settings and shape for all its scopes. The void ledger gets the same column.
-- SQLite cannot change a primary key: both tables are rebuilt, every row copied.
-- After this migration, seqgen versions before it fail at their first reservation here
-- (their ON CONFLICT names the old key): upgrade every instance with the table.
CREATE TABLE db_key_500 (
    key_name      TEXT      NOT NULL,
    scope         TEXT      NOT NULL DEFAULT '',
    period        TEXT      NOT NULL DEFAULT '',
    current_value BIGINT    NOT NULL DEFAULT 0
        CHECK (typeof(current_value) = 'integer' AND current_value >= 0),
    created_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    batch_size    BIGINT
        CHECK (batch_size IS NULL OR (typeof(batch_size) = 'integer' AND batch_size > 0)),
    start_value   BIGINT
        CHECK (start_value IS NULL OR (typeof(start_value) = 'integer' AND start_value >= 1)),
    shape         TEXT,
    PRIMARY KEY (key_name, scope, period)
);
INSERT INTO db_key_500 (key_name, period, current_value, created_at, updated_at, batch_size,
                        start_value, shape)
SELECT key_name, period, current_value, created_at, updated_at, batch_size, start_value, shape
FROM db_key;
DROP TABLE db_key;
ALTER TABLE db_key_500 RENAME TO db_key;
CREATE TABLE db_key_void_500 (
    key_name  TEXT      NOT NULL,
    scope     TEXT      NOT NULL DEFAULT '',
    period    TEXT      NOT NULL DEFAULT '',
    number    BIGINT    NOT NULL CHECK (typeof(number) = 'integer' AND number >= 1),
    reason    TEXT      NOT NULL,
    voided_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (key_name, scope, period, number)
);
INSERT INTO db_key_void_500 (key_name, period, number, reason, voided_at)
SELECT key_name, period, number, reason, voided_at FROM db_key_void;
DROP TABLE db_key_void;
ALTER TABLE db_key_void_500 RENAME TO db_key_void;
