/**
 * Every failure the engine or server can report, as a value: a code from the contract (the
 * table of docs/errors.md), its HTTP status, and a message that tells the caller what to
 * change. Errors are built here and rendered in one place (server/errors.ts).
 */

const CODES = {
  /** A request that is not valid HTTP (Node refuses it before the app sees it). */
  INVALID_REQUEST: 400,
  INVALID_QUERY: 400,
  UNKNOWN_FIELD: 400,
  /** `select` embeds a relation the resource does not have. */
  UNKNOWN_RELATION: 400,
  /** `select` names a resource that several relations lead to, without saying which (PostgREST's 300, PGRST201). */
  AMBIGUOUS_RELATION: 300,
  /** A parameter (`x.limit`, `x.value=eq.1`) addresses an embed the select does not have. */
  NOT_EMBEDDED: 400,
  /** An aggregate that does not fit its field, its level, or the resource. */
  INVALID_AGGREGATE: 400,
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  FILTER_REQUIRED: 400,
  INVALID_PREFERENCE: 400,
  /** An `Idempotency-Key` that is empty, too long or not printable ASCII. */
  INVALID_IDEMPOTENCY_KEY: 400,
  UNAUTHORIZED: 401,
  MAX_AFFECTED_EXCEEDED: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  NOT_ACCEPTABLE: 406,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  REFERENCE_NOT_FOUND: 409,
  /** The request that first sent this `Idempotency-Key` is still running. */
  IDEMPOTENCY_KEY_IN_PROGRESS: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  /** This `Idempotency-Key` came first with another request (method, target or body). */
  IDEMPOTENCY_KEY_REUSED: 422,
  /** `If-Match` names none of the versions the records written are at. */
  PRECONDITION_FAILED: 412,
  /** A stream's `Last-Event-ID` is older than the changes kept (CHANGES_RETENTION_HOURS): read again. */
  CHANGE_POSITION_EXPIRED: 410,
  /** More requests than the rate limit allows in its window (`Retry-After` says when to try again). */
  RATE_LIMITED: 429,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  DATABASE_UNAVAILABLE: 503,
  QUERY_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof CODES;

/** A code of the host's own (`INVALID_VERSION_HEADER`), which the engine does not raise: it brings its status. */
export type HostErrorCode = string;

/** What a host's own code brings: its status, and whether retrying may succeed. */
export interface HostErrorOptions extends ApiErrorOptions {
  readonly status: number;
  readonly transient?: boolean;
}

/** Codes whose retry, unchanged, may succeed. */
const TRANSIENT: ReadonlySet<ErrorCode> = new Set([
  'DATABASE_UNAVAILABLE',
  'QUERY_TIMEOUT',
  'REQUEST_TIMEOUT',
  'RATE_LIMITED',
  'IDEMPOTENCY_KEY_IN_PROGRESS',
]);

export interface ApiErrorOptions {
  /** What to change, where the message alone does not say. */
  hint?: string | undefined;
  /**
   * More about what went wrong, as PostgREST's `details` gives it (the row count, the key that
   * clashed; the candidate relations of an ambiguous embed).
   */
  details?: string | readonly unknown[] | undefined;
  context?: unknown;
  /** Extra response headers (Allow, WWW-Authenticate, Retry-After, Content-Range). */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  override readonly name = 'APIError';
  readonly code: ErrorCode | HostErrorCode;
  readonly status: number;
  readonly isTransient: boolean;
  readonly contactSupport: boolean;
  readonly hint: string | undefined;
  readonly details: string | readonly unknown[] | undefined;
  readonly context: unknown;
  readonly headers: Record<string, string>;
  /** In a batch's answer, the index of the operation that failed. */
  readonly operation: number | undefined;

  /** An error of the engine's closed list, its status from it; or a host's own code with its status. */
  constructor(code: ErrorCode, message: string, options?: ApiErrorOptions);
  constructor(code: HostErrorCode, message: string, options: HostErrorOptions);
  constructor(code: string, message: string, options: ApiErrorOptions & Partial<HostErrorOptions> = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    const own = Object.hasOwn(CODES, code) ? (code as ErrorCode) : null;
    this.status = own ? CODES[own] : (options.status ?? 500);
    this.isTransient = own ? TRANSIENT.has(own) : (options.transient ?? false);
    this.contactSupport = this.status >= 500 && !this.isTransient;
    this.hint = options.hint;
    this.details = options.details;
    this.context = options.context;
    this.headers = options.headers ?? {};
    this.operation = undefined;
  }

  /** The same failure, as operation `index` of a batch caused it. */
  at(index: number): ApiError {
    const copy = Object.create(ApiError.prototype, Object.getOwnPropertyDescriptors(this)) as ApiError;
    return Object.defineProperty(copy, 'operation', { value: index, enumerable: true });
  }
}

/**
 * 401 for a request the host does not let in, by its own credentials (an API key, a session):
 * `message` says what is wrong, `hint` how to get in.
 */
export const unauthorized = (
  message = 'the request is not authorized: its credentials are missing or not valid',
  hint?: string,
): ApiError => new ApiError('UNAUTHORIZED', message, { hint });

/** 401 for a missing or bad bearer token; `WWW-Authenticate: Bearer` tells clients which scheme to use. */
export const bearerRefused = (message = 'the bearer token is unknown, expired or revoked', hint?: string): ApiError =>
  new ApiError('UNAUTHORIZED', message, { hint, headers: { 'WWW-Authenticate': 'Bearer' } });

/** 409 for a write whose Idempotency-Key another request, still running, took first. */
export const idempotencyInProgress = (): ApiError =>
  new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS', 'the first request with this Idempotency-Key is still running', {
    hint: 'Retry shortly with the same key: you will get its response.',
    headers: { 'Retry-After': '1' },
  });

/** What is wrong with a body's value: its item (in an array body), its field, and what it must be. */
export interface Problem {
  readonly item?: number;
  readonly field: string;
  readonly message: string;
}

/** A problem as a sentence's words: `item 2: value must be a number`. */
const showProblem = (p: Problem) =>
  `${p.item === undefined ? '' : `item ${p.item}: `}${p.field || 'the item'} ${p.message}`;

/** 400 VALIDATION_FAILED: the first problem (and how many more) in the message, each on a line of `details`. */
export function invalidBody(problems: readonly Problem[]): ApiError {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return new ApiError('VALIDATION_FAILED', `the body is not valid: ${showProblem(problems[0]!)}${more}`, {
    details: problems.map(showProblem).join('\n'),
    context: problems,
  });
}
