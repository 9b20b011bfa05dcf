-- Per-key settings an operator can change without a redeploy, read from the key's row with
-- period '' (for a key with a date part, a row that only carries settings):
--   batch_size  numbers reserved per round trip, instead of the spec's batch (batched mode);
--   start_value the first number of a new period (and of the key row's own counter).
-- MySQL runs DDL outside the migration's transaction: a run cut off midway (a crash, a
-- conflict with another node) leaves part of it applied and unrecorded. On MariaDB every
-- step is therefore idempotent (`/*M! IF NOT EXISTS */`), so that the next run completes it.
ALTER TABLE db_key ADD COLUMN /*M! IF NOT EXISTS */ batch_size BIGINT;
ALTER TABLE db_key ADD COLUMN /*M! IF NOT EXISTS */ start_value BIGINT;
