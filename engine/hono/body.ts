/**
 * Request bodies within a limit (docs/contract.md section 6), decided while reading: a body declared
 * larger than the limit is refused before it is read, and a chunked one is cut off once it passes it.
 *
 * Bodies are read here rather than through Hono's bodyLimit and `c.req.text()`: on
 * @hono/node-server either of those turns Node's request into a whole web Request and stream
 * first, which cost a fifth of the throughput of a small PATCH and 50 MB of RSS under load. Node's
 * request is read directly when the host is @hono/node-server, the web body stream otherwise.
 */
import { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.ts';

/** The default limit: 1 MiB. */
export const BODY_LIMIT = 1024 * 1024;

const tooLarge = (maxSize: number) =>
  new ApiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${maxSize} bytes`);

/** Throws 413 when the request's Content-Length is over the limit, whatever its method, before any reading. */
export function checkDeclaredBody(c: Context, maxSize: number): void {
  if (Number(c.req.header('content-length') ?? 0) > maxSize) throw tooLarge(maxSize);
}

/** `checkDeclaredBody` as a middleware, for a host's own routes. */
export function limitDeclaredBody(maxSize: number): MiddlewareHandler {
  return async function limitDeclaredBody(c, next) {
    checkDeclaredBody(c, maxSize);
    await next();
  };
}

/** The request body as UTF-8 text (a leading BOM dropped, as `Request.text()` does), at most `maxSize` bytes. */
export async function readText(c: Context, maxSize: number): Promise<string> {
  if (Number(c.req.header('content-length') ?? 0) > maxSize) throw tooLarge(maxSize);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of bodyChunks(c)) {
    size += chunk.byteLength;
    if (size > maxSize) throw tooLarge(maxSize);
    chunks.push(chunk);
  }
  return new TextDecoder().decode(Buffer.concat(chunks, size));
}

/**
 * Whether the request's body has not all arrived yet (on @hono/node-server; elsewhere it cannot be
 * told): a response then closes the connection rather than read the rest.
 */
export function bodyUnread(c: Context): boolean {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage && !incoming.complete;
}

async function* bodyChunks(c: Context): AsyncGenerator<Uint8Array> {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  if (incoming instanceof Readable) {
    try {
      // Stopping at the limit must leave the socket open for the 413: no destroy on early return.
      yield* incoming.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>;
    } catch (cause) {
      // The client went away or was cut off: its fault, not the database's.
      throw new ApiError('INVALID_REQUEST', 'the connection closed before the whole request body arrived', { cause });
    }
    return;
  }
  const body = c.req.raw.body;
  if (!body) return;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
}
