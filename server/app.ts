/**
 * The Hono adapter: routes, request id, version header, bearer auth, body limits and error
 * rendering around the engine. `createApp(...).fetch` serves any fetch-style host, and the app can
 * be mounted inside another Hono app with `host.route('/prefix', createApp(...))`.
 */
import { Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { ApiError } from '../engine/errors.ts';
import type { Engine } from '../engine/index.ts';
import { type AuthVariables, bearerAuth, unauthorized } from './auth/bearer.ts';
import { BODY_LIMIT, limitDeclaredBody, readText } from './body-limit.ts';
import { renderError, toApiError } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import { type VersionedOptions, versionedRoutes } from './v1.ts';
import { checkVersion, versionHeader } from './version.ts';

export interface AppOptions {
  readonly engine: Engine;
  /** The versioned API (/v1); left out, its routes answer 404. */
  readonly versioned?: Omit<VersionedOptions, 'engine'>;
  /** Resolves when the database answers; used by GET /ready. */
  readonly ping: () => Promise<unknown>;
  readonly logger?: Logger;
}

type Env = { Variables: AuthVariables };

export function createApp(options: AppOptions): Hono<Env> {
  const { engine, ping } = options;
  const log = options.logger ?? createLogger('silent');
  const app = new Hono<Env>();

  /**
   * A caller must learn that their token is bad before anything else about their request, but
   * the token is only checked inside the statement that serves it. So when a request fails before
   * that statement ran, the token is checked on its own first.
   */
  async function failure(c: Parameters<Parameters<typeof app.onError>[0]>[1], thrown: unknown): Promise<Response> {
    let error = toApiError(thrown);
    const scope = c.get('scope');
    if (scope && error.status < 500 && error.code !== 'UNAUTHORIZED' && !error.tokenChecked) {
      // When the check itself fails, the original error stands.
      const organisation = await engine.authorize(scope).catch(() => undefined);
      if (organisation === null) error = unauthorized();
    }
    return renderError(c, error, log);
  }

  app.use(requestId({ headerName: 'Request-Id' }));

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    try {
      await ping();
    } catch (cause) {
      throw new ApiError('DATABASE_UNAVAILABLE', 'the database does not answer', {
        headers: { 'Retry-After': '1' },
        cause,
      });
    }
    return c.json({ status: 'ready' });
  });

  const guarded = [versionHeader(), bearerAuth(), checkVersion()] as const;
  // `/api/v1/*` also matches `/api/v1` itself. Routes under /v1 set their own body limits.
  app.use('/api/v1/*', ...guarded, limitDeclaredBody(BODY_LIMIT));
  app.use('/v1/*', ...guarded);
  if (options.versioned) app.route('/v1', versionedRoutes({ engine, ...options.versioned }));

  const openapi = JSON.stringify(engine.openapi());
  for (const path of ['/api/v1', '/api/v1/']) {
    app.get(path, async (c) => {
      if ((await engine.authorize(c.get('scope'))) === null) throw unauthorized();
      // PostgREST's media type when asked for it; plain JSON, as the spec says bodies are, otherwise.
      const type = c.req.header('accept')?.includes('application/openapi+json')
        ? 'application/openapi+json'
        : 'application/json';
      return c.body(openapi, 200, { 'Content-Type': `${type}; charset=utf-8` });
    });
  }

  app.all('/api/v1/:resource', async (c) => {
    const url = c.req.url;
    const q = url.indexOf('?');
    const response = await engine.handle(
      {
        method: c.req.method,
        resource: c.req.param('resource'),
        query: q < 0 ? '' : url.slice(q + 1),
        header: (name) => c.req.header(name),
        body: c.req.method === 'POST' || c.req.method === 'PATCH' ? await readText(c, BODY_LIMIT) : null,
      },
      c.get('scope'),
    );
    const status = response.status as 200;
    return response.body === null
      ? c.body(null, status, response.headers)
      : c.body(response.body, status, response.headers);
  });

  app.notFound((c) => failure(c, new ApiError('NOT_FOUND', `nothing is served at ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => failure(c, error));
  return app;
}
