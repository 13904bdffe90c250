/**
 * The engine: HTTP-agnostic. A request flows one way through its stages:
 *   parse (raw request -> ApiRequest) -> plan (checked against the registry -> ReadPlan or
 *   WritePlan) -> compile (one parameterized statement) -> execute (the database port) -> respond.
 * Hosts give it raw requests and a scope, and get back status, headers and body text. The handlers
 * (handle/) share one context: the registry, the database and the steps around a statement.
 */
import type { PgTable } from 'drizzle-orm/pg-core';
import { INSTALL_LOCK, installStatements } from './compile/install.ts';
import type { Scope } from './compile/scope.ts';
import type { Database, Queryable } from './db/port.ts';
import type { ApiError } from './errors.ts';
import { BATCH_PATH, type BatchOptions, batcher, type Written } from './handle/batch.ts';
import { call } from './handle/call.ts';
import { Context, type EngineObserver } from './handle/context.ts';
import { type Outbox, outbox } from './handle/events.ts';
import { explain } from './handle/explain.ts';
import { type Idempotency, type IdempotencyOptions, idempotency } from './handle/idempotency.ts';
import { type Importer, importers } from './handle/import.ts';
import { type PageRequest, page } from './handle/page.ts';
import { type RateLimit, type RateLimitState, rateLimiter } from './handle/rate-limit.ts';
import { read } from './handle/read.ts';
import { type EngineStream, subscribe } from './handle/streams.ts';
import { tokens } from './handle/tokens.ts';
import { write } from './handle/write.ts';
import { buildOpenApi, type OpenApiOptions } from './openapi/index.ts';
import { FORM_MEDIA, queryWithBody } from './parse/body.ts';
import { parseExplain } from './parse/headers.ts';
import { parseIdempotencyKey } from './parse/idempotency.ts';
import type { RawRequest } from './parse/index.ts';
import type { Registry } from './registry/index.ts';
import { readTable } from './registry/table.ts';
import type { EngineResponse } from './respond.ts';
import { StreamHub, type StreamOptions } from './streams/hub.ts';
import { StageClock } from './timings.ts';
import type { Tokens } from './tokens.ts';

export interface EngineOptions {
  readonly registry: Registry;
  readonly db: Database;
  /** The most rows one page may hold (MAX_ROWS in docs/configuration.md, default 1000). */
  readonly maxRows?: number;
  readonly openapi?: OpenApiOptions;
  /** Compiled reads kept for repeated requests, and as many PATCHes and POSTs of one object (default 1000; 0: none). */
  readonly readCacheSize?: number;
  /** Serve statement plans (`Accept: application/vnd.pgrst.plan+json`, PostgREST's db-plan-enabled); off: 406. */
  readonly planEnabled?: boolean;
  /**
   * Where the JSON of a page of plain rows is built (docs/architecture.md, "Where JSON is built"):
   * by PostgreSQL (default), or by Node from the rows, which costs the database less and Node more.
   */
  readonly jsonBuiltBy?: 'database' | 'node';
  /** Told of each statement and read-cache lookup, for a host's metrics. */
  readonly observer?: EngineObserver;
  /**
   * Built-in bearer tokens for `{ tokenHash }` scopes, kept in a table `install()` creates
   * (`engage_token` unless named); off by default. They need a tenanted registry. With `tenants`,
   * the table of tenants (keyed by one column), deleting a tenant deletes its tokens.
   */
  readonly tokens?: boolean | { readonly table?: string; readonly tenants?: PgTable };
  /**
   * A rate limit per caller (a built-in token, else a tenant), counted in a table the first counted
   * request creates, shared by every process: `engine.limit` counts a request, and the Hono adapter's
   * `rateLimit` middleware answers 429 past it. Off by default.
   */
  readonly rateLimit?: RateLimit;
  /**
   * Writes sent with an `Idempotency-Key` run once per key and tenant, their responses kept (24 hours
   * unless told) in a table `install()` creates; on by default, `false` turns it off.
   */
  readonly idempotency?: IdempotencyOptions | false;
  /** Batches (`POST <mount>/$batch`): their limits; on by default, `false` turns them off (404). */
  readonly batch?: BatchOptions | false;
  /** Streams of changes of the resources with `changes` (`subscribe`): their limits. */
  readonly streams?: StreamOptions;
}

/** A write of a host's own, run once per key by `Engine.once`. */
export interface HostWrite {
  /** The request's `Idempotency-Key` header, if it has one. */
  readonly key: string | null | undefined;
  readonly method: string;
  /** What the request writes to: its path and query string. */
  readonly target: string;
  /** The body, or what stands for it (a file's SHA-256). */
  readonly body: string | null;
}

export interface HandleOptions {
  /** Measure the stages (parse, plan, compile, db, respond) into `EngineResponse.timings`. */
  readonly timings?: boolean;
}

export interface Engine {
  readonly registry: Registry;
  /**
   * Creates what the engine's statements need in the database, idempotently: call it once at
   * start-up (every process may; installs take turns). See compile/install.ts for what it creates.
   */
  install(): Promise<void>;
  /**
   * Serves one request on a resource (QUERY as GET, its body a form-encoded query string), for a
   * scope: `{ tenant }` when the host knows the tenant,
   * `{ tokenHash }` with built-in tokens, nothing in a single-tenant registry. Throws ApiError for
   * every failure a caller can cause.
   */
  handle(request: RawRequest, scope?: Scope, options?: HandleOptions): Promise<EngineResponse>;
  /**
   * Calls the registry's function `name` (`/rpc/<name>`): GET and HEAD (a function that changes
   * nothing) with its arguments in the query string, POST with them in a JSON object body; the
   * rest of the query string filters the rows it returns. Throws ApiError as `handle` does.
   */
  call(name: string, request: RawRequest, scope?: Scope, options?: HandleOptions): Promise<EngineResponse>;
  /**
   * A keyset page of a collection (`contacts`): `{"data": [...], "next_cursor": ...}` as JSON text.
   * Throws ApiError as `handle` does; 404 for a collection without keyset pages.
   */
  page(collection: string, request: PageRequest, scope?: Scope): Promise<string>;
  /**
   * The tenant a scope stands for: a host's own, or a built-in token's (null when the token is
   * unknown, expired or revoked); the empty string in a single-tenant registry.
   */
  authorize(scope?: Scope): Promise<string | null>;
  /**
   * The error a caller whose request failed with `error` should see: a caller learns that their
   * token is bad before anything else about the request, so a 4xx becomes 401 when the scope's
   * token is not valid. `handle` and `page` apply this themselves; a host applies it to failures
   * of its own (a body over its limit, an unknown path) before rendering them.
   */
  tokenFirst(scope: Scope | undefined, error: unknown): Promise<ApiError>;
  /** Any thrown value as the ApiError a caller sees (a database failure by its SQLSTATE, else a 500). */
  asApiError(error: unknown): ApiError;
  /** The OpenAPI 3.1 document, built once from the registry. */
  openapi(): Record<string, unknown>;
  /**
   * With read replicas, the Consistency-Token of writes the host made itself (an import): a read
   * sending it back sees them. Undefined without replicas.
   */
  position(): Promise<string | undefined>;
  /** Built-in tokens: create, list, revoke; null when the engine has none. */
  readonly tokens: Tokens | null;
  /** Batch imports of a collection whose resource offers them (`imports` in its definition). */
  importer(collection: string): Importer | undefined;
  /** Counts a request of a caller against the rate limit; null when the engine has none. */
  readonly limit: ((scope?: Scope) => Promise<RateLimitState>) | null;
  /**
   * Runs a host's own write once per `Idempotency-Key`, as the engine runs its own: with a key,
   * `write` gets the transaction that holds the key and its response is kept in it (a retry gets it
   * back with `Idempotent-Replayed: true`); without one, or with idempotency off, `write` gets null
   * and runs as it would. Throws ApiError as `handle` does.
   */
  once(
    scope: Scope | undefined,
    request: HostWrite,
    write: (tx: Queryable | null) => Promise<EngineResponse>,
  ): Promise<EngineResponse>;
  /** The outbox of the events of writes (registry/events.ts); null when the registry declares none. */
  readonly events: Outbox | null;
  /**
   * A GET of a resource with `changes` as a stream of its changes (`Accept: text/event-stream`),
   * from the position of its `Last-Event-ID` header or from now: the response's body is
   * Server-Sent Events, written until the client cancels it or `close()`. Throws ApiError as
   * `handle` does (410 CHANGE_POSITION_EXPIRED for a position older than retention keeps).
   */
  subscribe(request: RawRequest, scope?: Scope): Promise<EngineStream>;
  /** Open streams and events sent, in this process; null when no resource has changes. */
  streams(): { readonly open: number; readonly sent: number } | null;
  /** Ends every stream (their clients resume elsewhere) and stops the engine's timers; the database stays open. */
  close(): void;
}

/** A request of a resource (QUERY as GET), on `ctx`: explain, write, OPTIONS or read. */
async function serve(
  ctx: Context,
  sent: RawRequest,
  scope: Scope | undefined,
  keys: Idempotency | null,
  clock: StageClock | undefined,
  seen?: (written: Written) => void,
): Promise<EngineResponse> {
  // QUERY is a GET whose query string (or the rest of it) is the body: filters too long for a URL.
  const raw: RawRequest =
    sent.method === 'QUERY'
      ? { ...sent, method: 'GET', query: queryWithBody(sent.query, sent.body, sent.header('content-type')), body: null }
      : sent;
  if (raw.method !== 'OPTIONS') {
    const wanted = parseExplain(raw.header('accept'), raw.header('prefer'));
    if (wanted) return explain(ctx, raw, wanted, scope, clock);
  }
  if (raw.method === 'POST' || raw.method === 'PUT' || raw.method === 'PATCH' || raw.method === 'DELETE') {
    return write(ctx, { ...raw, method: raw.method }, scope, keys, clock, seen);
  }
  if (raw.method === 'OPTIONS') {
    const { resource } = await ctx.untilAuthorized(scope, async () => ({
      resource: ctx.resourceFor(raw.resource, raw.method),
      authorized: (await ctx.authorize(scope)) === null ? 0 : 1,
    }));
    const headers: Record<string, string> = { Allow: ctx.allow(resource) };
    if (resource.verbs.has('GET')) headers['Accept-Query'] = FORM_MEDIA;
    return { status: 200, headers, body: null };
  }
  return read(ctx, raw, scope, clock);
}

/**
 * An engine over a registry and a database.
 * @example
 * const engine = createEngine({ registry: createRegistry(resources, { tenant: 'workspace_id' }), db });
 * await engine.install();
 * const { status, headers, body } = await engine.handle(
 *   { method: 'GET', resource: 'project', query: 'limit=10', header: () => null },
 *   { tenant: workspaceId },
 * );
 */
export function createEngine(options: EngineOptions): Engine {
  const { registry, db } = options;
  const tokenOptions = options.tokens === true ? {} : options.tokens || null;
  const tokenTable = tokenOptions === null ? null : (tokenOptions.table ?? 'engage_token');
  if (tokenTable !== null && registry.tenant === null) {
    throw new Error('engine: built-in tokens act for a tenant, and this registry has none: declare its tenant');
  }
  const { observer } = options;
  const changes = registry.resources.filter((r) => r.changes);
  const hub: StreamHub | null =
    changes.length === 0
      ? null
      : new StreamHub(
          {
            db,
            tokens: tokenTable,
            observe: <T>(run: () => Promise<T>): Promise<T> => ctx.observe('changes', run),
            onEvent: observer?.onStreamEvent && ((lag) => observer.onStreamEvent!(lag)),
            onError: (task, error) => observer?.onBackgroundError?.(task, error),
          },
          options.streams ?? {},
        );
  const ctx: Context = new Context({
    registry,
    db,
    maxRows: options.maxRows ?? 1000,
    readCacheSize: options.readCacheSize ?? 1000,
    planEnabled: options.planEnabled ?? false,
    nodeJson: options.jsonBuiltBy === 'node',
    // A write of this process has its streams read the log at once rather than at their next poll.
    observer: hub
      ? {
          ...observer,
          onStatement(kind, ms, failed) {
            observer?.onStatement?.(kind, ms, failed);
            if (!failed && (kind === 'write' || kind === 'import')) hub.poke();
          },
        }
      : observer,
    tokens: tokenTable,
  });
  let openapi: Record<string, unknown> | undefined;
  const imports = importers(ctx);
  const keys = options.idempotency === false ? null : idempotency(ctx, options.idempotency ?? {});
  // A batch's operations are served as requests alone are, on its transaction; the batch as a whole has the key.
  const batch =
    options.batch === false
      ? null
      : batcher(
          ctx,
          (on, raw, scope, seen) =>
            raw.resource.startsWith('rpc/')
              ? call(on, raw.resource.slice(4), raw, scope)
              : serve(on, raw, scope, null, undefined, seen),
          keys,
          options.batch ?? {},
        );

  return {
    registry,

    async install() {
      const tenants = tokenOptions?.tenants && readTable(tokenOptions.tenants);
      const statements = installStatements({
        tenancy: registry.tenant,
        customFields: registry.resources.some((r) => r.customFields),
        idempotency: keys !== null,
        events: registry.events !== null,
        changes,
        tokens:
          tokenTable === null
            ? null
            : {
                table: tokenTable,
                tenants: tenants ? { table: tenants.name, key: tenants.primaryKey[0]! } : null,
              },
      });
      await db.transaction(async (tx) => {
        await tx.query(INSTALL_LOCK);
        for (const statement of statements) await tx.query(statement);
      });
    },

    handle(sent, given, handleOptions) {
      const scope = ctx.resolve(given);
      if (sent.resource === BATCH_PATH && batch) return batch.serve(sent, scope);
      return serve(ctx, sent, scope, keys, handleOptions?.timings ? new StageClock() : undefined);
    },

    call: (name, request, scope, handleOptions) =>
      call(ctx, name, request, ctx.resolve(scope), handleOptions?.timings ? new StageClock() : undefined),

    page: (collection, request, scope) => page(ctx, collection, request, ctx.resolve(scope)),
    authorize: (scope) => ctx.authorize(ctx.resolve(scope)),
    tokenFirst: (scope, error) => ctx.tokenFirst(ctx.resolve(scope), error),
    asApiError: (error) => ctx.fail(error),
    position: () => ctx.position(),

    openapi() {
      openapi ??= buildOpenApi(registry, {
        idempotency: keys !== null,
        rateLimit: options.rateLimit !== undefined,
        batch: batch !== null && { maxOperations: batch.maxOperations },
        ...options.openapi,
      });
      return openapi;
    },

    tokens: tokenTable === null ? null : tokens(ctx, tokenTable, registry.tenant!),
    importer: (collection) => imports.get(collection),
    limit: options.rateLimit ? rateLimiter(ctx, options.rateLimit) : null,
    events: registry.events && outbox(registry.events.subscribers, registry.tenant),

    subscribe: (request, scope) => subscribe(ctx, hub, request, ctx.resolve(scope)),
    streams: () => hub?.stats() ?? null,
    close: () => hub?.close(),

    async once(given, request, run) {
      const scope = ctx.resolve(given);
      const { response } = await ctx.untilAuthorized(scope, async () => {
        const given = keys && parseIdempotencyKey(request.key);
        if (!given) return { authorized: 1, response: await run(null) };
        return keys!.once(scope, keys!.key(given, request.method, request.target, request.body), run);
      });
      return response!;
    },
  };
}
