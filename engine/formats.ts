/**
 * The text formats values must have, in one place: bodies, filters, custom fields, cursors and the
 * token CLI check against these, and the statement checking custom values in SQL is given the same
 * patterns (compile/custom-fields.ts), so every path accepts exactly the same text.
 */

/** A uuid in its canonical form, as the API gives them out and bodies must send them. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `YYYY-MM-DD`. */
export const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** ISO 8601 with an offset: `2026-12-01T09:00:00Z`, `2026-12-01T09:00:00.5+01:00`, seconds optional. */
export const TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d{1,6})?)?(?:Z|[+-](?:0\d|1[0-5])(?::?[0-5]\d)?)$/i;

/** A real calendar day in the leading `YYYY-MM-DD`, so `2026-02-30` is refused before PostgreSQL sees it. */
export function realDate(text: string): boolean {
  const [y, m, d] = text.slice(0, 10).split('-').map(Number) as [number, number, number];
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  date.setUTCFullYear(y, m - 1, d);
  return y > 0 && date.getUTCFullYear() === y && date.getUTCMonth() === m - 1 && date.getUTCDate() === d;
}

/** Text PostgreSQL can store: no NUL character, no unpaired surrogate. */
export const storable = (text: string): boolean => !text.includes('\u0000') && text.isWellFormed();
export const NOT_STORABLE = 'must not contain NUL characters or unpaired surrogates';
