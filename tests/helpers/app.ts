/** The real app over a test database, plus organisations with tokens and rows to read. */
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../engine/db/port.ts';
import { importTargets } from '../../engine/imports/batch.ts';
import { startImportWorker } from '../../engine/imports/jobs.ts';
import { createEngine } from '../../engine/index.ts';
import { createRegistry, type ResourceDefinition } from '../../engine/registry.ts';
import { imports } from '../../schema/imports.ts';
import { resources } from '../../schema/registry.ts';
import { createApp } from '../../server/app.ts';
import { createToken } from '../../server/auth/tokens.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface TestApp extends TestDatabase {
  readonly app: ReturnType<typeof createApp>;
  /** GET (or any method) with a bearer token; `path` is below /api/v1. */
  call(path: string, token: string | null, init?: RequestInit): Promise<Response>;
}

export interface TestAppOptions {
  maxRows?: number;
  resources?: readonly ResourceDefinition[];
  /** Run an import worker (polling fast) for /v1 import jobs. */
  worker?: boolean;
  fileLimit?: number;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = await createTestDatabase();
  const registry = createRegistry(options.resources ?? resources);
  const engine = createEngine({ registry, db: database.db, maxRows: options.maxRows ?? 1000 });
  const targets = importTargets(registry, imports);
  const worker = options.worker ? startImportWorker({ db: database.db, targets, pollMs: 50 }) : null;
  const app = createApp({
    engine,
    ping: () => database.db.query('SELECT 1'),
    versioned: {
      db: database.db,
      targets,
      fileLimit: options.fileLimit ?? 100 * 1024 * 1024,
      wake: () => worker?.wake(),
    },
  });
  return {
    ...database,
    async drop() {
      await worker?.stop();
      await database.drop();
    },
    app,
    call(path, token, init = {}) {
      const headers = new Headers(init.headers);
      if (token !== null) headers.set('Authorization', `Bearer ${token}`);
      return Promise.resolve(app.request(`/api/v1${path}`, { ...init, headers }));
    },
  };
}

export interface Organisation {
  readonly id: string;
  readonly token: string;
}

export async function createOrganisation(db: Queryable): Promise<Organisation> {
  const id = randomUUID();
  const { token } = await createToken(db, { organisationId: id, name: 'test' });
  return { id, token };
}

export { insertRows } from '../../scripts/seed.ts';
