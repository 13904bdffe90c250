/**
 * The OpenAPI 3.1 document of a registry (served at the adapter's mount path), generated from the
 * registry alone: a resource added to the registry appears with its paths, schema and filters.
 * What operations share lives once in `components` (components.ts). A host adds what is its own:
 * its title and description, a header every operation takes, how callers authenticate, better
 * words for its errors, and paths of its own routes (`extend`).
 */

import { DEFAULT_MAX_OPERATIONS } from '../handle/batch.ts';
import { JSON_MEDIA } from '../media-types.ts';
import { bodySchemas } from '../plan/body.ts';
import type { Registry, Resource } from '../registry/index.ts';
import { batchPathItem } from './batch.ts';
import {
  ERROR_RESPONSES,
  ERROR_SCHEMA,
  type ErrorStatus,
  errors,
  HEADERS,
  type Json,
  RATE_LIMIT_HEADER_COMPONENTS,
  RATE_LIMIT_HEADERS,
  ref,
  requestId,
  SHARED_PARAMETERS,
} from './components.ts';
import { functionPathItem } from './functions.ts';
import { bodySchema, bodySchemaEntries, pathItem, ROOT_PATH, resourceParameters, resourceSchema } from './resources.ts';

export interface OpenApiOptions {
  /** The server URL the document names; none by default (the Hono adapter names its mount path). */
  readonly serverUrl?: string;
  readonly info?: { readonly title?: string; readonly version?: string; readonly description?: string };
  /** Header parameters every operation takes after its own (a host's version header), by component name. */
  readonly headers?: Readonly<Record<string, Json>>;
  /** Security schemes by name, every one required by every operation (a bearer token, an API key). */
  readonly securitySchemes?: Readonly<Record<string, Json>>;
  /** The host's words for error responses, by status, where they say more than the engine's. */
  readonly errors?: Readonly<Partial<Record<ErrorStatus, string>>>;
  /** The host's own additions (its other routes' paths, tags and components), given the engine's document. */
  readonly extend?: (document: Json, registry: Registry) => Json;
  /** Whether writes take an Idempotency-Key (the engine's document says what it does; default true). */
  readonly idempotency?: boolean;
  /** Whether requests are rate limited (the engine's document says what it does): every operation may answer 429. */
  readonly rateLimit?: boolean;
  /** Batches (`/$batch`) and their most operations, or false without them (default: on, 100). */
  readonly batch?: { readonly maxOperations: number } | false;
}

/**
 * A path item whose every operation also takes the host's headers and may answer `responses`
 * (429 under a rate limit).
 */
export function withShared(item: Json, headers: readonly Json[], responses: Json = {}): Json {
  if (headers.length === 0 && Object.keys(responses).length === 0) return item;
  return Object.fromEntries(
    Object.entries(item).map(([method, op]) => {
      if (method === 'servers') return [method, op];
      const operation = op as Json;
      const parameters = [...((operation.parameters as Json[] | undefined) ?? []), ...headers];
      return [method, { ...operation, parameters, responses: { ...(operation.responses as Json), ...responses } }];
    }),
  );
}

export function buildOpenApi(registry: Registry, options: OpenApiOptions = {}): Json {
  const { resources } = registry;
  const headers = Object.keys(options.headers ?? {}).map((name) => ref('parameters', name));
  const schemes = Object.keys(options.securitySchemes ?? {});
  // The engine's operations name every error response but 404, there when the host describes it for its routes.
  // 429 only under a rate limit or with streams (a tenant's open streams are bounded); 410 only with streams.
  const limited = options.rateLimit ?? false;
  const streamed = resources.some((r) => r.changes);
  const responses = Object.entries(ERROR_RESPONSES).filter(
    ([status]) =>
      (status !== '404' || options.errors?.[404] !== undefined) &&
      (status !== '429' || limited || streamed) &&
      (status !== '410' || streamed),
  ) as Array<[string, readonly [string, string]]>;
  const shared = limited ? errors(429) : {};
  const batch = options.batch ?? { maxOperations: DEFAULT_MAX_OPERATIONS };
  const described = (status: string, fallback: string) => options.errors?.[Number(status) as ErrorStatus] ?? fallback;
  const document: Json = {
    openapi: '3.1.0',
    info: { title: 'API', version: '1.0.0', ...options.info },
    ...(options.serverUrl !== undefined && { servers: [{ url: options.serverUrl }] }),
    ...(schemes.length > 0 && { security: [Object.fromEntries(schemes.map((name) => [name, []]))] }),
    tags: [
      { name: 'Introspection', description: 'The description of this API.' },
      ...resources.map((r) => ({ name: r.name, ...(r.description && { description: r.description }) })),
      ...(batch ? [{ name: '$batch', description: 'Several operations in one transaction.' }] : []),
    ],
    paths: {
      '/': withShared(ROOT_PATH, headers, shared),
      ...Object.fromEntries(
        resources.map((r) => [`/${r.name}`, withShared(pathItem(r, options.idempotency ?? true), headers, shared)]),
      ),
      ...Object.fromEntries(
        registry.functions.map((fn) => [`/rpc/${fn.name}`, withShared(functionPathItem(fn), headers, shared)]),
      ),
      ...(batch && {
        '/$batch': withShared(batchPathItem(batch.maxOperations, options.idempotency ?? true), headers, shared),
      }),
    },
    components: {
      ...(schemes.length > 0 && { securitySchemes: options.securitySchemes }),
      schemas: {
        ...Object.fromEntries(resources.flatMap((r) => [[r.name, resourceSchema(r)], ...bodySchemaEntries(r)])),
        Error: ERROR_SCHEMA,
      },
      parameters: {
        ...SHARED_PARAMETERS,
        ...options.headers,
        ...Object.fromEntries(resources.flatMap(resourceParameters)),
      },
      headers: { ...HEADERS, ...(limited ? RATE_LIMIT_HEADER_COMPONENTS : {}) },
      responses: Object.fromEntries(
        responses.map(([status, [name, description]]) => [
          name,
          {
            description: described(status, description),
            headers: status === '429' && limited ? { ...requestId, ...RATE_LIMIT_HEADERS } : requestId,
            content: { [JSON_MEDIA]: { schema: ref('schemas', 'Error') } },
          },
        ]),
      ),
    },
  };
  return options.extend ? options.extend(document, registry) : document;
}

/** The error response a host's own operation names, as the engine's operations name theirs. */
export const errorResponse = (status: ErrorStatus): Json => ref('responses', ERROR_RESPONSES[status][0]);

/** The JSON Schema of a resource's create body: what an import item is. */
export const createBodySchema = (resource: Resource): Json => bodySchema(resource, bodySchemas(resource).schema.create);
