/**
 * The whole API over one database: the registry, the engine, imports, webhooks and the Hono app. `npm start`
 * (server/main.ts) and the tests build it here, so they serve exactly the same thing.
 */
import {
  createRegistry,
  type Database,
  type Engine,
  type RateLimit,
  type ResourceDefinition,
  type StreamOptions,
} from '@engage/engine';
import { createImports, type Imports } from '../imports/index.ts';
import { registry, registryOptions } from '../schema/registry.ts';
import { organisation } from '../schema/tables.ts';
import { createWebhooks, type Webhooks, type WebhooksOptions } from '../webhooks/index.ts';
import { createApp } from './app.ts';
import type { MigrationState, OpenDatabase } from './database.ts';
import { engageEngine } from './engine.ts';
import type { Logger } from './logger.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { openapiOptions } from './openapi.ts';

export interface ApiOptions {
  readonly db: Database;
  /** The resources served; schema/registry.ts by default. */
  readonly resources?: readonly ResourceDefinition[];
  /** MAX_ROWS. */
  readonly maxRows?: number;
  /** FILE_UPLOAD_LIMIT. */
  readonly fileLimit?: number;
  /** The URL the OpenAPI document names, e.g. http://127.0.0.1:3000/api/v1. */
  readonly serverUrl?: string;
  readonly logger?: Logger;
  /** True once the host is shutting down (server/main.ts): see AppOptions. */
  readonly draining?: () => boolean;
  /** Runs import and webhook workers in this process; left out, work waits for another process's. */
  readonly worker?: { readonly pollMs?: number };
  /** SERVER_TIMING: a Server-Timing header on resource responses. */
  readonly serverTiming?: boolean;
  /** PLAN_ENABLED: statement plans for `Accept: application/vnd.pgrst.plan+json`. */
  readonly planEnabled?: boolean;
  /** JSON_BUILT_BY: where the JSON of a page of plain rows is built. */
  readonly jsonBuiltBy?: 'database' | 'node';
  /** RATE_LIMIT: requests per window of seconds, per token (an organisation's rate_limit replaces the requests); off when left out. */
  readonly rateLimit?: Pick<RateLimit, 'requests' | 'seconds'>;
  /** IDEMPOTENCY_HOURS: how long an Idempotency-Key is kept (default 24). */
  readonly idempotencyHours?: number;
  /** BATCH_MAX_OPERATIONS: the most operations of a batch (default 100). */
  readonly batchMaxOperations?: number;
  /** STREAM_* and CHANGES_RETENTION_HOURS: the limits of streams of changes. */
  readonly streams?: StreamOptions;
  /** How webhooks are delivered (WEBHOOK_ALLOW_PRIVATE; tests shorten the retries). */
  readonly webhooks?: Omit<WebhooksOptions, 'db' | 'engine'>;
  /**
   * Collect Prometheus metrics (`Api.metrics`); `token` (METRICS_TOKEN) also serves them at
   * GET /metrics to `Authorization: Bearer <token>`. Left out, nothing is collected.
   */
  readonly metrics?: { readonly token?: string | undefined };
}

export interface Api {
  readonly app: ReturnType<typeof createApp>;
  readonly engine: Engine;
  readonly imports: Imports;
  readonly webhooks: Webhooks;
  /** This process's import and webhook workers, when `worker` was asked for. */
  readonly worker: { stop(): Promise<void> } | null;
  /** Set when `metrics` was asked for: serve `metrics.render()` on METRICS_PORT. */
  readonly metrics: Metrics | null;
}

/**
 * @example
 * const { app, worker } = buildApi({ db, worker: {} });
 * serve({ fetch: app.fetch, port: 3000 });
 */
export function buildApi(options: ApiOptions): Api {
  const { db, logger } = options;
  const metrics = options.metrics ? createMetrics() : null;
  const engine = engageEngine(db, {
    registry: options.resources ? createRegistry(options.resources, registryOptions) : registry,
    maxRows: options.maxRows,
    openapi: openapiOptions(options.serverUrl),
    planEnabled: options.planEnabled,
    jsonBuiltBy: options.jsonBuiltBy,
    // An organisation's own limit, where its row sets one, replaces RATE_LIMIT's number of requests.
    rateLimit: options.rateLimit && { ...options.rateLimit, perTenant: { table: organisation, column: 'rate_limit' } },
    idempotency: { hours: options.idempotencyHours },
    batch: { maxOperations: options.batchMaxOperations },
    streams: options.streams,
    observer: {
      ...metrics?.observer,
      onBackgroundError: (task, err) => logger?.error({ err, task }, 'engine background work failed'),
    },
  });
  const imports = createImports({ db, engine });
  metrics?.watch({ db, imports, engine });
  /** Once every migration is applied, it stays so: GET /ready no longer asks the (maybe busy) pool. */
  const migrations: { upToDate?: MigrationState } = {};
  const webhooks = createWebhooks({ db, engine, ...options.webhooks });
  const workers = options.worker
    ? [
        imports.startWorker({
          pollMs: options.worker.pollMs,
          onError: (err) => logger?.error({ err }, 'import worker'),
        }),
        webhooks.startWorker({
          pollMs: options.worker.pollMs,
          onError: (err) => logger?.error({ err }, 'webhook worker'),
        }),
      ]
    : [];
  const worker = options.worker ? { stop: async () => void (await Promise.all(workers.map((w) => w.stop()))) } : null;
  const app = createApp({
    engine,
    imports,
    webhooks,
    fileLimit: options.fileLimit,
    ping: () => db.ping(),
    draining: options.draining,
    logger,
    metrics: metrics ?? undefined,
    metricsToken: options.metrics?.token,
    serverTiming: options.serverTiming,
    readiness: () => readiness(db, migrations),
  });
  return { app, engine, imports, webhooks, worker, metrics };
}

/** What GET /ready reports beside its status: the pool, and the migrations when the database knows them. */
async function readiness(db: Database, known: { upToDate?: MigrationState }): Promise<Record<string, unknown>> {
  const stats = db.stats?.();
  const state: Record<string, unknown> = {
    database: db.kind,
    pool: stats ? { size: stats.size, in_use: stats.inUse, waiting: stats.waiting } : null,
  };
  if (db.replicas) state.replicas = db.replicas();
  const open = db as Partial<OpenDatabase>;
  if (typeof open.migrations === 'function') {
    const { applied, latest } = known.upToDate ?? (await open.migrations());
    if (applied >= latest) known.upToDate = { applied, latest };
    state.migrations = { applied, latest, pending: Math.max(0, latest - applied) };
  }
  return state;
}
