DROP TABLE IF EXISTS db_key_void;
