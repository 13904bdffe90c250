/**
 * Each resource in the OpenAPI document: its schema and body schemas, its filter, order and select
 * parameters, and its operations, all from the registry.
 */
import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { FIELD_KINDS, type FieldKind, KINDS } from '../field-kinds.ts';
import { CSV_MEDIA, EVENT_STREAM_MEDIA, JSON_MEDIA, OBJECT_MEDIA } from '../media-types.ts';
import { OPERATORS_BY_KIND } from '../operators.ts';
import { bodySchemas } from '../plan/body.ts';
import { AGGREGATE_KINDS, SELECT_CASTS } from '../plan/casts.ts';
import { relationsHint } from '../plan/relations.ts';
import { type Field, type Relation, type Resource, VERBS, type Verb } from '../registry/index.ts';
import { AGGREGATES, type AggregateFunction } from '../request.ts';
import {
  consistency,
  errors,
  type Json,
  queryParameter,
  RESERVED_KEYS,
  ref,
  requestId,
  SELECT_FIELDS,
  shared,
} from './components.ts';

// ---- schemas ----

function fieldSchema(field: Field): Json {
  const { type, ...rest }: { type?: string } & Json = KINDS[field.kind].jsonSchema(field.type);
  const schema: Json = { ...(type && { type: field.nullable ? [type, 'null'] : type }), ...rest };
  // An enum constrains null too, so a nullable enum must list it.
  if (field.enum) schema.enum = field.nullable ? [...field.enum, null] : [...field.enum];
  if (field.serverManaged) schema.readOnly = true;
  if (field.description) schema.description = field.description;
  return schema;
}

const CUSTOM_FIELDS_NOTE =
  'Custom-field values appear as extra properties named by custom_field.key, typed by custom_field.type ' +
  '(string, date and datetime as strings, number, boolean, string_list as an array of strings).';

/**
 * A relation as `x-relations` lists it: rows of `target` whose `target_field` equals this row's
 * `field` (or, many to many, that the `junction` table's rows pair with it), inside the caller's
 * organisation; `name` is how select embeds it.
 */
const single = (fields: readonly string[]) => (fields.length === 1 ? fields[0] : fields);

const relationEntry = (relation: Relation): Json => ({
  name: relation.name,
  target: relation.target.name,
  cardinality: relation.cardinality,
  foreign_key: relation.foreignKey,
  // One field a string, as most relations have; a composite key's fields an array.
  field: single(relation.parentFields),
  target_field: single(relation.targetFields),
  ...(relation.junction ? { junction: relation.junction.table } : {}),
});

/** Only what a GET can read is embedded; a resource without GET has no `x-relations`. */
const embeddable = (resource: Resource) => resource.verbs.has('GET') && resource.relations.length > 0;

export function resourceSchema(resource: Resource): Json {
  const custom = resource.customFields !== undefined;
  const description = [resource.description, custom ? CUSTOM_FIELDS_NOTE : undefined].filter(Boolean).join(' ');
  return {
    type: 'object',
    ...(description && { description }),
    properties: Object.fromEntries(resource.fields.map((f) => [f.name, fieldSchema(f)])),
    ...(custom && { additionalProperties: true }),
    ...(embeddable(resource) && { 'x-relations': resource.relations.map(relationEntry) }),
  };
}

// ---- per-resource parameters ----

const usesFilters = (resource: Resource) => (['GET', 'PATCH', 'DELETE'] as const).some((v) => resource.verbs.has(v));
const filterable = (resource: Resource) => resource.fields.filter((f) => f.filterable);
const orderable = (resource: Resource) => resource.fields.filter((f) => f.orderable).map((f) => f.name);
const filterKey = (resource: Resource, field: Field) => `filter.${resource.name}.${field.name}`;
const orderKey = (resource: Resource) => `order.${resource.name}`;

function filterParameter(field: Field): Json {
  const operators = OPERATORS_BY_KIND[field.kind];
  const values = field.enum ? `; one of ${field.enum.join(', ')}` : '';
  const description =
    `${field.description ? `${field.description.replace(/\.?$/, '. ')}` : ''}` +
    `Filter on ${field.name} (${field.kind}${values}) as \`operator.value\`, ` +
    'e.g. `eq.value`, `in.(a,b)`, `is.null`; `not.` before the operator negates, `op(any)`/`op(all)` take `{a,b}`. ' +
    `Operators: ${operators.map((o) => `\`${o}\``).join(', ')}.`;
  return queryParameter(RESERVED_KEYS.has(field.name) ? `"${field.name}"` : field.name, description);
}

const toOne = (resource: Resource) => resource.relations.filter((r) => r.cardinality === 'one');

function orderParameter(resource: Resource): Json {
  const fields = orderable(resource);
  const related = toOne(resource).filter((r) => orderable(r.target).length > 0);
  const byRelation = related.length
    ? '\nBy a field of a to-one relation embedded in select, `relation(field)` with the same suffixes, e.g. ' +
      `\`${related[0]!.name}(${orderable(related[0]!.target).at(-1)}).desc\`. To-one relations and their fields: ` +
      `${related.map((r) => `${r.name}(${orderable(r.target).join('|')})`).join(', ')}.`
    : '';
  return {
    ...queryParameter(
      'order',
      'Ordering: comma-separated terms `field[.asc|.desc][.nullsfirst|.nullslast]`. ' +
        `Allowed fields: ${fields.join(', ')}.${byRelation}`,
    ),
    example: `${fields[0]}.desc`,
  };
}

const EMBEDDING =
  'Resource embedding: `rel(fields)` adds the rows of a related resource: an object (or null) for a to-one ' +
  'relation, an array (`[]` when none) for a to-many one. The same grammar applies inside, embeds nest ' +
  '(`rel(a,other(b))`), and `rel()` embeds only to filter on, showing nothing. A relation is named by the resource ' +
  'it leads to, by its foreign key, or (to one) by the field holding the reference. `alias:rel(...)` renames it in ' +
  'the response; `rel!fk(...)` picks a relation by its foreign key; `rel!inner(...)` drops the rows without a ' +
  "match (after the embed's filters, limit and offset); `rel!left(...)`, the default, keeps them.";

const SPREAD =
  'Spread: `...rel(fields)` puts the related fields into the row itself; from a to-many relation each becomes ' +
  'an array of its values (`[]` when none).';

const EMBED_PARAMETERS =
  'Parameters of an embed are prefixed by its alias, or its name as written (nested: `rel.other.limit=1`): ' +
  '`rel.field=op.value`, `rel.or=(...)`, `rel.and=(...)`, `rel.not.or=(...)`, `rel.order=field.desc`, ' +
  "`rel.limit=2`, `rel.offset=1`, on the embedded resource's own filter and order fields. `rel=is.null` keeps " +
  'the rows whose embed (after its filters) has no match, `rel=not.is.null` those with one, also inside ' +
  '`or=(...)`; rel must be in select, `rel()` will do. Parameters for something not embedded are 400 NOT_EMBEDDED.';

/** The kinds of field an aggregate takes, as the planner checks them. */
const takes = (fn: AggregateFunction) => {
  const kinds: readonly FieldKind[] = AGGREGATE_KINDS[fn];
  return kinds.length === FIELD_KINDS.length ? 'any field' : kinds.join(', ');
};

function aggregatesSentence(resource: Resource): string {
  if (!resource.aggregates) return `Aggregates: ${resource.name} does not offer them (400 INVALID_AGGREGATE).`;
  const calls = AGGREGATES.map((fn) => `\`field.${fn}()\` (${takes(fn)})`).join(', ');
  return (
    `Aggregates: \`count()\` counts rows; ${calls}. An alias and casts apply ` +
    '(`total:value.sum()::int`, `value::numeric.sum()`). The other fields selected, with those of to-one spreads, ' +
    'group the rows (`Prefer: count=exact` then counts groups); an embed beside an aggregate must be a to-one ' +
    'spread or empty. Inside an embed too: `rel(count)` (a bare `count` where the resource has no such field), ' +
    '`rel(value.sum())`.'
  );
}

const CUSTOM_EMBED_NOTE =
  'Embedding a `*_details` resource with `*` brings its custom-field values as properties; spreading one ' +
  'with `*` is refused.';

/** The select of a resource's reads: fields, embedding, spread and aggregates, and the relations it has. */
function readSelectParameter(resource: Resource): Json {
  const relations = resource.relations.length > 0;
  const custom = resource.relations.some((r) => r.target.customFields !== undefined);
  const lines = [
    SELECT_FIELDS,
    ...(relations ? [EMBEDDING, SPREAD] : []),
    aggregatesSentence(resource),
    ...(relations ? [EMBED_PARAMETERS] : []),
    [relationsHint(resource), custom ? CUSTOM_EMBED_NOTE : ''].filter(Boolean).join(' '),
    `Casts: ${SELECT_CASTS.join(', ')}.`,
  ];
  // Paragraphs, as Markdown renders them.
  return queryParameter('select', lines.join('\n\n'));
}

const selectKey = (resource: Resource) => `select.${resource.name}`;

export function resourceParameters(resource: Resource): Array<[string, Json]> {
  const filters = usesFilters(resource)
    ? filterable(resource).map((f): [string, Json] => [filterKey(resource, f), filterParameter(f)])
    : [];
  const reads = resource.verbs.has('GET');
  const select: Array<[string, Json]> = reads ? [[selectKey(resource), readSelectParameter(resource)]] : [];
  const order: Array<[string, Json]> =
    reads && orderable(resource).length > 0 ? [[orderKey(resource), orderParameter(resource)]] : [];
  return [...filters, ...select, ...order];
}

// ---- operations ----

function filterRefs(resource: Resource): Json[] {
  const fields = filterable(resource);
  return fields.length === 0
    ? []
    : [...fields.map((f) => ref('parameters', filterKey(resource, f))), ...shared('and', 'or')];
}

/**
 * Rows as JSON: an array, or one object when Accept asks for application/vnd.pgrst.object+json;
 * or as CSV when it asks for text/csv.
 */
function rows(resource: Resource, description: string, headers: Json = {}): Json {
  const schema = ref('schemas', resource.name);
  return {
    description,
    headers: { ...requestId, ...headers },
    content: {
      [JSON_MEDIA]: { schema: { type: 'array', items: schema } },
      [OBJECT_MEDIA]: { schema },
      [CSV_MEDIA]: { schema: { type: 'string', description: 'A header line of the keys, then one line per row.' } },
    },
  };
}

const noContent = (headers: Json = {}) => ({
  description: 'No Content',
  headers: { ...requestId, ...consistency, ...headers },
});

/** The ETag of a resource whose records have versions (an `updated_at`). */
const versioned = (resource: Resource): Json => (resource.updatedAt ? { ETag: ref('headers', 'ETag') } : {});

/** If-Match and its 412, on a resource whose records have versions. */
const preconditions = (resource: Resource) =>
  resource.updatedAt ? { parameters: shared('If-Match'), failures: errors(412) } : { parameters: [], failures: {} };

/** Idempotency-Key, and what it adds to a write's answers, when the engine takes keys. */
const keyed = (idempotent: boolean) =>
  idempotent
    ? {
        parameters: shared('Idempotency-Key'),
        headers: { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') },
        failures: errors(409, 422),
      }
    : { parameters: [], headers: {}, failures: {} };

function operation(resource: Resource, action: string, summary: string, rest: Json): Json {
  return { operationId: `${action}_${resource.name}`, tags: [resource.name], summary, ...rest };
}

/** What `Accept: text/event-stream` answers on a resource with changes. */
const STREAM_CONTENT = {
  schema: {
    type: 'string',
    description:
      'Server-Sent Events, one per committed change a GET with the same filters would show before or after ' +
      'it: `id: <position>`, `event: insert|update|delete`, `data: {"type", "key", "record"}` (`record`, the ' +
      'row as `select` shows it, absent on delete); a `: ping` comment keeps a quiet stream open.',
  },
};

function readOperations(resource: Resource): Json {
  const { changes } = resource;
  const parameters = [
    ...filterRefs(resource),
    ref('parameters', selectKey(resource)),
    ...(orderable(resource).length > 0 ? [ref('parameters', orderKey(resource))] : []),
    ...shared('limit', 'offset', 'Range', 'Range-Unit', 'Prefer', 'Consistency-Token'),
    ...(resource.updatedAt ? shared('If-None-Match') : []),
  ];
  const position = changes ? { 'Change-Position': ref('headers', 'Change-Position') } : {};
  const range = { 'Content-Range': ref('headers', 'Content-Range'), ...versioned(resource), ...position };
  const failures = errors(400, 401, 406, 416);
  const ok = rows(resource, 'OK', range);
  return {
    get: operation(resource, 'list', `List ${resource.name}`, {
      description:
        'Also served as `QUERY` (the HTTP QUERY method) with the query string, or the rest of it, as an ' +
        '`application/x-www-form-urlencoded` body: for filters too long for a URL. It answers as this GET.' +
        (changes
          ? ' With `Accept: text/event-stream`, a stream of the changes of the rows it selects (its own fields ' +
            'only), from `Last-Event-ID` or from now.'
          : ''),
      parameters: changes ? [...parameters, ...shared('Last-Event-ID')] : parameters,
      responses: {
        200: changes ? { ...ok, content: { ...(ok.content as Json), [EVENT_STREAM_MEDIA]: STREAM_CONTENT } } : ok,
        206: rows(resource, 'Partial Content', range),
        ...(resource.updatedAt ? { 304: { description: 'Not Modified (If-None-Match)', headers: requestId } } : {}),
        ...failures,
        ...(changes ? errors(410, 429) : {}),
      },
    }),
    head: operation(resource, 'head', `Count ${resource.name} (GET without a body)`, {
      parameters,
      responses: {
        200: { description: 'OK', headers: { ...requestId, ...range } },
        206: { description: 'Partial Content', headers: { ...requestId, ...range } },
        ...failures,
      },
    }),
  };
}

const WRITE_ERRORS = [400, 401, 403, 409, 413, 415] as const;

/**
 * Request bodies: the very valibot schemas the write path validates with, as JSON Schema.
 * Unknown fields are refused, except custom-field keys on `*_details`.
 */
/** A valibot body schema as JSON Schema; custom fields admit other keys. */
export function bodySchema(resource: Resource, schema: v.GenericSchema): Json {
  const { $schema: _, ...json } = toJsonSchema(schema, { errorMode: 'ignore' }) as Json;
  return { ...json, additionalProperties: resource.customFields !== undefined };
}

export function bodySchemaEntries(resource: Resource): Array<[string, Json]> {
  const schemas = bodySchemas(resource);
  return [
    ...(resource.verbs.has('POST')
      ? [[`${resource.name}.create`, createSchema(resource, schemas)] as [string, Json]]
      : []),
    ...(resource.verbs.has('PATCH')
      ? [[`${resource.name}.update`, bodySchema(resource, schemas.schema.update)] as [string, Json]]
      : []),
    ...(byKey(resource)
      ? [[`${resource.name}.update_item`, updateItemSchema(resource, schemas)] as [string, Json]]
      : []),
  ];
}

/**
 * The create body: the fields, and (plan/nested.ts) a to-one relation's record named by a unique set
 * of its fields, or a to-many relation's records created with it.
 */
function createSchema(resource: Resource, schemas: ReturnType<typeof bodySchemas>): Json {
  const create = bodySchema(resource, schemas.schema.create) as Json & { properties?: Json };
  const nested: Array<[string, Json]> = resource.relations.flatMap((relation): Array<[string, Json]> => {
    if (resource.field(relation.name)) return [];
    const { target } = relation;
    if (relation.cardinality === 'one' && relation.via === 'parent') {
      const sets = target.uniques.map((fields) => ({
        type: 'object',
        required: fields.map((f) => f.name),
        additionalProperties: false,
        properties: Object.fromEntries(fields.map((f) => [f.name, fieldSchema(f)])),
      }));
      const description =
        `Instead of ${relation.parentFields.join(', ')}: the ${target.name} this record points at, named by ` +
        `${target.uniques.map((u) => `{${u.map((f) => f.name).join(', ')}}`).join(' or ')}; 409 when there is none.`;
      return [[relation.name, { description, oneOf: sets }]];
    }
    if (relation.cardinality === 'many' && relation.via === 'target' && target.verbs.has('POST')) {
      const description =
        `${target.name} records created with this one, in the same statement; their ` +
        `${relation.targetFields.join(', ')} is this record's.`;
      return [[relation.name, { description, type: 'array', items: ref('schemas', `${target.name}.create`) }]];
    }
    return [];
  });
  return nested.length ? { ...create, properties: { ...create.properties, ...Object.fromEntries(nested) } } : create;
}

/** Whether PATCH takes an array, each item naming its record by key (not on custom-field resources). */
const byKey = (resource: Resource) => resource.verbs.has('PATCH') && !resource.customFields;

/** An item of a PATCH array: the update's fields, and the key of the record it changes. */
function updateItemSchema(resource: Resource, schemas: ReturnType<typeof bodySchemas>): Json {
  const update = bodySchema(resource, schemas.schema.update) as Json & { properties?: Json; required?: string[] };
  const keys = resource.key.map((f) => f.name);
  return {
    ...update,
    properties: { ...Object.fromEntries(resource.key.map((f) => [f.name, fieldSchema(f)])), ...update.properties },
    required: [...keys, ...(update.required ?? [])],
  };
}

function createOperation(resource: Resource, idempotent: boolean): Json {
  const schema = ref('schemas', `${resource.name}.create`);
  const key = keyed(idempotent);
  return {
    post: operation(resource, 'create', `Create ${resource.name}`, {
      description:
        'Takes one object or an array of them, written in one statement. Server-managed fields are set by the server.',
      parameters: [...shared('select', 'columns', 'on_conflict', 'Prefer'), ...key.parameters],
      requestBody: {
        required: true,
        content: { [JSON_MEDIA]: { schema: { oneOf: [schema, { type: 'array', items: schema }] } } },
      },
      responses: {
        201: rows(resource, 'Created: the rows with `Prefer: return=representation`, else an empty body.', {
          Location: ref('headers', 'Location'),
          ...consistency,
          ...versioned(resource),
          ...key.headers,
        }),
        200: rows(resource, 'OK: the affected rows.', { ...consistency, ...key.headers }),
        204: noContent(key.headers),
        ...errors(...WRITE_ERRORS),
        ...key.failures,
      },
    }),
  };
}

const FILTER_REQUIRED = 'Acts on the rows the filters select; at least one filter is required.';

const BY_KEY =
  ' Or an array of objects, each with the key of the record it changes and the fields to set there (filters ' +
  'optional): one statement changes every record named, or none (404 when an item names no record the filters ' +
  'select).';

function updateOperation(resource: Resource, idempotent: boolean): Json {
  const key = keyed(idempotent);
  return {
    patch: operation(resource, 'update', `Update ${resource.name}`, {
      description: `${FILTER_REQUIRED}${byKey(resource) ? BY_KEY : ''}`,
      parameters: [
        ...filterRefs(resource),
        ...shared('select', 'Prefer'),
        ...preconditions(resource).parameters,
        ...key.parameters,
      ],
      requestBody: {
        required: true,
        content: {
          [JSON_MEDIA]: {
            schema: byKey(resource)
              ? {
                  oneOf: [
                    ref('schemas', `${resource.name}.update`),
                    { type: 'array', minItems: 1, items: ref('schemas', `${resource.name}.update_item`) },
                  ],
                }
              : ref('schemas', `${resource.name}.update`),
          },
        },
      },
      responses: {
        200: rows(resource, 'OK: the updated rows, with `Prefer: return=representation`.', {
          ...consistency,
          ...versioned(resource),
          ...key.headers,
        }),
        204: noContent(key.headers),
        ...errors(...WRITE_ERRORS),
        ...preconditions(resource).failures,
        ...key.failures,
      },
    }),
  };
}

function putOperation(resource: Resource, idempotent: boolean): Json {
  const key = keyed(idempotent);
  return {
    put: operation(resource, 'put', `Create or replace ${resource.name}`, {
      description:
        `The ${resource.name} whose key the filters give (an eq filter on each of ${resource.key.map((f) => f.name).join(', ')}, ` +
        "and no other): created with the body, or its fields the body gives set. A key in the body must be the filters'.",
      parameters: [...filterRefs(resource), ...shared('select', 'Prefer'), ...key.parameters],
      requestBody: { required: true, content: { [JSON_MEDIA]: { schema: ref('schemas', `${resource.name}.create`) } } },
      responses: {
        201: rows(resource, 'Created: the record, with `Prefer: return=representation`.', {
          ...consistency,
          ...versioned(resource),
          ...key.headers,
        }),
        200: rows(resource, 'OK: the replaced record, with `Prefer: return=representation`.', {
          ...consistency,
          ...key.headers,
        }),
        204: noContent(key.headers),
        ...errors(...WRITE_ERRORS),
        ...key.failures,
      },
    }),
  };
}

function deleteOperation(resource: Resource, idempotent: boolean): Json {
  const key = keyed(idempotent);
  return {
    delete: operation(resource, 'delete', `Delete ${resource.name}`, {
      description: FILTER_REQUIRED,
      parameters: [
        ...filterRefs(resource),
        ...shared('select', 'Prefer'),
        ...preconditions(resource).parameters,
        ...key.parameters,
      ],
      responses: {
        200: rows(resource, 'OK: the deleted rows, with `Prefer: return=representation`.', {
          ...consistency,
          ...key.headers,
        }),
        204: noContent(key.headers),
        ...errors(400, 401),
        ...preconditions(resource).failures,
        ...key.failures,
      },
    }),
  };
}

/** `idempotent`: writes take an Idempotency-Key. */
const OPERATIONS: Record<Verb, (resource: Resource, idempotent: boolean) => Json> = {
  GET: readOperations,
  POST: createOperation,
  PUT: putOperation,
  PATCH: updateOperation,
  DELETE: deleteOperation,
};

export function pathItem(resource: Resource, idempotent: boolean): Json {
  // VERBS, not the resource's set, fixes the order of operations in the document.
  return Object.assign(
    {},
    ...VERBS.filter((v) => resource.verbs.has(v)).map((v) => OPERATIONS[v](resource, idempotent)),
  );
}

export const ROOT_PATH: Json = {
  get: {
    operationId: 'get_openapi',
    tags: ['Introspection'],
    summary: 'This OpenAPI document',
    responses: {
      200: {
        description: 'OK',
        headers: requestId,
        content: {
          'application/openapi+json': { schema: { type: 'object' } },
          [JSON_MEDIA]: { schema: { type: 'object' } },
        },
      },
      ...errors(401),
    },
  },
};
