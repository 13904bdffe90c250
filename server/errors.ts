/** Renders every failure as the contract's error body (decisions.md section 5). */
import type { Context } from 'hono';
import { mapDatabaseError } from '../engine/db/errors.ts';
import { ApiError } from '../engine/errors.ts';
import type { Logger } from './logger.ts';

/** Any thrown value as an ApiError; what is not one already is a bug, reported as a 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // Anything else came from the database or is a bug; the mapping tells the two apart.
  return mapDatabaseError(error);
}

export function renderError(c: Context, error: ApiError, log: Logger): Response {
  const requestId: string = c.get('requestId') ?? '';
  if (error.status >= 500) {
    log.error(
      { err: error.cause ?? error, code: error.code, requestId, method: c.req.method, path: c.req.path },
      error.message,
    );
  }
  const body: Record<string, unknown> = {
    name: error.name,
    message: error.message,
    code: error.code,
    is_transient: error.isTransient,
    timestamp: new Date().toISOString(),
    status_code: error.status,
    contact_support: error.contactSupport,
    request_id: requestId,
  };
  if (error.hint !== undefined) body.hint = error.hint;
  if (error.context !== undefined) body.context = error.context;
  // c.body keeps the headers middleware already set (Request-Id, engage-version).
  return c.body(JSON.stringify(body), error.status as 400, {
    'Content-Type': 'application/json; charset=utf-8',
    ...error.headers,
  });
}
