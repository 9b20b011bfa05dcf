DROP TRIGGER IF EXISTS db_key_never_back ON db_key;
DROP FUNCTION IF EXISTS seqgen_db_key_never_back();
ALTER TABLE db_key DROP COLUMN IF EXISTS lowered_from;
