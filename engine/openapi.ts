/**
 * The OpenAPI 3.1 document served at `GET /` (docs/contract.md section 1), generated from the registry
 * alone: a resource added to the registry appears here with its paths, schema and filters. What
 * operations share (parameters, error responses, headers) lives once in `components` and is
 * referenced by `$ref`, which keeps the document small: a list answers GET and HEAD alike.
 */

import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { FIELD_KINDS, type FieldKind, KINDS } from './field-kinds.ts';
import { CSV_MEDIA, JSON_MEDIA, OBJECT_MEDIA } from './media-types.ts';
import { OPERATORS_BY_KIND } from './operators.ts';
import { bodySchemas } from './plan/body.ts';
import { AGGREGATE_KINDS, SELECT_CASTS } from './plan/casts.ts';
import { relationsHint } from './plan/relations.ts';
import { type Field, type Registry, type Relation, type Resource, VERBS, type Verb } from './registry/index.ts';
import { AGGREGATES, type AggregateFunction } from './request.ts';
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from './versions.ts';

export interface OpenApiOptions {
  /** Server URL the document names, e.g. http://127.0.0.1:3000/api/v1 */
  readonly serverUrl?: string;
  /**
   * Where the versioned API's paths (`/v1/...`) are served from, e.g. http://127.0.0.1:3000; by
   * default the server URL without its `/api/v1`, or `/` when that leaves nothing.
   */
  readonly versionedServerUrl?: string;
}

type Json = Record<string, unknown>;

/** Query keys the engine reads as something other than a filter; a field so named is quoted. */
const RESERVED_KEYS = new Set(['select', 'columns', 'on_conflict', 'order', 'limit', 'offset', 'and', 'or']);

/** Error responses every operation may name, by status (docs/contract.md section 5). */
const ERROR_RESPONSES = {
  400: [
    'BadRequest',
    'Bad Request: a malformed query, an unknown field, an unknown or ambiguous relation, an embed parameter for ' +
      'something not embedded, an aggregate that does not fit its field, an invalid body, a PATCH or DELETE ' +
      'without a filter, or an unsupported engage-version.',
  ],
  401: ['Unauthorized', 'Unauthorized: the bearer token is missing, unknown, expired or revoked.'],
  403: ['Forbidden', 'Forbidden: the body acts for another organisation.'],
  404: ['NotFound', 'Not Found: nothing of that name or id in your organisation (or imports are not served here).'],
  406: [
    'NotAcceptable',
    'Not Acceptable: an unsupported Accept, or a single object asked for when not exactly one row matches.',
  ],
  409: ['Conflict', 'Conflict: a unique value is taken, or a referenced record does not exist in the organisation.'],
  413: [
    'PayloadTooLarge',
    'Payload Too Large: the body exceeds its limit: 1 MiB, except 5 MiB on the batch imports of /v1 and ' +
      "the server's FILE_UPLOAD_LIMIT on /v1/files.",
  ],
  415: [
    'UnsupportedMediaType',
    'Unsupported Media Type: the body is not application/json (an import file: not text/csv, application/json ' +
      'or application/x-ndjson).',
  ],
  416: ['RangeNotSatisfiable', 'Range Not Satisfiable: the range starts past the last row.'],
} as const;
type ErrorStatus = keyof typeof ERROR_RESPONSES;

const JSON_TYPE = JSON_MEDIA;
const OBJECT_TYPE = OBJECT_MEDIA;

const ref = (section: 'schemas' | 'parameters' | 'responses' | 'headers', name: string): Json => ({
  $ref: `#/components/${section}/${name}`,
});

const queryParameter = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const headerParameter = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'header',
  required: false,
  description,
  schema,
});

const PAGINATION = 'Limiting and Pagination';
const DIGITS = { type: 'string', pattern: '^[0-9]+$' };

const SELECT_FIELDS =
  'Filtering Columns: the fields to return, comma-separated, e.g. `select=id,name`. `alias:field` renames, ' +
  '`field::type` casts, `data->key` and `data->>key` reach into JSON fields; `*` (the default) is every field.';

/** Parameters shared by every resource. */
const SHARED_PARAMETERS: Record<string, Json> = {
  // The select of writes; reads have one per resource (readSelectParameter), which details embedding.
  select: queryParameter(
    'select',
    `${SELECT_FIELDS} A write's select shows the written rows as a read does, embeds included (the GET of` +
      ' the resource lists its relations); it cannot aggregate.\n' +
      `Casts: ${SELECT_CASTS.join(', ')}.`,
  ),
  limit: queryParameter(
    'limit',
    `${PAGINATION}: the most rows to return. A page never exceeds the server's maximum.`,
    DIGITS,
  ),
  offset: queryParameter('offset', `${PAGINATION}: the rows to skip.`, DIGITS),
  and: queryParameter(
    'and',
    'Logic tree whose conditions must all hold, e.g. `and=(name.eq.a,or(value.gt.1,value.is.null))`: conditions are ' +
      '`field.operator.value`, groups `and(...)` and `or(...)` nest, `not.` negates; ' +
      'quote values holding `,` `.` `(` `)` ' +
      'with `"`. The key `not.and` negates the whole tree.',
  ),
  or: queryParameter(
    'or',
    'Logic tree of which one condition must hold, e.g. `or=(name.eq.a,value.gt.1)`; same syntax as `and`. ' +
      'The key `not.or` negates the whole tree.',
  ),
  columns: queryParameter(
    'columns',
    'Columns: the body keys to insert, comma-separated; other keys of the body are ignored.',
  ),
  on_conflict: queryParameter(
    'on_conflict',
    'On Conflict: the comma-separated fields of the unique constraint an upsert ' +
      '(`Prefer: resolution=...`) resolves on.',
  ),
  Range: headerParameter(
    'Range',
    `${PAGINATION}: the rows \`first-last\`, zero-based and inclusive, e.g. \`0-24\`, ` +
      'or `25-` for every row from 25 on; `items=0-24` also works.',
  ),
  'Range-Unit': headerParameter('Range-Unit', `${PAGINATION}: the unit of Range; only \`items\` is supported.`, {
    type: 'string',
    default: 'items',
  }),
  Prefer: headerParameter(
    'Prefer',
    'Preferences (RFC 7240), comma-separated; the first of each kind wins and unknown ones are ignored ' +
      'unless `handling=strict`.\n' +
      '- `count=exact|planned|estimated`: the total after the slash of Content-Range (GET, HEAD)\n' +
      '- `return=minimal|headers-only|representation`: what a write answers with (default minimal)\n' +
      '- `resolution=merge-duplicates|ignore-duplicates`: upsert on the unique fields of `on_conflict` (POST)\n' +
      '- `missing=default|null`: what fields an item of a bulk POST omits get\n' +
      '- `handling=strict|lenient`: strict refuses unknown preferences with 400\n' +
      '- `tx=commit|rollback`: rollback runs the request, then undoes it\n' +
      '- `max-affected=N`: with `handling=strict`, a PATCH or DELETE that would affect more than N rows fails',
  ),
  'Consistency-Token': headerParameter(
    'Consistency-Token',
    'Read after a write: the Consistency-Token header of a write response, sent back unchanged. With read ' +
      'replicas the read then runs where that write is already seen. A value that is not one is 400.',
  ),
  'engage-version': headerParameter(
    'engage-version',
    `API version. Absent means the current one (${CURRENT_VERSION}); any other value is 400 ` +
      'INVALID_VERSION_HEADER. Responses echo the version used.',
    { type: 'string', enum: [...SUPPORTED_VERSIONS] },
  ),
};

const HEADERS: Record<string, Json> = {
  'Request-Id': {
    description: 'Identifies the request; an error body repeats it as request_id.',
    schema: { type: 'string' },
  },
  'Content-Range': {
    description: 'The rows returned and the total, e.g. `0-24/*`, or `0-24/3573` with `Prefer: count=exact`.',
    schema: { type: 'string' },
  },
  Location: {
    description: 'Where the created row can be read (with `Prefer: return=headers-only`).',
    schema: { type: 'string' },
  },
  'Consistency-Token': {
    description:
      "With read replicas, the primary's WAL position after the write, e.g. `0/3A1B2C8`: send it back on a " +
      'read that must see the write.',
    schema: { type: 'string' },
  },
};

const ERROR_SCHEMA: Json = {
  type: 'object',
  description: 'The body of every error. Branch on the status class, then `code`, then `is_transient`.',
  required: ['name', 'message', 'code', 'is_transient', 'timestamp', 'status_code', 'contact_support', 'request_id'],
  properties: {
    name: { type: 'string', description: 'Error class name, e.g. APIError.' },
    message: { type: 'string', description: 'Human-readable; not to be parsed.' },
    code: { type: 'string', description: 'Stable machine-readable code, e.g. VALIDATION_FAILED; use it for logic.' },
    is_transient: { type: 'boolean', description: 'Whether the same request, retried, may succeed.' },
    timestamp: { type: 'string', format: 'date-time', description: 'When the error response was created.' },
    status_code: { type: 'integer', description: 'The HTTP status returned.' },
    contact_support: { type: 'boolean', description: 'Whether support escalation is likely needed.' },
    request_id: { type: 'string', description: 'Equals the Request-Id header.' },
    hint: { type: 'string', description: 'What to change, for some errors.' },
    context: { description: 'Details, for some errors, e.g. each validation problem by field.' },
  },
};

// ---- schemas ----

function fieldSchema(field: Field): Json {
  const { type, ...rest }: { type?: string } & Json = KINDS[field.kind].jsonSchema;
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

function resourceSchema(resource: Resource): Json {
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

function resourceParameters(resource: Resource): Array<[string, Json]> {
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

const shared = (...names: string[]) => names.map((name) => ref('parameters', name));

function filterRefs(resource: Resource): Json[] {
  const fields = filterable(resource);
  return fields.length === 0
    ? []
    : [...fields.map((f) => ref('parameters', filterKey(resource, f))), ...shared('and', 'or')];
}

const errors = (...statuses: ErrorStatus[]) =>
  Object.fromEntries(statuses.map((status) => [status, ref('responses', ERROR_RESPONSES[status][0])]));

const requestId = { 'Request-Id': ref('headers', 'Request-Id') };

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
      [JSON_TYPE]: { schema: { type: 'array', items: schema } },
      [OBJECT_TYPE]: { schema },
      [CSV_MEDIA]: { schema: { type: 'string', description: 'A header line of the keys, then one line per row.' } },
    },
  };
}

/** What a write answers with besides its rows: the position a read after it may send back. */
const consistency = { 'Consistency-Token': ref('headers', 'Consistency-Token') };
const noContent = () => ({ description: 'No Content', headers: { ...requestId, ...consistency } });

function operation(resource: Resource, action: string, summary: string, rest: Json): Json {
  return { operationId: `${action}_${resource.name}`, tags: [resource.name], summary, ...rest };
}

function readOperations(resource: Resource): Json {
  const parameters = [
    ...filterRefs(resource),
    ref('parameters', selectKey(resource)),
    ...(orderable(resource).length > 0 ? [ref('parameters', orderKey(resource))] : []),
    ...shared('limit', 'offset', 'Range', 'Range-Unit', 'Prefer', 'Consistency-Token', 'engage-version'),
  ];
  const range = { 'Content-Range': ref('headers', 'Content-Range') };
  const failures = errors(400, 401, 406, 416);
  return {
    get: operation(resource, 'list', `List ${resource.name}`, {
      parameters,
      responses: { 200: rows(resource, 'OK', range), 206: rows(resource, 'Partial Content', range), ...failures },
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
function bodySchema(resource: Resource, schema: v.GenericSchema): Json {
  const { $schema: _, ...json } = toJsonSchema(schema, { errorMode: 'ignore' }) as Json;
  return { ...json, additionalProperties: resource.customFields !== undefined };
}

function bodySchemaEntries(resource: Resource): Array<[string, Json]> {
  const schemas = bodySchemas(resource);
  return [
    ...(resource.verbs.has('POST')
      ? [[`${resource.name}.create`, bodySchema(resource, schemas.schema.create)] as [string, Json]]
      : []),
    ...(resource.verbs.has('PATCH')
      ? [[`${resource.name}.update`, bodySchema(resource, schemas.schema.update)] as [string, Json]]
      : []),
  ];
}

function createOperation(resource: Resource): Json {
  const schema = ref('schemas', `${resource.name}.create`);
  return {
    post: operation(resource, 'create', `Create ${resource.name}`, {
      description:
        'Takes one object or an array of them, written in one statement. Server-managed fields are set by the server.',
      parameters: shared('select', 'columns', 'on_conflict', 'Prefer', 'engage-version'),
      requestBody: {
        required: true,
        content: { [JSON_TYPE]: { schema: { oneOf: [schema, { type: 'array', items: schema }] } } },
      },
      responses: {
        201: rows(resource, 'Created: the rows with `Prefer: return=representation`, else an empty body.', {
          Location: ref('headers', 'Location'),
          ...consistency,
        }),
        200: rows(resource, 'OK: the affected rows.', consistency),
        204: noContent(),
        ...errors(...WRITE_ERRORS),
      },
    }),
  };
}

const FILTER_REQUIRED = 'Acts on the rows the filters select; at least one filter is required.';

function updateOperation(resource: Resource): Json {
  return {
    patch: operation(resource, 'update', `Update ${resource.name}`, {
      description: FILTER_REQUIRED,
      parameters: [...filterRefs(resource), ...shared('select', 'Prefer', 'engage-version')],
      requestBody: { required: true, content: { [JSON_TYPE]: { schema: ref('schemas', `${resource.name}.update`) } } },
      responses: {
        200: rows(resource, 'OK: the updated rows, with `Prefer: return=representation`.', consistency),
        204: noContent(),
        ...errors(...WRITE_ERRORS),
      },
    }),
  };
}

function deleteOperation(resource: Resource): Json {
  return {
    delete: operation(resource, 'delete', `Delete ${resource.name}`, {
      description: FILTER_REQUIRED,
      parameters: [...filterRefs(resource), ...shared('select', 'Prefer', 'engage-version')],
      responses: {
        200: rows(resource, 'OK: the deleted rows, with `Prefer: return=representation`.', consistency),
        204: noContent(),
        ...errors(400, 401),
      },
    }),
  };
}

const OPERATIONS: Record<Verb, (resource: Resource) => Json> = {
  GET: readOperations,
  POST: createOperation,
  PATCH: updateOperation,
  DELETE: deleteOperation,
};

function pathItem(resource: Resource): Json {
  // VERBS, not the resource's set, fixes the order of operations in the document.
  return Object.assign({}, ...VERBS.filter((v) => resource.verbs.has(v)).map((v) => OPERATIONS[v](resource)));
}

const ROOT_PATH: Json = {
  get: {
    operationId: 'get_openapi',
    tags: ['Introspection'],
    summary: 'This OpenAPI document',
    parameters: shared('engage-version'),
    responses: {
      200: {
        description: 'OK',
        headers: requestId,
        content: {
          'application/openapi+json': { schema: { type: 'object' } },
          [JSON_TYPE]: { schema: { type: 'object' } },
        },
      },
      ...errors(401),
    },
  },
};

// ---- the versioned API (/v1) ----

const VERSIONED = 'Versioned API';
const IMPORTS_TAG = `${VERSIONED}: imports`;
const PAGES_TAG = `${VERSIONED}: pages`;
const FILE_TYPES = ['text/csv', 'application/json', 'application/x-ndjson'] as const;

const importable = (registry: Registry) => registry.resources.filter((r) => r.imports && r.collection);
const paged = (registry: Registry) => registry.resources.filter((r) => r.keyset && r.collection);

/** `/v1` is served beside `/api/v1`, not under it: the server of its paths. */
const versionedServer = (options: OpenApiOptions) =>
  options.versionedServerUrl ?? ((options.serverUrl ?? '/api/v1').replace(/\/api\/v1\/?$/, '') || '/');

const jsonBody = (schema: Json, description?: string): Json => ({
  required: true,
  ...(description && { description }),
  content: { [JSON_TYPE]: { schema } },
});

const jsonResponse = (description: string, schema: Json, headers: Json = {}): Json => ({
  description,
  headers: { ...requestId, ...headers },
  content: { [JSON_TYPE]: { schema } },
});

const ITEM_ERROR: Json = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', description: 'As the code of an error body, e.g. VALIDATION_FAILED or CONFLICT.' },
    message: { type: 'string' },
    context: { description: 'Details, e.g. each validation problem by field.' },
  },
};

const VERSIONED_SCHEMAS: Record<string, Json> = {
  ImportItemResult: {
    type: 'object',
    description: 'What became of one item: created or updated (with the id), or failed (with the reason).',
    required: ['index', 'status'],
    properties: {
      index: { type: 'integer', description: 'The position of the item, from 0.' },
      status: { type: 'string', enum: ['created', 'updated', 'failed'] },
      id: { type: 'string', format: 'uuid', description: 'The row written, unless the item failed.' },
      error: { ...ITEM_ERROR, description: 'Why the item failed.' },
    },
  },
  BatchResult: {
    type: 'object',
    required: ['created', 'updated', 'failed', 'results'],
    properties: {
      created: { type: 'integer' },
      updated: { type: 'integer' },
      failed: { type: 'integer' },
      results: { type: 'array', items: ref('schemas', 'ImportItemResult'), description: 'One per item, in order.' },
    },
  },
  StoredFile: {
    type: 'object',
    description: 'An uploaded import file; pass its id to an import.',
    required: ['id', 'size', 'content_type', 'sha256'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      size: { type: 'integer', description: 'Bytes.' },
      content_type: { type: 'string', enum: [...FILE_TYPES] },
      sha256: { type: 'string', description: 'The SHA-256 of the bytes, in hex.' },
    },
  },
  ImportJob: {
    type: 'object',
    description: 'An import of a file: queued, then running, then succeeded or failed, with its progress.',
    required: [
      'id',
      'resource',
      'file_id',
      'status',
      'processed',
      'created',
      'updated',
      'failed',
      'errors',
      'created_at',
      'updated_at',
      'finished_at',
    ],
    properties: {
      id: { type: 'string', format: 'uuid' },
      resource: { type: 'string', description: 'The collection imported into, e.g. contacts.' },
      file_id: { type: 'string', format: 'uuid' },
      status: { type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] },
      processed: { type: 'integer', description: 'Items read so far.' },
      created: { type: 'integer' },
      updated: { type: 'integer' },
      failed: { type: 'integer', description: 'Items that failed; the job goes on past them.' },
      errors: {
        type: 'array',
        items: ref('schemas', 'ImportItemResult'),
        description: 'The first 100 items that failed.',
      },
      error: { type: 'string', description: 'Why the job failed, when it did (a malformed file, a refused batch).' },
      created_at: { type: 'string', format: 'date-time' },
      updated_at: { type: 'string', format: 'date-time' },
      finished_at: { type: ['string', 'null'], format: 'date-time' },
    },
  },
};

const VERSIONED_PARAMETERS: Record<string, Json> = {
  'page.limit': queryParameter('limit', 'The most rows of the page, from 1 to 1000.', {
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    default: 50,
  }),
  'page.cursor': queryParameter(
    'cursor',
    'Where the page starts: next_cursor of the previous page, unchanged. Absent: the first page.',
  ),
  'import.id': {
    name: 'id',
    in: 'path',
    required: true,
    description: 'The id of the job, as starting the import gave it.',
    schema: { type: 'string', format: 'uuid' },
  },
};

const itemKey = (resource: Resource) => `${resource.collection}.import_item`;
const pageKey = (resource: Resource) => `${resource.collection}.page`;

function versionedSchemas(registry: Registry, imports: boolean): Array<[string, Json]> {
  const items = importable(registry).map((resource): [string, Json] => {
    const { $schema: _, ...json } = toJsonSchema(bodySchemas(resource).schema.create, { errorMode: 'ignore' }) as Json;
    const custom = resource.imports?.customFields !== undefined;
    return [
      itemKey(resource),
      {
        ...json,
        description:
          `An item of an import of ${resource.collection}: the fields of ${resource.name}, matched on ` +
          'external_id (an update) or created.' +
          (custom ? ` Other keys are custom-field keys of ${resource.imports?.customFields?.entity}.` : ''),
        additionalProperties: custom,
      },
    ];
  });
  const pages = paged(registry).map((resource): [string, Json] => [
    pageKey(resource),
    {
      type: 'object',
      required: ['data', 'next_cursor'],
      properties: {
        data: { type: 'array', items: ref('schemas', resource.name) },
        next_cursor: {
          type: ['string', 'null'],
          description: 'Pass it as cursor for the next page; null on the last page.',
        },
      },
    },
  ]);
  return [...(imports ? Object.entries(VERSIONED_SCHEMAS) : []), ...items, ...pages];
}

const versionParameter = shared('engage-version');

function importPaths(resource: Resource): Array<[string, Json]> {
  const collection = resource.collection!;
  const batch: Json = {
    post: {
      operationId: `import_batch_${collection}`,
      tags: [IMPORTS_TAG],
      summary: `Import a batch of ${collection}`,
      description:
        'Up to 5 MiB of items in one transaction: each matched on external_id (updated) or created; a valid ' +
        'item is written even when others fail, and each gets a result.',
      parameters: versionParameter,
      requestBody: jsonBody({
        type: 'object',
        required: ['items'],
        additionalProperties: false,
        properties: { items: { type: 'array', items: ref('schemas', itemKey(resource)) } },
      }),
      responses: {
        200: jsonResponse('OK: a result per item.', ref('schemas', 'BatchResult'), consistency),
        ...errors(400, 401, 404, 413, 415),
      },
    },
  };
  const start: Json = {
    post: {
      operationId: `import_file_${collection}`,
      tags: [IMPORTS_TAG],
      summary: `Import a file of ${collection}`,
      description:
        'Queues the import of a file uploaded with POST /v1/files; follow it with GET /v1/imports/{id}. ' +
        `Items are those of the batch import (${itemKey(resource)}); in CSV, empty cells are left out and ` +
        'numbers, booleans and lists (as JSON) are read by the type of their field.',
      parameters: versionParameter,
      requestBody: jsonBody({
        type: 'object',
        required: ['file_id'],
        properties: { file_id: { type: 'string', format: 'uuid', description: 'The id POST /v1/files gave.' } },
      }),
      responses: {
        202: jsonResponse('Accepted: the job, queued.', ref('schemas', 'ImportJob')),
        ...errors(400, 401, 404, 413, 415),
      },
    },
  };
  return [
    [`/v1/${collection}/imports/batch`, batch],
    [`/v1/${collection}/imports`, start],
  ];
}

function pagePath(resource: Resource): [string, Json] {
  const collection = resource.collection!;
  const order = resource.keyset!.map((f) => f.name).join(', ');
  return [
    `/v1/${collection}`,
    {
      get: {
        operationId: `page_${collection}`,
        tags: [PAGES_TAG],
        summary: `Every ${resource.name}, page by page`,
        description:
          `Keyset pages ordered by (${order}): pass next_cursor back as cursor until it is null. A walk sees ` +
          'every row that existed when it started exactly once.',
        parameters: [
          ref('parameters', 'page.limit'),
          ref('parameters', 'page.cursor'),
          ...shared('Consistency-Token'),
          ...versionParameter,
        ],
        responses: {
          200: jsonResponse('OK: a page.', ref('schemas', pageKey(resource))),
          ...errors(400, 401),
        },
      },
    },
  ];
}

const FILE_PATH: Json = {
  post: {
    operationId: 'upload_file',
    tags: [IMPORTS_TAG],
    summary: 'Upload an import file',
    description:
      'The file is the body, with its Content-Type: CSV with a header row, a JSON array of items (or ' +
      '`{"items": [...]}`), or NDJSON, in UTF-8. It is streamed into the database, up to the server\'s ' +
      'FILE_UPLOAD_LIMIT; send large imports as CSV or NDJSON, as a JSON file is parsed whole.',
    parameters: versionParameter,
    requestBody: {
      required: true,
      content: {
        [CSV_MEDIA]: { schema: { type: 'string', description: 'A header line of the keys, then one line per item.' } },
        [JSON_TYPE]: {
          schema: {
            oneOf: [
              { type: 'array', items: { type: 'object' } },
              {
                type: 'object',
                required: ['items'],
                properties: { items: { type: 'array', items: { type: 'object' } } },
              },
            ],
          },
        },
        'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line.' } },
      },
    },
    responses: {
      201: jsonResponse('Created: the stored file.', ref('schemas', 'StoredFile')),
      ...errors(400, 401, 404, 413, 415),
    },
  },
};

const JOB_PATH: Json = {
  get: {
    operationId: 'get_import',
    tags: [IMPORTS_TAG],
    summary: 'An import job',
    description: 'Its status, its progress and its first failed items.',
    parameters: [ref('parameters', 'import.id'), ...versionParameter],
    responses: {
      200: jsonResponse('OK', ref('schemas', 'ImportJob'), consistency),
      ...errors(401, 404),
    },
  },
};

/** The paths of `/v1`, each naming the server it is served from. */
function versionedPaths(registry: Registry, options: OpenApiOptions): Array<[string, Json]> {
  const servers = [{ url: versionedServer(options), description: 'The versioned API, beside /api/v1.' }];
  const imports = importable(registry);
  const paths: Array<[string, Json]> = [
    ...(imports.length > 0 ? [['/v1/files', FILE_PATH] as [string, Json]] : []),
    ...imports.flatMap(importPaths),
    ...(imports.length > 0 ? [['/v1/imports/{id}', JOB_PATH] as [string, Json]] : []),
    ...paged(registry).map(pagePath),
  ];
  return paths.map(([path, item]) => [path, { servers, ...item }]);
}

const INFO_DESCRIPTION =
  'The customer-engagement API: its resources under `/api/v1` in the PostgREST query language, and the ' +
  'versioned API under `/v1` (batch and file imports, import jobs, keyset pages). Every call takes ' +
  '`Authorization: Bearer <token>`; errors share one body (Error).';

export function buildOpenApi(registry: Registry, options: OpenApiOptions = {}): Record<string, unknown> {
  const { resources } = registry;
  const versioned = versionedPaths(registry, options);
  const imports = importable(registry).length > 0;
  const pages = paged(registry).length > 0;
  // Components only the versioned API uses are there when it has paths using them.
  const versionedParameters = Object.entries(VERSIONED_PARAMETERS).filter(([name]) =>
    name.startsWith('page.') ? pages : imports,
  );
  const responses = Object.values(ERROR_RESPONSES).filter(([name]) => name !== 'NotFound' || imports);
  return {
    openapi: '3.1.0',
    info: { title: 'API', version: '1.0.0', description: INFO_DESCRIPTION },
    servers: [{ url: options.serverUrl ?? '/api/v1' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Introspection', description: 'The description of this API.' },
      ...resources.map((r) => ({ name: r.name, ...(r.description && { description: r.description }) })),
      ...(imports
        ? [{ name: IMPORTS_TAG, description: 'Batch imports, import files and the jobs importing them (/v1).' }]
        : []),
      ...(pages ? [{ name: PAGES_TAG, description: 'Every row of a collection, in keyset pages (/v1).' }] : []),
    ],
    paths: {
      '/': ROOT_PATH,
      ...Object.fromEntries(resources.map((r) => [`/${r.name}`, pathItem(r)])),
      ...Object.fromEntries(versioned),
    },
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API token (`npm run token -- create`), sent as `Authorization: Bearer <token>`.',
        },
      },
      schemas: {
        ...Object.fromEntries(resources.flatMap((r) => [[r.name, resourceSchema(r)], ...bodySchemaEntries(r)])),
        ...Object.fromEntries(versioned.length > 0 ? versionedSchemas(registry, imports) : []),
        Error: ERROR_SCHEMA,
      },
      parameters: {
        ...SHARED_PARAMETERS,
        ...Object.fromEntries(resources.flatMap(resourceParameters)),
        ...Object.fromEntries(versionedParameters),
      },
      headers: HEADERS,
      responses: Object.fromEntries(
        responses.map(([name, description]) => [
          name,
          { description, headers: requestId, content: { [JSON_TYPE]: { schema: ref('schemas', 'Error') } } },
        ]),
      ),
    },
  };
}

/**
 * The document served from another URL: its server and the server of its `/v1` paths both moved,
 * as a docs page does to call the API where the page was loaded from.
 * @example
 * const document = withServerUrl(engine.openapi(), '/api/v1'); // /v1 paths then call '/'
 */
export function withServerUrl(
  document: Record<string, unknown>,
  serverUrl: string,
  options: { readonly description?: string; readonly versionedServerUrl?: string } = {},
): Record<string, unknown> {
  const versioned = versionedServer({ serverUrl, versionedServerUrl: options.versionedServerUrl });
  const paths = Object.entries((document.paths ?? {}) as Record<string, Json>).map(([path, item]) => {
    const servers = item.servers as Json[] | undefined;
    return [path, servers ? { ...item, servers: servers.map((s) => ({ ...s, url: versioned })) } : item];
  });
  const description = options.description === undefined ? {} : { description: options.description };
  return { ...document, servers: [{ url: serverUrl, ...description }], paths: Object.fromEntries(paths) };
}
