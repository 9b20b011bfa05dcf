-- Integrity: a bad edit of db_key fails at the UPDATE that makes it, not later as a reissued
-- number. SQLite cannot add constraints to a table, so the table is rebuilt with them.
--   current_value  an integer (SQLite turns an overflowing sum into a REAL), never negative;
--   batch_size     positive when set;  start_value  at least 1 when set;
--   shape          on the key's row (period ''): the printed form of the key's IDs, recorded
--                  at first use, so that two specs of one key cannot print the same ID.
-- Settings that were ignored before (batch_size <= 0, start_value < 1) are cleared.
CREATE TABLE db_key_300 (
    key_name      TEXT      NOT NULL,
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
    PRIMARY KEY (key_name, period)
);
INSERT INTO db_key_300 (key_name, period, current_value, created_at, updated_at, batch_size, start_value)
SELECT key_name, period, MAX(CAST(current_value AS INTEGER), 0), created_at, updated_at,
       CASE WHEN batch_size > 0 THEN CAST(batch_size AS INTEGER) END,
       CASE WHEN start_value >= 1 THEN CAST(start_value AS INTEGER) END
FROM db_key;
DROP TABLE db_key;
ALTER TABLE db_key_300 RENAME TO db_key;
