/**
 * Filter values checked against their field's kind before they reach the database, so a typo
 * gets a message naming the field instead of a database error: each kind's check is its `filter`
 * in field-kinds.ts (dates and timestamps in ISO 8601, as bodies take them).
 */
import { ApiError } from '../errors.ts';
import { type ColumnType, KINDS } from '../field-kinds.ts';
import { arrayElements } from '../formats.ts';

export function checkValue(field: string, type: ColumnType, value: string): void {
  const spec = KINDS[type.kind];
  if (!spec.filter(value, type)) {
    throw new ApiError('INVALID_QUERY', `"${value}" is not ${spec.described}, as field ${field} requires`, {
      hint: spec.filterHint?.(value),
      context: { field, value, expected: spec.described },
    });
  }
}

/**
 * The elements of a list literal (`eq(any).{a,b}`) checked like single values; 400 when it is not
 * a one-dimensional array literal. `what` is the operator as written, for the message.
 */
export function checkList(field: string, type: ColumnType, literal: string, what: string): void {
  const elements = arrayElements(literal);
  if (elements === null) {
    throw new ApiError('INVALID_QUERY', `${what} on ${field} takes a list literal such as {a,b}, not "${literal}"`, {
      context: { field, value: literal },
    });
  }
  for (const element of elements) if (element !== null) checkValue(field, type, element);
}

/** A PostgreSQL array literal of the given elements, each quoted: `{"a","b \"c\""}`. */
export const arrayLiteral = (values: readonly string[]): string =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;
