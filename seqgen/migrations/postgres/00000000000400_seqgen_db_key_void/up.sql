-- The void ledger: numbers of a key that were issued and then cancelled (a voided invoice),
-- each with its reason, so that a gap in a gapless sequence is explained. Written by
-- `diesel_seqgen::void` in the caller's transaction; one row per (key, period, number).
CREATE TABLE IF NOT EXISTS db_key_void (
    key_name  VARCHAR(191) NOT NULL,
    period    VARCHAR(64)  NOT NULL DEFAULT '',
    number    BIGINT       NOT NULL CHECK (number >= 1),
    reason    TEXT         NOT NULL,
    voided_at TIMESTAMPTZ  NOT NULL DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (key_name, period, number)
);
