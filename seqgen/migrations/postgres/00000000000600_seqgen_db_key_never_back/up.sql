-- Counters never go back, whoever edits them: an UPDATE that lowers current_value fails,
-- because every number up to the old value may have been handed out, and the next
-- reservation would hand them out again. The one lowering allowed names the value it lowers
-- from in `lowered_from` (a compare-and-set): seqgen's `release`, which hands back the unused
-- end of the last block it reserved, and `seqgen renumber`, which refuses while the key is in
-- use. The trigger clears `lowered_from` again, so it is NULL at rest and a plain
-- `SET current_value = current_value - 5000` always fails.
ALTER TABLE db_key ADD COLUMN IF NOT EXISTS lowered_from BIGINT;
CREATE OR REPLACE FUNCTION seqgen_db_key_never_back() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.current_value < OLD.current_value
       AND NEW.lowered_from IS DISTINCT FROM OLD.current_value THEN
        RAISE EXCEPTION 'seqgen: a db_key counter may not go back (key %, scope %, period %: from % to %), its numbers may be in use. Use a new key, `seqgen adopt` or `seqgen renumber`.',
                OLD.key_name, quote_literal(OLD.scope), quote_literal(OLD.period),
                OLD.current_value, NEW.current_value
            USING ERRCODE = 'check_violation',
                  HINT = 'Numbers up to the old value may have been handed out: lowering the counter hands them out again. `seqgen adopt` raises counters past the IDs a table holds; `seqgen renumber` lowers one deliberately while no instance uses the key.';
    END IF;
    NEW.lowered_from := NULL;
    RETURN NEW;
END
$$;
-- Only a lowering runs the function: a reservation pays for the WHEN test alone.
CREATE TRIGGER db_key_never_back BEFORE UPDATE ON db_key FOR EACH ROW
    WHEN (NEW.current_value < OLD.current_value OR NEW.lowered_from IS NOT NULL)
    EXECUTE FUNCTION seqgen_db_key_never_back();
