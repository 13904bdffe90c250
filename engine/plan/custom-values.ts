/**
 * Custom-field values given in a body (batch imports), checked against `custom_field.type` and
 * spread over the typed columns of a value table, as `appointment_custom_field` is shaped.
 */
import { DATE, realDate, storable, TIMESTAMP } from './body.ts';

export type CustomFieldType = 'string' | 'datetime' | 'boolean' | 'number' | 'date' | 'string_list';

export interface CustomField {
  readonly id: string;
  readonly key: string;
  readonly type: CustomFieldType;
}

const FITS: Record<CustomFieldType, [(value: unknown) => boolean, string]> = {
  string: [(v) => typeof v === 'string' && storable(v), 'must be a string without NUL characters'],
  number: [(v) => typeof v === 'number' && Number.isFinite(v), 'must be a number'],
  boolean: [(v) => typeof v === 'boolean', 'must be true or false'],
  date: [(v) => typeof v === 'string' && DATE.test(v) && realDate(v), 'must be a date (YYYY-MM-DD)'],
  datetime: [
    (v) => typeof v === 'string' && TIMESTAMP.test(v) && realDate(v),
    'must be an ISO 8601 timestamp with an offset',
  ],
  string_list: [
    (v) => Array.isArray(v) && v.every((x) => typeof x === 'string' && storable(x)),
    'must be an array of strings',
  ],
};

/** Why a value does not fit its field, or null when it does (null always fits: it clears the value). */
export function customValueProblem(field: CustomField, value: unknown): string | null {
  if (value === null) return null;
  const [fits, message] = FITS[field.type];
  return fits(value) ? null : message;
}

const TYPED_COLUMN: Record<CustomFieldType, string> = {
  string: 'string_value',
  number: 'number_value',
  boolean: 'boolean_value',
  date: 'date_value',
  datetime: 'datetime_value',
  string_list: 'string_list_value',
};

/** The row of a value table for one value: `value` as text plus the typed column. */
export function customValueRow(field: CustomField, value: unknown): Record<string, unknown> {
  const text = value === null ? null : typeof value === 'string' ? value : JSON.stringify(value);
  return { custom_field_id: field.id, key: field.key, value: text, [TYPED_COLUMN[field.type]]: value };
}
