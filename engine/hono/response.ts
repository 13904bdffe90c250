/**
 * The adapter's responses, built with their headers as a plain object. @hono/node-server writes such
 * a response's headers as they are; `c.header` and `c.body` build a web Headers object instead, whose
 * every name and value is validated and which is sorted and copied again on the way out: a tenth of
 * a by-id request's Node CPU (docs/performance.md, "Where the time goes"). Headers a host's
 * middleware set before the adapter ran (`c.header`, hono/request-id) are kept, as `c.body` keeps them.
 */
import type { Context } from 'hono';
import { bodyUnread } from './body.ts';

type HeaderValues = Readonly<Record<string, string>>;

/** A sane incoming Request-Id is kept (as hono/request-id keeps one), anything else replaced. */
const SANE_ID = /^[\w\-=]{1,255}$/;
/** Set when the adapter made the request's id, so it sends the header itself. */
const OWN_ID = 'engage.ownRequestId';
/** The headers of the response the adapter made for the request. */
const ANSWERED = 'engage.answered';

/**
 * The request's id: the host's (`c.get('requestId')`, whose middleware sends its header), or one
 * made here and kept there, which the adapter's responses send as Request-Id: the caller's own
 * Request-Id when it is sane, a new UUID otherwise.
 */
export function identify(c: Context): string {
  const known: string | undefined = c.get('requestId');
  if (known !== undefined) return known;
  const given = c.req.header('request-id');
  const id = given !== undefined && SANE_ID.test(given) ? given : crypto.randomUUID();
  c.set('requestId', id);
  c.set(OWN_ID, true);
  return id;
}

/**
 * The headers of the response the adapter made for the request (names in lower case), undefined
 * when it made none. They include Request-Id, Cache-Control: no-store, X-Content-Type-Options:
 * nosniff and the host's `responseHeaders`, so a host's middleware sets its own on the other
 * responses only, after `next()`, and reads these here: `c.res.headers` would build a web Headers
 * object of them.
 */
export const adapterHeaders = (c: Context): HeaderValues | undefined => c.get(ANSWERED);

/**
 * The response, with what every response of the adapter carries: responses hold one tenant's data,
 * so no shared cache may keep them and no browser may guess their type; then the host's headers
 * (`host`), then `headers`.
 */
export function respond(
  c: Context,
  status: number,
  body: string | ReadableStream | null,
  headers: HeaderValues,
  host?: HeaderValues,
): Response {
  const out: Record<string, string> = {};
  // What the host's middleware set so far; reading `c.res` makes it a response of its own.
  const before = c.res.headers;
  for (const [name, value] of before) out[name] = value;
  out['cache-control'] = 'no-store';
  out['x-content-type-options'] = 'nosniff';
  if (c.get(OWN_ID)) out['request-id'] = c.get('requestId');
  if (host) for (const name in host) out[name.toLowerCase()] = host[name]!;
  for (const name in headers) out[name.toLowerCase()] = headers[name]!;
  // A body left unread (refused while reading) closes the connection rather than be read to the end.
  if (bodyUnread(c)) out.connection = 'close';
  // Cookies, each a header line of its own, need a Headers object.
  const cookies = before.getSetCookie();
  const init = cookies.length === 0 ? out : withCookies(out, cookies);
  const response = new Response(body, { status, headers: init });
  // Handed to Hono as the request's response directly: returned over `c.res`, it would be copied
  // to take the headers read above once more.
  c.res = undefined;
  c.res = response;
  c.set(ANSWERED, out);
  return response;
}

function withCookies(headers: Record<string, string>, cookies: readonly string[]): Headers {
  const { 'set-cookie': _, ...rest } = headers;
  const all = new Headers(rest);
  for (const cookie of cookies) all.append('set-cookie', cookie);
  return all;
}
