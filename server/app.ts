/**
 * The Hono adapter: routes, request id, version header, bearer auth, body limits and error
 * rendering around the engine. `createApp(...).fetch` serves any fetch-style host, and the app can
 * be mounted inside another Hono app with `host.route('/prefix', createApp(...))`.
 */
import { timingSafeEqual } from 'node:crypto';
import { type Context, Hono } from 'hono';
import { requestId } from 'hono/request-id';
import { ApiError, asApiError, contentType, type Engine, JSON_MEDIA, STAGES, type Timings } from '../engine/index.ts';
import type { Imports } from '../imports/index.ts';
import { accessLog } from './access-log.ts';
import { type AuthVariables, bearerAuth, unauthorized } from './auth/bearer.ts';
import { BODY_LIMIT, bodyUnread, limitDeclaredBody, readText } from './body-limit.ts';
import { docsPage, home } from './docs.ts';
import { renderError } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { checkVersion, versionHeader } from './version.ts';
import { versionedRoutes } from './versioned.ts';

export interface AppOptions {
  readonly engine: Engine;
  /** Imports for the versioned API (/v1); left out, its import routes answer 404. */
  readonly imports?: Imports;
  /** The most bytes an import file (`POST /v1/files`) may have. */
  readonly fileLimit?: number;
  /** Resolves when the database answers; used by GET /ready. */
  readonly ping: () => Promise<unknown>;
  /** True once the host is shutting down: GET /ready says 503 and responses close their connection. */
  readonly draining?: () => boolean;
  readonly logger?: Logger;
  /** Counts requests; served at GET /metrics only with `metricsToken` (else on METRICS_PORT, see main.ts). */
  readonly metrics?: Metrics;
  /** METRICS_TOKEN: GET /metrics answers with `Authorization: Bearer <it>`; left out, /metrics is 404. */
  readonly metricsToken?: string;
  /** SERVER_TIMING: a Server-Timing header (parse, plan, compile, db, respond) on resource responses. */
  readonly serverTiming?: boolean;
  /** More for GET /ready to report (the pool, the migrations); a failure makes it 503. */
  readonly readiness?: () => Promise<Record<string, unknown>>;
}

/** `parse;dur=0.1, plan;dur=0.2, ...` (ms), as PostgREST's Server-Timing. */
const serverTiming = (timings: Timings) =>
  STAGES.map((stage) => `${stage};dur=${timings[stage].toFixed(1)}`).join(', ');

type Env = { Variables: AuthVariables };

/** How long GET /ready waits for the database before it says 503: a balancer's probe must not hang. */
const READY_TIMEOUT_MS = 2000;

const rejectAfter = (ms: number) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms).unref());

/**
 * The API's routes over an engine.
 * @example
 * const host = new Hono();
 * host.route('/engage', createApp({ engine, ping: () => db.ping() })); // /engage/api/v1/...
 */
export function createApp(options: AppOptions): Hono<Env> {
  const { engine, ping, draining = () => false } = options;
  const log = options.logger ?? createLogger('silent');
  const app = new Hono<Env>();
  const render = (c: Context, error: ApiError) => renderError(c, error, log);

  app.use(requestId({ headerName: 'Request-Id' }));
  // Outermost but the id: sees every response as sent, errors and 404s included.
  app.use(accessLog({ log, onRequest: options.metrics?.onRequest }));
  // Responses hold one organisation's data: no shared cache may keep them, no browser may guess their type.
  // Set before the handler runs: `c.body` keeps them, and no built response is copied to add them.
  app.use(async (c, next) => {
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    await next();
  });

  // Connection: close once draining (the client's next request goes to another process), and when
  // a body is left unread (reading the rest only to discard it would delay the answer).
  app.use(async (c, next) => {
    await next();
    if (draining() || bodyUnread(c)) c.res.headers.set('Connection', 'close');
  });

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    if (draining()) {
      throw new ApiError('SHUTTING_DOWN', 'this server is shutting down; another one serves your requests', {
        headers: { 'Retry-After': '1' },
      });
    }
    try {
      await Promise.race([ping(), rejectAfter(READY_TIMEOUT_MS)]);
    } catch (cause) {
      throw new ApiError('DATABASE_UNAVAILABLE', `the database does not answer within ${READY_TIMEOUT_MS} ms`, {
        headers: { 'Retry-After': '1' },
        cause,
      });
    }
    let state: Record<string, unknown> = {};
    try {
      if (options.readiness) state = await Promise.race([options.readiness(), rejectAfter(READY_TIMEOUT_MS)]);
    } catch (cause) {
      throw new ApiError('DATABASE_UNAVAILABLE', 'the database state cannot be read', {
        headers: { 'Retry-After': '1' },
        cause,
      });
    }
    return c.json({ status: 'ready', ...state });
  });

  // Off the public API: only with METRICS_TOKEN (constant-time compare), else 404 as if absent.
  const { metrics, metricsToken } = options;
  if (metrics && metricsToken) {
    app.get('/metrics', async (c) => {
      if (!sameSecret(c.req.header('authorization') ?? '', `Bearer ${metricsToken}`)) {
        return c.body('metrics need "Authorization: Bearer <METRICS_TOKEN>"\n', 401, {
          'WWW-Authenticate': 'Bearer realm="metrics"',
        });
      }
      const { text, contentType } = await metrics.render();
      return c.body(text, 200, { 'Content-Type': contentType });
    });
  }

  // Where things are, and the API reference page: no token needed, so ahead of the token check.
  app.get('/', home);
  app.route('/api/v1/docs', docsPage(engine.openapi()));

  const guarded = [versionHeader(), bearerAuth(), checkVersion()] as const;
  // `/api/v1/*` also matches `/api/v1` itself. Routes under /v1 set their own body limits.
  app.use('/api/v1/*', ...guarded, limitDeclaredBody(BODY_LIMIT));
  app.use('/v1/*', ...guarded);
  app.route('/v1', versionedRoutes({ engine, imports: options.imports, fileLimit: options.fileLimit }));

  const openapi = JSON.stringify(engine.openapi());
  for (const path of ['/api/v1', '/api/v1/']) {
    app.get(path, async (c) => {
      if ((await engine.authorize(c.get('scope'))) === null) throw unauthorized();
      // PostgREST's media type when asked for it; plain JSON, as the spec says bodies are, otherwise.
      const media = c.req.header('accept')?.includes('application/openapi+json')
        ? 'application/openapi+json'
        : JSON_MEDIA;
      return c.body(openapi, 200, { 'Content-Type': contentType(media) });
    });
  }

  app.all('/api/v1/:resource', async (c) => {
    const url = c.req.url;
    const q = url.indexOf('?');
    const body = c.req.method === 'POST' || c.req.method === 'PATCH' ? await readText(c, BODY_LIMIT) : null;
    let response: Awaited<ReturnType<Engine['handle']>>;
    try {
      response = await engine.handle(
        {
          method: c.req.method,
          resource: c.req.param('resource'),
          query: q < 0 ? '' : url.slice(q + 1),
          header: (name) => c.req.header(name),
          body,
        },
        c.get('scope'),
        options.serverTiming ? { timings: true } : undefined,
      );
    } catch (error) {
      // The engine's errors already put a bad token first.
      return render(c, asApiError(error));
    }
    const status = response.status as 200;
    if (response.timings) c.header('Server-Timing', serverTiming(response.timings));
    if (response.body === null) return c.body(null, status, response.headers);
    // Known length: the access log reads it rather than counting the body as it streams.
    c.header('Content-Length', String(Buffer.byteLength(response.body)));
    return c.body(response.body, status, response.headers);
  });

  app.notFound((c) => failure(c, new ApiError('NOT_FOUND', `nothing is served at ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => failure(c, error));

  /** A failure outside the engine (an unknown path, a body over its limit): a bad token still comes first. */
  async function failure(c: Context<Env>, error: unknown): Promise<Response> {
    const scope = c.get('scope');
    return render(c, scope ? await engine.tokenFirst(scope, error) : asApiError(error));
  }

  return app;
}

/** Compares secrets in constant time. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
