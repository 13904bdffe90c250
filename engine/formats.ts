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

/** A whole number's text, sign allowed. */
export const WHOLE = /^[+-]?\d+$/;

/** A number's text as PostgreSQL's numeric and float inputs read it (NaN and Infinity aside). */
export const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;

/** Whether whole-number text lies in [min, max], however long it is. */
export const wholeIn = (text: string, min: bigint, max: bigint): boolean => {
  const value = BigInt(text.replace(/^\+/, ''));
  return value >= min && value <= max;
};

/**
 * Whether decimal text fits numeric(precision, scale): rounded to `scale` places (half away from
 * zero, as PostgreSQL rounds), it has at most `precision - scale` digits before the point.
 */
export function fitsNumeric(text: string, precision: number, scale: number): boolean {
  const match = /^[+-]?(\d*)\.?(\d*)(?:e([+-]?\d+))?$/i.exec(text.trim());
  if (!match) return true;
  const exponent = Number(match[3] ?? 0);
  const digits = `${match[1]}${match[2]}`.replace(/^0+/, '');
  if (digits === '') return true;
  // The position of the point after the first of `digits`: 10^(point - 1) <= |value| < 10^point.
  const leading = `${match[1]}${match[2]}`.length - `${match[1]}${match[2]}`.replace(/^0+/, '').length;
  const point = match[1]!.length - leading + exponent;
  const kept = point + scale;
  if (kept < 0) return true;
  // Rounding up at the last kept digit carries into a new leading digit when all kept digits are 9.
  const carries = kept < digits.length && digits[kept]! >= '5' && /^9*$/.test(digits.slice(0, kept));
  return point + (carries ? 1 : 0) <= precision - scale;
}

/** `HH:MM[:SS[.fraction]]` on a 24-hour clock; 24:00:00 is the end of a day, as PostgreSQL reads it. */
const CLOCK = '(?:(?:[01]\\d|2[0-3]):[0-5]\\d(?::(?:[0-5]\\d|60)(?:\\.\\d+)?)?|24:00(?::00(?:\\.0+)?)?)';
/** A UTC offset: `Z`, `+01`, `+01:00`, `-0530`. */
const OFFSET = '(?:Z|[+-](?:0\\d|1[0-5])(?::?[0-5]\\d)?)';

/** A time of day (time): `09:30`, `09:30:15.5`. */
export const TIME = new RegExp(`^${CLOCK}$`);
/** A time of day with an optional offset (timetz). */
export const TIME_TZ = new RegExp(`^${CLOCK}${OFFSET}?$`, 'i');

/**
 * A timestamp without an offset (timestamp): `2026-12-01T09:00:00`, a space for the `T`, or a day
 * alone (its midnight). An offset is read and dropped, as PostgreSQL does for this type.
 */
const LOCAL_TIMESTAMP = new RegExp(`^\\d{4}-\\d{2}-\\d{2}(?:[T ]${CLOCK}${OFFSET}?)?$`, 'i');
export const isLocalTimestamp = (text: string): boolean => LOCAL_TIMESTAMP.test(text) && realDate(text);

/** An interval's unit, as PostgreSQL's interval input spells them. */
const INTERVAL_UNIT =
  '(?:microseconds?|us|usecs?|milliseconds?|ms|msecs?|seconds?|s|secs?|minutes?|m|mins?|hours?|h|hrs?|days?|d' +
  '|weeks?|w|months?|mons?|years?|y|yrs?|decades?|decs?|century|centuries|c|cents?|millennium|millennia|mils?)';
const SIGNED = '[+-]?(?:\\d+\\.?\\d*|\\.\\d+)';
/** PostgreSQL's own interval forms: `1 day 02:00:00`, `@ 3 hours ago`, `1-2` (years-months), `10` (seconds). */
const PG_INTERVAL = new RegExp(
  `^@?\\s*(?:(?:${SIGNED}\\s*${INTERVAL_UNIT}|[+-]?\\d+-\\d+|[+-]?\\d+:\\d+(?::\\d+(?:\\.\\d+)?)?|${SIGNED})\\s*)+(?:ago)?$`,
  'i',
);
/** ISO 8601 durations: `P1Y2M3DT4H5M6S`, `PT0.5S`, and the alternative `P0001-02-03T04:05:06`. */
const ISO_INTERVAL = new RegExp(
  `^P(?:(?:${SIGNED}[YMWD])*(?:T(?:${SIGNED}[HMS])+)?|\\d{4}-\\d{2}-\\d{2}(?:T\\d{2}:\\d{2}:\\d{2}(?:\\.\\d+)?)?)$`,
  'i',
);
/** An interval in a form PostgreSQL reads (its fields' ranges are its to check). */
export const isInterval = (text: string): boolean =>
  text.trim() !== '' &&
  text.trim().toUpperCase() !== 'P' &&
  (ISO_INTERVAL.test(text.trim()) || PG_INTERVAL.test(text.trim()));

/** bytea as PostgreSQL reads it: hex (`\x0aff`) or escape format (`\\` and `\ooo` the only escapes). */
export const isBytea = (text: string): boolean =>
  text.startsWith('\\x') ? /^\\x(?:\s*[0-9a-f]{2})*\s*$/i.test(text) : /^(?:[^\\]|\\\\|\\[0-3][0-7]{2})*$/.test(text);

const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;

/** The bits of an IPv4 or IPv6 address, or null when the text is neither. */
function addressBits(text: string): { bits: bigint; width: number } | null {
  if (IPV4.test(text)) return { bits: text.split('.').reduce((a, o) => (a << 8n) | BigInt(o), 0n), width: 32 };
  const ipv4Tail = /^(.*:)((?:\d{1,3}\.){3}\d{1,3})$/.exec(text);
  let hex = text;
  if (ipv4Tail) {
    if (!IPV4.test(ipv4Tail[2]!)) return null;
    const o = ipv4Tail[2]!.split('.').map(Number);
    hex = `${ipv4Tail[1]}${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;
  }
  const halves = hex.split('::');
  if (halves.length > 2) return null;
  const groups = halves.map((h) => (h === '' ? [] : h.split(':')));
  if (groups.flat().some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return null;
  const count = groups.flat().length;
  if (halves.length === 1 ? count !== 8 : count > 7) return null;
  const all = halves.length === 1 ? groups[0]! : [...groups[0]!, ...Array(8 - count).fill('0'), ...groups[1]!];
  return { bits: all.reduce((a, g) => (a << 16n) | BigInt(`0x${g}`), 0n), width: 128 };
}

/** An inet: an IPv4 or IPv6 address with an optional prefix length. */
export function isInet(text: string): boolean {
  const [address, prefix, extra] = text.trim().split('/');
  const parsed = addressBits(address!);
  if (!parsed || extra !== undefined) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= parsed.width);
}

/** A cidr: a network, its host bits zero; IPv4 may leave out trailing octets (`10.1/16`). */
export function isCidr(text: string): boolean {
  const [address, prefix, extra] = text.trim().split('/');
  if (extra !== undefined) return false;
  const octets = address!.split('.');
  const full = !address!.includes(':') && octets.length < 4 ? [...octets, ...Array(4 - octets.length).fill('0')] : null;
  const parsed = addressBits(full ? full.join('.') : address!);
  if (!parsed || (prefix !== undefined && !/^\d{1,3}$/.test(prefix))) return false;
  const length = prefix === undefined ? (full ? octets.length * 8 : parsed.width) : Number(prefix);
  if (length > parsed.width) return false;
  const host = (1n << BigInt(parsed.width - length)) - 1n;
  return (parsed.bits & host) === 0n;
}

/** A MAC address as macaddr (6 bytes) or macaddr8 (8 bytes, or 6 widened) reads it. */
export function isMacaddr(text: string, bytes: 6 | 8): boolean {
  const trimmed = text.trim();
  if (!/^[0-9a-f]+(?:[:.-][0-9a-f]+)*$/i.test(trimmed)) return false;
  const groups = trimmed.split(/[:.-]/);
  const digits = groups.join('').length;
  if (!groups.every((g) => g.length === groups[0]!.length || groups.length === 2)) return false;
  if (![2, 4, 6].includes(groups[0]!.length) && groups.length > 1) return false;
  return digits === 12 || (bytes === 8 && digits === 16);
}

/**
 * The bounds of a range literal (`[1,10)`, `(,2026-12-01]`, `empty`), each unquoted, null when
 * left out; `[]` for `empty`; null when the text is not a range literal.
 */
export function rangeBounds(text: string): Array<string | null> | null {
  const trimmed = pgTrim(text);
  if (trimmed.toLowerCase() === 'empty') return [];
  const bound = '\\s*("(?:[^"\\\\]|\\\\.)*"|[^",()\\[\\]]*?)\\s*';
  const match = new RegExp(`^[[(]${bound},${bound}[\\])]$`).exec(trimmed);
  if (!match) return null;
  return [match[1]!, match[2]!].map((b) =>
    b === '' ? null : b.startsWith('"') ? b.slice(1, -1).replace(/\\(.)/g, '$1') : b,
  );
}
