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

/** Decodes bodies: it keeps no state between calls, so one serves every request. */
const UTF8 = new TextDecoder();

/** The request body as UTF-8 text (a leading BOM dropped, as `Request.text()` does), at most `maxSize` bytes. */
export async function readText(c: Context, maxSize: number): Promise<string> {
  checkDeclaredBody(c, maxSize);
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  const bytes = incoming instanceof Readable ? await readNode(incoming, maxSize) : await readWeb(c, maxSize);
  return UTF8.decode(bytes);
}

/**
 * Whether the request's body has not all arrived yet (on @hono/node-server; elsewhere it cannot be
 * told): a response then closes the connection rather than read the rest.
 */
export function bodyUnread(c: Context): boolean {
  const incoming = (c.env as { incoming?: unknown } | undefined)?.incoming;
  return incoming instanceof IncomingMessage && !incoming.complete;
}

/** The client went away or was cut off: its fault, not the database's. */
const cutOff = (cause?: unknown) =>
  new ApiError('INVALID_REQUEST', 'the connection closed before the whole request body arrived', { cause });

/**
 * Node's request read through its events: its async iterator costs a small body about 24 µs of CPU
 * more (docs/performance.md). Stopping at the limit pauses the request rather than destroy it, so
 * the socket stays open for the 413.
 */
function readNode(incoming: Readable, maxSize: number): Promise<Buffer> {
  if (incoming.readableEnded) return Promise.resolve(Buffer.alloc(0));
  if (incoming.destroyed) return Promise.reject(cutOff());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const data = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size <= maxSize) chunks.push(chunk);
      else {
        stop();
        incoming.pause();
        reject(tooLarge(maxSize));
      }
    };
    const end = () => {
      stop();
      resolve(Buffer.concat(chunks, size));
    };
    const failed = (error: unknown) => {
      stop();
      reject(cutOff(error));
    };
    const closed = () => failed(undefined);
    const stop = () => {
      incoming.off('data', data).off('end', end).off('error', failed).off('close', closed);
    };
    incoming.on('data', data).on('end', end).on('error', failed).on('close', closed);
  });
}

/** A web request's body stream, read to the limit. */
async function readWeb(c: Context, maxSize: number): Promise<Uint8Array> {
  const body = c.req.raw.body;
  if (!body) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > maxSize) throw tooLarge(maxSize);
    chunks.push(value);
  }
}
