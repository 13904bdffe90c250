-- Whether text parses as a value of a type, without raising: custom-field values written by PATCH
-- on *_details are checked with it inside the statement, after a pattern the statement is given
-- as a parameter (the same pattern bodies and imports are checked with, engine/formats.ts), so a
-- bad value is a validation problem of its key instead of an aborted statement. It replaces the
-- two functions of 0003, whose patterns differed from the ones bodies were checked with.
CREATE FUNCTION engage_parses(value text, type regtype) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  EXECUTE format('SELECT %L::%s', value, type);
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END
$$;
--> statement-breakpoint
DROP FUNCTION engage_is_date(text);
--> statement-breakpoint
DROP FUNCTION engage_is_timestamptz(text);
