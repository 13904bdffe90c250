/**
 * Batch imports (the README's "The versioned API"): items of one resource, each matched on `external_id`
 * within the organisation (an update) or created, with custom-field values by key. Every item is
 * checked on its own: valid items are written even when others fail, and each gets a result.
 * The writes are set-based, a handful of statements per batch whatever its size, and the caller
 * runs them in one transaction.
 */
import { randomUUID } from 'node:crypto';
import { upsertCustomValues } from '../engine/compile/custom-fields.ts';
import { ident, Params, recordType } from '../engine/compile/sql.ts';
import { type CustomField, customValueProblem } from '../engine/custom-fields.ts';
import type { Queryable, Row } from '../engine/db/port.ts';
import { type BodySchemas, bodySchemas, inspectItem, problemsError } from '../engine/plan/body.ts';
import { arrayLiteral } from '../engine/plan/values.ts';
import type { CustomFields, Registry, Resource } from '../engine/registry.ts';

/** What an import writes: a registry resource and, where it has them, its custom fields. */
export interface ImportTarget {
  /** The collection, as in `/v1/contacts/imports`. */
  readonly name: string;
  readonly resource: Resource;
  readonly schemas: BodySchemas;
  readonly customFields: CustomFields | undefined;
}

/** Import targets by collection, built once at start-up from the registry's resources that offer imports. */
export function importTargets(registry: Registry): Map<string, ImportTarget> {
  return new Map(
    registry.resources.flatMap((resource) =>
      resource.imports && resource.collection
        ? [
            [
              resource.collection,
              {
                name: resource.collection,
                resource,
                schemas: bodySchemas(resource),
                customFields: resource.imports.customFields,
              },
            ] as const,
          ]
        : [],
    ),
  );
}

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

interface Accepted {
  readonly index: number;
  readonly row: Row;
  readonly custom: Array<[CustomField, unknown]>;
}

const failure = (index: number, code: string, message: string, context?: unknown): ItemResult => ({
  index,
  status: 'failed',
  error: context === undefined ? { code, message } : { code, message, context },
});

/** Checks one item; returns its row and custom values, or the reason it fails. */
function accept(
  target: ImportTarget,
  customFields: Map<string, CustomField>,
  organisationId: string,
  item: unknown,
  index: number,
): Accepted | ItemResult {
  const { resource, schemas } = target;
  const inspected = inspectItem(resource, schemas, item, 'create', (key) => customFields.has(key));
  const error = problemsError(resource, schemas, 'create', inspected.unknown, inspected.invalid);
  if (error) return failure(index, error.code, error.message, error.context);
  if (inspected.claimed && inspected.claimed !== organisationId) {
    return failure(index, 'FORBIDDEN', 'the item names another organisation');
  }
  const row: Row = {};
  const custom: Array<[CustomField, unknown]> = [];
  const invalid: Array<{ field: string; message: string }> = [];
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
    return failure(index, 'VALIDATION_FAILED', `${invalid[0]!.field} ${invalid[0]!.message}`, invalid);
  }
  return { index, row, custom };
}

/** Values of `field` among the rows, as text, for `= ANY($n)` look-ups. */
const valuesOf = (rows: readonly Accepted[], field: string) => [
  ...new Set(rows.map((a) => a.row[field]).filter((v): v is string => typeof v === 'string')),
];

/**
 * Ids of the organisation's rows whose `column` is one of `values`, by that value. A join on
 * unnest rather than `= ANY($n)`: a prepared statement's generic plan compares every row with
 * every element of ANY, which a batch of 20,000 keys makes slow.
 */
async function lookUp(
  q: Queryable,
  table: string,
  column: string,
  organisationId: string,
  values: string[],
  type: string,
): Promise<Map<string, string>> {
  if (values.length === 0) return new Map();
  const params = new Params();
  const rows = await q.query<{ key: string; id: string }>(
    `SELECT t.${ident(column)}::text AS key, t."id"::text AS id FROM ${ident(table)} t` +
      ` JOIN unnest(${params.add(arrayLiteral(values), `${type}[]`)}) AS k(value)` +
      ` ON t.${ident(column)} = k.value WHERE t."organisation_id" = ${params.add(organisationId, 'uuid')}`,
    params.values,
  );
  return new Map(rows.map((r) => [r.key, r.id]));
}

/** The organisation's custom fields of the target's entity, by key (none when the target has no custom fields). */
export async function loadCustomFields(
  q: Queryable,
  target: ImportTarget,
  organisationId: string,
): Promise<Map<string, CustomField>> {
  const custom = target.customFields;
  if (!custom) return new Map();
  const params = new Params();
  const rows = await q.query<{ id: string; key: string; type: CustomField['type'] }>(
    `SELECT "id"::text AS id, "key", "type" FROM ${ident(custom.definitions)}` +
      ` WHERE "organisation_id" = ${params.add(organisationId, 'uuid')}` +
      ` AND "entity" = ${params.add(custom.entity, 'text')}`,
    params.values,
  );
  return new Map(rows.map((f) => [f.key, f]));
}

/**
 * Imports items for an organisation through `q` (inside the caller's transaction). `offset` is
 * the index of the first item, for results of a file import read in pieces.
 */
export async function importItems(
  q: Queryable,
  target: ImportTarget,
  organisationId: string,
  items: readonly unknown[],
  offset = 0,
): Promise<BatchResult> {
  const { resource } = target;
  const customFields = await loadCustomFields(q, target, organisationId);

  const results: ItemResult[] = [];
  let accepted: Accepted[] = [];
  // An external_id or id may appear once per batch: later items that repeat one fail. Ids are
  // compared as uuids (any case), external ids as the case-sensitive text they are.
  const seen = new Map<string, number>();
  const seenKey = (key: 'external_id' | 'id', value: unknown) =>
    `${key}:${key === 'id' ? String(value).toLowerCase() : String(value)}`;
  const repeated = (row: Row) =>
    (['external_id', 'id'] as const).find((key) => typeof row[key] === 'string' && seen.has(seenKey(key, row[key])));
  for (const [i, item] of items.entries()) {
    const outcome = accept(target, customFields, organisationId, item, offset + i);
    if ('status' in outcome) {
      results.push(outcome);
      continue;
    }
    const key = repeated(outcome.row);
    if (key) {
      const first = seen.get(seenKey(key, outcome.row[key]));
      results.push(
        failure(
          outcome.index,
          'CONFLICT',
          `${key} "${outcome.row[key]}" is also given by item ${first} of this batch`,
          { fields: [key] },
        ),
      );
      continue;
    }
    for (const k of ['external_id', 'id'] as const)
      if (typeof outcome.row[k] === 'string') seen.set(seenKey(k, outcome.row[k]), outcome.index);
    accepted.push(outcome);
  }

  // References must name records of the organisation; a given id must not be taken.
  for (const { field, table } of target.resource.references) {
    const found = await lookUp(q, table, 'id', organisationId, valuesOf(accepted, field), 'uuid');
    accepted = accepted.filter((a) => {
      const value = a.row[field];
      if (typeof value !== 'string' || found.has(value.toLowerCase())) return true;
      results.push(
        failure(
          a.index,
          'REFERENCE_NOT_FOUND',
          `the record that ${field} points to does not exist in your organisation`,
          { fields: [field] },
        ),
      );
      return false;
    });
  }
  const existing = await lookUp(
    q,
    resource.table,
    'external_id',
    organisationId,
    valuesOf(accepted, 'external_id'),
    'text',
  );
  const toUpdate = accepted.filter((a) => typeof a.row.external_id === 'string' && existing.has(a.row.external_id));
  let toCreate = accepted.filter((a) => !toUpdate.includes(a));
  const takenIds = await lookUp(q, resource.table, 'id', organisationId, valuesOf(toCreate, 'id'), 'uuid');
  toCreate = toCreate.filter((a) => {
    if (typeof a.row.id !== 'string' || !takenIds.has(a.row.id.toLowerCase())) return true;
    results.push(
      failure(a.index, 'CONFLICT', 'a record with this id already exists in your organisation', { fields: ['id'] }),
    );
    return false;
  });

  const ids = new Map<Accepted, string>();
  for (const a of toCreate) ids.set(a, typeof a.row.id === 'string' ? a.row.id : randomUUID());
  for (const a of toUpdate) ids.set(a, existing.get(a.row.external_id as string)!);

  // A concurrent import may have created an external_id since the look-up: those become updates.
  const raced = await insertRows(q, target, organisationId, toCreate, ids);
  if (raced.length > 0) {
    const now = await lookUp(q, resource.table, 'external_id', organisationId, valuesOf(raced, 'external_id'), 'text');
    for (const a of raced) ids.set(a, now.get(a.row.external_id as string)!);
    toCreate = toCreate.filter((a) => !raced.includes(a));
    toUpdate.push(...raced);
  }
  await updateRows(q, target, organisationId, toUpdate, ids);
  await writeCustomValues(q, target, organisationId, [...toCreate, ...toUpdate], ids);

  for (const a of toCreate) results.push({ index: a.index, status: 'created', id: ids.get(a)! });
  for (const a of toUpdate) results.push({ index: a.index, status: 'updated', id: ids.get(a)! });
  results.sort((x, y) => x.index - y.index);
  return {
    created: toCreate.length,
    updated: toUpdate.length,
    failed: results.length - toCreate.length - toUpdate.length,
    results,
  };
}

/**
 * New records; a field an item leaves out gets its column default. Returns the items whose
 * external_id another transaction took meanwhile (not inserted).
 */
async function insertRows(
  q: Queryable,
  target: ImportTarget,
  organisationId: string,
  rows: Accepted[],
  ids: Map<Accepted, string>,
): Promise<Accepted[]> {
  if (rows.length === 0) return [];
  const keys = new Set(rows.flatMap((a) => Object.keys(a.row)));
  const fields = target.resource.fields.filter((f) => f.name === 'id' || keys.has(f.name));
  const data = rows.map((a) => {
    const row: Row = { ...a.row, id: ids.get(a) };
    for (const f of fields) if (!(f.name in row) && f.defaultValue !== undefined) row[f.name] = f.defaultValue;
    return row;
  });
  const params = new Params();
  const names = fields.map((f) => ident(f.name)).join(', ');
  const conflict = target.resource.field('external_id')
    ? ' ON CONFLICT ("organisation_id", "external_id") DO NOTHING'
    : '';
  const inserted = await q.query<{ id: string }>(
    `INSERT INTO ${ident(target.resource.table)} ("organisation_id", ${names})` +
      ` SELECT ${params.add(organisationId, 'uuid')}, ${fields.map((f) => `b.${ident(f.name)}`).join(', ')}` +
      ` FROM json_to_recordset(${params.add(JSON.stringify(data), 'json')}) AS b(${recordType(fields)})` +
      `${conflict} RETURNING "id"::text AS id`,
    params.values,
  );
  const done = new Set(inserted.map((r) => r.id));
  return rows.filter((a) => !done.has(ids.get(a)!.toLowerCase()));
}

/** Matched records: only the fields each item gives change. */
async function updateRows(
  q: Queryable,
  target: ImportTarget,
  organisationId: string,
  rows: Accepted[],
  ids: Map<Accepted, string>,
) {
  if (rows.length === 0) return;
  const keys = new Set(rows.flatMap((a) => Object.keys(a.row)));
  const fields = target.resource.fields.filter((f) => f.name !== 'id' && keys.has(f.name));
  const params = new Params();
  // Rows locked in id order, so two batches updating the same records cannot deadlock.
  const data = rows
    .map((a) => ({ ...a.row, id: ids.get(a)!, __keys: Object.keys(a.row) }))
    .sort((x, y) => (x.id < y.id ? -1 : 1));
  const sets = fields.map(
    (f) =>
      `${ident(f.name)} = CASE WHEN ${params.add(f.name, 'text')} = ANY(b."__keys")` +
      ` THEN b.${ident(f.name)} ELSE t.${ident(f.name)} END`,
  );
  await q.query(
    `UPDATE ${ident(target.resource.table)} AS t SET ${[...sets, '"updated_at" = now()'].join(', ')}` +
      ` FROM json_to_recordset(${params.add(JSON.stringify(data), 'json')})` +
      ` AS b("id" uuid, "__keys" text[]${fields.length ? `, ${recordType(fields)}` : ''})` +
      ` WHERE t."organisation_id" = ${params.add(organisationId, 'uuid')} AND t."id" = b."id"`,
    params.values,
  );
}

/** The items' custom-field values, into the target's value table. */
async function writeCustomValues(
  q: Queryable,
  target: ImportTarget,
  organisationId: string,
  rows: Accepted[],
  ids: Map<Accepted, string>,
) {
  const values = rows.flatMap((a) =>
    a.custom.map(([field, value]) => ({
      parent: ids.get(a),
      field_id: field.id,
      key: field.key,
      type: field.type,
      value,
    })),
  );
  if (values.length === 0 || !target.customFields) return;
  const params = new Params();
  const source =
    `(SELECT ${params.add(organisationId, 'uuid')} AS organisation_id, r.* FROM json_to_recordset(` +
    `${params.add(JSON.stringify(values), 'json')})` +
    ' AS r(parent uuid, field_id uuid, key text, type text, value jsonb)) c';
  await q.query(upsertCustomValues(target.customFields, source), params.values);
}
