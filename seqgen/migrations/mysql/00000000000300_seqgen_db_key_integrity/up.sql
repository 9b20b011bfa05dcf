-- Integrity: a bad edit of db_key fails at the UPDATE that makes it, not later as a reissued
-- number: current_value never negative, batch_size positive and start_value at least 1 when
-- set. `shape`, on the key's row (period ''): the printed form of the key's IDs, recorded at
-- first use, so that two specs of one key cannot print the same ID.
-- Settings that were ignored before (batch_size <= 0, start_value < 1) are cleared.
-- MySQL runs DDL outside the migration's transaction: a run cut off midway (a crash, a
-- conflict with another node) leaves part of it applied and unrecorded. On MariaDB every
-- step is therefore idempotent (`/*M! IF NOT EXISTS */`), so that the next run completes it.
UPDATE db_key SET batch_size = NULL WHERE batch_size <= 0;
UPDATE db_key SET start_value = NULL WHERE start_value < 1;
UPDATE db_key SET current_value = 0 WHERE current_value < 0;
ALTER TABLE db_key
    ADD COLUMN /*M! IF NOT EXISTS */ shape TEXT NULL,
    ADD CONSTRAINT /*M! IF NOT EXISTS */ db_key_current_value_not_negative CHECK (current_value >= 0),
    ADD CONSTRAINT /*M! IF NOT EXISTS */ db_key_batch_size_positive CHECK (batch_size IS NULL OR batch_size > 0),
    ADD CONSTRAINT /*M! IF NOT EXISTS */ db_key_start_value_positive CHECK (start_value IS NULL OR start_value >= 1);
