/** Body limits (decisions.md section 6), decided while reading: a chunked body is cut off at the limit. */
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ApiError } from '../engine/errors.ts';

/** Every endpoint but the batch imports and file uploads. */
export const BODY_LIMIT = 1024 * 1024;
/** The three batch imports. */
export const BATCH_LIMIT = 5 * 1024 * 1024;

/** Methods whose bodies are read; the others' bodies are never read, only their declared size checked. */
const READ_BODY = new Set(['POST', 'PATCH', 'PUT']);

export function limitBody(maxSize: number): MiddlewareHandler {
  const tooLarge = () => {
    throw new ApiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${maxSize} bytes`);
  };
  const limit = bodyLimit({ maxSize, onError: tooLarge });
  // Looking at a GET's body costs @hono/node-server a whole Request object, a third of the
  // throughput of a small read; a header look-up costs nothing.
  return async function limitBody(c, next) {
    if (READ_BODY.has(c.req.method)) return limit(c, next);
    if (Number(c.req.header('content-length') ?? 0) > maxSize) tooLarge();
    return next();
  };
}
