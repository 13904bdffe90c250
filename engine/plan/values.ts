/**
 * Filter values checked against their field's kind before they reach the database, so a typo
 * gets a message naming the field instead of a database error. Dates, timestamps, arrays and JSON
 * are left to PostgreSQL's own parser (its errors are mapped to 400 by the execute stage).
 */
import { ApiError } from '../errors.ts';
import { type FieldKind, KINDS } from '../field-kinds.ts';

export function checkValue(field: string, kind: FieldKind, value: string): void {
  const spec = KINDS[kind];
  if ('filter' in spec && !spec.filter(value)) {
    throw new ApiError('INVALID_QUERY', `"${value}" is not ${spec.described}, as field ${field} requires`, {
      context: { field, value, expected: spec.described },
    });
  }
}

/** A PostgreSQL array literal of the given elements, each quoted: `{"a","b \"c\""}`. */
export const arrayLiteral = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
