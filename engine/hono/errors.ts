/** Every failure as the contract's error body (docs/contract.md section 5), with the request's id. */
import type { Context } from 'hono';
import type { ApiError } from '../errors.ts';
import { contentType, JSON_MEDIA } from '../media-types.ts';

/** The error's JSON text, for hosts that answer outside Hono too (a request Node refuses). */
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
  if (error.operation !== undefined) body.operation = error.operation;
  return JSON.stringify(body);
}

/** The error's response; `c.body` keeps the headers middleware already set (Request-Id). */
export function renderError(c: Context, error: ApiError): Response {
  const requestId: string = c.get('requestId') ?? '';
  return c.body(errorBody(error, requestId), error.status as 400, {
    'Content-Type': contentType(JSON_MEDIA),
    ...error.headers,
  });
}
