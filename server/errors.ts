/** Renders every failure as the contract's error body (the README's "Responses and errors"). */
import type { Context } from 'hono';
import { type ApiError, contentType, JSON_MEDIA } from '../engine/index.ts';
import type { Logger } from './logger.ts';

export function renderError(c: Context, error: ApiError, log: Logger): Response {
  const requestId: string = c.get('requestId') ?? '';
  // For the access log (access-log.ts): the failure's code beside its status.
  c.set('errorCode', error.code);
  // A draining process's 503 is expected, not a failure to look into.
  if (error.status >= 500 && error.code !== 'SHUTTING_DOWN') {
    log.error(
      { err: error.cause ?? error, code: error.code, requestId, method: c.req.method, path: c.req.path },
      error.message,
    );
  }
  // c.body keeps the headers middleware already set (Request-Id, engage-version).
  return c.body(errorBody(error, requestId), error.status as 400, {
    'Content-Type': contentType(JSON_MEDIA),
    ...error.headers,
  });
}

/** The error's JSON text; also written by server/node-server.ts for requests Node refuses before the app. */
export function errorBody(error: ApiError, requestId: string): string {
  const body: Record<string, unknown> = {
    name: error.name,
    message: error.message,
    code: error.code,
    is_transient: error.isTransient,
    timestamp: new Date().toISOString(),
    status_code: error.status,
    contact_support: error.contactSupport,
    request_id: requestId,
    // Always present, null when empty: PostgREST clients (postgrest-js, postgrest-py) read both.
    details: error.details ?? null,
    hint: error.hint ?? null,
  };
  if (error.context !== undefined) body.context = error.context;
  return JSON.stringify(body);
}
