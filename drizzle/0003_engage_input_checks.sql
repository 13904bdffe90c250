-- Whether text parses as a date or a timestamp, without raising: custom-field values written by
-- PATCH on *_details are checked with these inside the statement, so a bad value is reported as
-- a validation problem of its key instead of aborting the statement.
CREATE FUNCTION engage_is_date(value text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  PERFORM value::date;
  RETURN value ~ '^\d{4}-\d{2}-\d{2}$';
EXCEPTION WHEN others THEN
  RETURN false;
END
$$;
--> statement-breakpoint
CREATE FUNCTION engage_is_timestamptz(value text) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  PERFORM value::timestamptz;
  -- ISO 8601 with an offset, as the body schemas require of timestamp fields.
  RETURN value ~ '^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|z|[+-]\d{2}(:?\d{2})?)$';
EXCEPTION WHEN others THEN
  RETURN false;
END
$$;
