-- Only the unscoped counters survive going back: scoped ones have no place in the old key.
CREATE TABLE db_key_400 (
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
INSERT INTO db_key_400 (key_name, period, current_value, created_at, updated_at, batch_size,
                        start_value, shape)
SELECT key_name, period, current_value, created_at, updated_at, batch_size, start_value, shape
FROM db_key WHERE scope = '';
DROP TABLE db_key;
ALTER TABLE db_key_400 RENAME TO db_key;
CREATE TABLE db_key_void_400 (
    key_name  TEXT      NOT NULL,
    period    TEXT      NOT NULL DEFAULT '',
    number    BIGINT    NOT NULL CHECK (typeof(number) = 'integer' AND number >= 1),
    reason    TEXT      NOT NULL,
    voided_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (key_name, period, number)
);
INSERT INTO db_key_void_400 (key_name, period, number, reason, voided_at)
SELECT key_name, period, number, reason, voided_at FROM db_key_void WHERE scope = '';
DROP TABLE db_key_void;
ALTER TABLE db_key_void_400 RENAME TO db_key_void;
