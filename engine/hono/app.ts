/**
 * The Hono adapter: every resource of an engine's registry under the path where the app is
 * mounted, its OpenAPI document at that path itself, and every failure as the contract's error body
 * with a `Request-Id`. The host says who the caller is (`scope`), and keeps everything else (routes,
 * logs, metrics) its own.
 */
import { type Context, Hono } from 'hono';
import type { Scope } from '../compile/scope.ts';
import type { Engine } from '../engine.ts';
import { ApiError, bearerRefused } from '../errors.ts';
import { type EngineStream, wantsStream } from '../handle/streams.ts';
import { contentType, JSON_MEDIA } from '../media-types.ts';
import type { EngineResponse } from '../respond.ts';
import { STAGES, type Timings } from '../timings.ts';
import { BODY_LIMIT, checkDeclaredBody, readText } from './body.ts';
import { errorBody } from './errors.ts';
import { identify, respond } from './response.ts';

export interface EngageAppOptions {
  readonly engine: Engine;
  /**
   * Who the caller is: `{ tenant }` when the host knows it (its own sessions, JWTs, an API
   * gateway), `{ tokenHash }` for built-in tokens (`bearerToken()`); throw an ApiError (such as
   * `unauthorized()`) to refuse the request. Left out in a single-tenant registry.
   */
  readonly scope?: (c: Context) => Scope | Promise<Scope>;
  /**
   * The host's own checks of a request (a version header), run once the scope is known: a failure
   * it throws is told after a bad token, as the engine's own are.
   */
  readonly check?: (c: Context) => void | Promise<void>;
  /** The largest request body in bytes (default 1 MiB): larger ones are 413, decided while reading. */
  readonly bodyLimit?: number;
  /**
   * Told of every failure before it is rendered (a logger, an access log): a 5xx carries its cause.
   * Without it, each unexpected failure (a 500) is logged to `logger` with its Request-Id and cause.
   */
  readonly onError?: (error: ApiError, c: Context) => void;
  /** Where unexpected failures are logged when there is no `onError` (default: console). */
  readonly logger?: { readonly error: (...data: unknown[]) => void };
  /** A Server-Timing header (parse, plan, compile, db, respond) on resource responses. */
  readonly serverTiming?: boolean;
  /**
   * Headers of the host's on every response of the adapter (a version header), as a plain object:
   * cheaper than `c.header` in a middleware before it, which builds a web Headers object.
   */
  readonly responseHeaders?: (c: Context) => Readonly<Record<string, string>>;
}

/** `parse;dur=0.1, plan;dur=0.2, ...` (ms), as PostgREST's Server-Timing. */
const serverTiming = (timings: Timings) =>
  STAGES.map((stage) => `${stage};dur=${timings[stage].toFixed(1)}`).join(', ');

/** The methods whose body is read: writes, and QUERY (a read whose query string is the body). */
const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'QUERY']);

/**
 * @example
 * const host = new Hono();
 * host.route('/crm', engageApp({ engine, scope: (c) => ({ tenant: c.get('session').workspaceId }) }));
 * // GET /crm/project?select=*,task(*) ... and GET /crm/ for the OpenAPI document
 */
export function engageApp(options: EngageAppOptions): Hono {
  const { engine } = options;
  const limit = options.bodyLimit ?? BODY_LIMIT;
  const app = new Hono();
  /** The document with its server where the app is mounted, unless the engine was told its URL. */
  const documents = new Map<string, string>();

  /** Every response of the adapter, with the host's headers. */
  const reply = (c: Context, status: number, body: string | ReadableStream | null, headers: Record<string, string>) =>
    respond(c, status, body, headers, options.responseHeaders?.(c));
  const logger = options.logger ?? console;
  const fail = (c: Context, error: ApiError) => {
    if (options.onError) options.onError(error, c);
    else if (error.contactSupport) {
      // A 500 says it has been logged: so it is, with what caused it.
      logger.error(`${c.req.method} ${c.req.path} failed (Request-Id ${c.get('requestId')}):`, error.cause ?? error);
    }
    const headers = { 'Content-Type': contentType(JSON_MEDIA), ...error.headers };
    return reply(c, error.status, errorBody(error, identify(c)), headers);
  };
  const scopeOf = async (c: Context) => (options.scope ? options.scope(c) : undefined);

  // No middleware and no onError of this app: mounted with `route`, Hono wraps each handler of an
  // app with its own error handler in a composition of its own, a cost on every request. Each
  // handler names the request (identify) and catches its own failures; every response, failures
  // included, is built by `reply`.

  /** The OpenAPI document, for a caller the scope lets in (a token's validity costs one statement). */
  async function openapi(c: Context, base: string) {
    identify(c);
    let scope: Scope | undefined;
    try {
      scope = await scopeOf(c);
      await options.check?.(c);
      if ((await engine.authorize(scope)) === null) throw bearerRefused();
    } catch (error) {
      return fail(c, await engine.tokenFirst(scope, error));
    }
    let text = documents.get(base);
    if (text === undefined) {
      const document = engine.openapi();
      text = JSON.stringify(document.servers ? document : { ...document, servers: [{ url: base || '/' }] });
      documents.set(base, text);
    }
    // PostgREST's media type when asked for it; plain JSON otherwise.
    const media = c.req.header('accept')?.includes('application/openapi+json')
      ? 'application/openapi+json'
      : JSON_MEDIA;
    return reply(c, 200, text, { 'Content-Type': contentType(media) });
  }

  app.get('/', (c) => openapi(c, c.req.path));

  /**
   * A request of a resource (`handle`, or `subscribe` for a stream of changes) or of a function
   * (`call`), answered as the engine answers it.
   */
  const serve = async (
    c: Context,
    target: string,
    run: (...args: Parameters<Engine['handle']>) => Promise<EngineResponse | EngineStream>,
  ) => {
    identify(c);
    let scope: Scope | undefined;
    try {
      scope = await scopeOf(c);
      await options.check?.(c);
      checkDeclaredBody(c, limit);
      const url = c.req.url;
      const q = url.indexOf('?');
      const body = BODY_METHODS.has(c.req.method) ? await readText(c, limit) : null;
      const response = await run(
        {
          method: c.req.method,
          resource: target,
          query: q < 0 ? '' : url.slice(q + 1),
          header: (name) => c.req.header(name),
          body,
        },
        scope,
        options.serverTiming ? { timings: true } : undefined,
      );
      // A stream's events go out as they come, for as long as it lasts.
      if (response.body instanceof ReadableStream) return reply(c, response.status, response.body, response.headers);
      const headers: Record<string, string> = { ...response.headers };
      if ('timings' in response && response.timings) headers['Server-Timing'] = serverTiming(response.timings);
      // Known length: a host's access log reads it rather than counting the body as it streams.
      if (response.body !== null) headers['Content-Length'] = String(Buffer.byteLength(response.body));
      return reply(c, response.status, response.body, headers);
    } catch (error) {
      return fail(c, await engine.tokenFirst(scope, error));
    }
  };

  app.all('/rpc/:function', (c) =>
    serve(c, c.req.param('function'), (raw, scope, timing) => engine.call(raw.resource, raw, scope, timing)),
  );
  app.all('/:resource', (c) =>
    serve(c, c.req.param('resource'), (raw, scope, timing) =>
      wantsStream(raw.method, raw.header('accept')) ? engine.subscribe(raw, scope) : engine.handle(raw, scope, timing),
    ),
  );

  // The mount path with its trailing slash is the document too; anything else is not served.
  app.all('*', async (c) => {
    identify(c);
    const base = c.req.routePath.replace(/\/?\*$/, '');
    const rest = c.req.path.slice(base.length);
    if (rest === '/' && (c.req.method === 'GET' || c.req.method === 'HEAD')) return openapi(c, base);
    let scope: Scope | undefined;
    let error: unknown = new ApiError('NOT_FOUND', `nothing is served at ${c.req.method} ${c.req.path}`);
    try {
      scope = await scopeOf(c);
      checkDeclaredBody(c, limit);
    } catch (refused) {
      if (scope === undefined) return fail(c, engine.asApiError(refused));
      error = refused;
    }
    return fail(c, await engine.tokenFirst(scope, error));
  });

  return app;
}
