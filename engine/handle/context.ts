/**
 * What every handler of the engine shares: the registry, the database, the scoping of statements,
 * and the steps around a statement (running it, observed; checking the caller's token first;
 * finding the resource a request names; choosing where a read runs).
 */
import { setBounded } from '../bounded.ts';
import type { Scope, Scoping } from '../compile/scope.ts';
import { knownTenant, laneOf, scopeCte } from '../compile/scope.ts';
import { Params } from '../compile/sql.ts';
import { mapDatabaseError } from '../db/errors.ts';
import type { Database, SqlParam } from '../db/port.ts';
import { ApiError, bearerRefused } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import { CONSISTENCY_HEADER, parseConsistency } from '../parse/headers.ts';
import { type BodySchemas, bodySchemas } from '../plan/body.ts';
import { ReadCache } from '../read-cache.ts';
import { type Registry, type Resource, VERBS } from '../registry/index.ts';
import type { EngineResponse } from '../respond.ts';
import type { StageClock } from '../timings.ts';
import { WriteCache } from '../write-cache.ts';

/** What a statement was run for. */
export type StatementKind =
  | 'authorize'
  | 'read'
  | 'write'
  | 'estimate'
  | 'keyset'
  | 'explain'
  | 'import'
  | 'token'
  | 'rate-limit'
  | 'idempotency'
  | 'changes';

/** Statements that take row locks: a lock wait holds up only their own lane's statements (db/admission.ts). */
const LOCKING: ReadonlySet<StatementKind> = new Set(['write', 'rate-limit']);

/** Events the engine reports to its host (metrics); every method optional, none may throw. */
export interface EngineObserver {
  /** A statement finished (or failed) after `ms` milliseconds, waiting for a connection included. */
  onStatement?(kind: StatementKind, ms: number, failed: boolean): void;
  /** A read found its compiled statement in the read cache (true) or compiled it (false). */
  onCache?(hit: boolean): void;
  /** A stream sent an event, `lagMs` after its change was written. */
  onStreamEvent?(lagMs: number): void;
  /** Work of the engine's own, outside any request, failed (reading the change log): it is tried again. */
  onBackgroundError?(task: string, error: unknown): void;
}

export interface ContextOptions {
  readonly registry: Registry;
  readonly db: Database;
  readonly maxRows: number;
  readonly readCacheSize: number;
  readonly planEnabled: boolean;
  /** Node builds the JSON of a page of plain rows (row-json.ts). */
  readonly nodeJson: boolean;
  readonly observer: EngineObserver | undefined;
  /** The table of built-in tokens, or null without them. */
  readonly tokens: string | null;
}

/** The methods a resource answers, for 405s and OPTIONS: HEAD comes with GET. */
function allowedMethods(resource: Resource): string[] {
  const allowed = VERBS.filter((verb) => resource.verbs.has(verb)).flatMap((verb) =>
    verb === 'GET' ? ['GET', 'HEAD'] : [verb],
  );
  return [...allowed, 'OPTIONS'];
}

/** Tokens whose tenant the engine keeps (about 150 bytes each); past that the oldest is forgotten. */
const KNOWN_TOKENS = 10_000;

export class Context {
  readonly registry: Registry;
  readonly db: Database;
  readonly maxRows: number;
  readonly planEnabled: boolean;
  readonly nodeJson: boolean;
  readonly observer: EngineObserver | undefined;
  readonly scoping: Scoping;
  /** Compiled reads kept for repeated requests. */
  readonly reads: ReadCache;
  readonly writes: WriteCache;
  readonly #schemas: ReadonlyMap<string, BodySchemas>;
  readonly #allowed: ReadonlyMap<string, { readonly list: string[]; readonly header: string }>;
  /** The tenant of each built-in token seen lately, by hash: a token's tenant never changes. */
  readonly #tokenTenants: Map<string, string>;
  readonly #options: ContextOptions;

  /** `from`: the context whose tables this one shares (`within`). */
  constructor(options: ContextOptions, from?: Context) {
    this.#options = options;
    this.registry = options.registry;
    this.db = options.db;
    this.maxRows = options.maxRows;
    this.planEnabled = options.planEnabled;
    this.nodeJson = options.nodeJson;
    this.observer = options.observer;
    this.scoping = { tenancy: options.registry.tenant, tokens: options.tokens };
    if (from) {
      this.reads = from.reads;
      this.writes = from.writes;
      this.#schemas = from.#schemas;
      this.#allowed = from.#allowed;
      this.#tokenTenants = from.#tokenTenants;
      return;
    }
    this.reads = new ReadCache(options.readCacheSize);
    this.writes = new WriteCache(options.readCacheSize);
    this.#tokenTenants = new Map();
    const { resources } = options.registry;
    this.#schemas = new Map(resources.map((r) => [r.name, bodySchemas(r)]));
    this.#allowed = new Map(
      resources.map((r) => {
        const list = allowedMethods(r);
        return [r.name, { list, header: list.join(', ') }];
      }),
    );
  }

  /** The same context on another database: a transaction's (a batch's operations run in one). */
  within(db: Database): Context {
    return new Context({ ...this.#options, db }, this);
  }

  /** A resource's body schemas, built once. */
  schemas(resource: Resource): BodySchemas {
    return this.#schemas.get(resource.name)!;
  }

  /** The `Allow` header of a resource: its methods. */
  allow(resource: Resource): string {
    return this.#allowed.get(resource.name)!.header;
  }

  /** Any failure as the error a caller sees; keys are told without the tenant column. */
  fail(error: unknown): ApiError {
    return mapDatabaseError(error, this.registry.tenant, this.scoping.tokens === null ? [] : [this.scoping.tokens]);
  }

  /**
   * A host's scope checked against the registry. A scope that cannot be right is the host's bug,
   * not the caller's: an Error (a 500), never a 4xx the caller could do something about.
   */
  checkScope(scope: Scope | undefined): void {
    const { tenancy } = this.scoping;
    if (tenancy === null) return;
    if (scope === undefined) throw new Error(`engine: the registry is tenanted by ${tenancy.column}; pass a scope`);
    if ('tokenHash' in scope && this.scoping.tokens === null) {
      throw new Error('engine: a { tokenHash } scope needs createEngine({ tokens })');
    }
    const tenant = 'tokenHash' in scope ? knownTenant(scope) : scope.tenant;
    if (tenant === undefined) return;
    const kind = KINDS[tenancy.kind];
    if (typeof tenant !== 'string' || !kind.filter(tenant, tenancy.type)) {
      throw new Error(`engine: the scope's tenant is not ${kind.described}, as ${tenancy.column} requires`);
    }
  }

  /**
   * The scope a request's statements use: a token's with its tenant once the engine has seen it
   * (the statement still checks the token), none in a single-tenant registry.
   */
  resolve(scope: Scope | undefined): Scope | undefined {
    if (this.scoping.tenancy === null || scope === undefined) return undefined;
    if (!('tokenHash' in scope) || 'tenant' in scope) return scope;
    const tenant = this.#tokenTenants.get(scope.tokenHash);
    return tenant === undefined ? scope : { tokenHash: scope.tokenHash, tenant };
  }

  /** Keeps the tenant a statement found for a token whose tenant was not known. */
  learn(scope: Scope | undefined, tenant: string | null | undefined): void {
    if (scope === undefined || !('tokenHash' in scope) || 'tenant' in scope || !tenant) return;
    setBounded(this.#tokenTenants, scope.tokenHash, tenant, KNOWN_TOKENS);
  }

  /** Runs a statement for `scope` on `on`, in the scope's lane when the pool is saturated. */
  async execute<T>(
    text: string,
    params: readonly SqlParam[],
    scope: Scope | undefined,
    kind: StatementKind = 'read',
    on: Database = this.db,
  ): Promise<T[]> {
    return this.observe(kind, () => on.query(text, params, laneOf(scope), LOCKING.has(kind)) as Promise<T[]>);
  }

  /** Runs a statement as `run` does, told to the observer and failing as the caller should see it. */
  async observe<T>(kind: StatementKind, run: () => Promise<T>): Promise<T> {
    const started = this.observer?.onStatement ? performance.now() : 0;
    let failed = true;
    try {
      const result = await run();
      failed = false;
      return result;
    } catch (error) {
      throw this.fail(error);
    } finally {
      this.observer?.onStatement?.(kind, performance.now() - started, failed);
    }
  }

  /** Runs a statement in a transaction that is always rolled back, and returns its rows. */
  async dryRun<T>(
    text: string,
    params: readonly SqlParam[],
    scope: Scope | undefined,
    kind: StatementKind = 'write',
  ): Promise<T[]> {
    let rows: T[] = [];
    const undo = new Error('dry run');
    const started = this.observer?.onStatement ? performance.now() : 0;
    let failed = false;
    try {
      await this.db.transaction(async (tx) => {
        rows = (await tx.query(text, params)) as T[];
        throw undo;
      }, laneOf(scope));
    } catch (error) {
      failed = error !== undo;
      if (failed) throw this.fail(error);
    } finally {
      this.observer?.onStatement?.(kind, performance.now() - started, failed);
    }
    return rows;
  }

  /**
   * The tenant a scope stands for: a host's own, or a built-in token's (null when the token is
   * unknown, expired or revoked, which takes one statement to tell). A single-tenant registry's
   * scope stands for no tenant: the empty string.
   */
  async authorize(scope: Scope | undefined): Promise<string | null> {
    this.checkScope(scope);
    if (scope === undefined || this.scoping.tenancy === null) return '';
    if (!('tokenHash' in scope)) return scope.tenant;
    const params = new Params();
    const { cte, column } = scopeCte(scope, params, this.scoping);
    const rows = await this.execute<{ tenant: string }>(
      `${cte} SELECT ${column}::text AS tenant FROM scope`,
      params.values,
      scope,
      'authorize',
    );
    const tenant = rows[0]?.tenant ?? null;
    this.learn(scope, tenant);
    return tenant;
  }

  /**
   * The error a caller whose request failed with `error` should see: a caller learns that their
   * token is bad before anything else about the request, so a 4xx becomes 401 when the scope's
   * token is not valid.
   */
  async tokenFirst(scope: Scope | undefined, error: unknown): Promise<ApiError> {
    const failure = this.fail(error);
    if (failure.status >= 500 || failure.code === 'UNAUTHORIZED') return failure;
    if (scope === undefined || !('tokenHash' in scope)) return failure;
    // When the check itself fails, the original error stands.
    const tenant = await this.authorize(scope).catch(() => undefined);
    return tenant === null ? bearerRefused() : failure;
  }

  /**
   * Runs the stages up to and including the statement, which checks the token. A failure before
   * the statement found the token valid is reported as tokenFirst says; what follows it is not.
   */
  async untilAuthorized<T extends { readonly authorized: number }>(
    scope: Scope | undefined,
    run: () => Promise<T>,
  ): Promise<T> {
    let result: T;
    try {
      this.checkScope(scope);
      result = await run();
    } catch (error) {
      throw await this.tokenFirst(scope, error);
    }
    if (result.authorized !== 1) throw bearerRefused();
    return result;
  }

  /** The resource a request names, offering its method; 404 or 405 otherwise. */
  resourceFor(name: string, method: string): Resource {
    const resource = this.registry.get(name);
    if (!resource) {
      throw new ApiError('NOT_FOUND', `there is no resource "${name}"`, {
        hint: `Resources: ${this.registry.resources.map((r) => r.name).join(', ')}.`,
      });
    }
    const methods = this.#allowed.get(resource.name)!;
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
  readOn(consistency: string | null | undefined): Database {
    const after = parseConsistency(consistency);
    return this.db.reader?.(after) ?? this.db;
  }

  /** The primary's position now, when reads go to replicas. */
  position(): Promise<string | undefined> {
    return this.db.position?.() ?? Promise.resolve(undefined);
  }

  /** The response of a committed write with the position its reads can ask for, when reads go to replicas. */
  async withPosition(response: EngineResponse): Promise<EngineResponse> {
    const at = await this.position();
    return at ? { ...response, headers: { ...response.headers, [CONSISTENCY_HEADER]: at } } : response;
  }

  /** The response with the stages' timings, when they were measured. */
  timed(response: EngineResponse, clock: StageClock | undefined): EngineResponse {
    if (!clock) return response;
    clock.lap('respond');
    return { ...response, timings: clock.timings };
  }
}
