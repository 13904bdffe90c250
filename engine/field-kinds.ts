/**
 * The kinds of value a field holds, one record each: how a body value is checked, how a filter
 * value is checked and described, its JSON Schema and TypeScript type (rows leave the API as
 * PostgreSQL's to_json gives them), how a CSV cell becomes the JSON value a body would give, and
 * what its values allow (order, sums, text patterns, containment, range operators), from which the
 * operators and aggregates that apply to it follow. Arrays of every kind and PostgreSQL's built-in
 * ranges are kinds too, each made by one rule from its element's record. A column type the engine
 * has no record for (an extension's) is `other`: served as its text, compared for equality, checked
 * by PostgreSQL itself. Every stage reads its part from here, and the type checker holds each
 * entry to every part.
 */
import * as v from 'valibot';
import {
  arrayElements,
  DATE,
  DECIMAL,
  dateWordHint,
  fitsNumeric,
  isBytea,
  isCidr,
  isDate,
  isInet,
  isInterval,
  isLocalTimestamp,
  isMacaddr,
  isTimestamp,
  NOT_STORABLE,
  pgTrim,
  rangeBounds,
  realDate,
  storable,
  storableJson,
  TIME,
  TIME_TZ,
  TIMESTAMP,
  WHOLE,
  wholeIn,
} from './formats.ts';
import { parseJson } from './parse/body.ts';

/**
 * A column's type as the engine reads it: its kind, what its values are cast to (the type without
 * its modifiers, so a filter value is compared rather than cut to fit), and the modifiers a body
 * value is checked against.
 */
export interface ColumnType {
  readonly kind: FieldKind;
  /** The SQL type values are cast to (`varchar`, `numeric`, `"mood"`, `int4[]`). */
  readonly sql: string;
  /** The type as the column declares it, for messages (`varchar(20)`, `numeric(10, 2)`). */
  readonly declared: string;
  /** varchar(n) and char(n): the most characters a value has. */
  readonly length?: number;
  /** numeric(precision, scale). */
  readonly precision?: number;
  readonly scale?: number;
  /** An enum's values, in their order. */
  readonly values?: readonly string[];
  /** An array's or a range's element type. */
  readonly element?: ColumnType;
}

interface KindSpec {
  /** A body value, checked with valibot; messages say what the value must be. */
  readonly body: (type: ColumnType) => v.GenericSchema;
  /** What a filter value must be, in messages ("a uuid"). */
  readonly described: string;
  /** What several values are, in messages about arrays ("uuids"). */
  readonly plural: string;
  /** A filter value's check before the database sees it, so PostgreSQL never reads a value it would refuse. */
  readonly filter: (value: string, type: ColumnType) => boolean;
  /** A value's text as the database compares it, where two texts can be one value (a uuid in either case). */
  readonly canonical?: (text: string) => string;
  /** What to send instead of a filter value the check refuses, where the message alone does not say. */
  readonly filterHint?: (value: string) => string | undefined;
  /** JSON Schema of its values as rows leave the API (`{}`: any JSON value). */
  readonly jsonSchema: (type: ColumnType) => Readonly<Record<string, unknown>>;
  /** The TypeScript type of its values. */
  readonly typescript: (type: ColumnType) => string;
  /** A CSV cell (never empty) as the JSON value a body gives; a cell that is no such value stays text. */
  readonly fromCsv: (cell: string) => unknown;
  /**
   * How a value reaches a response built in Node (row-json.ts): selected as its text (`text`) or
   * as PostgreSQL's own JSON text (`json`, for the kinds whose JSON form only PostgreSQL knows for
   * every value), and written into the row's JSON exactly as PostgreSQL's to_json writes it.
   */
  readonly toJson: {
    readonly select: 'text' | 'json' | ((type: ColumnType) => 'text' | 'json');
    readonly write: (text: string) => string;
  };
  /** `=`, `<>`, `in` and `isdistinct` apply (json has no equality). */
  readonly equality: boolean;
  /** Values are ordered: `gt`/`lt` and friends, and `order`. */
  readonly ordered: boolean;
  /** PostgreSQL has min() and max() of it. */
  readonly extremes: boolean;
  /** sum() and avg() apply. */
  readonly summable: boolean;
  /** Text patterns and full-text search apply (`like`, `match`, `fts`). */
  readonly textual: boolean;
  /** `cs` and `cd` (@>, <@) apply. */
  readonly contains: boolean;
  /** `ov` (&&) applies. */
  readonly overlaps: boolean;
  /** The range operators `sl`, `sr`, `nxl`, `nxr`, `adj` apply. */
  readonly ranged: boolean;
  /** A single value a list (`in`, `any`, `all`) may hold. */
  readonly listable: boolean;
}

/** A TypeScript string literal type. */
export const tsLiteral = (value: string): string => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

/** The value's text is its JSON: numbers, booleans, JSON, and what was selected as JSON already. */
const verbatim = (text: string) => text;
/** PostgreSQL's to_json gives a numeric's and a float's special values as strings. */
const NUMERIC_WORD = /^(?:NaN|-?Infinity)$/;
const FLOAT_WORD = /^[+-]?(?:infinity|inf|nan)$/i;

/** Filters also take the other spellings of a uuid PostgreSQL reads (braces, no hyphens). */
const ANY_UUID = /^\{?[0-9a-f]{8}-?(?:[0-9a-f]{4}-?){3}[0-9a-f]{12}\}?$/i;
const BOOLEAN = new Set(['t', 'true', 'y', 'yes', 'on', '1', 'f', 'false', 'n', 'no', 'off', '0']);
/** A time followed by a space and an offset: what `+01:00` becomes when its `+` is not percent-encoded. */
const OFFSET_AS_SPACE = /\d\d:\d\d(?::\d\d(?:\.\d+)?)? \d\d(?::?\d\d)?$/;
/** Exponents PostgreSQL's numeric takes without overflowing. */
const sensibleExponent = (text: string) => Math.abs(Number(/e([+-]?\d+)$/i.exec(text)?.[1] ?? 0)) <= 1000;
const OFFSET_HINT =
  "A + in a query string stands for a space: write the offset's + as %2B (2026-12-01T10:00:00%2B01:00).";

/** The whole numbers each integer type holds. */
const INTEGER_RANGES = {
  smallint: [-32768n, 32767n],
  integer: [-2147483648n, 2147483647n],
  bigint: [-9223372036854775808n, 9223372036854775807n],
} as const;
/** The largest magnitude of a real (float4). */
const REAL_MAX = 3.4028235e38;

const text = (message = 'must be a string') => v.pipe(v.string(message), v.check(storable, NOT_STORABLE));
const asIs = (cell: string): unknown => cell;
const number = (cell: string): unknown => (cell.trim() !== '' && Number.isFinite(Number(cell)) ? Number(cell) : cell);
/** JSON text whose value PostgreSQL's jsonb can hold. */
const isStorableJson = (text: string): boolean => {
  try {
    return storableJson(parseJson(text));
  } catch {
    return false;
  }
};
const json = (cell: string): unknown => {
  try {
    return parseJson(cell);
  } catch {
    return cell;
  }
};

/** What a kind's values allow, all off: each record turns on its own. */
const NOTHING = {
  equality: true,
  ordered: false,
  extremes: false,
  summable: false,
  textual: false,
  contains: false,
  overlaps: false,
  ranged: false,
  listable: true,
} as const;
/** Ordered values with min() and max(). */
const ORDERED = { ...NOTHING, ordered: true, extremes: true } as const;
/** Numbers: ordered, summed. */
const NUMBER = { ...ORDERED, summable: true } as const;

/** A string checked by `valid`, told as `described`. */
const checkedString = (described: string, valid: (text: string) => boolean) =>
  v.pipe(v.string(`must be ${described}`), v.check(valid, `must be ${described}`));

/** A whole number of an integer type: a JSON number, or a string holding one (larger than a double carries). */
function integerKind(type: keyof typeof INTEGER_RANGES): KindSpec {
  const [min, max] = INTEGER_RANGES[type];
  const inRange = (text: string) => WHOLE.test(text) && wholeIn(text, min, max);
  return {
    body: () =>
      v.union(
        [
          v.pipe(
            v.number('must be a whole number'),
            v.integer('must be a whole number'),
            v.minValue(Number(min), 'is too small'),
            v.maxValue(Number(max), 'is too large'),
            v.safeInteger(
              'is larger than a JSON number carries exactly: send it as a string, such as "9007199254740993"',
            ),
          ),
          v.pipe(
            v.string(),
            v.regex(WHOLE, 'must be a whole number'),
            v.check(inRange, `must be from ${min} to ${max}`),
          ),
        ],
        'must be a whole number',
      ),
    described: 'a whole number',
    plural: 'whole numbers',
    filter: (value) => inRange(pgTrim(value)),
    filterHint: (value) => (WHOLE.test(pgTrim(value)) ? `A whole number here is from ${min} to ${max}.` : undefined),
    jsonSchema: () => ({ type: 'integer', format: type === 'bigint' ? 'int64' : 'int32' }),
    typescript: () => 'number',
    fromCsv: number,
    toJson: { select: 'text', write: verbatim },
    ...NUMBER,
  };
}

/** real or double precision: a JSON number, or a string holding a number, NaN or Infinity. */
function floatKind(max: number): KindSpec {
  /** Finite text that neither overflows nor underflows the type, or one of its words. */
  const fits = (text: string) => {
    if (FLOAT_WORD.test(text)) return true;
    if (!DECIMAL.test(text)) return false;
    const value = Math.abs(Number(text));
    return value <= max && (value !== 0 || !/[1-9]/.test(text.replace(/e.*$/i, '')));
  };
  return {
    body: () =>
      v.union(
        [
          v.pipe(
            v.number(),
            v.check((n) => Math.abs(n) <= max, 'is too large for its field'),
          ),
          v.pipe(v.string(), v.check(fits, 'must be a number, or a string holding one (NaN and Infinity too)')),
        ],
        'must be a number',
      ),
    described: 'a number',
    plural: 'numbers',
    filter: (value) => fits(pgTrim(value)),
    jsonSchema: () => ({ type: 'number' }),
    typescript: () => 'number',
    fromCsv: number,
    toJson: { select: 'json', write: verbatim },
    ...NUMBER,
  };
}

/** Text that fits varchar(n) or char(n): PostgreSQL cuts only trailing spaces past the length. */
const fitsLength = (value: string, length: number | undefined) =>
  length === undefined || [...value.replace(/ +$/, '')].length <= length;

const SCALARS = {
  uuid: {
    body: () => v.pipe(v.string('must be a uuid'), v.uuid('must be a uuid')),
    described: 'a uuid',
    plural: 'uuids',
    filter: (value) => ANY_UUID.test(value),
    canonical: (text) => text.toLowerCase(),
    jsonSchema: () => ({ type: 'string', format: 'uuid' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'text', write: (text) => `"${text}"` },
    ...ORDERED,
    extremes: false,
  },
  text: {
    body: (type) =>
      type.length === undefined
        ? text()
        : v.pipe(
            text(),
            v.check((value) => fitsLength(value, type.length), `must be at most ${type.length} characters`),
          ),
    described: 'text without NUL characters or unpaired surrogates',
    plural: 'strings',
    filter: (value) => storable(value),
    jsonSchema: (type) => ({ type: 'string', ...(type.length === undefined ? {} : { maxLength: type.length }) }),
    typescript: () => 'string',
    fromCsv: asIs,
    // PostgreSQL escapes the same characters as JSON.stringify, in the same forms; char(n) loses
    // its padding as text, and keeps it as JSON.
    toJson: { select: (type) => (type.sql === 'bpchar' ? 'json' : 'text'), write: (text) => JSON.stringify(text) },
    ...ORDERED,
    textual: true,
  },
  boolean: {
    body: () => v.boolean('must be true or false'),
    described: 'a boolean (true or false)',
    plural: 'booleans',
    filter: (value) => BOOLEAN.has(pgTrim(value).toLowerCase()),
    jsonSchema: () => ({ type: 'boolean' }),
    typescript: () => 'boolean',
    fromCsv: (cell) => (cell === 'true' ? true : cell === 'false' ? false : cell),
    // A boolean cast to text is `true` or `false`.
    toJson: { select: 'text', write: verbatim },
    ...ORDERED,
    extremes: false,
  },
  smallint: integerKind('smallint'),
  integer: integerKind('integer'),
  bigint: integerKind('bigint'),
  real: floatKind(REAL_MAX),
  'double precision': floatKind(Number.MAX_VALUE),
  numeric: {
    // A JSON number, or a string holding one for values a double cannot carry exactly.
    body: (type) => {
      const fits = (value: number | string) =>
        type.precision === undefined || fitsNumeric(String(value), type.precision, type.scale ?? 0);
      const limit =
        type.precision === undefined
          ? ''
          : `must have at most ${type.precision - (type.scale ?? 0)} digits before the point`;
      return v.pipe(
        v.union(
          [
            v.pipe(v.number(), v.finite('is too large a number')),
            v.pipe(
              v.string(),
              v.regex(
                /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/,
                'must be a number, or a string holding one such as "1234.50"',
              ),
              v.check(sensibleExponent, 'must have an exponent from -1000 to 1000'),
            ),
          ],
          'must be a number',
        ),
        v.check(fits, limit),
      );
    },
    described: 'a number',
    plural: 'numbers',
    filter: (value) => {
      const text = pgTrim(value);
      return (DECIMAL.test(text) || /^[+-]?infinity$|^nan$/i.test(text)) && sensibleExponent(text);
    },
    // Only the exponent can fail a value of the right form.
    filterHint: (value) => (DECIMAL.test(pgTrim(value)) ? "A number's exponent is from -1000 to 1000." : undefined),
    jsonSchema: () => ({ type: 'number' }),
    typescript: () => 'number',
    fromCsv: number,
    toJson: { select: 'text', write: (text) => (NUMERIC_WORD.test(text) ? `"${text}"` : text) },
    ...NUMBER,
  },
  date: {
    body: () =>
      v.pipe(
        v.string('must be a date (YYYY-MM-DD)'),
        v.regex(DATE, 'must be a date (YYYY-MM-DD)'),
        v.check(realDate, 'is not a real date'),
      ),
    described: 'a date (YYYY-MM-DD)',
    plural: 'dates (YYYY-MM-DD)',
    filter: (value) => isDate(pgTrim(value)),
    filterHint: (value) => dateWordHint(value, '2026-12-01'),
    jsonSchema: () => ({ type: 'string', format: 'date' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  time: {
    body: () => checkedString('a time of day (HH:MM:SS)', (value) => TIME.test(value)),
    described: 'a time of day (HH:MM:SS)',
    plural: 'times of day (HH:MM:SS)',
    filter: (value) => TIME.test(pgTrim(value)),
    filterHint: (value) => dateWordHint(value, '09:30:00'),
    jsonSchema: () => ({ type: 'string', format: 'time' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  timetz: {
    body: () => checkedString('a time of day with an optional offset (HH:MM:SS+01:00)', (value) => TIME_TZ.test(value)),
    described: 'a time of day with an optional offset (HH:MM:SS+01:00)',
    plural: 'times of day',
    filter: (value) => TIME_TZ.test(pgTrim(value)),
    filterHint: (value) => (/ \d\d(?::?\d\d)?$/.test(pgTrim(value)) ? OFFSET_HINT : undefined),
    jsonSchema: () => ({ type: 'string', format: 'time' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  timestamp: {
    body: () =>
      v.pipe(
        v.string('must be an ISO 8601 timestamp, such as 2026-12-01T09:00:00'),
        v.check(isLocalTimestamp, 'must be an ISO 8601 timestamp on a real day, such as 2026-12-01T09:00:00'),
      ),
    described: 'an ISO 8601 timestamp (such as 2026-12-01T09:00:00) or a date (YYYY-MM-DD)',
    plural: 'timestamps',
    filter: (value) => isLocalTimestamp(pgTrim(value)),
    filterHint: (value) => dateWordHint(value, '2026-12-01T09:00:00'),
    jsonSchema: () => ({ type: 'string', format: 'date-time' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  timestamptz: {
    body: () =>
      v.pipe(
        v.string('must be an ISO 8601 timestamp with an offset'),
        v.regex(TIMESTAMP, 'must be an ISO 8601 timestamp with an offset, such as 2026-12-01T09:00:00Z'),
        v.check(realDate, 'is not a real date'),
      ),
    // A filter also takes a day, meaning its midnight in UTC (`won_at=gte.2026-12-01`), and a
    // time without an offset, read in UTC as the connection's time zone is.
    described: 'an ISO 8601 timestamp (such as 2026-12-01T09:00:00Z, UTC without an offset) or a date (YYYY-MM-DD)',
    plural: 'timestamps',
    filter: (value) => {
      const text = pgTrim(value);
      return isTimestamp(text) || isLocalTimestamp(text);
    },
    filterHint: (value) =>
      dateWordHint(value, "2026-12-01T09:00:00Z (JavaScript's toISOString() gives one)") ??
      (OFFSET_AS_SPACE.test(pgTrim(value)) ? OFFSET_HINT : undefined),
    jsonSchema: () => ({ type: 'string', format: 'date-time' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  interval: {
    body: () => checkedString('an interval, such as "1 day 02:00:00" or "P1DT2H"', isInterval),
    described: 'an interval, such as 1 day 02:00:00 or P1DT2H',
    plural: 'intervals',
    filter: (value) => isInterval(value),
    jsonSchema: () => ({ type: 'string', format: 'duration' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...NUMBER,
  },
  json: {
    body: () => v.pipe(v.unknown(), v.check(storableJson, NOT_STORABLE)),
    described: 'JSON without NUL characters or unpaired surrogates',
    plural: 'JSON values',
    filter: isStorableJson,
    jsonSchema: () => ({}),
    typescript: () => 'Json',
    fromCsv: json,
    toJson: { select: 'text', write: verbatim },
    ...NOTHING,
    equality: false,
    listable: false,
  },
  jsonb: {
    body: () => v.pipe(v.unknown(), v.check(storableJson, NOT_STORABLE)),
    described: 'JSON without NUL characters or unpaired surrogates',
    plural: 'JSON values',
    filter: isStorableJson,
    jsonSchema: () => ({}),
    typescript: () => 'Json',
    fromCsv: json,
    toJson: { select: 'text', write: verbatim },
    ...ORDERED,
    extremes: false,
    contains: true,
    listable: false,
  },
  bytea: {
    body: () => checkedString('bytes as hex text, such as "\\\\x48656c6c6f"', isBytea),
    described: 'bytes as hex text, such as \\x48656c6c6f',
    plural: 'byte strings',
    filter: isBytea,
    jsonSchema: () => ({ type: 'string', pattern: '^\\\\x([0-9a-fA-F]{2})*$' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
    extremes: false,
  },
  inet: {
    body: () => checkedString('an IPv4 or IPv6 address, such as 192.0.2.1 or 2001:db8::1/64', isInet),
    described: 'an IPv4 or IPv6 address, such as 192.0.2.1 or 2001:db8::1/64',
    plural: 'IP addresses',
    filter: isInet,
    jsonSchema: () => ({ type: 'string' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  cidr: {
    body: () => checkedString('a network without host bits, such as 192.0.2.0/24', isCidr),
    described: 'a network without host bits, such as 192.0.2.0/24',
    plural: 'networks',
    filter: isCidr,
    jsonSchema: () => ({ type: 'string' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
  },
  macaddr: {
    body: () => checkedString('a MAC address, such as 08:00:2b:01:02:03', (value) => isMacaddr(value, 6)),
    described: 'a MAC address, such as 08:00:2b:01:02:03',
    plural: 'MAC addresses',
    filter: (value) => isMacaddr(value, 6),
    jsonSchema: () => ({ type: 'string' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
    extremes: false,
  },
  macaddr8: {
    body: () => checkedString('an EUI-64 MAC address, such as 08:00:2b:01:02:03:04:05', (value) => isMacaddr(value, 8)),
    described: 'an EUI-64 MAC address, such as 08:00:2b:01:02:03:04:05',
    plural: 'MAC addresses',
    filter: (value) => isMacaddr(value, 8),
    jsonSchema: () => ({ type: 'string' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
    extremes: false,
  },
  enum: {
    body: (type) => v.picklist(type.values ?? [], `must be one of ${(type.values ?? []).join(', ')}`),
    described: 'one of the enum values',
    plural: 'enum values',
    filter: (value, type) => (type.values ?? []).includes(value),
    jsonSchema: (type) => ({ type: 'string', enum: type.values ?? [] }),
    typescript: (type) => (type.values ?? []).map(tsLiteral).join(' | ') || 'string',
    fromCsv: asIs,
    toJson: { select: 'text', write: (text) => JSON.stringify(text) },
    ...ORDERED,
  },
  /** A type the engine has no record for: its text, as PostgreSQL reads and writes it. */
  other: {
    body: () =>
      v.union(
        [v.pipe(v.string(), v.check(storable, NOT_STORABLE)), v.number(), v.boolean()],
        'must be text that the field reads',
      ),
    described: 'text that the field reads',
    plural: 'values',
    filter: (value) => storable(value),
    jsonSchema: () => ({}),
    typescript: () => 'unknown',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...NOTHING,
  },
} as const satisfies Record<string, KindSpec>;

type ScalarKind = keyof typeof SCALARS;

/** PostgreSQL's built-in ranges, each over the kind of its bounds. */
const RANGES = {
  int4range: 'integer',
  int8range: 'bigint',
  numrange: 'numeric',
  daterange: 'date',
  tsrange: 'timestamp',
  tstzrange: 'timestamptz',
} as const satisfies Record<string, ScalarKind>;

type RangeKind = keyof typeof RANGES;
type ArrayKind = `${ScalarKind | RangeKind}[]`;
export type FieldKind = ScalarKind | RangeKind | ArrayKind;

/** A range: its literal's text (`[1,10)`, `empty`), each bound a value of its element. */
function rangeKind(element: ScalarKind): KindSpec {
  const bounds = SCALARS[element];
  const valid = (value: string, type: ColumnType) =>
    rangeBounds(value)?.every((b) => b === null || bounds.filter(b, type.element ?? type)) ?? false;
  const described = `a range such as [1,10) or (,2026-12-01], its bounds ${bounds.plural}`;
  return {
    body: (type) =>
      v.pipe(
        v.string(`must be ${described}`),
        v.check((value) => valid(value, type), `must be ${described}`),
      ),
    described,
    plural: 'ranges',
    filter: valid,
    jsonSchema: () => ({ type: 'string' }),
    typescript: () => 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
    ...ORDERED,
    extremes: false,
    contains: true,
    overlaps: true,
    ranged: true,
  };
}

/** A one-dimensional array of an element kind: a JSON array of its values, a `{a,b}` literal in filters. */
function arrayKind(element: KindSpec): KindSpec {
  const message = `must be an array of ${element.plural}`;
  return {
    body: (type) => v.array(element.body(type.element ?? type), message),
    described: `an array literal such as {a,b}, its elements ${element.plural}`,
    plural: 'arrays',
    filter: (value, type) =>
      storable(value) &&
      (arrayElements(value)?.every((e) => e === null || element.filter(e, type.element ?? type)) ?? false),
    jsonSchema: (type) => ({ type: 'array', items: element.jsonSchema(type.element ?? type) }),
    typescript: (type) => {
      const own = element.typescript(type.element ?? type);
      return `${/\W/.test(own) ? `(${own})` : own}[]`;
    },
    fromCsv: json,
    toJson: { select: 'json', write: verbatim },
    ...NOTHING,
    equality: element.equality,
    ordered: element.ordered,
    extremes: element.ordered,
    contains: true,
    overlaps: true,
    listable: false,
  };
}

const BASES: Record<ScalarKind | RangeKind, KindSpec> = {
  ...SCALARS,
  ...(Object.fromEntries(Object.entries(RANGES).map(([range, element]) => [range, rangeKind(element)])) as Record<
    RangeKind,
    KindSpec
  >),
};

export const KINDS: Readonly<Record<FieldKind, KindSpec>> = {
  ...BASES,
  ...(Object.fromEntries(Object.entries(BASES).map(([kind, spec]) => [`${kind}[]`, arrayKind(spec)])) as Record<
    ArrayKind,
    KindSpec
  >),
};

/** The kinds, scalars first. */
export const FIELD_KINDS = Object.keys(KINDS) as FieldKind[];

/**
 * The types each base kind has (as drizzle's getSQLType spells them, or PostgreSQL's catalog), with
 * the name its values are cast to.
 */
const BASE_TYPES: Readonly<Record<string, readonly [ScalarKind | RangeKind, string]>> = {
  uuid: ['uuid', 'uuid'],
  text: ['text', 'text'],
  varchar: ['text', 'varchar'],
  'character varying': ['text', 'varchar'],
  char: ['text', 'bpchar'],
  character: ['text', 'bpchar'],
  bpchar: ['text', 'bpchar'],
  boolean: ['boolean', 'boolean'],
  bool: ['boolean', 'boolean'],
  smallint: ['smallint', 'int2'],
  int2: ['smallint', 'int2'],
  smallserial: ['smallint', 'int2'],
  serial2: ['smallint', 'int2'],
  integer: ['integer', 'int4'],
  int: ['integer', 'int4'],
  int4: ['integer', 'int4'],
  serial: ['integer', 'int4'],
  serial4: ['integer', 'int4'],
  bigint: ['bigint', 'int8'],
  int8: ['bigint', 'int8'],
  bigserial: ['bigint', 'int8'],
  serial8: ['bigint', 'int8'],
  real: ['real', 'float4'],
  float4: ['real', 'float4'],
  'double precision': ['double precision', 'float8'],
  float8: ['double precision', 'float8'],
  numeric: ['numeric', 'numeric'],
  decimal: ['numeric', 'numeric'],
  date: ['date', 'date'],
  time: ['time', 'time'],
  'time without time zone': ['time', 'time'],
  'time with time zone': ['timetz', 'timetz'],
  timetz: ['timetz', 'timetz'],
  timestamp: ['timestamp', 'timestamp'],
  'timestamp without time zone': ['timestamp', 'timestamp'],
  'timestamp with time zone': ['timestamptz', 'timestamptz'],
  timestamptz: ['timestamptz', 'timestamptz'],
  interval: ['interval', 'interval'],
  json: ['json', 'json'],
  jsonb: ['jsonb', 'jsonb'],
  bytea: ['bytea', 'bytea'],
  inet: ['inet', 'inet'],
  cidr: ['cidr', 'cidr'],
  macaddr: ['macaddr', 'macaddr'],
  macaddr8: ['macaddr8', 'macaddr8'],
  int4range: ['int4range', 'int4range'],
  int8range: ['int8range', 'int8range'],
  numrange: ['numrange', 'numrange'],
  daterange: ['daterange', 'daterange'],
  tsrange: ['tsrange', 'tsrange'],
  tstzrange: ['tstzrange', 'tstzrange'],
};

/** The column types (as drizzle or PostgreSQL spell them) of a base kind, for the docs' table of types. */
export const columnTypesOf = (kind: FieldKind): string[] =>
  Object.entries(BASE_TYPES)
    .filter(([, [k]]) => k === kind)
    .map(([name]) => name);

/** An enum type of the database, as a column names it. */
export interface EnumType {
  readonly name: string;
  readonly schema?: string | undefined;
  readonly values: readonly string[];
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A base type's parts: its name without modifiers, and the modifiers' numbers. */
function parseBase(declared: string): { name: string; numbers: number[] } {
  const numbers = [...declared.matchAll(/\(\s*(-?\d+)(?:\s*,\s*(-?\d+))?\s*\)/g)].flatMap((m) =>
    [m[1], m[2]].filter((n) => n !== undefined).map(Number),
  );
  const name = declared
    .replace(/\([^)]*\)/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();
  // An interval's fields (`interval day to second`) restrict what it keeps, not what it reads.
  return { name: name.startsWith('interval ') ? 'interval' : name, numbers };
}

/**
 * What values of a type the engine has no record for are cast to: its name (`citext`,
 * `public.ltree`) with each part quoted unless simple, or PostgreSQL's name for a type of two words.
 */
function otherName(name: string): string {
  if (name === 'bit varying') return 'varbit';
  return name
    .split('.')
    .map((part) => (/^[a-z_][a-z0-9_]*$/.test(part) || /^".*"$/.test(part) ? part : quoted(part)))
    .join('.');
}

/**
 * The type of a column declared `declared` (drizzle's getSQLType: `varchar(20)`, `numeric(10, 2)`,
 * `integer[]`, an enum's name), or `other` for a type the engine has no record for.
 */
export function columnType(declared: string, enumType?: EnumType): ColumnType {
  const array = /^(.*?)\s*\[\d*\]$/.exec(declared);
  if (array) {
    const element = columnType(array[1]!, enumType);
    // A multidimensional array is served as its text.
    if (element.kind.endsWith('[]')) return { kind: 'other', sql: declared, declared };
    return { kind: `${element.kind as ScalarKind | RangeKind}[]`, sql: `${element.sql}[]`, declared, element };
  }
  if (enumType) {
    const sql = enumType.schema ? `${quoted(enumType.schema)}.${quoted(enumType.name)}` : quoted(enumType.name);
    return { kind: 'enum', sql, declared, values: enumType.values };
  }
  const { name, numbers } = parseBase(declared);
  const known = BASE_TYPES[name];
  if (!known) return { kind: 'other', sql: otherName(name), declared };
  const [kind, sql] = known;
  const type: ColumnType = { kind, sql, declared };
  if (kind === 'text' && sql !== 'text') {
    // char without a length is char(1).
    const length = numbers[0] ?? (sql === 'bpchar' ? 1 : undefined);
    return length === undefined ? type : { ...type, length };
  }
  if (kind === 'numeric' && numbers.length > 0) return { ...type, precision: numbers[0]!, scale: numbers[1] ?? 0 };
  if (kind in RANGES) return { ...type, element: columnType(RANGES[kind as RangeKind]) };
  return type;
}

/** How a value of `type` is selected for a response built in Node (KindSpec.toJson). */
export function selectedAs(type: ColumnType): 'text' | 'json' {
  const { select } = KINDS[type.kind].toJson;
  return typeof select === 'function' ? select(type) : select;
}

/** How a selected value of `type` is written into a response built in Node: JSON selected as JSON is as it is. */
export const writerOf = (type: ColumnType): ((text: string) => string) =>
  selectedAs(type) === 'json' ? verbatim : KINDS[type.kind].toJson.write;

/** PostgreSQL's own names of the types it calls otherwise than their cast name, as its messages write them. */
const CATALOG_NAMES: Readonly<Record<string, string>> = {
  int2: 'smallint',
  int4: 'integer',
  int8: 'bigint',
  float4: 'real',
  float8: 'double precision',
  varchar: 'character varying',
  bpchar: 'character',
  timestamp: 'timestamp without time zone',
  timestamptz: 'timestamp with time zone',
  time: 'time without time zone',
  timetz: 'time with time zone',
};

/**
 * The name PostgreSQL's messages give values of `type` (`integer`, `character varying`, `mood`):
 * an array's and a range's are its element's too, as PostgreSQL names the element it failed on.
 */
export function catalogNames(type: ColumnType): string[] {
  const own = type.sql.replace(/\[\]$/, '');
  const name = CATALOG_NAMES[own] ?? own.split('.').at(-1)!.replace(/^"|"$/g, '').replace(/""/g, '"');
  return [name, ...(type.element ? catalogNames(type.element) : [])];
}

/** How messages name a type: by its kind, or as declared where the kind says little (an enum, another type). */
export const typeName = (type: ColumnType): string =>
  type.kind === 'enum' || type.kind === 'other' || type.kind === 'enum[]' || type.kind === 'other[]'
    ? type.declared
    : type.kind;

/** The kinds whose name is a type's: all but enums and the types the engine has no record for. */
type NamedKind = Exclude<FieldKind, 'enum' | 'other' | 'enum[]' | 'other[]'>;

/** The type of a value of a kind reached otherwise than as a column (a JSON path's `->>` gives text). */
export const kindType = (kind: NamedKind): ColumnType => columnType(kind);
