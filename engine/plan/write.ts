/**
 * Write plans for POST, PATCH and DELETE (docs/contract.md section 3, PostgREST's semantics): the
 * body checked against the resource's schemas, `columns=`, `on_conflict=` with
 * `Prefer: resolution=...`, the filters of PATCH and DELETE (one is required), and what the
 * response carries.
 */

import { unreadableValue } from '../custom-fields.ts';
import type { Row } from '../db/port.ts';
import { ApiError, invalidBody, type Problem } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import { strongVersions } from '../parse/preconditions.ts';
import type { Field, Resource } from '../registry/index.ts';
import type { ApiRequest } from '../request.ts';
import { type BodySchemas, byGivenFields, checkItems, isObject } from './body.ts';
import { checkNested, type Nested, namingProblem, takeNested } from './nested.ts';
import { knownField, planCondition, planRepresentation, wholeField } from './read.ts';
import type {
  DeletePlan,
  IfMatch,
  InsertGroup,
  InsertPlan,
  PlannedCondition,
  UpdatePlan,
  WriteOutput,
} from './types.ts';
import { checkValue } from './values.ts';

/** The fields `columns=` or `on_conflict=` names. */
const fieldList = (resource: Resource, names: readonly string[]): Field[] => names.map((n) => knownField(resource, n));

function output(resource: Resource, request: ApiRequest, maxRows: number): WriteOutput {
  const prefs = request.preferences;
  const representation = planRepresentation(resource, request, maxRows);
  // As in PostgREST, max-affected bounds PATCH and DELETE.
  const maxAffected = prefs.handling === 'strict' && request.method !== 'POST' ? prefs.maxAffected : null;
  const returns = prefs.return ?? 'minimal';
  const applied = [
    ...(prefs.return ? [`return=${prefs.return}`] : []),
    ...(prefs.count ? [`count=${prefs.count}`] : []),
    ...(prefs.tx ? [`tx=${prefs.tx}`] : []),
    ...(prefs.handling === 'strict' ? ['handling=strict'] : []),
    ...(maxAffected !== null ? [`max-affected=${maxAffected}`] : []),
  ];
  return {
    representation,
    return: returns,
    count: prefs.count,
    format: request.format,
    maxAffected,
    rollback: prefs.tx === 'rollback',
    applied,
  };
}

/** `maxRows` (MAX_ROWS) bounds each embed of the representation, as it does in reads. */
export function planInsert(
  resource: Resource,
  schemasOf: (resource: Resource) => BodySchemas,
  request: ApiRequest,
  body: unknown,
  maxRows: number,
): InsertPlan {
  const array = Array.isArray(body);
  if (!array && !isObject(body)) {
    throw new ApiError('VALIDATION_FAILED', `POST takes a JSON object or an array of objects`, {
      context: [{ field: '', message: 'must be an object or an array' }],
    });
  }
  let items = array ? (body as unknown[]) : [body];
  // With `columns=`, only the listed keys are read from each item, as PostgREST does; without it,
  // every item must give the same keys, so none is given NULL for a key it left out.
  const listed = request.query.columns === null ? null : fieldList(resource, request.query.columns);
  if (listed) {
    const names = new Set(listed.map((f) => f.name));
    items = items.map((item) =>
      isObject(item) ? Object.fromEntries(Object.entries(item).filter(([k]) => names.has(k))) : item,
    );
  }
  // Records named or created with each item (plan/nested.ts), checked with the items themselves.
  const problems: Problem[] = [];
  const taken = takeNested(resource, items, schemasOf, problems);
  const { rows, claimedTenants } = checkItems(resource, schemasOf(resource), taken.items, 'create', {
    array,
    problems,
  });
  claimedTenants.push(...taken.claimed.filter((t) => !claimedTenants.includes(t)));
  // The body's fields: the union of the items' keys in order of appearance, or the listed ones.
  const seen = new Set(rows.flatMap((row) => Object.keys(row)));
  const fields = (listed ?? resource.fields).filter((f) => seen.has(f.name));
  if (listed === null) {
    // A field a reference sets (`"contact": {"external_id": ...}`) is given by the item naming it.
    const setByReference = (item: number, field: Field) =>
      taken.nested.references.some(
        (r) => r.relation.parentFields.includes(field.name) && r.columns[0]! in taken.references[item]!,
      );
    sameFields(resource, rows, fields, setByReference);
  }

  // An item without one of these fields gets NULL, as in PostgREST, or with `Prefer:
  // missing=default` the column's default: items are then inserted by the fields they give (keys
  // the database generates are generated either way).
  const prefs = request.preferences;
  const groups = prefs.missing === 'default' ? groupByFields(rows, fields) : null;

  checkNested(taken.nested, Boolean(prefs.resolution));
  // Each item's named references, in columns of its own the statement resolves.
  for (const [i, row] of rows.entries()) Object.assign(row, taken.references[i]);
  let conflict: InsertPlan['conflict'] = null;
  if (prefs.resolution) {
    // As PostgREST does, the key unless on_conflict names other fields.
    const target = request.query.onConflict === null ? resource.key : fieldList(resource, request.query.onConflict);
    conflict = { target, action: prefs.resolution === 'merge-duplicates' ? 'update' : 'nothing' };
  }
  const planned = output(resource, request, maxRows);
  // Fields shown once (a signing secret) are shown here, with every field (`*`), and never again.
  const select = request.query.select;
  const star = select === null || select.some((item) => item.kind === 'star');
  const { representation } = planned;
  const out =
    star && resource.shownOnce.length > 0
      ? {
          ...planned,
          representation: {
            ...representation,
            columns: [...representation.columns, ...resource.shownOnce.map(wholeField)],
          },
        }
      : planned;
  return {
    kind: 'insert',
    put: false,
    resource,
    ...out,
    applied: [
      ...(conflict ? [`resolution=${prefs.resolution}`] : []),
      ...(prefs.missing ? [`missing=${prefs.missing}`] : []),
      ...out.applied,
    ],
    fields: [...fields, ...referenced(resource, taken.nested, fields)],
    rows: JSON.stringify(rows),
    groups,
    claimedTenants,
    conflict,
    nested: taken.nested,
  };
}

/**
 * 400 unless every item of a bulk insert gives each field some item gives, as PostgREST requires
 * (PGRST102): a field an item leaves out would otherwise be NULL for it, unasked. A key the
 * database generates is generated for an item without one, so it may be left out.
 */
function sameFields(
  resource: Resource,
  rows: readonly Row[],
  fields: readonly Field[],
  setOtherwise: (item: number, field: Field) => boolean,
): void {
  const needed = fields.filter((f) => !(resource.key.includes(f) && f.defaultSql !== undefined));
  for (const [item, row] of rows.entries()) {
    const missing = needed.find((f) => !(f.name in row) && !setOtherwise(item, f));
    if (!missing) continue;
    const other = rows.findIndex((r) => missing.name in r);
    throw new ApiError(
      'VALIDATION_FAILED',
      `every item of a bulk insert must give the same fields, and item ${item} leaves out "${missing.name}",` +
        ` which item ${other} gives`,
      {
        hint:
          'Give every item the same fields, or list the fields to insert with columns= (a field an item leaves' +
          ' out is then null, or its default with Prefer: missing=default).',
        context: [{ item, field: missing.name, message: 'is missing' }],
      },
    );
  }
}

/** The rows by the fields each gives, when they do not all give every field; null when they do. */
function groupByFields(rows: readonly Row[], fields: readonly Field[]): InsertGroup[] | null {
  const groups = byGivenFields(rows, fields);
  if (groups.length === 1 && groups[0]!.fields.length === fields.length) return null;
  return groups.map((g) => ({ fields: g.fields, rows: JSON.stringify(g.rows) }));
}

/**
 * PUT, as PostgREST has it: the record whose key the filters give (an `eq` on each key field, and
 * nothing else) created with the body, or its fields the body gives set, in one upsert. The body's
 * key, when it gives one, must be the filters'. `allow` is the resource's Allow header.
 */
export function planPut(
  resource: Resource,
  schemasOf: (resource: Resource) => BodySchemas,
  request: ApiRequest,
  body: unknown,
  maxRows: number,
  allow: string,
): InsertPlan {
  const { where, limit, offset } = request.query;
  const byKey = new Map<string, string>();
  for (const c of where) {
    if (c.kind !== 'filter' || c.negated || c.field.jsonPath.length > 0) break;
    if (c.operation.kind !== 'compare' || c.operation.op !== 'eq' || c.operation.quantifier !== null) break;
    byKey.set(c.field.name, c.operation.value);
  }
  const keyNames = resource.key.map((f) => f.name);
  if (byKey.size !== where.length || byKey.size !== keyNames.length || !keyNames.every((k) => byKey.has(k))) {
    throw new ApiError(
      'METHOD_NOT_ALLOWED',
      `PUT names one ${resource.name} by its key: give exactly ${keyNames.map((k) => `${k}=eq.<value>`).join(' and ')}, and no other filter`,
      { hint: 'Use PATCH to change the records other filters select.', headers: { Allow: allow } },
    );
  }
  if (limit !== null || offset !== null) {
    throw new ApiError('INVALID_QUERY', 'PUT acts on one record: it takes no limit or offset');
  }
  const item = Array.isArray(body) && body.length === 1 ? body[0] : body;
  if (!isObject(item)) {
    throw new ApiError('VALIDATION_FAILED', 'PUT takes one JSON object: the record', {
      context: [{ field: '', message: 'must be an object' }],
    });
  }
  for (const field of resource.key) {
    checkValue(field.name, field.type, byKey.get(field.name)!);
    const given = item[field.name];
    const canonical = (text: string) => KINDS[field.kind].canonical?.(text) ?? text;
    if (given !== undefined && canonical(String(given)) !== canonical(byKey.get(field.name)!)) {
      throw invalidBody([{ field: field.name, message: `must be the filter's ${field.name}, or left out` }]);
    }
  }
  const row = { ...item, ...Object.fromEntries(byKey) };
  const upsert: ApiRequest = {
    ...request,
    query: { ...request.query, where: [], columns: null, onConflict: null },
    preferences: { ...request.preferences, resolution: 'merge-duplicates', missing: null },
  };
  const plan = planInsert(resource, schemasOf, upsert, row, maxRows);
  // What the request asked for, not the upsert it becomes.
  return { ...plan, put: true, applied: plan.applied.filter((p) => !p.startsWith('resolution=')) };
}

/** The foreign keys references set, where the items' own fields do not already include them. */
const referenced = (resource: Resource, nested: Nested, fields: readonly Field[]): Field[] =>
  nested.references
    .flatMap((r) => r.relation.parentFields.map((name) => resource.field(name)!))
    .filter((f, i, all) => !fields.includes(f) && all.indexOf(f) === i);

/** PATCH and DELETE act on the rows their filters select; without one they are refused. */
function requiredFilters(resource: Resource, request: ApiRequest): PlannedCondition[] {
  if (request.query.where.length === 0) {
    throw new ApiError(
      'FILTER_REQUIRED',
      `${request.method} ${resource.name} needs at least one filter, such as ?${resource.key.map((f) => `${f.name}=eq.<${f.name}>`).join('&')}`,
      {
        hint: 'A PATCH or DELETE without filters would act on every row, so it is refused.',
      },
    );
  }
  return request.query.where.map((c) => planCondition(resource, c));
}

/**
 * A PATCH's object checked against the resource's schemas: the row it sets, its fields, and the
 * tenants it names. On `*_details`, keys that are not fields of the resource are custom-field keys
 * (`isCustom`), resolved (and refused when unknown) against the tenant's custom fields by the statement.
 */
export function checkUpdateBody(resource: Resource, schemas: BodySchemas, body: Row) {
  const isCustom = resource.customFields ? (key: string) => !resource.field(key) : undefined;
  const { rows, claimedTenants } = checkItems(resource, schemas, [body], 'update', { array: false, extra: isCustom });
  const row = rows[0]!;
  return { row, claimedTenants, fields: resource.fields.filter((f) => f.name in row), isCustom };
}

/**
 * A POST's one object checked as planInsert checks it, when it names no other record (a relation's
 * key): the rows it inserts, their fields and the tenants they name. Null when it names one.
 */
export function checkInsertBody(resource: Resource, schemas: BodySchemas, body: Row) {
  if (resource.relations.some((r) => Object.hasOwn(body, r.name) && !resource.field(r.name))) return null;
  const { rows, claimedTenants } = checkItems(resource, schemas, [body], 'create', { array: false });
  return { rows, claimedTenants, fields: resource.fields.filter((f) => f.name in rows[0]!) };
}

export function planUpdate(
  resource: Resource,
  schemas: BodySchemas,
  request: ApiRequest,
  body: unknown,
  maxRows: number,
): UpdatePlan {
  if (Array.isArray(body)) return planUpdateByKey(resource, schemas, request, body, maxRows);
  if (!isObject(body)) {
    throw new ApiError(
      'VALIDATION_FAILED',
      'PATCH takes one JSON object with the fields to change, or an array of them each with its key',
      {
        context: [{ field: '', message: 'must be an object or an array' }],
      },
    );
  }
  const where = requiredFilters(resource, request);
  const { row, claimedTenants, fields, isCustom } = checkUpdateBody(resource, schemas, body);
  const custom = isCustom ? Object.fromEntries(Object.entries(row).filter(([k]) => isCustom(k))) : {};
  // The statement checks custom values against their types, but must be able to read them first.
  const unfit = Object.entries(custom).flatMap(([field, value]) => {
    const message = unreadableValue(value);
    return message ? [{ field, message }] : [];
  });
  if (unfit.length > 0) throw invalidBody(unfit);
  return {
    kind: 'update',
    resource,
    ...output(resource, request, maxRows),
    fields,
    row: JSON.stringify(row),
    items: null,
    claimedTenants,
    where,
    customValues: Object.keys(custom).length > 0 ? JSON.stringify(custom) : null,
    ifMatch: ifMatch(resource, request),
  };
}

/**
 * PATCH with an array: each item changes the record its key names, with the fields it gives, all
 * in one statement that changes every item's record or nothing (filters, if any, narrow further).
 */
function planUpdateByKey(
  resource: Resource,
  schemas: BodySchemas,
  request: ApiRequest,
  items: readonly unknown[],
  maxRows: number,
): UpdatePlan {
  if (resource.customFields) {
    throw new ApiError(
      'VALIDATION_FAILED',
      `a PATCH of several ${resource.name} records takes an object, not an array`,
      {
        hint: 'Custom-field values are written one record per PATCH: filter by its key and send one object.',
      },
    );
  }
  if (items.length === 0 || items.length > maxRows) {
    throw new ApiError('VALIDATION_FAILED', `a PATCH by key takes 1 to ${maxRows} items, not ${items.length}`);
  }
  const problems: Problem[] = [];
  const seen = new Map<string, number>();
  const keyed = items.map((item, index) => {
    if (!isObject(item)) return { key: {}, id: '', rest: item };
    const key: Row = {};
    for (const field of resource.key) {
      const problem = namingProblem(field, item[field.name]);
      if (problem) problems.push({ item: index, field: field.name, message: problem });
      key[field.name] = item[field.name];
    }
    const id = JSON.stringify(resource.key.map((f) => String(key[f.name]).toLowerCase()));
    const first = seen.get(id);
    if (first !== undefined)
      problems.push({ item: index, field: resource.key[0]!.name, message: `names item ${first}'s record too` });
    seen.set(id, index);
    const rest = Object.fromEntries(Object.entries(item).filter(([k]) => !resource.key.some((f) => f.name === k)));
    return { key, id, rest };
  });
  const { rows, claimedTenants } = checkItems(
    resource,
    schemas,
    keyed.map((k) => k.rest),
    'update',
    { array: true, problems },
  );
  const fields = resource.fields.filter((f) => rows.some((row) => f.name in row));
  // Records locked in key order, so two such PATCHes cannot deadlock.
  const data = rows
    .map((row, i) => ({ id: keyed[i]!.id, row: { ...keyed[i]!.key, ...row, __keys: Object.keys(row) } }))
    .sort((x, y) => (x.id < y.id ? -1 : 1))
    .map((item) => item.row);
  return {
    kind: 'update',
    resource,
    ...output(resource, request, maxRows),
    fields,
    row: JSON.stringify(data),
    items: items.length,
    claimedTenants,
    where: request.query.where.map((c) => planCondition(resource, c)),
    customValues: null,
    ifMatch: ifMatch(resource, request),
  };
}

export function planDelete(resource: Resource, request: ApiRequest, maxRows: number): DeletePlan {
  const where = requiredFilters(resource, request);
  return {
    kind: 'delete',
    resource,
    ...output(resource, request, maxRows),
    where,
    ifMatch: ifMatch(resource, request),
  };
}

/** `If-Match`, on a resource whose records have versions (an `updated_at`). */
function ifMatch(resource: Resource, request: ApiRequest): IfMatch | null {
  const tags = request.ifMatch;
  if (tags === null) return null;
  if (!resource.updatedAt) {
    throw new ApiError('PRECONDITION_FAILED', `${resource.name} records have no version to compare If-Match with`, {
      hint: 'Send the request without If-Match: this resource answers no ETag.',
    });
  }
  return tags.any ? tags : { any: false, versions: strongVersions(tags) };
}
