ALTER TABLE db_key
    DROP CONSTRAINT db_key_start_value_positive,
    DROP CONSTRAINT db_key_batch_size_positive,
    DROP CONSTRAINT db_key_current_value_not_negative,
    DROP COLUMN shape;
