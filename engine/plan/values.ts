/**
 * Filter values checked against their field's kind before they reach the database, so a typo
 * gets a message naming the field instead of a database error. Dates, timestamps, arrays and JSON
 * are left to PostgreSQL's own parser (its errors are mapped to 400 by the execute stage).
 */
import { ApiError } from '../errors.ts';
import type { FieldKind } from '../registry.ts';

/** A uuid in its canonical form, as the API gives them out and bodies must send them. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Filters also take the other spellings PostgreSQL reads (braces, no hyphens). */
const ANY_UUID = /^\{?[0-9a-f]{8}-?(?:[0-9a-f]{4}-?){3}[0-9a-f]{12}\}?$/i;
const INTEGER = /^\s*[+-]?\d+\s*$/;
const NUMERIC = /^\s*(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|[+-]?infinity|nan)\s*$/i;
const BOOLEAN = new Set(['t', 'true', 'y', 'yes', 'on', '1', 'f', 'false', 'n', 'no', 'off', '0']);

const CHECKS: Partial<Record<FieldKind, (v: string) => boolean>> = {
  uuid: (v) => ANY_UUID.test(v),
  integer: (v) => INTEGER.test(v) && Number(v) >= -2147483648 && Number(v) <= 2147483647,
  numeric: (v) => NUMERIC.test(v),
  boolean: (v) => BOOLEAN.has(v.trim().toLowerCase()),
};

const DESCRIBED: Record<FieldKind, string> = {
  uuid: 'a uuid',
  text: 'text',
  boolean: 'a boolean (true or false)',
  integer: 'a whole number',
  numeric: 'a number',
  date: 'a date (YYYY-MM-DD)',
  timestamptz: 'an ISO 8601 timestamp',
  'text[]': 'an array literal such as {a,b}',
  jsonb: 'JSON',
};

export function checkValue(field: string, kind: FieldKind, value: string): void {
  const check = CHECKS[kind];
  if (check && !check(value)) {
    throw new ApiError('INVALID_QUERY', `"${value}" is not ${DESCRIBED[kind]}, as field ${field} requires`, {
      context: { field, value, expected: DESCRIBED[kind] },
    });
  }
}

/** A PostgreSQL array literal of the given elements, each quoted: `{"a","b \"c\""}`. */
export const arrayLiteral = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
