-- seqgen's counter table. One row per (key, period): a counter is never reset in place,
-- a new period simply starts a new row, so a clock that runs behind can never reissue a number.
-- `current_value` is the last number handed out (0 = none yet); it only ever grows.
-- The row with key_name = '' and period = '' is reserved: its current_value identifies this
-- database to seqgen's in-process caches.
CREATE TABLE IF NOT EXISTS db_key (
    key_name      TEXT    NOT NULL,
    period        TEXT    NOT NULL DEFAULT '',
    current_value BIGINT  NOT NULL DEFAULT 0,
    created_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    updated_at    TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (key_name, period)
);
