-- Per-key settings an operator can change without a redeploy, read from the key's row with
-- period '' (for a key with a date part, a row that only carries settings):
--   batch_size  numbers reserved per round trip, instead of the spec's batch (batched mode);
--   start_value the first number of a new period (and of the key row's own counter).
ALTER TABLE db_key ADD COLUMN IF NOT EXISTS batch_size BIGINT;
ALTER TABLE db_key ADD COLUMN IF NOT EXISTS start_value BIGINT;
