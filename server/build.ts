/**
 * The whole API over one database: the registry, the engine, imports and the Hono app. `npm start`
 * (server/main.ts) and the tests build it here, so they serve exactly the same thing.
 */
import { createEngine, createRegistry, type Database, type Engine, type ResourceDefinition } from '../engine/index.ts';
import { createImports, type Imports, type ImportWorker } from '../imports/index.ts';
import { resources } from '../schema/registry.ts';
import { createApp } from './app.ts';
import type { Logger } from './logger.ts';

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
  /** Runs an import worker in this process; left out, jobs wait for another process's worker. */
  readonly worker?: { readonly pollMs?: number };
}

export interface Api {
  readonly app: ReturnType<typeof createApp>;
  readonly engine: Engine;
  readonly imports: Imports;
  readonly worker: ImportWorker | null;
}

/**
 * @example
 * const { app, worker } = buildApi({ db, worker: {} });
 * serve({ fetch: app.fetch, port: 3000 });
 */
export function buildApi(options: ApiOptions): Api {
  const { db, logger } = options;
  const registry = createRegistry(options.resources ?? resources);
  const engine = createEngine({
    registry,
    db,
    maxRows: options.maxRows,
    openapi: options.serverUrl ? { serverUrl: options.serverUrl } : undefined,
  });
  const imports = createImports({ db, registry });
  const worker = options.worker
    ? imports.startWorker({ pollMs: options.worker.pollMs, onError: (err) => logger?.error({ err }, 'import worker') })
    : null;
  const app = createApp({
    engine,
    imports,
    fileLimit: options.fileLimit,
    ping: () => db.ping(),
    draining: options.draining,
    logger,
  });
  return { app, engine, imports, worker };
}
