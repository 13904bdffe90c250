/**
 * The kinds of value a field holds, one record each: the column types of the kind, the SQL type its
 * values are cast to, how a body value is checked, how a filter value is checked and described, its
 * JSON Schema and TypeScript type (rows leave the API as PostgreSQL's JSON gives them), and how a
 * CSV cell becomes the JSON value a body would give. Every stage reads its part from here, so a new
 * kind is one entry, and the type checker holds each entry to every part.
 */
import * as v from 'valibot';
import {
  arrayElements,
  DATE,
  dateWordHint,
  isDate,
  isTimestamp,
  NOT_STORABLE,
  pgTrim,
  realDate,
  storable,
  storableJson,
  TIMESTAMP,
} from './formats.ts';
import { parseJson } from './parse/body.ts';

interface KindSpec {
  /** The column types (drizzle's `getSQLType()`) of this kind. */
  readonly columns: readonly string[];
  /** The SQL type its values are cast to, and the type of its columns in `json_to_recordset`. */
  readonly sql: string;
  /** A body value, checked with valibot; messages say what the value must be. */
  readonly body: () => v.GenericSchema;
  /** What a filter value must be, in messages ("a uuid"). */
  readonly described: string;
  /** A filter value's check before the database sees it, so PostgreSQL never reads a value it would refuse. */
  readonly filter: (value: string) => boolean;
  /** What to send instead of a filter value the check refuses, where the message alone does not say. */
  readonly filterHint?: (value: string) => string | undefined;
  /** JSON Schema of its values as rows leave the API (`{}`: any JSON value). */
  readonly jsonSchema: { readonly type?: string; readonly format?: string; readonly items?: { type: string } };
  /** The TypeScript type of its values. */
  readonly typescript: string;
  /** A CSV cell (never empty) as the JSON value a body gives; a cell that is no such value stays text. */
  readonly fromCsv: (cell: string) => unknown;
  /**
   * How a value reaches a response built in Node (row-json.ts): selected as its text (`text`) or
   * as PostgreSQL's own JSON text (`json`, for the kinds whose JSON form only PostgreSQL knows for
   * every value), and written into the row's JSON exactly as PostgreSQL's to_json writes it.
   */
  readonly toJson: { readonly select: 'text' | 'json'; readonly write: (text: string) => string };
}

/** The value's text is its JSON: numbers, booleans, JSON, and what was selected as JSON already. */
const verbatim = (text: string) => text;
/** PostgreSQL's to_json gives a numeric's special values as strings. */
const NUMERIC_WORD = /^(?:NaN|-?Infinity)$/;

/** Filters also take the other spellings of a uuid PostgreSQL reads (braces, no hyphens). */
const ANY_UUID = /^\{?[0-9a-f]{8}-?(?:[0-9a-f]{4}-?){3}[0-9a-f]{12}\}?$/i;
const INTEGER = /^[+-]?\d+$/;
const FILTER_NUMERIC = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|[+-]?infinity|nan)$/i;
const BOOLEAN = new Set(['t', 'true', 'y', 'yes', 'on', '1', 'f', 'false', 'n', 'no', 'off', '0']);
/** A time followed by a space and an offset: what `+01:00` becomes when its `+` is not percent-encoded. */
const OFFSET_AS_SPACE = /\d\d:\d\d(?::\d\d(?:\.\d+)?)? \d\d(?::?\d\d)?$/;
/** A body's numeric given as a string, for values a double cannot carry exactly. */
const BODY_NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
/** Exponents PostgreSQL's numeric takes without overflowing. */
const sensibleExponent = (text: string) => Math.abs(Number(/e([+-]?\d+)$/i.exec(text)?.[1] ?? 0)) <= 1000;
const INT4 = { min: -2147483648, max: 2147483647 };

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

export const KINDS = {
  uuid: {
    columns: ['uuid'],
    sql: 'uuid',
    body: () => v.pipe(v.string('must be a uuid'), v.uuid('must be a uuid')),
    described: 'a uuid',
    filter: (value) => ANY_UUID.test(value),
    jsonSchema: { type: 'string', format: 'uuid' },
    typescript: 'string',
    fromCsv: asIs,
    toJson: { select: 'text', write: (text) => `"${text}"` },
  },
  text: {
    columns: ['text'],
    sql: 'text',
    body: () => text(),
    described: 'text without NUL characters or unpaired surrogates',
    filter: storable,
    jsonSchema: { type: 'string' },
    typescript: 'string',
    fromCsv: asIs,
    // PostgreSQL escapes the same characters as JSON.stringify, in the same forms.
    toJson: { select: 'text', write: (text) => JSON.stringify(text) },
  },
  boolean: {
    columns: ['boolean'],
    sql: 'boolean',
    body: () => v.boolean('must be true or false'),
    described: 'a boolean (true or false)',
    filter: (value) => BOOLEAN.has(pgTrim(value).toLowerCase()),
    jsonSchema: { type: 'boolean' },
    typescript: 'boolean',
    fromCsv: (cell) => (cell === 'true' ? true : cell === 'false' ? false : cell),
    // A boolean cast to text is `true` or `false`.
    toJson: { select: 'text', write: verbatim },
  },
  integer: {
    columns: ['integer', 'serial'],
    sql: 'int4',
    body: () =>
      v.pipe(
        v.number('must be a whole number'),
        v.integer('must be a whole number'),
        v.minValue(INT4.min, 'is too small'),
        v.maxValue(INT4.max, 'is too large'),
      ),
    described: 'a whole number',
    filter: (value) => INTEGER.test(pgTrim(value)) && Number(value) >= INT4.min && Number(value) <= INT4.max,
    filterHint: (value) =>
      INTEGER.test(pgTrim(value)) ? `A whole number here is from ${INT4.min} to ${INT4.max}.` : undefined,
    jsonSchema: { type: 'integer', format: 'int32' },
    typescript: 'number',
    fromCsv: number,
    toJson: { select: 'text', write: verbatim },
  },
  numeric: {
    columns: ['numeric'],
    sql: 'numeric',
    // A JSON number, or a string holding one for values a double cannot carry exactly.
    body: () =>
      v.union(
        [
          v.pipe(v.number(), v.finite('is too large a number')),
          v.pipe(
            v.string(),
            v.regex(BODY_NUMERIC, 'must be a number, or a string holding one such as "1234.50"'),
            v.check(sensibleExponent, 'must have an exponent from -1000 to 1000'),
          ),
        ],
        'must be a number',
      ),
    described: 'a number',
    filter: (value) => {
      const text = pgTrim(value);
      return FILTER_NUMERIC.test(text) && sensibleExponent(text);
    },
    // Only the exponent can fail a value of the right form.
    filterHint: (value) =>
      FILTER_NUMERIC.test(pgTrim(value)) ? "A number's exponent is from -1000 to 1000." : undefined,
    jsonSchema: { type: 'number' },
    typescript: 'number',
    fromCsv: number,
    toJson: { select: 'text', write: (text) => (NUMERIC_WORD.test(text) ? `"${text}"` : text) },
  },
  date: {
    columns: ['date'],
    sql: 'date',
    body: () =>
      v.pipe(
        v.string('must be a date (YYYY-MM-DD)'),
        v.regex(DATE, 'must be a date (YYYY-MM-DD)'),
        v.check(realDate, 'is not a real date'),
      ),
    described: 'a date (YYYY-MM-DD)',
    filter: (value) => isDate(pgTrim(value)),
    filterHint: (value) => dateWordHint(value, '2026-12-01'),
    jsonSchema: { type: 'string', format: 'date' },
    typescript: 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
  },
  timestamptz: {
    columns: ['timestamp with time zone'],
    sql: 'timestamptz',
    body: () =>
      v.pipe(
        v.string('must be an ISO 8601 timestamp with an offset'),
        v.regex(TIMESTAMP, 'must be an ISO 8601 timestamp with an offset, such as 2026-12-01T09:00:00Z'),
        v.check(realDate, 'is not a real date'),
      ),
    // A filter also takes a day, meaning its midnight in UTC: `won_at=gte.2026-12-01`.
    described: 'an ISO 8601 timestamp with an offset (such as 2026-12-01T09:00:00Z) or a date (YYYY-MM-DD)',
    filter: (value) => {
      const text = pgTrim(value);
      return isTimestamp(text) || isDate(text);
    },
    filterHint: (value) =>
      dateWordHint(value, "2026-12-01T09:00:00Z (JavaScript's toISOString() gives one)") ??
      (OFFSET_AS_SPACE.test(pgTrim(value))
        ? "A + in a query string stands for a space: write the offset's + as %2B (2026-12-01T10:00:00%2B01:00)."
        : undefined),
    jsonSchema: { type: 'string', format: 'date-time' },
    typescript: 'string',
    fromCsv: asIs,
    toJson: { select: 'json', write: verbatim },
  },
  'text[]': {
    columns: ['text[]'],
    sql: 'text[]',
    body: () => v.array(text('must be an array of strings'), 'must be an array of strings'),
    described: 'an array literal such as {a,b}',
    filter: (value) => arrayElements(value) !== null && storable(value),
    jsonSchema: { type: 'array', items: { type: 'string' } },
    typescript: 'string[]',
    fromCsv: json,
    toJson: { select: 'json', write: verbatim },
  },
  jsonb: {
    columns: ['jsonb'],
    sql: 'jsonb',
    body: () => v.pipe(v.unknown(), v.check(storableJson, NOT_STORABLE)),
    described: 'JSON without NUL characters or unpaired surrogates',
    filter: isStorableJson,
    jsonSchema: {},
    typescript: 'Json',
    fromCsv: json,
    toJson: { select: 'text', write: verbatim },
  },
} as const satisfies Record<string, KindSpec>;

export type FieldKind = keyof typeof KINDS;

/** The kinds, in the order of the record. */
export const FIELD_KINDS = Object.keys(KINDS) as FieldKind[];

/** The SQL type each kind's values are cast to. */
export const sqlType = (kind: FieldKind): string => KINDS[kind].sql;

const BY_COLUMN_TYPE: ReadonlyMap<string, FieldKind> = new Map(
  FIELD_KINDS.flatMap((kind) => KINDS[kind].columns.map((column) => [column, kind] as const)),
);

/** The kind of a column of this SQL type, or undefined when the engine has none for it. */
export const kindOfColumn = (sqlType: string): FieldKind | undefined => BY_COLUMN_TYPE.get(sqlType);

/** Every column type the engine reads, for the message that refuses another. */
export const COLUMN_TYPES: readonly string[] = [...BY_COLUMN_TYPE.keys()];
