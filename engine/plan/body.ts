/**
 * Request bodies checked against the registry before anything reaches the database: valibot
 * schemas derived once per resource from its fields (types, enums, uuids, dates, timestamps),
 * unknown fields refused, server-managed fields handled as the registry's `serverManaged` says.
 * Every problem is reported at once, by field and, for arrays, by item index.
 */
import * as v from 'valibot';
import type { Row } from '../db/port.ts';
import { ApiError } from '../errors.ts';
import { DATE, NOT_STORABLE, realDate, storable, TIMESTAMP, UUID } from '../formats.ts';
import type { Field, FieldKind, Resource } from '../registry.ts';

const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Exponents PostgreSQL's numeric takes without overflowing. */
const sensibleExponent = (text: string) => Math.abs(Number(/e([+-]?\d+)$/i.exec(text)?.[1] ?? 0)) <= 1000;
/** A btree index entry must stay under about 2.7 kB: indexed text is kept well below. */
const INDEXED_TEXT_MAX = 1000;

const KIND_SCHEMA: Record<FieldKind, () => v.GenericSchema> = {
  uuid: () => v.pipe(v.string('must be a uuid'), v.uuid('must be a uuid')),
  text: () => v.pipe(v.string('must be a string'), v.check(storable, NOT_STORABLE)),
  boolean: () => v.boolean('must be true or false'),
  integer: () =>
    v.pipe(
      v.number('must be a whole number'),
      v.integer('must be a whole number'),
      v.minValue(-2147483648, 'is too small'),
      v.maxValue(2147483647, 'is too large'),
    ),
  // A JSON number, or a string holding one for values a double cannot carry exactly.
  numeric: () =>
    v.union(
      [v.pipe(v.number(), v.finite()), v.pipe(v.string(), v.regex(NUMERIC), v.check(sensibleExponent))],
      'must be a number',
    ),
  date: () =>
    v.pipe(
      v.string('must be a date (YYYY-MM-DD)'),
      v.regex(DATE, 'must be a date (YYYY-MM-DD)'),
      v.check(realDate, 'is not a real date'),
    ),
  timestamptz: () =>
    v.pipe(
      v.string('must be an ISO 8601 timestamp with an offset'),
      v.regex(TIMESTAMP, 'must be an ISO 8601 timestamp with an offset, such as 2026-12-01T09:00:00Z'),
      v.check(realDate, 'is not a real date'),
    ),
  'text[]': () =>
    v.array(v.pipe(v.string('must be a string'), v.check(storable, NOT_STORABLE)), 'must be an array of strings'),
  jsonb: () => v.unknown(),
};

function fieldSchema(field: Field): v.GenericSchema {
  let base = field.enum ? v.picklist(field.enum, `must be one of ${field.enum.join(', ')}`) : KIND_SCHEMA[field.kind]();
  if (field.indexed && field.kind === 'text' && !field.enum) {
    base = v.pipe(
      base as v.GenericSchema<string>,
      v.maxLength(INDEXED_TEXT_MAX, `must be at most ${INDEXED_TEXT_MAX} characters`),
    );
  }
  return field.nullable ? v.nullable(base) : base;
}

export type BodyMode = 'create' | 'update';

export interface BodySchemas {
  /** Fields a body may name on create (`id` included) and on update (`id` excluded). */
  readonly writable: Record<BodyMode, ReadonlySet<string>>;
  readonly schema: Record<BodyMode, v.GenericSchema>;
}

/** Built once per resource at start-up. */
export function bodySchemas(resource: Resource): BodySchemas {
  // A client may give `id` on create; every other server-managed field is the server's.
  const create = resource.fields.filter((f) => !f.serverManaged || f.name === 'id');
  const update = create.filter((f) => f.name !== 'id');
  const partial = (fields: Field[]) =>
    v.partial(v.object(Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)]))));
  return {
    writable: { create: new Set(create.map((f) => f.name)), update: new Set(update.map((f) => f.name)) },
    schema: { create: partial(create), update: partial(update) },
  };
}

export interface Problem {
  readonly item?: number;
  readonly field: string;
  readonly message: string;
}

export interface InspectedItem {
  /** The item with server-managed fields dropped. */
  readonly row: Row;
  /** The organisation_id it names, lower-cased, if any. */
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
  if (typeof item !== 'object' || item === null || Array.isArray(item)) {
    return { row, claimed, unknown, invalid: [{ field: '', message: 'must be a JSON object' }] };
  }
  for (const [key, value] of Object.entries(item)) {
    if (key === 'organisation_id') {
      if (typeof value === 'string' && UUID.test(value)) claimed = value.toLowerCase();
      else if (value !== null) invalid.push({ field: key, message: 'must be a uuid' });
    } else if (key === 'id' && mode === 'update') {
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
  if (invalid.length > 0) {
    const first = invalid[0]!;
    const where = first.item === undefined ? '' : `item ${first.item}: `;
    const more = invalid.length > 1 ? ` (and ${invalid.length - 1} more)` : '';
    return new ApiError(
      'VALIDATION_FAILED',
      `the body is not valid: ${where}${first.field || 'the item'} ${first.message}${more}`,
      {
        details: invalid
          .map((p) => `${p.item === undefined ? '' : `item ${p.item}: `}${p.field || 'the item'} ${p.message}`)
          .join('\n'),
        context: invalid,
      },
    );
  }
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
  options: { array: boolean; extra?: (key: string) => boolean },
): { rows: Row[]; claimedOrganisations: string[] } {
  const unknown: Problem[] = [];
  const invalid: Problem[] = [];
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
  return { rows, claimedOrganisations: [...claimed] };
}
