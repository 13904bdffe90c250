/**
 * Database failures to contract errors. SQLSTATE decides; messages shown to callers are our own
 * or PostgreSQL's value-parsing messages, never SQL text.
 */
import { ApiError } from '../errors.ts';

interface DriverError {
  code?: unknown;
  message?: unknown;
}

/** Connection-level failures of postgres.js and Node's sockets. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT']);

export function mapDatabaseError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const { code, message } = (error ?? {}) as DriverError;
  const sqlstate = typeof code === 'string' ? code : '';
  const text = typeof message === 'string' ? message : '';

  const closed = text === 'PGlite is closed';
  if (closed || UNREACHABLE.has(sqlstate) || sqlstate.startsWith('08') || ['57P01', '57P02', '57P03', '53300'].includes(sqlstate)) {
    return new ApiError('DATABASE_UNAVAILABLE', 'the database is unavailable; retry shortly', {
      headers: { 'Retry-After': '1' },
      cause: error,
    });
  }
  if (sqlstate === '57014') {
    return new ApiError('QUERY_TIMEOUT', 'the query ran longer than the statement timeout; narrow the filters or the page', {
      cause: error,
    });
  }
  // Class 22: a value the caller sent did not parse as its type (dates, arrays, regexes...);
  // 42846: a cast the caller asked for in `select` that PostgreSQL has not got;
  // a text-search query or language the caller wrote that PostgreSQL cannot read.
  const callerInput =
    sqlstate.startsWith('22') ||
    sqlstate === '42846' ||
    (sqlstate === '42601' && text.includes('tsquery')) ||
    (sqlstate === '42704' && text.includes('text search configuration'));
  if (callerInput) {
    return new ApiError('INVALID_QUERY', `a value in the request is not valid for its field: ${text}`, { cause: error });
  }
  return new ApiError('INTERNAL_ERROR', 'an unexpected error occurred; it has been logged', { cause: error });
}
