-- Counters never go back, whoever edits them: an UPDATE that lowers current_value fails,
-- because every number up to the old value may have been handed out, and the next
-- reservation would hand them out again. The one lowering allowed names the value it lowers
-- from in `lowered_from` (a compare-and-set): seqgen's `release`, which hands back the unused
-- end of the last block it reserved, and `seqgen renumber`, which refuses while the key is in
-- use. The trigger clears `lowered_from` again, so it is NULL at rest and a plain
-- `SET current_value = current_value - 5000` always fails.
-- With binary logging on, creating a trigger takes the SUPER privilege (or
-- log_bin_trust_function_creators = 1) for the user running the migrations.
-- MySQL runs DDL outside the migration's transaction: a run cut off midway (a crash, a
-- conflict with another node) leaves part of it applied and unrecorded. On MariaDB every
-- step is therefore idempotent (`/*M! IF NOT EXISTS */`), so that the next run completes it.
ALTER TABLE db_key ADD COLUMN /*M! IF NOT EXISTS */ lowered_from BIGINT NULL;
CREATE TRIGGER /*M! IF NOT EXISTS */ db_key_never_back BEFORE UPDATE ON db_key FOR EACH ROW
BEGIN
    IF NEW.current_value < OLD.current_value AND NOT (NEW.lowered_from <=> OLD.current_value) THEN
        -- MESSAGE_TEXT holds at most 128 characters.
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT =
            'seqgen: a db_key counter may not go back, its numbers may be in use. Use a new key, `seqgen adopt` or `seqgen renumber`.';
    END IF;
    SET NEW.lowered_from = NULL;
END;
