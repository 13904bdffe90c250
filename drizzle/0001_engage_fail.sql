-- Aborts the current statement with SQLSTATE EN001 and a contract error code as its message.
-- A write statement calls it from its final SELECT when a check fails (a singular response that
-- is not one row, Prefer: max-affected, an unknown custom field...), so the whole statement,
-- data-modifying CTEs included, rolls back in the same round trip.
CREATE FUNCTION engage_fail(code text, detail text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'EN001', MESSAGE = code, DETAIL = coalesce(detail, '');
END
$$;
