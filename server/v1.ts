/**
 * The versioned API under /v1 (decisions.md section 8): batch imports, import files and jobs, and
 * the keyset listing of contacts. Auth, version header and errors come from the app around it.
 */
import { type Context, Hono } from 'hono';
import { ApiError, unauthorized } from '../engine/errors.ts';
import { type ImportTarget, importItems } from '../engine/imports/batch.ts';
import { fileType, storeFile } from '../engine/imports/files.ts';
import { createJob, getJob, jobView } from '../engine/imports/jobs.ts';
import type { Database, Engine } from '../engine/index.ts';
import { keysetPage, pageLimit } from '../engine/keyset.ts';
import { parseJsonBody } from '../engine/parse/body.ts';
import { UUID } from '../engine/plan/values.ts';
import { JSON_TYPE } from '../engine/respond.ts';
import type { AuthVariables } from './auth/bearer.ts';
import { BATCH_LIMIT, BODY_LIMIT, limitDeclaredBody, readText } from './body-limit.ts';

export interface VersionedOptions {
  readonly engine: Engine;
  readonly db: Database;
  readonly targets: ReadonlyMap<string, ImportTarget>;
  /** The most bytes an import file may have. */
  readonly fileLimit: number;
  /** Tells the import worker a job is waiting. */
  readonly wake: () => void;
}

/** A JSON response through the context, so the headers middleware set (Request-Id, engage-version) stay. */
const json = (c: Context, body: unknown, status: 200 | 201 | 202 = 200) =>
  c.body(typeof body === 'string' ? body : JSON.stringify(body), status, { 'Content-Type': JSON_TYPE });

export function versionedRoutes(options: VersionedOptions): Hono<{ Variables: AuthVariables }> {
  const { engine, db, targets } = options;
  const app = new Hono<{ Variables: AuthVariables }>();

  const organisation = async (scope: AuthVariables['scope']) => {
    const id = await engine.authorize(scope);
    if (id === null) throw unauthorized();
    return id;
  };
  const target = (name: string) => {
    const found = targets.get(name);
    if (!found)
      throw new ApiError(
        'NOT_FOUND',
        `there is no import of "${name}"; imports exist for ${[...targets.keys()].join(', ')}`,
      );
    return found;
  };
  const notFound = (what: string) => new ApiError('NOT_FOUND', `there is no ${what} with that id in your organisation`);

  app.post('/:name/imports/batch', limitDeclaredBody(BATCH_LIMIT), async (c) => {
    const into = target(c.req.param('name'));
    const body = parseJsonBody(await readText(c, BATCH_LIMIT), c.req.header('content-type'));
    const items = (body as { items?: unknown } | null)?.items;
    if (typeof body !== 'object' || body === null || Array.isArray(body) || !Array.isArray(items)) {
      throw new ApiError('VALIDATION_FAILED', 'the body must be {"items": [...]}', {
        context: [{ field: 'items', message: 'must be an array' }],
      });
    }
    const unknownKeys = Object.keys(body).filter((k) => k !== 'items');
    if (unknownKeys.length > 0)
      throw new ApiError(
        'UNKNOWN_FIELD',
        `the batch envelope has no field ${unknownKeys.map((k) => `"${k}"`).join(', ')}`,
      );
    const organisationId = await organisation(c.get('scope'));
    return json(c, await db.transaction((tx) => importItems(tx, into, organisationId, items)));
  });

  app.post('/files', async (c) => {
    const type = fileType(c.req.header('content-type'));
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (declared > options.fileLimit)
      throw new ApiError('PAYLOAD_TOO_LARGE', `the file is larger than the limit of ${options.fileLimit} bytes`);
    const organisationId = await organisation(c.get('scope'));
    return json(c, await storeFile(db, organisationId, type, c.req.raw.body, options.fileLimit), 201);
  });

  app.post('/:name/imports', limitDeclaredBody(BODY_LIMIT), async (c) => {
    const into = target(c.req.param('name'));
    const body = parseJsonBody(await readText(c, BODY_LIMIT), c.req.header('content-type')) as {
      file_id?: unknown;
    } | null;
    const fileId = body?.file_id;
    if (typeof fileId !== 'string' || !UUID.test(fileId)) {
      throw new ApiError('VALIDATION_FAILED', 'the body must be {"file_id": "<id from POST /v1/files>"}', {
        context: [{ field: 'file_id', message: 'must be a uuid' }],
      });
    }
    const job = await createJob(db, await organisation(c.get('scope')), into.name, fileId);
    if (!job) throw notFound('file');
    options.wake();
    return json(c, jobView(job), 202);
  });

  app.get('/imports/:id', async (c) => {
    const id = c.req.param('id');
    const organisationId = await organisation(c.get('scope'));
    const job = UUID.test(id) ? await getJob(db, organisationId, id) : null;
    if (!job) throw notFound('import');
    return json(c, jobView(job));
  });

  app.get('/contacts', async (c) => {
    const contact = engine.registry.get('contact')!;
    return json(
      c,
      await keysetPage(db, contact, c.get('scope'), pageLimit(c.req.query('limit')), c.req.query('cursor')),
    );
  });

  return app;
}
