CREATE TABLE db_key_200 (
    key_name      TEXT      NOT NULL,
    period        TEXT      NOT NULL DEFAULT '',
    current_value BIGINT    NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    batch_size    BIGINT,
    start_value   BIGINT,
    PRIMARY KEY (key_name, period)
);
INSERT INTO db_key_200 (key_name, period, current_value, created_at, updated_at, batch_size, start_value)
SELECT key_name, period, current_value, created_at, updated_at, batch_size, start_value FROM db_key;
DROP TABLE db_key;
ALTER TABLE db_key_200 RENAME TO db_key;
