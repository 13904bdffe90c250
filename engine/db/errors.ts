/**
 * Database failures to contract errors. SQLSTATE decides, and every message, detail and hint is in
 * our words: PostgreSQL's own text names types, functions and SQL the caller never wrote.
 */
import { ApiError, idempotencyInProgress, invalidBody, type Problem } from '../errors.ts';
import { catalogNames } from '../field-kinds.ts';
import type { Field, Tenancy } from '../registry/index.ts';
import { PoolBusy } from './admission.ts';

interface DriverError {
  code?: unknown;
  message?: unknown;
  detail?: unknown;
  /** postgres.js names it column_name, PGlite column. */
  column_name?: unknown;
  column?: unknown;
  constraint_name?: unknown;
  constraint?: unknown;
}

/** Field names of a key in PostgreSQL's detail, `Key (organisation_id, external_id)=(...)`, less the tenant column. */
function keyFields(detail: string, tenant: string | undefined): string[] {
  const names = /Key \(([^)]*)\)=/.exec(detail)?.[1];
  return names
    ? names
        .split(',')
        .map((n) => n.trim().replace(/^"|"$/g, ''))
        .filter((n) => n !== tenant)
    : [];
}

/**
 * PostgreSQL's detail of a key violation without the tenant, which every tenanted key leads with:
 * `Key (external_id)=(r2) already exists.`; undefined when it is not of that shape.
 */
/**
 * A key PostgreSQL names in a violation's detail (`Key (organisation_id, contact_id)=(…, …) …`), without
 * the tenant: its fields and values as the caller gave them, in our words.
 */
function keyOf(detail: string, tenant: string | undefined): string | undefined {
  const match = /^Key \(([^,)]+), (.+)\)=\([^,]*, (.*)\) /s.exec(detail);
  return match && match[1] === tenant ? `${match[2]} = ${match[3]}` : undefined;
}

/**
 * A statement that needs what `engine.install()` creates (engage_fail, the idempotency and outbox
 * tables, the token table) failed because it is not there: the host's mistake, told in one sentence.
 */
function notInstalled(sqlstate: string, text: string, ownTables: readonly string[]): Error | undefined {
  if (sqlstate !== '42883' && sqlstate !== '42P01') return undefined;
  const named = /(?:function|relation) "?([\w.]+)/.exec(text)?.[1] ?? '';
  if (!named.startsWith('engage_') && !ownTables.includes(named)) return undefined;
  return new Error(
    `engine.install() has not run on this database (${named} is missing): call it once at start-up, before serving`,
  );
}

/** 500: a failure no caller can cause, logged with its cause and never shown. */
const unexpected = (cause: unknown): ApiError =>
  new ApiError('INTERNAL_ERROR', 'an unexpected error occurred; it has been logged', { cause });

/** Checks a write statement failed on purpose (engage_fail, SQLSTATE EN001): code -> error. */
function failedCheck(code: string, detail: string, within: string): ApiError {
  switch (code) {
    case 'NOT_ACCEPTABLE':
      return new ApiError(
        'NOT_ACCEPTABLE',
        `a single object was requested (application/vnd.pgrst.object+json), but ${detail} rows were affected;` +
          ' nothing was changed',
        {
          details: `The result contains ${detail} rows`,
          context: { rows: Number(detail) },
        },
      );
    case 'MAX_AFFECTED':
      return new ApiError(
        'MAX_AFFECTED_EXCEEDED',
        `the request would affect ${detail} rows, more than Prefer: max-affected allows; nothing was changed`,
        {
          details: `The query affects ${detail} rows`,
          context: { rows: Number(detail) },
        },
      );
    case 'PRECONDITION_FAILED':
      return new ApiError(
        'PRECONDITION_FAILED',
        'a record the request matches is not at a version If-Match names (it changed since it was read),' +
          ` or no record matches${within}; nothing was changed`,
        { hint: 'Read the record again, apply the change to what it is now, and send its new ETag in If-Match.' },
      );
    case 'IDEMPOTENCY_KEY_IN_PROGRESS':
      return idempotencyInProgress();
    case 'REFERENCE_NOT_FOUND':
      return new ApiError('REFERENCE_NOT_FOUND', `an item names a ${detail} that does not exist${within}`, {
        hint: `Name an existing ${detail} by its key or another unique set of its fields.`,
        context: { relation: detail },
      });
    case 'ITEMS_UNMATCHED':
      return new ApiError(
        'NOT_FOUND',
        `${detail} of the items name no record${within} that the request's filters select; nothing was changed`,
        {
          hint: 'Each item of a PATCH array names one existing record by its key; leave out those that do not exist.',
          context: { unmatched: Number(detail) },
        },
      );
    case 'UNKNOWN_FIELD': {
      const keys = JSON.parse(detail || '[]') as string[];
      return new ApiError(
        'UNKNOWN_FIELD',
        `no custom field named ${keys.map((k) => `"${k}"`).join(', ')} exists for this resource${within}`,
        {
          context: keys.map((field) => ({ field, message: 'is not a field or custom field' })),
        },
      );
    }
    case 'VALIDATION_FAILED':
      return invalidBody(JSON.parse(detail) as Problem[]);
    default:
      // A code no statement of the engine raises: a bug, shown as such.
      return unexpected(new Error(`engage_fail raised an unknown code ${code}`));
  }
}

/** Connection-level failures of postgres.js and Node's sockets. */
const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  'ENOENT', // a unix socket's file, gone while the server restarts
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'ERR_STREAM_DESTROYED',
  // The port's own: a connection gave no answer within the statement timeout and a margin.
  'STATEMENT_STALLED',
]);

/** Values the caller sent that PostgreSQL could not read or compute with, told in our words by SQLSTATE. */
const CALLER_INPUT: Record<string, { message: string; hint?: string }> = {
  '22001': { message: 'a value in the request is longer than its field holds' },
  '22003': {
    message: 'a number in the request, or one computed from it, is out of range for its type',
    hint: 'A cast in select to a wider type (numeric rather than int, float8 rather than real) holds larger values.',
  },
  '22007': {
    message: 'a date or timestamp in the request is not in a form the database reads',
    hint: 'Send dates as YYYY-MM-DD and timestamps in ISO 8601 with an offset, such as 2026-12-01T09:00:00Z.',
  },
  '22008': {
    message: 'a date or timestamp in the request, or one computed from it, is out of range',
    hint: 'Send dates as YYYY-MM-DD and timestamps in ISO 8601 with an offset, with years from 0001 to 9999.',
  },
  '22012': { message: 'the request divides by zero' },
  '22021': { message: 'a value in the request holds a character the database cannot store, such as NUL' },
  '22P05': { message: 'a value in the request holds a character the database cannot store, such as \\u0000 in JSON' },
  '2201B': {
    message: 'a match or imatch pattern is not a valid regular expression',
    hint: 'Patterns are POSIX regular expressions: escape ( ) [ ] { } . * + ? with a backslash to match them as text.',
  },
  '22025': {
    message: 'a like or ilike pattern ends with a backslash, which escapes the character after it',
    hint: 'Write two backslashes to match a backslash itself.',
  },
  '42846': {
    message: 'a cast in select asks for a conversion the database does not make, such as a uuid to int',
    hint: 'Cast to text, or to a type of the same kind (int to numeric, timestamptz to date).',
  },
  '42601': {
    message: 'the full-text search query is not valid to_tsquery syntax',
    hint: 'fts takes words joined by & | ! and <->; plfts takes plain words, wfts web-search syntax.',
  },
  '42704': { message: 'the text-search configuration of the search does not exist' },
};

/**
 * What a failure of the caller's input is told, or undefined when it is not one: class 22 (a value
 * that did not parse or overflowed), 42846 (a cast in `select` PostgreSQL has not got), and a
 * text-search query or configuration PostgreSQL cannot read.
 */
function callerInputError(sqlstate: string, text: string): { message: string; hint?: string } | undefined {
  const ours = CALLER_INPUT[sqlstate];
  if (sqlstate.startsWith('22')) return ours ?? { message: 'a value in the request is not valid for its field' };
  if (sqlstate === '42846') return ours;
  if (sqlstate === '42601' && text.includes('tsquery')) return ours;
  if (sqlstate === '42704' && text.includes('text search configuration')) return ours;
  return undefined;
}

/**
 * Any thrown value as the ApiError a caller sees: an ApiError as it is, a database failure by its
 * SQLSTATE, anything else a bug (500 INTERNAL_ERROR). With the registry's tenancy, keys are told
 * without their tenant column, and what is missing is missing "in your <tenant>".
 */
export function mapDatabaseError(
  error: unknown,
  tenancy: Tenancy | null = null,
  ownTables: readonly string[] = [],
): ApiError {
  if (error instanceof ApiError) return error;
  const tenant = tenancy?.column;
  const within = tenancy ? ` in your ${tenancy.noun}` : '';
  const e = (error ?? {}) as DriverError;
  const sqlstate = typeof e.code === 'string' ? e.code : '';
  const text = typeof e.message === 'string' ? e.message : '';
  const detail = typeof e.detail === 'string' ? e.detail : '';
  const column = String(e.column_name ?? e.column ?? '');
  const constraint = String(e.constraint_name ?? e.constraint ?? '');

  if (sqlstate === 'EN001') return failedCheck(text, detail, within);
  const install = notInstalled(sqlstate, text, ownTables);
  if (install) return unexpected(Object.assign(install, { cause: error }));
  if (sqlstate === '23505') {
    const fields = keyFields(detail, tenant);
    const key = keyOf(detail, tenant);
    return new ApiError('CONFLICT', `a record with the same ${fields.join(', ') || 'key'} already exists${within}`, {
      details: key && `${key} is taken${within}`,
      context: { constraint, fields },
      cause: error,
    });
  }
  if (sqlstate === '23503') {
    const fields = keyFields(detail, tenant);
    const key = keyOf(detail, tenant);
    // A delete of a record others still point at, or a write pointing at a record that is not there.
    const pointedAt = /is still referenced/.test(detail);
    return new ApiError(
      'REFERENCE_NOT_FOUND',
      pointedAt
        ? `the record is still referenced by another${within}; delete or change that one first`
        : `the record that ${fields.join(', ') || 'a reference'} points to does not exist${within}`,
      {
        details: key && (pointedAt ? `${key} is still referenced${within}` : `${key} names no record${within}`),
        context: { constraint, fields },
        cause: error,
      },
    );
  }
  if (sqlstate === '23502') {
    return new ApiError('VALIDATION_FAILED', `the body is not valid: ${column || 'a field'} must not be null`, {
      context: [{ field: column, message: 'must not be null' }],
      cause: error,
    });
  }
  if (sqlstate === '23514') {
    return new ApiError('VALIDATION_FAILED', `the body is not valid: it breaks the rule ${constraint}`, {
      context: [{ field: '', message: `breaks ${constraint}` }],
      cause: error,
    });
  }
  if (sqlstate === '21000' && text.includes('ON CONFLICT')) {
    return new ApiError('VALIDATION_FAILED', 'the body is not valid: two items have the same on_conflict key', {
      context: [{ field: '', message: 'each item of an upsert must have its own key' }],
      cause: error,
    });
  }
  if (sqlstate === '54000') {
    return new ApiError('VALIDATION_FAILED', 'a value in the request is too large for the database to store or index', {
      hint: 'Send a shorter value.',
      cause: error,
    });
  }
  if (sqlstate === '42P10') {
    return new ApiError(
      'INVALID_QUERY',
      'on_conflict must name the fields of a unique constraint, such as id or external_id',
      { cause: error },
    );
  }

  if (error instanceof PoolBusy) {
    return new ApiError('DATABASE_UNAVAILABLE', error.message, { headers: { 'Retry-After': '1' }, cause: error });
  }
  const closed = text === 'PGlite is closed';
  // 08P01 (protocol violation) is a statement we built wrongly: a bug, not an outage.
  const unreachable = closed || UNREACHABLE.has(sqlstate) || (sqlstate.startsWith('08') && sqlstate !== '08P01');
  // Class 57P: the server shut down, crashed, is starting or ended an idle session; 53: out of resources.
  if (unreachable || sqlstate.startsWith('57P') || sqlstate.startsWith('53')) {
    return new ApiError('DATABASE_UNAVAILABLE', 'the database is unavailable; retry shortly', {
      headers: { 'Retry-After': '1' },
      cause: error,
    });
  }
  // Deadlocks, serialization failures and lock timeouts: the same request may succeed next time.
  if (sqlstate.startsWith('40') || sqlstate === '55P03') {
    return new ApiError('DATABASE_UNAVAILABLE', 'the request collided with another one on the same records; retry it', {
      headers: { 'Retry-After': '1' },
      cause: error,
    });
  }
  if (sqlstate === '57014') {
    return new ApiError(
      'QUERY_TIMEOUT',
      'the query ran longer than the statement timeout; narrow the filters or the page',
      {
        cause: error,
      },
    );
  }
  const refused = callerInputError(sqlstate, text);
  if (refused) return new ApiError('INVALID_QUERY', refused.message, { hint: refused.hint, cause: error });
  return unexpected(error);
}

/** PostgreSQL's messages for a value it could not read: the type (as it names it) and the value, where given. */
const UNREADABLE: ReadonlyArray<{ readonly pattern: RegExp; readonly type: number; readonly value?: number }> = [
  { pattern: /^invalid input syntax for type (.+?): "(.*)"$/s, type: 1, value: 2 },
  { pattern: /^invalid input value for enum (.+?): "(.*)"$/s, type: 1, value: 2 },
  { pattern: /^value "(.*)" is out of range for type (.+)$/s, type: 2, value: 1 },
  { pattern: /^value too long for type (.+?)(?:\(\d+\))?$/s, type: 1 },
];

/**
 * A value PostgreSQL could not read (class 22), told by the field it was for, where the statement's
 * resource has one field of the type PostgreSQL names: in a body (`body` holds the value), a 400
 * VALIDATION_FAILED for that field; in a filter, a 400 INVALID_QUERY naming it. A type the engine
 * checks itself rarely gets here; one it has no record for (an extension's) always does.
 */
export function namedField(error: unknown, fields: readonly Field[], body: string | null): unknown {
  const cause = error instanceof ApiError ? (error.cause as DriverError | undefined) : undefined;
  if (!cause || typeof cause.code !== 'string' || !cause.code.startsWith('22')) return error;
  const message = typeof cause.message === 'string' ? cause.message : '';
  for (const { pattern, type, value } of UNREADABLE) {
    const match = pattern.exec(message);
    if (!match) continue;
    const named = fields.filter((f) => catalogNames(f.type).includes(match[type]!));
    if (named.length !== 1) return error;
    const field = named[0]!;
    const text = value === undefined ? undefined : match[value];
    const expected = `a value of type ${match[type]}`;
    // The body's value, as its JSON writes it, or a filter's.
    if (body !== null && (text === undefined || body.includes(JSON.stringify(text).slice(1, -1)))) {
      return invalidBody([{ field: field.name, message: `must be ${expected} the database reads` }]);
    }
    return new ApiError(
      'INVALID_QUERY',
      `${text === undefined ? 'a value' : `"${text}"`} is not ${expected} the database reads, as field ${field.name} requires`,
      { context: { field: field.name, ...(text === undefined ? {} : { value: text }), expected }, cause },
    );
  }
  return error;
}
