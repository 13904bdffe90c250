/**
 * A batch import's items checked one by one, before any statement: the body rules of a create,
 * custom-field values by their type, the tenant an item names, and keys given twice in the batch.
 * Valid items go on to be written even when others fail; each failure is a result at its index.
 */
import { type CustomField, customValueProblem } from '../custom-fields.ts';
import type { Row } from '../db/port.ts';
import { invalidBody, type Problem } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import type { Field, Resource, Tenancy } from '../registry/index.ts';
import { type BodySchemas, inspectItem, problemsError } from './body.ts';

export interface ItemError {
  readonly code: string;
  readonly message: string;
  readonly context?: unknown;
}

export type ItemResult =
  | { readonly index: number; readonly status: 'created' | 'updated'; readonly id: string }
  | { readonly index: number; readonly status: 'failed'; readonly error: ItemError };

export interface BatchResult {
  created: number;
  updated: number;
  failed: number;
  results: ItemResult[];
}

/** An item that passed its checks: its row, and its custom values by field. */
export interface Accepted {
  readonly index: number;
  readonly row: Row;
  readonly custom: ReadonlyArray<readonly [CustomField, unknown]>;
}

export const failure = (index: number, code: string, message: string, context?: unknown): ItemResult => ({
  index,
  status: 'failed',
  error: context === undefined ? { code, message } : { code, message, context },
});

/** " in your organisation", or nothing in a single-tenant registry. */
export const inYour = (tenancy: Tenancy | null): string => (tenancy ? ` in your ${tenancy.noun}` : '');

export interface ItemChecks {
  readonly resource: Resource;
  readonly schemas: BodySchemas;
  readonly tenancy: Tenancy | null;
  /** The tenant the items are written for (lower-cased when a uuid). */
  readonly tenant: string | null;
  readonly customFields: ReadonlyMap<string, CustomField>;
}

/** Checks one item; returns its row and custom values, or the reason it fails. */
function accept(checks: ItemChecks, item: unknown, index: number): Accepted | ItemResult {
  const { resource, schemas, customFields } = checks;
  const inspected = inspectItem(resource, schemas, item, 'create', (key) => customFields.has(key));
  const error = problemsError(resource, schemas, 'create', inspected.unknown, inspected.invalid);
  if (error) return failure(index, error.code, error.message, error.context);
  if (inspected.claimed && inspected.claimed !== checks.tenant?.toLowerCase()) {
    return failure(index, 'FORBIDDEN', `the item names another ${checks.tenancy?.noun ?? 'tenant'}`);
  }
  // Without custom fields the row is the item's fields: nothing to take out of it.
  if (customFields.size === 0) return { index, row: inspected.row, custom: [] };
  const row: Row = {};
  const custom: Array<[CustomField, unknown]> = [];
  const invalid: Problem[] = [];
  for (const [key, value] of Object.entries(inspected.row)) {
    const field = resource.field(key) ? undefined : customFields.get(key);
    if (!field) {
      row[key] = value;
      continue;
    }
    const problem = customValueProblem(field.type, value);
    if (problem) invalid.push({ field: key, message: problem });
    else custom.push([field, value]);
  }
  if (invalid.length > 0) {
    const error = invalidBody(invalid);
    return failure(index, error.code, error.message, error.context);
  }
  return { index, row, custom };
}

/** Items checked: the accepted ones, and a failure for each of the others. */
export interface CheckedItems {
  readonly accepted: Accepted[];
  readonly results: ItemResult[];
}

/**
 * Checks a batch's items, slice by slice: `offset` is the index of a slice's first item. A matched
 * value or key may appear once per batch: later items that repeat one fail, whichever slice they
 * are in. Uuids are compared in any case, other values as the case-sensitive text they are.
 */
export function batchChecker(checks: ItemChecks): (items: readonly unknown[], offset: number) => CheckedItems {
  const unique = [checks.resource.imports!.key, checks.resource.key[0]!];
  const seen = new Map<string, number>();
  const seenKey = (u: Field, value: unknown) =>
    `${u.name}:${KINDS[u.kind].canonical?.(String(value)) ?? String(value)}`;
  const given = (value: unknown) => typeof value === 'string' || typeof value === 'number';
  const repeated = (row: Row) => unique.find((u) => given(row[u.name]) && seen.has(seenKey(u, row[u.name])));
  return (items, offset) => {
    const accepted: Accepted[] = [];
    const results: ItemResult[] = [];
    for (const [i, item] of items.entries()) {
      const outcome = accept(checks, item, offset + i);
      if ('status' in outcome) {
        results.push(outcome);
        continue;
      }
      const again = repeated(outcome.row);
      if (again) {
        const value = String(outcome.row[again.name]);
        const first = seen.get(seenKey(again, value));
        results.push(
          failure(outcome.index, 'CONFLICT', `${again.name} "${value}" is also given by item ${first} of this batch`, {
            fields: [again.name],
          }),
        );
        continue;
      }
      for (const u of unique) {
        const value = outcome.row[u.name];
        if (given(value)) seen.set(seenKey(u, value), outcome.index);
      }
      accepted.push(outcome);
    }
    return { accepted, results };
  };
}
