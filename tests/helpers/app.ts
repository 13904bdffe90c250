/** The real app over a test database, plus organisations with tokens and rows to read. */

import { randomUUID } from 'node:crypto';
import type { ResourceDefinition } from '@engage/engine';
import { type Api, type ApiOptions, buildApi } from '../../server/build.ts';
import { createOrganisationToken } from '../../server/engine.ts';
import { createTestDatabase, type TestDatabase } from './db.ts';

export interface TestApp extends TestDatabase {
  readonly app: Api['app'];
  /** The app's own engine (its registry, with the test's resources). */
  readonly engine: Api['engine'];
  readonly imports: Api['imports'];
  /** GET (or any method) with a bearer token; `path` is below /api/v1. */
  call(path: string, token: string | null, init?: RequestInit): Promise<Response>;
}

export interface TestAppOptions {
  maxRows?: number;
  resources?: readonly ResourceDefinition[];
  /** Run an import worker (polling fast) for /v1 import jobs. */
  worker?: boolean;
  fileLimit?: number;
  rateLimit?: { requests: number; seconds: number };
  /** How webhooks are delivered (a local receiver needs allowPrivate); the worker runs with `worker`. */
  webhooks?: ApiOptions['webhooks'];
  /** Limits of streams of changes (tests shorten STREAM_REAUTH_S). */
  streams?: ApiOptions['streams'];
  /** A database the test created already (while it prepared its resources); a new one by default. */
  database?: TestDatabase;
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const { app, engine, imports, worker } = buildApi({
    db: database.db,
    resources: options.resources,
    maxRows: options.maxRows ?? 1000,
    fileLimit: options.fileLimit ?? 100 * 1024 * 1024,
    worker: options.worker ? { pollMs: 50 } : undefined,
    rateLimit: options.rateLimit,
    webhooks: options.webhooks,
    streams: options.streams,
  });
  return {
    ...database,
    async drop() {
      engine.close();
      await worker?.stop();
      await database.drop();
    },
    app,
    engine,
    imports,
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

/** A new organisation with a token, in a test database. */
export async function createOrganisation({ db, engine }: Pick<TestDatabase, 'db' | 'engine'>): Promise<Organisation> {
  const id = randomUUID();
  const { token } = await createOrganisationToken(engine, db, { organisationId: id, name: 'test' });
  return { id, token };
}

export { insertRows } from '../../server/demo.ts';

/** The keys of every error body (docs/contract.md section 5): always these, `context` where it helps. */
export const ERROR_KEYS = [
  'name',
  'message',
  'code',
  'is_transient',
  'timestamp',
  'status_code',
  'contact_support',
  'request_id',
  // Always present, null when empty: postgrest-py and postgrest-js read both.
  'details',
  'hint',
];
export const OPTIONAL_ERROR_KEYS = ['context'];
