/**
 * The versioned API under /v1 (docs/v1.md): batch imports, import files and
 * jobs (the imports facade), redelivery of webhooks (the webhooks facade), and keyset pages of a
 * collection (the engine). Auth, version header
 * and errors come from the app around it.
 */

import {
  ApiError,
  CONSISTENCY_HEADER,
  contentType,
  type Engine,
  IDEMPOTENCY_HEADER,
  JSON_MEDIA,
  type Queryable,
} from '@engage/engine';
import { BODY_LIMIT, limitDeclaredBody, readText } from '@engage/engine/hono';
import { type Context, Hono } from 'hono';
import type { Imports } from '../imports/index.ts';
import type { Webhooks } from '../webhooks/index.ts';
import type { AuthVariables } from './auth/bearer.ts';
import { unauthorized } from './auth/bearer.ts';

export interface VersionedOptions {
  readonly engine: Engine;
  /** Left out: the import routes answer 404. */
  readonly imports: Imports | undefined;
  /** Left out: the redelivery route answers 404. */
  readonly webhooks: Webhooks | undefined;
  /** The most bytes an import file may have. */
  readonly fileLimit: number | undefined;
}

type Env = { Variables: AuthVariables };

/** The query parameters of a keyset page. */
const PAGE_PARAMETERS: ReadonlySet<string> = new Set(['limit', 'cursor']);

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
const json = (c: Context, body: unknown) =>
  c.body(typeof body === 'string' ? body : JSON.stringify(body), 200, { 'Content-Type': contentType(JSON_MEDIA) });

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

  /**
   * A write's response, run once per Idempotency-Key (engine.once): with a key, `write` runs in the
   * transaction that keeps its response, and a retry gets that response back. `position`: the
   * response tells the position its writes can be read at, with read replicas.
   */
  async function once(
    c: Context<Env>,
    body: string | null,
    write: (tx: Queryable | null) => Promise<{ status: 200 | 201 | 202; body: unknown }>,
    position = false,
  ) {
    const url = c.req.url;
    const request = {
      key: c.req.header(IDEMPOTENCY_HEADER),
      method: c.req.method,
      target: url.slice(url.indexOf('/', url.indexOf('//') + 2)),
      body,
    };
    const response = await engine.once(c.get('scope'), request, async (tx) => {
      const { status, body } = await write(tx);
      return { status, headers: { 'Content-Type': contentType(JSON_MEDIA) }, body: JSON.stringify(body) };
    });
    if (position) await withPosition(c, engine);
    return c.body(response.body ?? '', response.status as 200, response.headers);
  }

  app.post('/:collection/imports/batch', limitDeclaredBody(BATCH_LIMIT), async (c) => {
    const body = await readText(c, BATCH_LIMIT);
    const organisationId = await organisation(c);
    return once(
      c,
      body,
      async (tx) => ({
        status: 200,
        body: await imports().batch(c.req.param('collection'), organisationId, body, c.req.header('content-type'), tx),
      }),
      true,
    );
  });

  app.post('/files', async (c) => {
    const limit = options.fileLimit ?? Number.POSITIVE_INFINITY;
    const declared = Number(c.req.header('content-length') ?? Number.NaN);
    if (declared > limit)
      throw new ApiError('PAYLOAD_TOO_LARGE', `the file is larger than the limit of ${limit} bytes`);
    const organisationId = await organisation(c);
    // The bytes stand for the body in the request's fingerprint: the same upload retried is the same request.
    return imports().storeFile(organisationId, c.req.header('content-type'), c.req.raw.body, limit, (file, complete) =>
      once(c, `${file.content_type} ${file.sha256}`, async (tx) => {
        await complete(tx);
        return { status: 201, body: file };
      }),
    );
  });

  app.post('/:collection/imports', limitDeclaredBody(BODY_LIMIT), async (c) => {
    const body = await readText(c, BODY_LIMIT);
    const organisationId = await organisation(c);
    const response = await once(c, body, async (tx) => ({
      status: 202,
      body: await imports().startJob(c.req.param('collection'), organisationId, body, c.req.header('content-type'), tx),
    }));
    imports().wake();
    return response;
  });

  app.post('/webhook_deliveries/:id/redeliver', async (c) => {
    const webhooks = options.webhooks;
    if (!webhooks) throw new ApiError('NOT_FOUND', 'webhooks are not served here');
    const organisationId = await organisation(c);
    return once(c, null, async () => ({
      status: 202,
      body: await webhooks.redeliver(organisationId, c.req.param('id')),
    }));
  });

  app.get('/imports/:id', async (c) => {
    const job = await imports().getJob(await organisation(c), c.req.param('id'));
    await withPosition(c, engine);
    return json(c, job);
  });

  app.get('/:collection', async (c) => {
    // Strict, as /api/v1 is: a parameter a page does not take (a filter, select) is refused, not ignored.
    const unknown = Object.keys(c.req.queries()).filter((name) => !PAGE_PARAMETERS.has(name));
    if (unknown.length > 0) {
      throw new ApiError(
        'INVALID_QUERY',
        `${c.req.path} takes ${[...PAGE_PARAMETERS].join(' and ')}, not ${unknown.map((n) => `"${n}"`).join(', ')}`,
        {
          hint: 'Pages hold every row in key order; filter, select and order with GET /api/v1/<resource>.',
          context: unknown.map((name) => ({ parameter: name })),
        },
      );
    }
    const request = {
      limit: c.req.query('limit'),
      cursor: c.req.query('cursor'),
      consistency: c.req.header(CONSISTENCY_HEADER),
    };
    return json(c, await engine.page(c.req.param('collection'), request, c.get('scope')));
  });

  return app;
}
