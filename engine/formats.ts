/**
 * The text formats values must have, in one place: bodies, filters, custom fields, cursors and the
 * token CLI check against these, and the statement checking custom values in SQL is given the same
 * patterns (compile/custom-fields.ts), so every path accepts exactly the same text.
 */

/** A uuid in its canonical form, as the API gives them out and bodies must send them. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `YYYY-MM-DD`. */
export const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * ISO 8601 with an offset: `2026-12-01T09:00:00Z`, `2026-12-01T09:00:00.5+01:00`, seconds optional.
 * Any number of fractional digits (.NET writes seven); PostgreSQL rounds them to microseconds.
 */
export const TIMESTAMP =
  /^\d{4}-\d{2}-\d{2}[T ](?:[01]\d|2[0-3]):[0-5]\d(?::[0-5]\d(?:\.\d+)?)?(?:Z|[+-](?:0\d|1[0-5])(?::?[0-5]\d)?)$/i;

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

/** The white space PostgreSQL's input functions skip around a value (C's isspace: not NBSP, not U+FEFF). */
const isPgSpace = (char: string): boolean => char !== '' && ' \t\n\r\v\f'.includes(char);

/** A filter value without the white space PostgreSQL would skip around it. */
export function pgTrim(text: string): string {
  let start = 0;
  let end = text.length;
  while (isPgSpace(text.charAt(start))) start++;
  while (end > start && isPgSpace(text.charAt(end - 1))) end--;
  return text.slice(start, end);
}

/** A JSON value PostgreSQL can store: every string in it, keys too, storable. */
export const storableJson = (value: unknown): boolean =>
  typeof value === 'string'
    ? storable(value)
    : typeof value !== 'object' ||
      value === null ||
      Object.entries(value).every(([k, v]) => storable(k) && storableJson(v));

/** A date as bodies and filters take it: `YYYY-MM-DD`, a real day. */
export const isDate = (text: string): boolean => DATE.test(text) && realDate(text);

/** A timestamp as bodies and filters take it: ISO 8601 with an offset, on a real day. */
export const isTimestamp = (text: string): boolean => TIMESTAMP.test(text) && realDate(text);

/**
 * Words PostgreSQL reads as dates and times. The API takes ISO 8601 only, whose meaning does not
 * depend on the database's clock or settings, so these get a hint saying what to send instead.
 */
const DATE_WORDS: ReadonlySet<string> = new Set([
  'now',
  'today',
  'tomorrow',
  'yesterday',
  'epoch',
  'infinity',
  '+infinity',
  '-infinity',
  'allballs',
]);

/** The hint for a date or time written as one of PostgreSQL's words, such as `tomorrow`; `example` is of the field. */
export const dateWordHint = (text: string, example: string): string | undefined =>
  DATE_WORDS.has(pgTrim(text).toLowerCase())
    ? `"${pgTrim(text)}" is a word only PostgreSQL reads: send an ISO 8601 value instead, computed on the client,` +
      ` such as ${example}.`
    : undefined;

/**
 * The elements of a one-dimensional PostgreSQL array literal (`{a,"b,c",NULL}`) as PostgreSQL reads
 * them (an unquoted NULL is null), or null when the text is not one; so each element of a list can
 * be checked like a single value.
 */
export function arrayElements(literal: string): Array<string | null> | null {
  let i = 0;
  const skipSpace = () => {
    while (isPgSpace(literal.charAt(i))) i++;
  };
  const end = () => {
    i++;
    skipSpace();
    return i === literal.length;
  };
  skipSpace();
  if (literal[i] !== '{') return null;
  i++;
  skipSpace();
  const elements: Array<string | null> = [];
  if (literal[i] === '}') return end() ? elements : null;
  for (;;) {
    skipSpace();
    let value = '';
    if (literal[i] === '"') {
      for (i++; literal[i] !== '"'; i++) {
        if (literal[i] === '\\') i++;
        if (i >= literal.length) return null;
        value += literal[i];
      }
      i++;
      skipSpace();
      elements.push(value);
    } else {
      // Unquoted: trailing whitespace is dropped unless escaped; a bare NULL is null.
      let escaped = false;
      let kept = 0;
      for (; i < literal.length && !'{}",'.includes(literal[i]!); i++) {
        const isEscape = literal[i] === '\\';
        if (isEscape && ++i >= literal.length) return null;
        value += literal[i];
        escaped ||= isEscape;
        if (isEscape || !isPgSpace(literal[i]!)) kept = value.length;
      }
      value = value.slice(0, kept);
      if (value === '' && !escaped) return null;
      elements.push(!escaped && value.toLowerCase() === 'null' ? null : value);
    }
    if (literal[i] === '}') return end() ? elements : null;
    if (literal[i] !== ',') return null;
    i++;
  }
}
