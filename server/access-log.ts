/**
 * The access log: one line per request at `info` (request id, method, route, status, duration,
 * rows, organisation, bytes), written once the response body has been sent, and the same record
 * handed to metrics. Nothing of the request's headers or body is logged: never a token.
 */
import { adapterHeaders } from '@engage/engine/hono';
import type { Context } from 'hono';
import { type Logger, unredacted } from './logger.ts';

export interface RequestRecord {
  readonly requestId: string;
  readonly method: string;
  /** The route pattern that served it (`/api/v1/:resource`); `*` when none did (404). */
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  /** Rows in the response, from Content-Range; undefined when it has none. */
  readonly rows: number | undefined;
  readonly organisationId: string | undefined;
  readonly bytes: number;
  /** The error code of a failure (the body's `code`). */
  readonly code: string | undefined;
}

export interface AccessLogOptions {
  readonly log: Logger;
  /** Called with every request's record (metrics), logged or not. */
  readonly onRequest?: (record: RequestRecord) => void;
}

/** `0-24/100` → 25, `*\/0` → 0; undefined without a Content-Range. */
export function rowsOf(contentRange: string | null): number | undefined {
  if (!contentRange) return undefined;
  const match = /^(\d+)-(\d+)\//.exec(contentRange);
  return match ? Number(match[2]) - Number(match[1]) + 1 : 0;
}

/** The pattern of the last route that handled the request (a nested app's included). */
function routeOf(c: Context): string {
  const route = c.req.routePath;
  return route === '/*' || route === '*' || !route ? '*' : route;
}

/**
 * Logs a request whose response `c.res` holds (the server's one middleware calls it once the
 * response is made), `started` being when it arrived (performance.now()).
 */
export function accessLog(options: AccessLogOptions): (c: Context, started: number) => void {
  const { onRequest } = options;
  const log = unredacted(options.log);
  return function accessLog(c, started) {
    const logged = log.isLevelEnabled('info');
    if (!logged && !onRequest) return;
    const route = routeOf(c);
    // The engine's responses' headers as they were given: c.res.headers would build a web Headers of them.
    const given = adapterHeaders(c);
    const header = (name: string) => (given ? (given[name] ?? null) : c.res.headers.get(name));
    const finish = (bytes: number) => {
      const record: RequestRecord = {
        requestId: c.get('requestId') ?? '',
        method: c.req.method,
        route,
        status: c.res.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        rows: rowsOf(header('content-range')),
        organisationId: (c.get('organisationId') as string | undefined) ?? undefined,
        bytes,
        code: (c.get('errorCode') as string | undefined) ?? undefined,
      };
      onRequest?.(record);
      if (logged) log.info(record, `${record.method} ${c.req.path} ${record.status}`);
    };
    const declared = header('content-length');
    // Read the body only when its length is not declared: reading it turns the node server's
    // light response into a web Response, whose body is then sent through a web stream.
    if (declared !== null) return finish(Number(declared));
    const body = c.res.body;
    if (body === null) return finish(0);
    // The body's bytes are known once it has been sent: count them on the way out.
    let bytes = 0;
    let done = false;
    const once = () => {
      if (!done) finish(bytes);
      done = true;
    };
    const counted = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          bytes += chunk.byteLength;
          controller.enqueue(chunk);
        },
        flush: once,
      }),
    );
    c.res = new Response(counted, c.res);
  };
}
