ALTER TABLE db_key DROP COLUMN start_value;
ALTER TABLE db_key DROP COLUMN batch_size;
