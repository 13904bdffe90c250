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
  /** Fields a body may name on create (key fields included) and on update (key fields excluded). */
  readonly writable: Record<BodyMode, ReadonlySet<string>>;
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
  const partial = (fields: Field[]) =>
    v.partial(v.object(Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)]))));
  return {
    writable: { create: new Set(create.map((f) => f.name)), update: new Set(update.map((f) => f.name)) },
    schema: { create: partial(create), update: partial(update) },
    tenant: resource.tenant && KINDS[resource.tenant.kind].body(resource.tenant.type),
  };
}

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
  for (const [key, value] of Object.entries(item)) {
    if (key === resource.tenant?.name) {
      const named = v.safeParse(schemas.tenant!, value);
      if (named.success) claimed = String(value).toLowerCase();
      else if (value !== null) invalid.push({ field: key, message: named.issues[0].message });
    } else if (mode === 'update' && resource.key.some((f) => f.name === key)) {
      invalid.push({ field: key, message: 'cannot be changed' });
    } else if (schemas.writable[mode].has(key) || extra?.(key)) {
      row[key] = value;
    } else if (resource.field(key)?.serverManaged) {
      // Set by the server; a client value such as the spec's now() placeholder is ignored.
    } else {
      unknown.push({ field: key, message: `is not a field of ${resource.name}` });
    }
  }
  // One problem per field: the first check it fails.
  const result = v.safeParse(schemas.schema[mode], row, { abortEarly: false, abortPipeEarly: true });
  if (!result.success) {
    for (const issue of result.issues)
      invalid.push({ field: String(issue.path?.[0]?.key ?? ''), message: issue.message });
  }
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
      hint: `Fields a body may set: ${[...schemas.writable[mode]].join(', ')}.`,
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
