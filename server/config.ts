/** Configuration from the environment, checked once at start-up (docs/configuration.md lists them). */
import { availableParallelism } from 'node:os';
import * as v from 'valibot';
import { Problem } from './problems.ts';

const wholeNumber = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.string(),
    v.regex(/^\d+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );
const int = (fallback: number, min = 0, max?: number) => v.optional(wholeNumber(min, max), String(fallback));
/** `1` or `true` on, `0` or `false` off. */
const flag = (fallback: '0' | '1' = '0') =>
  v.optional(
    v.pipe(
      v.picklist(['0', '1', 'true', 'false'], 'must be 1 or 0'),
      v.transform((value) => value === '1' || value === 'true'),
    ),
    fallback,
  );

/** postgres://[user[:password]@]host[:port]/database, as libpq and postgres.js read it. */
const databaseUrl = v.pipe(
  v.string(),
  v.check(
    (text) => URL.canParse(text) && /^postgres(ql)?:$/.test(new URL(text).protocol),
    'must be a URL such as postgres://user:password@127.0.0.1:5432/engage',
  ),
);

const ConfigSchema = v.object({
  PORT: int(3000, 1, 65535),
  HOST: v.optional(v.string(), '127.0.0.1'),
  /** PostgreSQL through postgres.js when set; PGlite in PGLITE_DIR otherwise. */
  DATABASE_URL: v.optional(databaseUrl),
  PGLITE_DIR: v.optional(v.string(), './.data'),
  /** `0` behind a transaction pooler (PgBouncer): no prepared statements, the settings the role's. */
  DATABASE_PREPARE: flag('1'),
  /** Streaming replicas (comma-separated URLs) that serve GET and HEAD; needs DATABASE_URL. */
  READ_DATABASE_URL: v.optional(v.pipe(v.string(), v.minLength(1))),
  /** A replica that has not replayed what the primary had written this long ago serves no reads. */
  READ_MAX_LAG_MS: int(1000, 1),
  MAX_ROWS: int(1000, 1),
  /** Twice the cores: PostgreSQL on the same machine gains nothing from more connections. */
  DB_POOL_SIZE: int(Math.max(2, availableParallelism() * 2), 1),
  STATEMENT_TIMEOUT_MS: int(15000),
  /** How long a write waits for a row another holds before it is refused with 503 (lock_timeout); 0 for ever. */
  LOCK_TIMEOUT_MS: int(3000),
  /** How long a statement may wait for a free connection before the request is refused with 503. */
  DB_QUEUE_TIMEOUT_MS: int(5000, 1),
  /** How many statements may wait for a connection at once; more are refused with 503 at once. */
  DB_QUEUE_MAX: int(1000, 1),
  /** The most connections one organisation's requests may hold at once; half the pool when unset. */
  DB_ORGANISATION_CONNECTIONS: v.optional(wholeNumber(1)),
  /** Processes serving the port (node:cluster); more than one needs DATABASE_URL. */
  WORKERS: int(1, 1),
  /** The largest import file POST /v1/files takes. */
  FILE_UPLOAD_LIMIT: int(100 * 1024 * 1024, 1),
  /** The request line and headers must arrive within this of the connection or request starting (408). */
  HEADERS_TIMEOUT_MS: int(10_000, 1),
  /** The whole request, body included, must arrive within this (408): bounds the slowest upload. */
  REQUEST_TIMEOUT_MS: int(300_000, 1),
  /** The longest silence while a request body is awaited (408). */
  BODY_TIMEOUT_MS: int(10_000, 1),
  /** How long an idle keep-alive connection is kept; behind a balancer, longer than its idle timeout. */
  KEEP_ALIVE_TIMEOUT_MS: int(5000, 1),
  /** How long SIGTERM waits for requests in flight and the import batch before closing what is left. */
  SHUTDOWN_TIMEOUT_MS: int(10_000),
  LOG_LEVEL: v.optional(v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
  /** `json` (one object a line) or `pretty` for people reading a terminal (pino-pretty). */
  LOG_FORMAT: v.optional(v.picklist(['json', 'pretty']), 'json'),
  /** Serves GET /metrics (Prometheus) on a listener of its own on this port (same HOST). */
  METRICS_PORT: v.optional(wholeNumber(1, 65535)),
  /** Serves GET /metrics on the main port to `Authorization: Bearer <METRICS_TOKEN>`. */
  METRICS_TOKEN: v.optional(v.pipe(v.string(), v.minLength(16, 'must have at least 16 characters'))),
  /** `1`: a Server-Timing header (parse, plan, compile, db, respond) on resource responses. */
  SERVER_TIMING: flag(),
  /** `1`: statement plans for `Accept: application/vnd.pgrst.plan+json` (PostgREST's db-plan-enabled). */
  PLAN_ENABLED: flag(),
  /** Where the JSON of a page of plain rows is built: `database` (PostgreSQL) or `node` (docs/architecture.md). */
  JSON_BUILT_BY: v.optional(v.picklist(['database', 'node']), 'database'),
  /** `1`: webhooks may go to private, loopback and link-local addresses (a receiver on this machine). */
  WEBHOOK_ALLOW_PRIVATE: flag(),
  /** How long a write's Idempotency-Key and its response are kept. */
  IDEMPOTENCY_HOURS: int(24, 1),
  /** The most operations one batch (`/api/v1/$batch`) holds. */
  BATCH_MAX_OPERATIONS: int(100, 1),
  /** Seconds between the `: ping` comments of a stream of changes (docs/streams.md). */
  STREAM_HEARTBEAT_S: int(15, 1),
  /** Seconds within which a stream whose token was revoked ends. */
  STREAM_REAUTH_S: int(30, 1),
  /** Streams an organisation may hold open on each process (429 past it). */
  STREAM_MAX_PER_TENANT: int(100, 1),
  /** Hours changes are kept for streams to resume from (410 CHANGE_POSITION_EXPIRED past them). */
  CHANGES_RETENTION_HOURS: int(24, 1),
  /** `N/S`: each token may make N requests per S seconds (429 past it); off when unset. */
  RATE_LIMIT: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[1-9]\d{0,8}\/[1-9]\d{0,6}$/, 'must be N/S: N requests per S seconds, both whole numbers from 1'),
      v.transform((text) => {
        const [requests, seconds] = text.split('/').map(Number);
        return { requests: requests!, seconds: seconds! };
      }),
    ),
  ),
});

export type Config = v.InferOutput<typeof ConfigSchema>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const known = Object.fromEntries(
    Object.keys(ConfigSchema.entries).map((k) => [k, env[k] === '' ? undefined : env[k]]),
  );
  const result = v.safeParse(ConfigSchema, known);
  if (!result.success) {
    const problems = result.issues.map((i) => `${v.getDotPath(i) ?? '?'} ${i.message}`).join('; ');
    throw new Problem(`Invalid configuration: ${problems}`);
  }
  if (result.output.READ_DATABASE_URL && !result.output.DATABASE_URL)
    throw new Problem('Invalid configuration: READ_DATABASE_URL needs DATABASE_URL (the primary that takes writes)');
  // Node refuses a server whose headers timeout is above its request timeout.
  if (result.output.HEADERS_TIMEOUT_MS > result.output.REQUEST_TIMEOUT_MS)
    throw new Problem('Invalid configuration: HEADERS_TIMEOUT_MS must not be above REQUEST_TIMEOUT_MS');
  return result.output;
}
