/**
 * What the operations of the OpenAPI document share, once in `components` and referenced by `$ref`:
 * parameters, response headers, error responses and the error body (docs/contract.md section 5).
 */
import { SELECT_CASTS } from '../plan/casts.ts';

export type Json = Record<string, unknown>;

/** Query keys the engine reads as something other than a filter; a field so named is quoted. */
export const RESERVED_KEYS = new Set(['select', 'columns', 'on_conflict', 'order', 'limit', 'offset', 'and', 'or']);

/** Error responses operations name, by status: a component name and a description a host may replace. */
export const ERROR_RESPONSES = {
  400: [
    'BadRequest',
    'Bad Request: a malformed query, an unknown field, an unknown or ambiguous relation, an embed parameter for ' +
      'something not embedded, an aggregate that does not fit its field, an invalid body, or a PATCH or DELETE ' +
      'without a filter.',
  ],
  401: ['Unauthorized', 'Unauthorized: the caller is not known.'],
  403: ['Forbidden', 'Forbidden: the body acts for another tenant.'],
  404: ['NotFound', 'Not Found: nothing of that name.'],
  406: [
    'NotAcceptable',
    'Not Acceptable: an unsupported Accept, or a single object asked for when not exactly one row matches.',
  ],
  409: [
    'Conflict',
    'Conflict: a unique value is taken, a referenced record does not exist, or the first request with this ' +
      'Idempotency-Key is still running (IDEMPOTENCY_KEY_IN_PROGRESS: retry with the key).',
  ],
  412: [
    'PreconditionFailed',
    'Precondition Failed: a record the filters match is not at a version If-Match names, or none matches; ' +
      'nothing was written.',
  ],
  410: [
    'Gone',
    'Gone: the Last-Event-ID of a stream is older than the changes kept (CHANGE_POSITION_EXPIRED): read again ' +
      'and stream from the Change-Position of that read.',
  ],
  413: ['PayloadTooLarge', 'Payload Too Large: the body exceeds its limit.'],
  415: ['UnsupportedMediaType', 'Unsupported Media Type: the body is not application/json.'],
  416: ['RangeNotSatisfiable', 'Range Not Satisfiable: the range starts past the last row.'],
  429: [
    'TooManyRequests',
    'Too Many Requests: more requests than the rate limit allows in its window (RATE_LIMITED, transient); ' +
      'Retry-After says when the window ends. Under a rate limit every response carries RateLimit-Policy and ' +
      'RateLimit. Streams of changes: the tenant holds as many open on this server as it may.',
  ],
  422: [
    'UnprocessableContent',
    'Unprocessable Content: this Idempotency-Key came first with another request (IDEMPOTENCY_KEY_REUSED).',
  ],
} as const;
export type ErrorStatus = keyof typeof ERROR_RESPONSES;

export const ref = (section: 'schemas' | 'parameters' | 'responses' | 'headers', name: string): Json => ({
  $ref: `#/components/${section}/${name}`,
});

export const queryParameter = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

export const headerParameter = (name: string, description: string, schema: Json = { type: 'string' }): Json => ({
  name,
  in: 'header',
  required: false,
  description,
  schema,
});

const PAGINATION = 'Limiting and Pagination';
const DIGITS = { type: 'string', pattern: '^[0-9]+$' };

export const SELECT_FIELDS =
  'Filtering Columns: the fields to return, comma-separated, e.g. `select=id,name`. `alias:field` renames, ' +
  '`field::type` casts, `data->key` and `data->>key` reach into JSON fields; `*` (the default) is every field.';

/** Parameters shared by every resource. */
export const SHARED_PARAMETERS: Record<string, Json> = {
  // The select of writes; reads have one per resource (readSelectParameter), which details embedding.
  select: queryParameter(
    'select',
    `${SELECT_FIELDS} A write's select shows the written rows as a read does, embeds included (the GET of` +
      ' the resource lists its relations); it cannot aggregate.\n' +
      `Casts: ${SELECT_CASTS.join(', ')}.`,
  ),
  limit: queryParameter(
    'limit',
    `${PAGINATION}: the most rows to return. A page never exceeds the server's maximum.`,
    DIGITS,
  ),
  offset: queryParameter('offset', `${PAGINATION}: the rows to skip.`, DIGITS),
  and: queryParameter(
    'and',
    'Logic tree whose conditions must all hold, e.g. `and=(name.eq.a,or(value.gt.1,value.is.null))`: conditions are ' +
      '`field.operator.value`, groups `and(...)` and `or(...)` nest, `not.` negates; ' +
      'quote values holding `,` `.` `(` `)` ' +
      'with `"`. The key `not.and` negates the whole tree.',
  ),
  or: queryParameter(
    'or',
    'Logic tree of which one condition must hold, e.g. `or=(name.eq.a,value.gt.1)`; same syntax as `and`. ' +
      'The key `not.or` negates the whole tree.',
  ),
  columns: queryParameter(
    'columns',
    'Columns: the body keys to insert, comma-separated; other keys of the body are ignored.',
  ),
  on_conflict: queryParameter(
    'on_conflict',
    'On Conflict: the comma-separated fields of the unique constraint an upsert ' +
      '(`Prefer: resolution=...`) resolves on.',
  ),
  Range: headerParameter(
    'Range',
    `${PAGINATION}: the rows \`first-last\`, zero-based and inclusive, e.g. \`0-24\`, ` +
      'or `25-` for every row from 25 on; `items=0-24` also works.',
  ),
  'Range-Unit': headerParameter('Range-Unit', `${PAGINATION}: the unit of Range; only \`items\` is supported.`, {
    type: 'string',
    default: 'items',
  }),
  Prefer: headerParameter(
    'Prefer',
    'Preferences (RFC 7240), comma-separated; the first of each kind wins and unknown ones are ignored ' +
      'unless `handling=strict`.\n' +
      '- `count=exact|planned|estimated`: the total after the slash of Content-Range (GET, HEAD)\n' +
      '- `return=minimal|headers-only|representation`: what a write answers with (default minimal)\n' +
      '- `resolution=merge-duplicates|ignore-duplicates`: upsert on the unique fields of `on_conflict` (POST)\n' +
      '- `missing=default|null`: what fields an item of a bulk POST omits get\n' +
      '- `handling=strict|lenient`: strict refuses unknown preferences with 400\n' +
      '- `tx=commit|rollback`: rollback runs the request, then undoes it\n' +
      '- `max-affected=N`: with `handling=strict`, a PATCH or DELETE that would affect more than N rows fails',
  ),
  'If-Match': headerParameter(
    'If-Match',
    'Conditional Requests: the ETag of each record as it was read (comma-separated), or `*`. The write happens ' +
      'only if every record the filters match is at a version listed, and one is; otherwise 412 and nothing ' +
      'is written.',
  ),
  'If-None-Match': headerParameter(
    'If-None-Match',
    'Conditional Requests: with `Accept: application/vnd.pgrst.object+json`, the ETag of the record as it was ' +
      'read: 304 with no body while it is unchanged.',
  ),
  'Idempotency-Key': headerParameter(
    'Idempotency-Key',
    'Safe retries: a value unique to this write (a UUID), 1 to 255 printable ASCII characters, sent again ' +
      'unchanged with each retry. The first request with a key runs; a retry of it gets its response ' +
      '(Idempotent-Replayed: true) and writes nothing. Kept 24 hours per tenant; a request that failed keeps ' +
      'nothing.',
    { type: 'string', minLength: 1, maxLength: 255 },
  ),
  'Last-Event-ID': headerParameter(
    'Last-Event-ID',
    'With `Accept: text/event-stream`: the position to stream from, the id of the last event received or the ' +
      'Change-Position of a read; every change committed after it is sent, once. Left out: from now.',
  ),
  'Consistency-Token': headerParameter(
    'Consistency-Token',
    'Read after a write: the Consistency-Token header of a write response, sent back unchanged. With read ' +
      'replicas the read then runs where that write is already seen. A value that is not one is 400.',
  ),
};

/** The header components of a rate limit, there when one is on. */
export const RATE_LIMIT_HEADER_COMPONENTS: Record<string, Json> = {
  RateLimit: {
    description: 'Where the caller stands: `"default";r=<requests left>;t=<seconds until the window ends>`.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'The limit: `"default";q=<requests>;w=<window in seconds>`.',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer' } },
};

export const HEADERS: Record<string, Json> = {
  'Request-Id': {
    description: 'Identifies the request; an error body repeats it as request_id.',
    schema: { type: 'string' },
  },
  'Content-Range': {
    description: 'The rows returned and the total, e.g. `0-24/*`, or `0-24/3573` with `Prefer: count=exact`.',
    schema: { type: 'string' },
  },
  ETag: {
    description:
      'The version of the one record read (as a single object) or written: send it in If-Match to write ' +
      'only that version, or in If-None-Match to read it only once it changed.',
    schema: { type: 'string' },
  },
  'Idempotent-Replayed': {
    description: '`true` on the stored response of an earlier request with the same Idempotency-Key.',
    schema: { type: 'string', enum: ['true'] },
  },
  Location: {
    description: 'Where the created row can be read (with `Prefer: return=headers-only`).',
    schema: { type: 'string' },
  },
  'Change-Position': {
    description:
      'The position of the snapshot this read saw: stream the changes after it with `Accept: text/event-stream` ' +
      'and `Last-Event-ID: <this>`, and none is missed or sent twice.',
    schema: { type: 'string' },
  },
  'Consistency-Token': {
    description:
      "With read replicas, the primary's WAL position after the write, e.g. `0/3A1B2C8`: send it back on a " +
      'read that must see the write.',
    schema: { type: 'string' },
  },
};

export const ERROR_SCHEMA: Json = {
  type: 'object',
  description: 'The body of every error. Branch on the status class, then `code`, then `is_transient`.',
  required: ['name', 'message', 'code', 'is_transient', 'timestamp', 'status_code', 'contact_support', 'request_id'],
  properties: {
    name: { type: 'string', description: 'Error class name, e.g. APIError.' },
    message: { type: 'string', description: 'Human-readable; not to be parsed.' },
    code: { type: 'string', description: 'Stable machine-readable code, e.g. VALIDATION_FAILED; use it for logic.' },
    is_transient: { type: 'boolean', description: 'Whether the same request, retried, may succeed.' },
    timestamp: { type: 'string', format: 'date-time', description: 'When the error response was created.' },
    status_code: { type: 'integer', description: 'The HTTP status returned.' },
    contact_support: { type: 'boolean', description: 'Whether support escalation is likely needed.' },
    request_id: { type: 'string', description: 'Equals the Request-Id header.' },
    hint: { type: 'string', description: 'What to change, for some errors.' },
    context: { description: 'Details, for some errors, e.g. each validation problem by field.' },
  },
};

export const shared = (...names: string[]) => names.map((name) => ref('parameters', name));

export const errors = (...statuses: ErrorStatus[]) =>
  Object.fromEntries(statuses.map((status) => [status, ref('responses', ERROR_RESPONSES[status][0])]));

export const requestId = { 'Request-Id': ref('headers', 'Request-Id') };

/** What a 429 carries besides the request id. */
export const RATE_LIMIT_HEADERS = {
  'Retry-After': ref('headers', 'Retry-After'),
  RateLimit: ref('headers', 'RateLimit'),
  'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
};

/** What a write answers with besides its rows: the position a read after it may send back. */
export const consistency = { 'Consistency-Token': ref('headers', 'Consistency-Token') };
