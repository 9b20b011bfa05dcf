-- Counters never go back, whoever edits them: an UPDATE that lowers current_value fails,
-- because every number up to the old value may have been handed out, and the next
-- reservation would hand them out again. The one lowering allowed names the value it lowers
-- from in `lowered_from` (a compare-and-set): seqgen's `release`, which hands back the unused
-- end of the last block it reserved, and `seqgen renumber`, which refuses while the key is in
-- use. A second trigger clears `lowered_from` again, so it is NULL at rest and a plain
-- `SET current_value = current_value - 5000` always fails.
ALTER TABLE db_key ADD COLUMN lowered_from BIGINT;
CREATE TRIGGER db_key_never_back BEFORE UPDATE OF current_value ON db_key FOR EACH ROW
    WHEN NEW.current_value < OLD.current_value AND NEW.lowered_from IS NOT OLD.current_value
BEGIN
    SELECT RAISE(ABORT, 'seqgen: a db_key counter may not go back: numbers up to its old value may have been handed out, and lowering it hands them out again. Use a new key, raise counters with `seqgen adopt`, or renumber deliberately with `seqgen renumber` while no instance uses the key.');
END;
CREATE TRIGGER db_key_lowered AFTER UPDATE OF lowered_from ON db_key FOR EACH ROW
    WHEN NEW.lowered_from IS NOT NULL
BEGIN
    UPDATE db_key SET lowered_from = NULL
    WHERE key_name = NEW.key_name AND scope = NEW.scope AND period = NEW.period;
END;
