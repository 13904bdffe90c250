/**
 * The OpenAPI 3.1 document served at `GET /` (docs/contract.md section 1), generated from the registry
 * alone: a resource added to the registry appears here with its paths, schema and filters. What
 * operations share (parameters, error responses, headers) lives once in `components` and is
 * referenced by `$ref`, which keeps the document small: a list answers GET and HEAD alike.
 */

import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { CSV_MEDIA, JSON_MEDIA, OBJECT_MEDIA } from './media-types.ts';
import { OPERATORS_BY_KIND } from './operators.ts';
import { bodySchemas } from './plan/body.ts';
import { AGGREGATE_KINDS, SELECT_CASTS } from './plan/casts.ts';
import { relationsHint } from './plan/relations.ts';
import {
  FIELD_KINDS,
  type Field,
  type FieldKind,
  type Registry,
  type Relation,
  type Resource,
  VERBS,
  type Verb,
} from './registry.ts';
import { AGGREGATES, type AggregateFunction } from './request.ts';
import { CURRENT_VERSION, SUPPORTED_VERSIONS } from './versions.ts';

export interface OpenApiOptions {
  /** Server URL the document names, e.g. http://127.0.0.1:3000/api/v1 */
  readonly serverUrl?: string;
}

type Json = Record<string, unknown>;

/** JSON Schema of each field kind, as rows leave the API (docs/contract.md section 9). */
const KIND_SCHEMA: Record<FieldKind, { readonly type?: string; readonly format?: string; readonly items?: Json }> = {
  uuid: { type: 'string', format: 'uuid' },
  text: { type: 'string' },
  boolean: { type: 'boolean' },
  integer: { type: 'integer', format: 'int32' },
  numeric: { type: 'number' },
  date: { type: 'string', format: 'date' },
  timestamptz: { type: 'string', format: 'date-time' },
  'text[]': { type: 'array', items: { type: 'string' } },
  jsonb: {}, // any JSON value
};

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
  406: [
    'NotAcceptable',
    'Not Acceptable: an unsupported Accept, or a single object asked for when not exactly one row matches.',
  ],
  409: ['Conflict', 'Conflict: a unique value is taken, or a referenced record does not exist in the organisation.'],
  413: ['PayloadTooLarge', 'Payload Too Large: the body exceeds 1 MiB.'],
  415: ['UnsupportedMediaType', 'Unsupported Media Type: the body is not application/json.'],
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
  order: queryParameter(
    'order',
    'Ordering: comma-separated terms `field[.asc|.desc][.nullsfirst|.nullslast]`, on the fields each resource allows.',
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
  const { type, ...rest } = KIND_SCHEMA[field.kind];
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
const relationEntry = (relation: Relation): Json => ({
  name: relation.name,
  target: relation.target.name,
  cardinality: relation.cardinality,
  foreign_key: relation.foreignKey,
  field: relation.parentField,
  target_field: relation.targetField,
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

const noContent = (description = 'No Content') => ({ description, headers: requestId });

function operation(resource: Resource, action: string, summary: string, rest: Json): Json {
  return { operationId: `${action}_${resource.name}`, tags: [resource.name], summary, ...rest };
}

function readOperations(resource: Resource): Json {
  const parameters = [
    ...filterRefs(resource),
    ref('parameters', selectKey(resource)),
    ...(orderable(resource).length > 0 ? [ref('parameters', orderKey(resource))] : []),
    ...shared('limit', 'offset', 'Range', 'Range-Unit', 'Prefer', 'engage-version'),
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
        }),
        200: rows(resource, 'OK: the affected rows.'),
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
        200: rows(resource, 'OK: the updated rows, with `Prefer: return=representation`.'),
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
        200: rows(resource, 'OK: the deleted rows, with `Prefer: return=representation`.'),
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

export function buildOpenApi(registry: Registry, options: OpenApiOptions = {}): Record<string, unknown> {
  const { resources } = registry;
  return {
    openapi: '3.1.0',
    info: { title: 'API', version: '1.0.0' },
    servers: [{ url: options.serverUrl ?? '/api/v1' }],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Introspection', description: 'The description of this API.' },
      ...resources.map((r) => ({ name: r.name, ...(r.description && { description: r.description }) })),
    ],
    paths: { '/': ROOT_PATH, ...Object.fromEntries(resources.map((r) => [`/${r.name}`, pathItem(r)])) },
    components: {
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer <token>' } },
      schemas: {
        ...Object.fromEntries(resources.flatMap((r) => [[r.name, resourceSchema(r)], ...bodySchemaEntries(r)])),
        Error: ERROR_SCHEMA,
      },
      parameters: { ...SHARED_PARAMETERS, ...Object.fromEntries(resources.flatMap(resourceParameters)) },
      headers: HEADERS,
      responses: Object.fromEntries(
        Object.values(ERROR_RESPONSES).map(([name, description]) => [
          name,
          { description, headers: requestId, content: { [JSON_TYPE]: { schema: ref('schemas', 'Error') } } },
        ]),
      ),
    },
  };
}
