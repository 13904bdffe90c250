/**
 * Request bodies checked against the registry before anything reaches the database: valibot
 * schemas derived once per resource from its fields (types, enums, uuids, dates, timestamps),
 * unknown fields refused, server-managed fields handled as the registry's `serverManaged` says.
 * Every problem is reported at once, by field and, for arrays, by item index.
 */
import * as v from 'valibot';
import type { Row } from '../db/port.ts';
import { ApiError, invalidBody, type Problem } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import type { Field, Resource } from '../registry/index.ts';

/** A btree index entry must stay under about 2.7 kB: indexed text is kept well below. */
const INDEXED_TEXT_MAX = 1000;

function fieldSchema(field: Field): v.GenericSchema {
  let base: v.GenericSchema = field.enum
    ? v.picklist(field.enum, `must be one of ${field.enum.join(', ')}`)
    : KINDS[field.kind].body(field.type);
  if (field.indexed && field.kind === 'text' && !field.enum) {
    base = v.pipe(
      base as v.GenericSchema<string>,
      v.maxLength(INDEXED_TEXT_MAX, `must be at most ${INDEXED_TEXT_MAX} characters`),
    );
  }
  return field.nullable ? v.nullable(base) : base;
}

/** A JSON object: a body's item, or a nested record (not null, not an array). */
export const isObject = (value: unknown): value is Row =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

export type BodyMode = 'create' | 'update';

export interface BodySchemas {
  /**
   * The fields a body may name on create (key fields included) and on update (key fields excluded),
   * in field order, each with its schema: a body is checked field by field, only the fields it gives.
   */
  readonly writable: Record<BodyMode, ReadonlyMap<string, v.GenericSchema>>;
  /** The same, as one object schema (for the OpenAPI document). */
  readonly schema: Record<BodyMode, v.GenericSchema>;
  /** The tenant column's value as a body gives it, on a tenanted resource. */
  readonly tenant: v.GenericSchema | null;
}

/** Built once per resource at start-up. */
export function bodySchemas(resource: Resource): BodySchemas {
  // A client may give a key the database would generate (`id`) on create; every other
  // server-managed field is the server's. A key never changes.
  const create = resource.fields.filter(
    (f) => !f.serverManaged || (resource.key.includes(f) && f.defaultSql !== undefined),
  );
  const update = create.filter((f) => !resource.key.includes(f));
  const schemas = new Map(create.map((f) => [f.name, fieldSchema(f)]));
  const writable = (fields: Field[]) => new Map(fields.map((f) => [f.name, schemas.get(f.name)!]));
  const partial = (fields: Field[]) => v.partial(v.object(Object.fromEntries(writable(fields))));
  return {
    writable: { create: writable(create), update: writable(update) },
    schema: { create: partial(create), update: partial(update) },
    tenant: resource.tenant && KINDS[resource.tenant.kind].body(resource.tenant.type),
  };
}

/** valibot's options for a field: stop at its first failed check. */
const FIRST_ISSUE = { abortPipeEarly: true } as const;

export interface InspectedItem {
  /** The item with server-managed fields dropped. */
  readonly row: Row;
  /** The tenant its tenant column names (a uuid lower-cased), if any. */
  readonly claimed: string | null;
  readonly unknown: Problem[];
  readonly invalid: Problem[];
}

/**
 * One body item checked against the resource: unknown keys, types, enums, rules. `extra` admits
 * further keys (custom-field keys), which the caller checks itself.
 */
export function inspectItem(
  resource: Resource,
  schemas: BodySchemas,
  item: unknown,
  mode: BodyMode,
  extra?: (key: string) => boolean,
): InspectedItem {
  const unknown: Problem[] = [];
  const invalid: Problem[] = [];
  const row: Row = {};
  let claimed: string | null = null;
  if (!isObject(item)) {
    return { row, claimed, unknown, invalid: [{ field: '', message: 'must be a JSON object' }] };
  }
  const writable = schemas.writable[mode];
  // Each field's first failed check, checked as the field is met: an object schema would visit every
  // field of the resource for each item.
  const failed: Problem[] = [];
  for (const [key, value] of Object.entries(item)) {
    const schema = writable.get(key);
    if (key === resource.tenant?.name) {
      const named = v.safeParse(schemas.tenant!, value);
      if (named.success) claimed = String(value).toLowerCase();
      else if (value !== null) invalid.push({ field: key, message: named.issues[0].message });
    } else if (mode === 'update' && resource.key.some((f) => f.name === key)) {
      invalid.push({ field: key, message: 'cannot be changed' });
    } else if (schema) {
      row[key] = value;
      const result = v.safeParse(schema, value, FIRST_ISSUE);
      if (!result.success) failed.push({ field: key, message: result.issues[0].message });
    } else if (extra?.(key)) {
      row[key] = value;
    } else if (resource.field(key)?.generated) {
      invalid.push({ field: key, message: 'is generated by the database: leave it out' });
    } else if (resource.field(key)?.serverManaged) {
      // Set by the server; a client value such as the spec's now() placeholder is ignored.
    } else {
      unknown.push({ field: key, message: `is not a field of ${resource.name}` });
    }
  }
  // One problem per field, in field order.
  if (failed.length > 1)
    failed.sort(
      (a, b) => resource.fields.indexOf(resource.field(a.field)!) - resource.fields.indexOf(resource.field(b.field)!),
    );
  invalid.push(...failed);
  for (const rule of resource.rules) {
    const failedAlready = invalid.some((p) => p.field === rule.field);
    if (rule.field in row && !failedAlready && !rule.allows(row[rule.field]))
      invalid.push({ field: rule.field, message: rule.message });
  }
  return { row, claimed, unknown, invalid };
}

/** 400 UNKNOWN_FIELD or VALIDATION_FAILED for an item's (or a whole body's) problems, if any. */
export function problemsError(
  resource: Resource,
  schemas: BodySchemas,
  mode: BodyMode,
  unknown: Problem[],
  invalid: Problem[],
): ApiError | null {
  if (unknown.length > 0) {
    const names = [...new Set(unknown.map((p) => p.field))];
    return new ApiError('UNKNOWN_FIELD', `${resource.name} has no field ${names.map((n) => `"${n}"`).join(', ')}`, {
      hint: `Fields a body may set: ${[...schemas.writable[mode].keys()].join(', ')}.`,
      context: unknown,
    });
  }
  if (invalid.length > 0) return invalidBody(invalid);
  return null;
}

/**
 * The body's items with server-managed fields dropped, or a 400 listing every problem, by item
 * index when the body is an array.
 */
export function checkItems(
  resource: Resource,
  schemas: BodySchemas,
  items: readonly unknown[],
  mode: BodyMode,
  options: { array: boolean; extra?: (key: string) => boolean; problems?: readonly Problem[] },
): { rows: Row[]; claimedTenants: string[] } {
  const unknown: Problem[] = [];
  // Problems the caller found itself (a PATCH item's key) are told with the items' own.
  const invalid: Problem[] = [...(options.problems ?? [])];
  const claimed = new Set<string>();
  const rows = items.map((item, index) => {
    const inspected = inspectItem(resource, schemas, item, mode, options.extra);
    const at = (p: Problem): Problem => (options.array ? { item: index, ...p } : p);
    unknown.push(...inspected.unknown.map(at));
    invalid.push(...inspected.invalid.map(at));
    if (inspected.claimed) claimed.add(inspected.claimed);
    return inspected.row;
  });
  const error = problemsError(resource, schemas, mode, unknown, invalid);
  if (error) throw error;
  return { rows, claimedTenants: [...claimed] };
}

/**
 * Rows grouped by the fields each gives (and `always`, given or not), in the order the fields are
 * declared: an INSERT per group leaves every other column to its default.
 */
export function byGivenFields(
  rows: readonly Row[],
  fields: readonly Field[],
  always?: Field,
): { fields: Field[]; rows: Row[] }[] {
  type Group = { fields: Field[]; rows: Row[] };
  // Groups by the set of fields given, as a string of one bit per field; found by the row's keys in
  // their order, which rows of one shape (JSON.parse's) share, so the set is worked out once a shape.
  // The keys are column names, which cannot hold NUL.
  const groups = new Map<string, Group>();
  const byShape = new Map<string, Group>();
  for (const row of rows) {
    const shape = Object.keys(row).join('\0');
    let group = byShape.get(shape);
    if (!group) {
      let set = '';
      for (const f of fields) set += f === always || f.name in row ? '1' : '0';
      group = groups.get(set);
      if (!group) {
        group = { fields: fields.filter((f) => f === always || f.name in row), rows: [] };
        groups.set(set, group);
      }
      byShape.set(shape, group);
    }
    group.rows.push(row);
  }
  return [...groups.values()];
}
