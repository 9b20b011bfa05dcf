-- seqgen's counter table. One row per (key, period): a counter is never reset in place,
-- a new period simply starts a new row, so a clock that runs behind can never reissue a number.
-- `current_value` is the last number handed out (0 = none yet); it only ever grows.
-- The row with key_name = '' and period = '' is reserved: its current_value identifies this
-- database to seqgen's in-process caches.
-- VARCHAR(191): the longest utf8mb4 key InnoDB indexes under every row format.
CREATE TABLE IF NOT EXISTS db_key (
    key_name      VARCHAR(191) NOT NULL,
    period        VARCHAR(64)  NOT NULL DEFAULT '',
    current_value BIGINT       NOT NULL DEFAULT 0,
    created_at    TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    updated_at    TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),
    PRIMARY KEY (key_name, period)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;
