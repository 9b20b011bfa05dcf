DROP TRIGGER IF EXISTS db_key_never_back;
ALTER TABLE db_key DROP COLUMN lowered_from;
