/**
 * The versioned API under /v1 (the README's "The versioned API"): batch imports, import files and
 * jobs (the imports facade), and keyset pages of a collection (the engine). Auth, version header
 * and errors come from the app around it.
 */

import { ApiError, CONSISTENCY_HEADER, contentType, type Engine, JSON_MEDIA } from '@engage/engine';
import { BODY_LIMIT, limitDeclaredBody, readText } from '@engage/engine/hono';
import { type Context, Hono } from 'hono';
import type { Imports } from '../imports/index.ts';
import type { AuthVariables } from './auth/bearer.ts';
import { unauthorized } from './auth/bearer.ts';

export interface VersionedOptions {
  readonly engine: Engine;
  /** Left out: the import routes answer 404. */
  readonly imports: Imports | undefined;
  /** The most bytes an import file may have. */
  readonly fileLimit: number | undefined;
}

type Env = { Variables: AuthVariables };

/** The three batch imports take up to 5 MiB (docs/contract.md section 6). */
const BATCH_LIMIT = 5 * 1024 * 1024;

/**
 * With read replicas, the position after the imports a response tells of (a batch written, a job's
 * progress): a read sending it back as Consistency-Token sees them.
 */
async function withPosition(c: Context, engine: Engine) {
  const position = await engine.position();
  if (position) c.header(CONSISTENCY_HEADER, position);
}

/** A JSON response through the context, so the headers middleware set (Request-Id, engage-version) stay. */
const json = (c: Context, body: unknown, status: 200 | 201 | 202 = 200) =>
  c.body(typeof body === 'string' ? body : JSON.stringify(body), status, { 'Content-Type': contentType(JSON_MEDIA) });

export function versionedRoutes(options: VersionedOptions): Hono<Env> {
  const { engine } = options;
  const app = new Hono<Env>();

  const organisation = async (c: Context<Env>) => {
    const id = await engine.authorize(c.get('scope'));
    if (id === null) throw unauthorized();
    c.set('organisationId', id); // for the access log
    return id;
  };
  const imports = () => {
    if (!options.imports) throw new ApiError('NOT_FOUND', 'imports are not served here');
    return options.imports;
  };

  app.post('/:collection/imports/batch', limitDeclaredBody(BATCH_LIMIT), async (c) => {
    const body = await readText(c, BATCH_LIMIT);
    const result = await imports().batch(
      c.req.param('collection'),
      await organisation(c),
      body,
      c.req.header('content-type'),
    );
    await withPosition(c, engine);
    return json(c, result);
  });

  app.post('/files', async (c) => {
    const limit = options.fileLimit ?? Number.POSITIVE_INFINITY;
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (declared > limit)
      throw new ApiError('PAYLOAD_TOO_LARGE', `the file is larger than the limit of ${limit} bytes`);
    const file = await imports().storeFile(await organisation(c), c.req.header('content-type'), c.req.raw.body, limit);
    return json(c, file, 201);
  });

  app.post('/:collection/imports', limitDeclaredBody(BODY_LIMIT), async (c) => {
    const body = await readText(c, BODY_LIMIT);
    const job = await imports().startJob(
      c.req.param('collection'),
      await organisation(c),
      body,
      c.req.header('content-type'),
    );
    return json(c, job, 202);
  });

  app.get('/imports/:id', async (c) => {
    const job = await imports().getJob(await organisation(c), c.req.param('id'));
    await withPosition(c, engine);
    return json(c, job);
  });

  app.get('/:collection', async (c) => {
    const request = {
      limit: c.req.query('limit'),
      cursor: c.req.query('cursor'),
      consistency: c.req.header(CONSISTENCY_HEADER),
    };
    return json(c, await engine.page(c.req.param('collection'), request, c.get('scope')));
  });

  return app;
}
