/**
 * `@engage/engine`: a PostgREST-style query engine over a declared registry of drizzle tables.
 * This entry point is HTTP-agnostic and names no database driver; the adapters are entry points of
 * their own: `@engage/engine/postgres`, `@engage/engine/pglite` and `@engage/engine/hono`.
 * @example
 * import { createEngine, createRegistry, defineResource } from '@engage/engine';
 * const registry = createRegistry([defineResource({ name: 'project', table: project, verbs: ['GET'] })], {
 *   tenant: 'workspace_id',
 * });
 */
export type { Scope } from './compile/scope.ts';
export { CUSTOM_FIELD_TYPE_NAMES, type CustomFieldType } from './custom-fields.ts';
export type { Database, PoolStats, Queryable, ReplicaState, Row, SqlParam } from './db/port.ts';
export { createEngine, type Engine, type EngineOptions, type HandleOptions, type HostWrite } from './engine.ts';
export {
  ApiError,
  type ApiErrorOptions,
  bearerRefused,
  type ErrorCode,
  type HostErrorCode,
  type HostErrorOptions,
  unauthorized,
} from './errors.ts';
export { FIELD_KINDS, type FieldKind } from './field-kinds.ts';
export { UUID } from './formats.ts';
export type { BatchOptions } from './handle/batch.ts';
export type { EngineObserver, StatementKind } from './handle/context.ts';
export type { Outbox, OutboxEvent } from './handle/events.ts';
export type { IdempotencyOptions } from './handle/idempotency.ts';
export type { Importer } from './handle/import.ts';
export type { PageRequest } from './handle/page.ts';
export type { RateLimit, RateLimitState } from './handle/rate-limit.ts';
export type { EngineStream } from './handle/streams.ts';
export { CSV_MEDIA, contentType, EVENT_STREAM_MEDIA, JSON_MEDIA, OBJECT_MEDIA } from './media-types.ts';
export {
  buildOpenApi,
  createBodySchema,
  errorResponse,
  type OpenApiOptions,
  withShared,
} from './openapi/index.ts';
export { parseJson, parseJsonBody } from './parse/body.ts';
export { CONSISTENCY_HEADER } from './parse/headers.ts';
export { IDEMPOTENCY_HEADER } from './parse/idempotency.ts';
export type { RawRequest } from './parse/index.ts';
export type { BatchResult, ItemError, ItemResult } from './plan/import.ts';
export type { EventsDefinition } from './registry/events.ts';
export { type FromSchemaOptions, resourcesFrom } from './registry/from-schema.ts';
export {
  type ArgumentDefinition,
  defineFunction,
  type FunctionDefinition,
  type FunctionResult,
  type RegistryFunction,
} from './registry/functions.ts';
export {
  type CustomFieldsDefinition,
  createRegistry,
  defineResource,
  type Field,
  type FieldRule,
  type Registry,
  type RegistryOptions,
  type Relation,
  type Resource,
  type ResourceDefinition,
  type Tenancy,
  VERBS,
  type Verb,
} from './registry/index.ts';
export type { EngineResponse } from './respond.ts';
export type { StreamOptions } from './streams/hub.ts';
export { CHANGE_POSITION_HEADER } from './streams/position.ts';
export { STAGES, type Stage, type Timings } from './timings.ts';
export { type CreateTokenOptions, type TokenInfo, type Tokens, tokenScope } from './tokens.ts';
export { typescriptTypes } from './typescript-types.ts';
