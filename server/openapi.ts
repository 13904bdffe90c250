/**
 * The customer-engagement API's OpenAPI document: the engine's description of /api/v1, with the
 * API's title, its engage-version header, its bearer tokens, its words for errors, and the versioned
 * API (/v1: imports, files, import jobs, keyset pages) served beside it by server/versioned.ts.
 */
import {
  CSV_MEDIA,
  createBodySchema,
  errorResponse,
  JSON_MEDIA,
  type OpenApiOptions,
  type Registry,
  type Resource,
  withShared,
} from '@engage/engine';
import { CURRENT_VERSION, SUPPORTED_VERSIONS, VERSION_HEADER } from './version.ts';

type Json = Record<string, unknown>;

const ref = (section: 'schemas' | 'parameters' | 'responses' | 'headers', name: string): Json => ({
  $ref: `#/components/${section}/${name}`,
});
const failures = (...statuses: Array<400 | 401 | 404 | 409 | 413 | 415 | 422>) =>
  Object.fromEntries(statuses.map((status) => [status, errorResponse(status)]));
const requestId = { 'Request-Id': ref('headers', 'Request-Id') };
const consistency = { 'Consistency-Token': ref('headers', 'Consistency-Token') };
const queryParameter = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const VERSIONED = 'Versioned API';
const IMPORTS_TAG = `${VERSIONED}: imports`;
const PAGES_TAG = `${VERSIONED}: pages`;
const WEBHOOKS_TAG = `${VERSIONED}: webhooks`;
const FILE_TYPES = ['text/csv', 'application/json', 'application/x-ndjson'] as const;

const importable = (registry: Registry) => registry.resources.filter((r) => r.imports && r.collection);
const paged = (registry: Registry) => registry.resources.filter((r) => r.keyset && r.collection);

/** `/v1` is served beside `/api/v1`, not under it: the server of its paths. */
const versionedServer = (serverUrl: string) => serverUrl.replace(/\/api\/v1\/?$/, '') || '/';

const jsonBody = (schema: Json, description?: string): Json => ({
  required: true,
  ...(description && { description }),
  content: { [JSON_MEDIA]: { schema } },
});

const jsonResponse = (description: string, schema: Json, headers: Json = {}): Json => ({
  description,
  headers: { ...requestId, ...headers },
  content: { [JSON_MEDIA]: { schema } },
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
    const json = createBodySchema(resource);
    const entity = resource.imports?.customFields?.entity;
    return [
      itemKey(resource),
      {
        ...json,
        description:
          `An item of an import of ${resource.collection}: the fields of ${resource.name}, matched on ` +
          'external_id (an update) or created.' +
          (entity ? ` Other keys are custom-field keys of ${entity}.` : ''),
        additionalProperties: entity !== undefined,
        // For clients that tell the keys an item may have (`engage import --ignore-unknown`).
        'x-resource': resource.name,
        ...(entity && { 'x-custom-field-entity': entity }),
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

const versionParameter = [ref('parameters', VERSION_HEADER)];

/** What every /v1 write takes and may answer besides its own: an Idempotency-Key, its replays and failures. */
const keyed = {
  parameters: [ref('parameters', 'Idempotency-Key'), ...versionParameter],
  headers: { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') },
  failures: failures(409, 422),
};

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
      parameters: keyed.parameters,
      requestBody: jsonBody({
        type: 'object',
        required: ['items'],
        additionalProperties: false,
        properties: { items: { type: 'array', items: ref('schemas', itemKey(resource)) } },
      }),
      responses: {
        200: jsonResponse('OK: a result per item.', ref('schemas', 'BatchResult'), {
          ...consistency,
          ...keyed.headers,
        }),
        ...failures(400, 401, 404, 413, 415),
        ...keyed.failures,
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
      parameters: keyed.parameters,
      requestBody: jsonBody({
        type: 'object',
        required: ['file_id'],
        properties: { file_id: { type: 'string', format: 'uuid', description: 'The id POST /v1/files gave.' } },
      }),
      responses: {
        202: jsonResponse('Accepted: the job, queued.', ref('schemas', 'ImportJob'), keyed.headers),
        ...failures(400, 401, 404, 413, 415),
        ...keyed.failures,
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
          ref('parameters', 'Consistency-Token'),
          ...versionParameter,
        ],
        responses: {
          200: jsonResponse('OK: a page.', ref('schemas', pageKey(resource))),
          ...failures(400, 401),
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
    parameters: keyed.parameters,
    requestBody: {
      required: true,
      content: {
        [CSV_MEDIA]: { schema: { type: 'string', description: 'A header line of the keys, then one line per item.' } },
        [JSON_MEDIA]: {
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
      201: jsonResponse('Created: the stored file.', ref('schemas', 'StoredFile'), keyed.headers),
      ...failures(400, 401, 404, 413, 415),
      ...keyed.failures,
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
      ...failures(401, 404),
    },
  },
};

const REDELIVER_PATH: Json = {
  post: {
    operationId: 'redeliver_webhook',
    tags: [WEBHOOKS_TAG],
    summary: 'Send a webhook delivery again',
    description:
      'Queues the delivery (GET /api/v1/webhook_delivery) to be posted again at once, with a fresh set of ' +
      'retries; its endpoint must be enabled. Each try appears in webhook_attempt.',
    parameters: [
      {
        name: 'id',
        in: 'path',
        required: true,
        description: 'The id of the delivery.',
        schema: { type: 'string', format: 'uuid' },
      },
      ...keyed.parameters,
    ],
    responses: {
      202: jsonResponse(
        'Accepted: the delivery, queued.',
        {
          type: 'object',
          required: ['id', 'endpoint_id', 'type', 'status', 'attempts', 'next_attempt_at'],
          properties: {
            id: { type: 'string', format: 'uuid' },
            endpoint_id: { type: 'string', format: 'uuid' },
            type: { type: 'string', description: 'The event type, e.g. deal.created.' },
            status: { type: 'string', enum: ['pending'] },
            attempts: { type: 'integer', description: 'Tries since it was queued: 0.' },
            next_attempt_at: { type: 'string', format: 'date-time' },
          },
        },
        keyed.headers,
      ),
      ...failures(401, 404),
      ...keyed.failures,
    },
  },
};

/** Whether the registry has webhooks: its redelivery route is then served. */
const hasWebhooks = (registry: Registry) => registry.get('webhook_delivery') !== undefined;

/** The paths of `/v1`, each naming the server it is served from. */
function versionedPaths(registry: Registry, serverUrl: string): Array<[string, Json]> {
  const servers = [{ url: versionedServer(serverUrl), description: 'The versioned API, beside /api/v1.' }];
  const imports = importable(registry);
  const paths: Array<[string, Json]> = [
    ...(imports.length > 0 ? [['/v1/files', FILE_PATH] as [string, Json]] : []),
    ...imports.flatMap(importPaths),
    ...(imports.length > 0 ? [['/v1/imports/{id}', JOB_PATH] as [string, Json]] : []),
    ...paged(registry).map(pagePath),
    ...(hasWebhooks(registry) ? [['/v1/webhook_deliveries/{id}/redeliver', REDELIVER_PATH] as [string, Json]] : []),
  ];
  return paths.map(([path, item]) => [path, { servers, ...item }]);
}

const INFO_DESCRIPTION =
  'The customer-engagement API: its resources under `/api/v1` in the PostgREST query language, and the ' +
  'versioned API under `/v1` (batch and file imports, import jobs, keyset pages, webhook redelivery). ' +
  'Every call takes `Authorization: Bearer <token>`; errors share one body (Error).';

/** The engine's error responses in the API's words (docs/contract.md section 5). */
const ERRORS = {
  400:
    'Bad Request: a malformed query, an unknown field, an unknown or ambiguous relation, an embed parameter for ' +
    'something not embedded, an aggregate that does not fit its field, an invalid body, a PATCH or DELETE ' +
    'without a filter, or an unsupported engage-version.',
  401: 'Unauthorized: the bearer token is missing, unknown, expired or revoked.',
  403: 'Forbidden: the body acts for another organisation.',
  404: 'Not Found: nothing of that name or id in your organisation (or imports are not served here).',
  409: 'Conflict: a unique value is taken, or a referenced record does not exist in the organisation.',
  413:
    'Payload Too Large: the body exceeds its limit: 1 MiB, except 5 MiB on the batch imports of /v1 and ' +
    "the server's FILE_UPLOAD_LIMIT on /v1/files.",
  415:
    'Unsupported Media Type: the body is not application/json (an import file: not text/csv, application/json ' +
    'or application/x-ndjson).',
} as const;

const VERSION_PARAMETER: Json = {
  name: VERSION_HEADER,
  in: 'header',
  required: false,
  description:
    `API version. Absent means the current one (${CURRENT_VERSION}); any other value is 400 ` +
    'INVALID_VERSION_HEADER. Responses echo the version used.',
  schema: { type: 'string', enum: [...SUPPORTED_VERSIONS] },
};

const BEARER: Json = {
  type: 'http',
  scheme: 'bearer',
  description: 'An API token (`npm run token -- create`), sent as `Authorization: Bearer <token>`.',
};

/** The /v1 paths, tags and components, added to the engine's document. */
function withVersioned(document: Json, registry: Registry, serverUrl: string): Json {
  const components = document.components as Record<string, Json>;
  // Under a rate limit (the engine's document has its headers), /v1 counts against it too.
  const limited = 'RateLimit' in components.headers! ? { 429: errorResponse(429) } : {};
  const versioned = versionedPaths(registry, serverUrl).map(([path, item]): [string, Json] => [
    path,
    withShared(item, [], limited),
  ]);
  const imports = importable(registry).length > 0;
  const pages = paged(registry).length > 0;
  // Components only the versioned API uses are there when it has paths using them.
  const parameters = Object.entries(VERSIONED_PARAMETERS).filter(([name]) =>
    name.startsWith('page.') ? pages : imports,
  );
  return {
    ...document,
    tags: [
      ...(document.tags as Json[]),
      ...(imports
        ? [{ name: IMPORTS_TAG, description: 'Batch imports, import files and the jobs importing them (/v1).' }]
        : []),
      ...(pages ? [{ name: PAGES_TAG, description: 'Every row of a collection, in keyset pages (/v1).' }] : []),
      ...(hasWebhooks(registry)
        ? [{ name: WEBHOOKS_TAG, description: 'Sending webhook deliveries again (/v1).' }]
        : []),
    ],
    paths: { ...(document.paths as Json), ...Object.fromEntries(versioned) },
    components: {
      ...components,
      schemas: {
        ...components.schemas,
        ...Object.fromEntries(versioned.length > 0 ? versionedSchemas(registry, imports) : []),
      },
      parameters: { ...components.parameters, ...Object.fromEntries(parameters) },
      responses: Object.fromEntries(
        Object.entries(components.responses!).filter(
          ([name]) => name !== 'NotFound' || imports || hasWebhooks(registry),
        ),
      ),
    },
  };
}

/** The engine's options for the API's document, served from `serverUrl` (by default /api/v1). */
export const openapiOptions = (serverUrl = '/api/v1'): OpenApiOptions => ({
  serverUrl,
  info: { title: 'API', version: '1.0.0', description: INFO_DESCRIPTION },
  headers: { [VERSION_HEADER]: VERSION_PARAMETER },
  securitySchemes: { bearerAuth: BEARER },
  errors: ERRORS,
  extend: (document, registry) => withVersioned(document, registry, serverUrl),
});

/**
 * The document served from another URL: its server and the server of its `/v1` paths both moved,
 * as the docs page does to call the API where the page was loaded from.
 * @example
 * const document = withServerUrl(engine.openapi(), '/api/v1'); // /v1 paths then call '/'
 */
export function withServerUrl(
  document: Record<string, unknown>,
  serverUrl: string,
  options: { readonly description?: string } = {},
): Record<string, unknown> {
  const versioned = versionedServer(serverUrl);
  const paths = Object.entries((document.paths ?? {}) as Record<string, Json>).map(([path, item]) => {
    const servers = item.servers as Json[] | undefined;
    return [path, servers ? { ...item, servers: servers.map((s) => ({ ...s, url: versioned })) } : item];
  });
  const description = options.description === undefined ? {} : { description: options.description };
  return { ...document, servers: [{ url: serverUrl, ...description }], paths: Object.fromEntries(paths) };
}
