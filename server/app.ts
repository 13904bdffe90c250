/**
 * The server's Hono app: the engine's adapter (`@engage/engine/hono`) under /api/v1 with our bearer
 * tokens and version header, the versioned API under /v1, and the server's own routes (health,
 * readiness, metrics, the docs page), with request ids, the access log and error rendering around
 * them. `createApp(...).fetch` serves any fetch-style host, and the app can be mounted inside
 * another Hono app with `host.route('/prefix', createApp(...))`.
 */
import { timingSafeEqual } from 'node:crypto';
import { ApiError, type Engine } from '@engage/engine';
import { adapterHeaders, bodyUnread, engageApp, identify, rateLimit, renderError } from '@engage/engine/hono';
import { type Context, Hono } from 'hono';
import type { Imports } from '../imports/index.ts';
import type { Webhooks } from '../webhooks/index.ts';
import { accessLog } from './access-log.ts';
import { type AuthVariables, bearerAuth, bearerScope } from './auth/bearer.ts';
import { docsPage, home } from './docs.ts';
import { appError } from './errors.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Metrics } from './metrics.ts';
import { CachedRouter } from './route-cache.ts';
import { checkVersion, echoedVersion, requireVersion, VERSION_HEADER, versionHeader } from './version.ts';
import { versionedRoutes } from './versioned.ts';

export interface AppOptions {
  readonly engine: Engine;
  /** Imports for the versioned API (/v1); left out, its import routes answer 404. */
  readonly imports?: Imports;
  /** Webhooks for the versioned API's redelivery route (/v1); left out, it answers 404. */
  readonly webhooks?: Webhooks;
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
  const app = new Hono<Env>({ router: new CachedRouter() });
  /** Every failure, before it is rendered: its code for the access log, its cause logged if it is a 5xx. */
  const report = (error: ApiError, c: Context) => {
    c.set('errorCode', error.code);
    // A draining process's 503 is expected, not a failure to look into.
    if (error.status >= 500 && error.code !== 'SHUTTING_DOWN') {
      const requestId = c.get('requestId') ?? '';
      log.error(
        { err: error.cause ?? error, code: error.code, requestId, method: c.req.method, path: c.req.path },
        error.message,
      );
    }
  };
  const render = (c: Context, error: ApiError) => {
    report(error, c);
    return renderError(c, error);
  };

  const logRequest = accessLog({ log, onRequest: options.metrics?.onRequest });
  // One middleware around every route (each one more is a cost on every request): the request's id,
  // the headers every response carries, and the access log, which sees every response as sent,
  // errors and 404s included.
  app.use(async function everyRequest(c, next) {
    const started = performance.now();
    identify(c);
    await next();
    // Responses hold one organisation's data: no shared cache may keep them, no browser may guess their type.
    // The engine's adapter sets these itself; on the rest, a route's own Cache-Control stands.
    if (adapterHeaders(c) === undefined) {
      setAbsent(c.res.headers, {
        'Request-Id': c.get('requestId'),
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
    }
    // Connection: close once draining (the client's next request goes to another process), and when
    // a body is left unread (reading the rest only to discard it would delay the answer).
    if (draining() || bodyUnread(c)) c.res.headers.set('Connection', 'close');
    logRequest(c, started);
  });

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/ready', async (c) => {
    if (draining()) {
      throw appError('SHUTTING_DOWN', 'this server is shutting down; another one serves your requests', {
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

  // Without a rate limit, no middleware for it.
  const limited = engine.limit ? [rateLimit({ engine, scope: bearerScope })] : [];

  // Where things are, and the API reference page: no token needed, so ahead of the token check.
  app.get('/', home);
  app.route('/api/v1/docs', docsPage(engine.openapi()));

  // `/api/v1/*` also matches `/api/v1` itself: every response says which version it is. The adapter
  // answers every request it is given with the header (`responseHeaders`); only a rate limit's own
  // answers need the middleware, which otherwise would be one more layer on every request.
  if (limited.length > 0) app.use('/api/v1/*', versionHeader(), ...limited);
  app.route(
    '/api/v1',
    engageApp({
      engine,
      scope: bearerScope,
      check: checkVersion,
      onError: report,
      serverTiming: options.serverTiming,
      responseHeaders: (c) => ({ [VERSION_HEADER]: echoedVersion(c) }),
    }),
  );
  // Routes under /v1 set their own body limits.
  app.use('/v1/*', versionHeader(), bearerAuth(), ...limited, requireVersion());
  app.route(
    '/v1',
    versionedRoutes({ engine, imports: options.imports, webhooks: options.webhooks, fileLimit: options.fileLimit }),
  );

  app.notFound((c) => failure(c, new ApiError('NOT_FOUND', `nothing is served at ${c.req.method} ${c.req.path}`)));
  app.onError((error, c) => failure(c, error));

  /** A failure outside the engine (an unknown path, a body over its limit): a bad token still comes first. */
  async function failure(c: Context<Env>, error: unknown): Promise<Response> {
    const scope = c.get('scope');
    return render(c, scope ? await engine.tokenFirst(scope, error) : engine.asApiError(error));
  }

  return app;
}

/** Sets each of `values` that `headers` does not have yet. */
function setAbsent(headers: Headers, values: Readonly<Record<string, string>>): void {
  for (const name in values) if (!headers.has(name)) headers.set(name, values[name]!);
}

/** Compares secrets in constant time. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
