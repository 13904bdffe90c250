/**
 * The engine: HTTP-agnostic. A request flows one way through its stages:
 *   parse (raw request -> ApiRequest) -> plan (checked against the registry -> ReadPlan or
 *   WritePlan) -> compile (one parameterized statement) -> execute (the database port) -> respond.
 * Hosts give it raw requests and a tenant scope and get back status, headers and body text.
 */
import { compileCountEstimate, compileRead } from './compile/read.ts';
import { type Scope, scopeCte } from './compile/scope.ts';
import { Params } from './compile/sql.ts';
import { compileWrite } from './compile/write.ts';
import { mapDatabaseError } from './db/errors.ts';
import type { Database } from './db/port.ts';
import { ApiError, unauthorized } from './errors.ts';
import { buildOpenApi, type OpenApiOptions } from './openapi.ts';
import { parseJsonBody } from './parse/body.ts';
import { parseRequest, type RawRequest } from './parse/index.ts';
import { bodySchemas as buildBodySchemas } from './plan/body.ts';
import { planRead } from './plan/read.ts';
import type { ReadPlan } from './plan/types.ts';
import { planDelete, planInsert, planUpdate } from './plan/write.ts';
import { ReadCache } from './read-cache.ts';
import { type Registry, type Resource, VERBS } from './registry.ts';
import type { ApiRequest } from './request.ts';
import { type EngineResponse, respondRead, respondWrite } from './respond.ts';

export interface EngineOptions {
  readonly registry: Registry;
  readonly db: Database;
  /** The most rows one page may hold (decisions.md: MAX_ROWS, default 1000). */
  readonly maxRows?: number;
  readonly openapi?: OpenApiOptions;
  /** Compiled reads kept for repeated requests (default 1000; 0 compiles every read). */
  readonly readCacheSize?: number;
}

export interface Engine {
  readonly registry: Registry;
  /** Serves one request on a resource. Throws ApiError for every failure a caller can cause. */
  handle(request: RawRequest, scope: Scope): Promise<EngineResponse>;
  /** The organisation a scope stands for, or null when its token is unknown, expired or revoked. */
  authorize(scope: Scope): Promise<string | null>;
  /** The OpenAPI 3.1 document, built once from the registry. */
  openapi(): Record<string, unknown>;
}

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
  page_total: number;
  total: string | null;
  body: string | null;
}

/** The methods a resource answers, for 405s and OPTIONS: HEAD comes with GET. */
function allowedMethods(resource: Resource): string[] {
  const allowed = VERBS.filter((verb) => resource.verbs.has(verb)).flatMap((verb) =>
    verb === 'GET' ? ['GET', 'HEAD'] : [verb],
  );
  return [...allowed, 'OPTIONS'];
}

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
  let openapi: Record<string, unknown> | undefined;

  async function execute<T>(text: string, params: readonly (string | null)[]): Promise<T[]> {
    try {
      return (await db.query(text, params)) as T[];
    } catch (error) {
      throw mapDatabaseError(error);
    }
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

  async function write(
    resource: Resource,
    request: ApiRequest,
    raw: RawRequest,
    scope: Scope,
  ): Promise<EngineResponse> {
    const schemas = bodySchemas.get(resource.name)!;
    // DELETE takes no body; POST and PATCH take JSON.
    const body = request.method === 'DELETE' ? null : parseJsonBody(raw.body ?? null, raw.header('content-type'));
    const plan =
      request.method === 'DELETE'
        ? planDelete(resource, request)
        : request.method === 'POST'
          ? planInsert(resource, schemas, request, body)
          : planUpdate(resource, schemas, request, body);
    const statement = compileWrite(plan, scope);
    // One statement is atomic by itself; `Prefer: tx=rollback` needs a transaction to undo it.
    const [row] = plan.rollback
      ? await dryRun<WriteRow>(statement.text, statement.params)
      : await execute<WriteRow>(statement.text, statement.params);
    if (row?.authorized !== 1) throw unauthorized();
    return checked(() => {
      if (row.allowed !== 1) {
        throw new ApiError(
          'FORBIDDEN',
          'the body names another organisation; a token acts for its own organisation only',
          {
            hint: 'Leave organisation_id out of the body: it is taken from the token.',
          },
        );
      }
      return respondWrite(plan, {
        affected: row.affected,
        inserted: row.inserted,
        locationId: row.location_id,
        body: row.body,
      });
    });
  }

  /** The planner's estimate of the rows a read's filters select. */
  async function estimateCount(plan: ReadPlan, scope: Scope): Promise<number> {
    const statement = compileCountEstimate(plan, scope);
    const [row] = await execute<{ 'QUERY PLAN': unknown }>(statement.text, statement.params);
    const raw = row?.['QUERY PLAN'];
    const parsed = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: { 'Plan Rows': number } }>;
    return Math.round(parsed[0]?.Plan['Plan Rows'] ?? 0);
  }

  /** Runs `respond` after the statement found the token valid, marking its errors so. */
  function checked(respond: () => EngineResponse): EngineResponse {
    try {
      return respond();
    } catch (error) {
      if (error instanceof ApiError) error.tokenChecked = true;
      throw error;
    }
  }

  /** Runs a statement in a transaction that is always rolled back, and returns its rows. */
  async function dryRun<T>(text: string, params: readonly (string | null)[]): Promise<T[]> {
    let rows: T[] = [];
    const undo = new Error('dry run');
    try {
      await db.transaction(async (tx) => {
        rows = (await tx.query(text, params)) as T[];
        throw undo;
      });
    } catch (error) {
      if (error !== undo) throw mapDatabaseError(error);
    }
    return rows;
  }

  async function authorize(scope: Scope): Promise<string | null> {
    const params = new Params();
    const rows = await execute<{ organisation_id: string }>(
      `${scopeCte(scope, params)} SELECT organisation_id FROM scope`,
      params.values,
    );
    return rows[0]?.organisation_id ?? null;
  }

  return {
    registry,

    async handle(raw, scope) {
      const resource = resourceFor(raw.resource, raw.method);
      if (raw.method === 'OPTIONS') {
        if ((await authorize(scope)) === null) throw unauthorized();
        return { status: 200, headers: { Allow: allowed.get(resource.name)!.header }, body: null };
      }
      if (raw.method === 'POST' || raw.method === 'PATCH' || raw.method === 'DELETE') {
        return write(resource, parseRequest({ ...raw, method: raw.method }), raw, scope);
      }
      const { plan, statement } = reads.read(raw, scope, () => {
        const plan = planRead(resource, parseRequest({ ...raw, method: raw.method as 'GET' | 'HEAD' }), maxRows);
        return { plan, statement: compileRead(plan, scope) };
      });
      const [row] = await execute<ReadRow>(statement.text, statement.params);
      if (row?.authorized !== 1) throw unauthorized();
      let total = row.total === null ? null : Number(row.total);
      // Counting stops at MAX_ROWS + 1 for `estimated`; past that, and for `planned`, the
      // planner's estimate serves (a second, cheap statement), so large counts cost little.
      if (plan.count === 'planned' || (plan.count === 'estimated' && total === plan.limitOfCount)) {
        // Never fewer than the rows this page has shown to exist.
        total = Math.max(total ?? 0, plan.offset + row.page_total, await estimateCount(plan, scope));
      }
      return checked(() => respondRead(plan, { pageTotal: row.page_total, total, body: row.body }));
    },

    authorize,

    openapi() {
      openapi ??= buildOpenApi(registry, options.openapi);
      return openapi;
    },
  };
}

export type { Scope } from './compile/scope.ts';
export type { Database, Queryable } from './db/port.ts';
export { ApiError, type ErrorCode, isApiError } from './errors.ts';
export type { RawRequest } from './parse/index.ts';
export { createRegistry, defineResource, type Registry, type Resource, type ResourceDefinition } from './registry.ts';
export type { EngineResponse } from './respond.ts';
