/**
 * The engine: HTTP-agnostic. A request flows one way through its stages:
 *   parse (raw request -> ApiRequest) -> plan (checked against the registry -> ReadPlan or
 *   WritePlan) -> compile (one parameterized statement) -> execute (the database port) -> respond.
 * Hosts give it raw requests and a tenant scope and get back status, headers and body text.
 */
import { compileKeysetPage } from './compile/keyset.ts';
import { compileCountEstimate, compileRead } from './compile/read.ts';
import { type Scope, scopeCte, scopeValue } from './compile/scope.ts';
import { Params } from './compile/sql.ts';
import { compileWrite } from './compile/write.ts';
import { mapDatabaseError } from './db/errors.ts';
import type { Database, SqlParam } from './db/port.ts';
import { ApiError, unauthorized } from './errors.ts';
import { cursorError, decodeCursor, encodeCursor, pageLimit } from './keyset.ts';
import { buildOpenApi, type OpenApiOptions } from './openapi.ts';
import { parseJsonBody } from './parse/body.ts';
import { CONSISTENCY_HEADER, type ExplainRequest, parseConsistency, parseExplain } from './parse/headers.ts';
import { parseRequest, type RawRequest } from './parse/index.ts';
import { bodySchemas as buildBodySchemas } from './plan/body.ts';
import { planRead } from './plan/read.ts';
import type { ReadPlan } from './plan/types.ts';
import { planDelete, planInsert, planUpdate } from './plan/write.ts';
import { ReadCache } from './read-cache.ts';
import { type Registry, type Resource, VERBS } from './registry.ts';
import { type EngineResponse, respondRead, respondWrite } from './respond.ts';
import { StageClock } from './timings.ts';

export interface EngineOptions {
  readonly registry: Registry;
  readonly db: Database;
  /** The most rows one page may hold (MAX_ROWS in the README, default 1000). */
  readonly maxRows?: number;
  readonly openapi?: OpenApiOptions;
  /** Compiled reads kept for repeated requests (default 1000; 0 compiles every read). */
  readonly readCacheSize?: number;
  /** Serve statement plans (`Accept: application/vnd.pgrst.plan+json`, PostgREST's db-plan-enabled); off: 406. */
  readonly planEnabled?: boolean;
  /** Told of each statement and read-cache lookup, for a host's metrics. */
  readonly observer?: EngineObserver;
}

/** What a statement was run for. */
export type StatementKind = 'authorize' | 'read' | 'write' | 'estimate' | 'keyset' | 'explain';

/** Events the engine reports to its host (metrics); every method optional, none may throw. */
export interface EngineObserver {
  /** A statement finished (or failed) after `ms` milliseconds, waiting for a connection included. */
  onStatement?(kind: StatementKind, ms: number, failed: boolean): void;
  /** A read found its compiled statement in the read cache (true) or compiled it (false). */
  onCache?(hit: boolean): void;
}

export interface HandleOptions {
  /** Measure the stages (parse, plan, compile, db, respond) into `EngineResponse.timings`. */
  readonly timings?: boolean;
}

/** What a keyset page asks for: `limit` (default 50, at most 1000) and the `cursor` of the previous page. */
export interface PageRequest {
  readonly limit?: string | undefined;
  readonly cursor?: string | undefined;
  /** The Consistency-Token of a write the page must show. */
  readonly consistency?: string | undefined;
}

export interface Engine {
  readonly registry: Registry;
  /** Serves one request on a resource. Throws ApiError for every failure a caller can cause. */
  handle(request: RawRequest, scope: Scope, options?: HandleOptions): Promise<EngineResponse>;
  /**
   * A keyset page of a versioned-API collection (`contacts`): `{"data": [...], "next_cursor": ...}`
   * as JSON text. Throws ApiError as `handle` does; 404 for a collection without keyset pages.
   */
  page(collection: string, request: PageRequest, scope: Scope): Promise<string>;
  /** The organisation a scope stands for, or null when its token is unknown, expired or revoked. */
  authorize(scope: Scope): Promise<string | null>;
  /**
   * The error a caller whose request failed with `error` should see: a caller learns that their
   * token is bad before anything else about the request, so a 4xx becomes 401 when the scope's
   * token is not valid. `handle` and `page` apply this themselves; a host applies it to failures
   * of its own (a body over its limit, an unknown path) before rendering them.
   */
  tokenFirst(scope: Scope, error: unknown): Promise<ApiError>;
  /** The OpenAPI 3.1 document, built once from the registry. */
  openapi(): Record<string, unknown>;
  /**
   * With read replicas, the Consistency-Token of writes the host made itself (an import): a read
   * sending it back sees them. Undefined without replicas.
   */
  position(): Promise<string | undefined>;
}

type WriteRequest = RawRequest & { readonly method: 'POST' | 'PATCH' | 'DELETE' };

interface WriteRow {
  authorized: number;
  allowed: number;
  affected: number;
  inserted: number;
  location_id: string | null;
  body: string | null;
}

interface ReadRow {
  authorized: number;
  /** Set for planned and estimated counts: the organisation an estimate is asked for. */
  organisation_id: string | null;
  page_total: number;
  total: string | null;
  body: string | null;
}

interface KeysetRow {
  authorized: number;
  n: number;
  data: string;
  last_key: string | null;
}

/** The methods a resource answers, for 405s and OPTIONS: HEAD comes with GET. */
function allowedMethods(resource: Resource): string[] {
  const allowed = VERBS.filter((verb) => resource.verbs.has(verb)).flatMap((verb) =>
    verb === 'GET' ? ['GET', 'HEAD'] : [verb],
  );
  return [...allowed, 'OPTIONS'];
}

/**
 * An engine over a registry and a database.
 * @example
 * const engine = createEngine({ registry: createRegistry(resources), db: connectPostgres(url) });
 * const { status, headers, body } = await engine.handle(
 *   { method: 'GET', resource: 'contact', query: 'limit=10', header: () => null },
 *   { organisationId },
 * );
 */
export function createEngine(options: EngineOptions): Engine {
  const { registry, db } = options;
  const maxRows = options.maxRows ?? 1000;
  const bodySchemas = new Map(registry.resources.map((r) => [r.name, buildBodySchemas(r)]));
  const allowed = new Map(
    registry.resources.map((r) => {
      const list = allowedMethods(r);
      return [r.name, { list, header: list.join(', ') }];
    }),
  );
  const reads = new ReadCache(options.readCacheSize ?? 1000);
  const observer = options.observer;
  let openapi: Record<string, unknown> | undefined;

  /** Runs a statement for `scope` on `on`, in the scope's lane when the pool is saturated. */
  async function execute<T>(
    text: string,
    params: readonly SqlParam[],
    scope: Scope,
    kind: StatementKind = 'read',
    on: Database = db,
  ): Promise<T[]> {
    const started = observer?.onStatement ? performance.now() : 0;
    let failed = true;
    try {
      const rows = (await on.query(text, params, scopeValue(scope))) as T[];
      failed = false;
      return rows;
    } catch (error) {
      throw mapDatabaseError(error);
    } finally {
      observer?.onStatement?.(kind, performance.now() - started, failed);
    }
  }

  async function authorize(scope: Scope): Promise<string | null> {
    const params = new Params();
    const rows = await execute<{ organisation_id: string }>(
      `${scopeCte(scope, params).cte} SELECT organisation_id FROM scope`,
      params.values,
      scope,
      'authorize',
    );
    return rows[0]?.organisation_id ?? null;
  }

  async function tokenFirst(scope: Scope, error: unknown): Promise<ApiError> {
    const failure = mapDatabaseError(error);
    if (failure.status >= 500 || failure.code === 'UNAUTHORIZED') return failure;
    // When the check itself fails, the original error stands.
    const organisation = await authorize(scope).catch(() => undefined);
    return organisation === null ? unauthorized() : failure;
  }

  /**
   * Runs the stages up to and including the statement, which checks the token. A failure before
   * the statement found the token valid is reported as tokenFirst says; what follows it is not.
   */
  async function untilAuthorized<T extends { readonly authorized: number }>(scope: Scope, run: () => Promise<T>) {
    let result: T;
    try {
      result = await run();
    } catch (error) {
      throw await tokenFirst(scope, error);
    }
    if (result.authorized !== 1) throw unauthorized();
    return result;
  }

  function resourceFor(name: string, method: string): Resource {
    const resource = registry.get(name);
    if (!resource) {
      throw new ApiError('NOT_FOUND', `there is no resource "${name}"`, {
        hint: `Resources: ${registry.resources.map((r) => r.name).join(', ')}.`,
      });
    }
    const methods = allowed.get(resource.name)!;
    if (!methods.list.includes(method)) {
      throw new ApiError(
        'METHOD_NOT_ALLOWED',
        `${resource.name} does not offer ${method}; it offers ${methods.header}`,
        {
          headers: { Allow: methods.header },
        },
      );
    }
    return resource;
  }

  /** Where a read runs: a replica that has the write its Consistency-Token names, or the primary. */
  const readOn = (consistency: string | null | undefined): Database => {
    const after = parseConsistency(consistency);
    return db.reader?.(after) ?? db;
  };

  /** The primary's position now, when reads go to replicas. */
  const position = async () => db.position?.();

  /** The response of a committed write with the position its reads can ask for, when reads go to replicas. */
  async function withPosition(response: EngineResponse): Promise<EngineResponse> {
    const at = await position();
    return at ? { ...response, headers: { ...response.headers, [CONSISTENCY_HEADER]: at } } : response;
  }

  /** Runs a statement in a transaction that is always rolled back, and returns its rows. */
  async function dryRun<T>(
    text: string,
    params: readonly SqlParam[],
    scope: Scope,
    kind: StatementKind = 'write',
  ): Promise<T[]> {
    let rows: T[] = [];
    const undo = new Error('dry run');
    const started = observer?.onStatement ? performance.now() : 0;
    let failed = false;
    try {
      await db.transaction(async (tx) => {
        rows = (await tx.query(text, params)) as T[];
        throw undo;
      }, scopeValue(scope));
    } catch (error) {
      failed = error !== undo;
      if (failed) throw mapDatabaseError(error);
    } finally {
      observer?.onStatement?.(kind, performance.now() - started, failed);
    }
    return rows;
  }

  /** A write's plan and statement: parse, plan and compile. */
  function compileWriteRequest(raw: WriteRequest, scope: Scope, clock?: StageClock) {
    const resource = resourceFor(raw.resource, raw.method);
    const request = parseRequest(raw);
    const schemas = bodySchemas.get(resource.name)!;
    // DELETE takes no body; POST and PATCH take JSON.
    const body = raw.method === 'DELETE' ? null : parseJsonBody(raw.body ?? null, raw.header('content-type'));
    clock?.lap('parse');
    const plan =
      raw.method === 'DELETE'
        ? planDelete(resource, request, maxRows)
        : raw.method === 'POST'
          ? planInsert(resource, schemas, request, body, maxRows)
          : planUpdate(resource, schemas, request, body, maxRows);
    clock?.lap('plan');
    const statement = compileWrite(plan, scope);
    clock?.lap('compile');
    return { plan, statement };
  }

  async function write(raw: WriteRequest, scope: Scope, clock?: StageClock) {
    const { plan, row } = await untilAuthorized(scope, async () => {
      const { plan, statement } = compileWriteRequest(raw, scope, clock);
      // One statement is atomic by itself; `Prefer: tx=rollback` needs a transaction to undo it.
      const [row] = plan.rollback
        ? await dryRun<WriteRow>(statement.text, statement.params, scope)
        : await execute<WriteRow>(statement.text, statement.params, scope, 'write');
      clock?.lap('db');
      return { plan, row: row!, authorized: row?.authorized ?? 0 };
    });
    if (row.allowed !== 1) {
      throw new ApiError(
        'FORBIDDEN',
        'the body names another organisation; a token acts for its own organisation only',
        {
          hint: 'Leave organisation_id out of the body: it is taken from the token.',
        },
      );
    }
    const written = respondWrite(plan, {
      affected: row.affected,
      inserted: row.inserted,
      locationId: row.location_id,
      body: row.body,
    });
    const response = plan.rollback ? written : await withPosition(written);
    return clock ? timed(response, clock) : response;
  }

  /** A read's plan and statement: parse, plan and compile (the read cache's miss). */
  function compileReadRequest(raw: RawRequest, scope: Scope, clock?: StageClock) {
    const resource = resourceFor(raw.resource, raw.method);
    const request = parseRequest({ ...raw, method: raw.method as 'GET' | 'HEAD' });
    clock?.lap('parse');
    const plan = planRead(resource, request, maxRows);
    clock?.lap('plan');
    const statement = compileRead(plan, scope);
    clock?.lap('compile');
    return { plan, statement };
  }

  async function read(raw: RawRequest, scope: Scope, clock?: StageClock) {
    let source = db;
    const { plan, row } = await untilAuthorized(scope, async () => {
      source = readOn(raw.header(CONSISTENCY_HEADER));
      let hit = true;
      const { plan, statement } = reads.read(raw, scope, () => {
        hit = false;
        return compileReadRequest(raw, scope, clock);
      });
      observer?.onCache?.(hit);
      // A cached read spends its time finding its statement: parse, as nothing else is left.
      if (hit) clock?.lap('parse');
      const [row] = await execute<ReadRow>(statement.text, statement.params, scope, 'read', source);
      clock?.lap('db');
      return { plan, row: row!, authorized: row?.authorized ?? 0 };
    });
    let total = row.total === null ? null : Number(row.total);
    // Counting stops at MAX_ROWS + 1 for `estimated`; past that, and for `planned`, the
    // planner's estimate serves (a second, cheap statement), so large counts cost little.
    if (plan.count === 'planned' || (plan.count === 'estimated' && total === plan.limitOfCount)) {
      // A page that is not full ends the result, so its total is known without an estimate (an
      // empty page past the start only says the total is at most the offset); an estimate is never
      // fewer than the rows counted or shown to exist.
      const ended = row.page_total < plan.limit && (row.page_total > 0 || plan.offset === 0);
      total = ended
        ? plan.offset + row.page_total
        : Math.max(
            total ?? 0,
            plan.offset + row.page_total,
            await estimateCount(plan, row.organisation_id!, scope, source),
          );
      clock?.lap('db');
    }
    const response = respondRead(plan, { pageTotal: row.page_total, total, body: row.body });
    return clock ? timed(response, clock) : response;
  }

  /**
   * The plan of the statement the request would run (PostgREST's execution plan): compiled as
   * the request itself is, so the caller's scope is inside it. Writes are only planned, unless
   * `options=analyze` asks to run them: then in a transaction that is always rolled back.
   */
  async function explain(raw: RawRequest, wanted: ExplainRequest, scope: Scope, clock?: StageClock) {
    if (!options.planEnabled) {
      throw new ApiError('NOT_ACCEPTABLE', 'statement plans are not served here', {
        hint: 'Start the server with PLAN_ENABLED=1 to serve application/vnd.pgrst.plan+json.',
      });
    }
    const planned: RawRequest = {
      ...raw,
      header: (name) => (name.toLowerCase() === 'accept' ? wanted.for : raw.header(name)),
    };
    const isWrite = raw.method === 'POST' || raw.method === 'PATCH' || raw.method === 'DELETE';
    const analyze = wanted.options.has('analyze');
    const rows = await untilAuthorized(scope, async () => {
      const { statement } = isWrite
        ? compileWriteRequest({ ...planned, method: raw.method as WriteRequest['method'] }, scope, clock)
        : compileReadRequest(planned, scope, clock);
      // The statement checks the token itself, but a plan does not run it: check it first.
      const authorized = (await authorize(scope)) === null ? 0 : 1;
      if (authorized === 0) return { authorized, rows: [] };
      const settings = [`FORMAT ${wanted.format.toUpperCase()}`];
      for (const option of ['analyze', 'verbose', 'settings', 'buffers', 'wal'] as const) {
        // WAL needs ANALYZE; without it PostgreSQL refuses the statement.
        if (wanted.options.has(option) && (option !== 'wal' || analyze)) settings.push(option.toUpperCase());
      }
      const text = `EXPLAIN (${settings.join(', ')}) ${statement.text}`;
      const rows =
        isWrite && analyze
          ? await dryRun<Record<string, unknown>>(text, statement.params, scope, 'explain')
          : await execute<Record<string, unknown>>(text, statement.params, scope, 'explain');
      clock?.lap('db');
      return { authorized, rows };
    });
    const lines = rows.rows.map((row) => row['QUERY PLAN']);
    const body =
      wanted.format === 'json'
        ? typeof lines[0] === 'string'
          ? (lines[0] as string)
          : JSON.stringify(lines[0] ?? [])
        : lines.join('\n');
    const media = `application/vnd.pgrst.plan+${wanted.format}; for="${wanted.for}"; charset=utf-8`;
    const response: EngineResponse = {
      status: 200,
      headers: { 'Content-Type': media, Vary: 'Accept, Prefer, Range' },
      body: raw.method === 'HEAD' ? null : body,
    };
    return clock ? timed(response, clock) : response;
  }

  const timed = (response: EngineResponse, clock: StageClock): EngineResponse => {
    clock.lap('respond');
    return { ...response, timings: clock.timings };
  };

  /** The planner's estimate of the rows a read's filters select in the caller's organisation. */
  async function estimateCount(plan: ReadPlan, organisationId: string, scope: Scope, on: Database): Promise<number> {
    const statement = compileCountEstimate(plan, organisationId);
    const [row] = await execute<{ 'QUERY PLAN': unknown }>(statement.text, statement.params, scope, 'estimate', on);
    const raw = row?.['QUERY PLAN'];
    const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: { 'Plan Rows': number } }>;
    return Math.round(parsed[0]?.Plan['Plan Rows'] ?? 0);
  }

  return {
    registry,

    async handle(raw, scope, handleOptions) {
      const clock = handleOptions?.timings ? new StageClock() : undefined;
      if (raw.method !== 'OPTIONS') {
        const wanted = parseExplain(raw.header('accept'), raw.header('prefer'));
        if (wanted) return explain(raw, wanted, scope, clock);
      }
      if (raw.method === 'POST' || raw.method === 'PATCH' || raw.method === 'DELETE') {
        return write({ ...raw, method: raw.method }, scope, clock);
      }
      if (raw.method === 'OPTIONS') {
        const { resource } = await untilAuthorized(scope, async () => ({
          resource: resourceFor(raw.resource, raw.method),
          authorized: (await authorize(scope)) === null ? 0 : 1,
        }));
        return { status: 200, headers: { Allow: allowed.get(resource.name)!.header }, body: null };
      }
      return read(raw, scope, clock);
    },

    async page(collection, request, scope) {
      const row = await untilAuthorized(scope, async () => {
        const resource = registry.collection(collection);
        if (!resource?.keyset) {
          throw new ApiError('NOT_FOUND', `there is no listing of "${collection}"`, {
            hint: `Listings: ${registry.resources.flatMap((r) => (r.keyset ? [r.collection] : [])).join(', ')}.`,
          });
        }
        const limit = pageLimit(request.limit);
        const after = request.cursor === undefined ? null : decodeCursor(request.cursor, resource.keyset.length);
        const statement = compileKeysetPage(resource, scope, limit, after);
        const source = readOn(request.consistency);
        const rows = await execute<KeysetRow>(statement.text, statement.params, scope, 'keyset', source).catch(
          (error: ApiError) => {
            throw after === null ? error : cursorError(error);
          },
        );
        return { ...rows[0]!, limit };
      });
      const next = row.n > row.limit && row.last_key !== null ? encodeCursor(row.last_key) : null;
      return `{"data":${row.data},"next_cursor":${JSON.stringify(next)}}`;
    },

    authorize,
    tokenFirst,
    position,

    openapi() {
      openapi ??= buildOpenApi(registry, options.openapi);
      return openapi;
    },
  };
}

export type { Scope } from './compile/scope.ts';
export { mapDatabaseError as asApiError } from './db/errors.ts';
export type { Database, Queryable } from './db/port.ts';
export { ApiError, type ErrorCode, unauthorized } from './errors.ts';
export { UUID } from './formats.ts';
export { contentType, JSON_MEDIA } from './media-types.ts';
export { withServerUrl } from './openapi.ts';
export { parseJsonBody } from './parse/body.ts';
export { CONSISTENCY_HEADER } from './parse/headers.ts';
export type { RawRequest } from './parse/index.ts';
export { createRegistry, defineResource, type Registry, type Resource, type ResourceDefinition } from './registry.ts';
export type { EngineResponse } from './respond.ts';
export { STAGES, type Stage, type Timings } from './timings.ts';
export { CURRENT_VERSION, SUPPORTED_VERSIONS, VERSION_HEADER } from './versions.ts';
