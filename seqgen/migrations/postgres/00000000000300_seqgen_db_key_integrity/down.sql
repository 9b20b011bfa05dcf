ALTER TABLE db_key
    DROP CONSTRAINT IF EXISTS db_key_start_value_positive,
    DROP CONSTRAINT IF EXISTS db_key_batch_size_positive,
    DROP CONSTRAINT IF EXISTS db_key_current_value_not_negative,
    DROP COLUMN IF EXISTS shape;
