/**
 * Custom fields: what each `custom_field.type` means, in one place. A type names the typed column
 * of a value table that holds its values, the kind of those values, the JSON a body gives for it
 * and the pattern its text must match. The checks of bodies and imports (`customValueProblem`),
 * the checks and writes inside a statement, and the projection of `*_details`
 * (compile/custom-fields.ts) all derive from this table; schema/tables.ts takes its type list
 * from here too.
 */

import type { FieldKind } from './field-kinds.ts';
import { DATE, NOT_STORABLE, realDate, storableJson, TIMESTAMP } from './formats.ts';

interface TypeSpec {
  /** The column of a value table that holds values of this type. */
  readonly column: string;
  /** The kind of that column. */
  readonly kind: FieldKind;
  /** The JSON type a body gives: an array is an array of strings. */
  readonly json: 'string' | 'number' | 'boolean' | 'array';
  /** A JSON string must match this and name a real day. */
  readonly pattern?: RegExp;
  /** What a value that does not fit is told. */
  readonly message: string;
}

export const CUSTOM_FIELD_TYPES = {
  string: { column: 'string_value', kind: 'text', json: 'string', message: 'must be a string' },
  datetime: {
    column: 'datetime_value',
    kind: 'timestamptz',
    json: 'string',
    pattern: TIMESTAMP,
    message: 'must be an ISO 8601 timestamp with an offset',
  },
  boolean: { column: 'boolean_value', kind: 'boolean', json: 'boolean', message: 'must be true or false' },
  number: { column: 'number_value', kind: 'numeric', json: 'number', message: 'must be a number' },
  date: { column: 'date_value', kind: 'date', json: 'string', pattern: DATE, message: 'must be a date (YYYY-MM-DD)' },
  string_list: { column: 'string_list_value', kind: 'text[]', json: 'array', message: 'must be an array of strings' },
} as const satisfies Record<string, TypeSpec>;

export type CustomFieldType = keyof typeof CUSTOM_FIELD_TYPES;

/** The names of the types, for the check constraint on `custom_field.type`. */
export const CUSTOM_FIELD_TYPE_NAMES = Object.keys(CUSTOM_FIELD_TYPES) as [CustomFieldType, ...CustomFieldType[]];

/** A custom field of an organisation, as writes and imports look it up. */
export interface CustomField {
  readonly id: string;
  readonly key: string;
  readonly type: CustomFieldType;
}

const jsonType = (value: unknown) => (Array.isArray(value) ? 'array' : typeof value);

/**
 * Why PostgreSQL could not even read a value, whatever its type, or null: a JSON number too large
 * for a double (parsed as Infinity, written as null), or text jsonb refuses.
 */
export function unreadableValue(value: unknown): string | null {
  if (typeof value === 'number') return Number.isFinite(value) ? null : 'is too large a number';
  return storableJson(value) ? null : NOT_STORABLE;
}

/** Why a value does not fit its type, or null when it does (null always fits: it clears the value). */
export function customValueProblem(type: CustomFieldType, value: unknown): string | null {
  if (value === null) return null;
  const spec: TypeSpec = CUSTOM_FIELD_TYPES[type];
  if (jsonType(value) !== spec.json) return spec.message;
  const texts: unknown[] = Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
  if (!texts.every((text) => typeof text === 'string')) return spec.message;
  const unreadable = unreadableValue(value);
  if (unreadable) return unreadable;
  if (spec.pattern && !(spec.pattern.test(value as string) && realDate(value as string))) return spec.message;
  return null;
}
