/**
 * The port on postgres.js: a pool of single-connection clients behind admission control
 * (admission.ts), which picks the connection of each statement: an idle one, or one whose
 * statements are young to pipeline on, within the caller's share of the pool.
 *
 * One postgres.js client with n connections would pool too, but its pool keeps busy connections in
 * a queue that only shrinks when it drains; under steady load it grows by one slot per statement
 * and each release scans it (8% of the server's CPU after 10 s of by-id reads in a profile).
 *
 * Statements are prepared from their second use on, and a connection that has prepared
 * MAX_PREPARED of them is replaced by a fresh one: each prepared statement holds memory in its
 * backend for as long as the connection lives, and callers choose the statements' shapes.
 *
 * Behind a transaction pooler (PgBouncer's pool_mode=transaction, DATABASE_PREPARE=false) a
 * connection is a different backend from one transaction to the next, so nothing may be left on a
 * backend: statements are not prepared, and the settings are made for each statement's
 * transaction (`set_config(..., true)`) instead of once per connection.
 */
import postgres from 'postgres';
import { Admission, type AdmissionOptions } from './admission.ts';
import {
  type Database,
  type DatabaseOptions,
  PLAN_CACHE_MODE,
  PLANNER_SETTINGS,
  type Queryable,
  type SqlParam,
} from './port.ts';

/** Prepared statements one connection keeps before it is replaced (about 80 KB of backend memory each). */
export const MAX_PREPARED = 256;
/** Statement texts remembered to tell a repeated shape from a one-off. */
const SEEN_TEXTS = 4096;
/** Statements pipelined on one connection at most: more wait for the next free one. */
const PIPELINE_DEPTH = 16;
/**
 * A statement in flight longer than this is taken to be slow, and no other is pipelined behind
 * it. Typical statements take 0.2 to 5 ms.
 */
const YOUNG_MS = 50;
/** How long past the statement timeout an answer may take before the connection counts as stuck. */
const DEADLINE_MARGIN_MS = 2000;

/**
 * Failures after which a postgres.js client (3.4) may hold statements that never settle: one
 * handed to it between its socket's 'error' and 'close' events is neither answered nor rejected
 * (a backend terminated while idle, or a server restarted, shows as ECONNRESET on the next
 * statement). Such a client is replaced before its connection serves another statement.
 */
const BROKEN = new Set(['ECONNRESET', 'EPIPE', 'CONNECTION_CLOSED', '57P01', '57P02', 'STATEMENT_STALLED']);
const isBroken = (error: unknown) => BROKEN.has(String((error as { code?: unknown } | null)?.code));

/** The port's own failure: the database gave no answer within the deadline. A 503 (db/errors.ts). */
const stalled = (ms: number) =>
  Object.assign(new Error(`the database gave no answer within ${ms} ms`), { code: 'STATEMENT_STALLED' });

interface Connection {
  readonly sql: postgres.Sql;
  /** Texts prepared on this connection. */
  readonly prepared: Set<string>;
  /** Past MAX_PREPARED: replaced once its current statement is done. */
  full: boolean;
}

/** The texts run lately, least recent first: a text seen before is worth preparing. */
class SeenTexts {
  readonly #texts = new Set<string>();

  /** Records `text` and says whether it was already there. */
  again(text: string): boolean {
    const known = this.#texts.delete(text);
    this.#texts.add(text);
    if (this.#texts.size > SEEN_TEXTS) this.#texts.delete(this.#texts.values().next().value!);
    return known;
  }
}

export interface PostgresOptions extends DatabaseOptions {
  /** Prepare repeated statements and make the settings once per connection (false: behind a transaction pooler). */
  readonly prepare?: boolean;
  /** The most connections one lane (organisation) may hold; half the pool by default. */
  readonly laneLimit?: number;
  /** The longest a statement waits for a connection, in ms (DB_QUEUE_TIMEOUT_MS). */
  readonly queueTimeoutMs?: number;
  /** The most statements waiting for a connection (DB_QUEUE_MAX). */
  readonly queueMax?: number;
}

export function connectPostgres(url: string, options: PostgresOptions = {}): Database {
  const size = Math.max(1, options.poolSize ?? 10);
  const admissionOptions: AdmissionOptions = {
    connections: size,
    laneLimit: options.laneLimit ?? Math.ceil(size / 2),
    depth: PIPELINE_DEPTH,
    youngMs: YOUNG_MS,
    queueTimeoutMs: options.queueTimeoutMs ?? 5000,
    queueMax: options.queueMax ?? 1000,
  };
  const admission = new Admission(admissionOptions);
  const seen = new SeenTexts();
  const pooled = options.prepare === false;
  const settings = {
    statement_timeout: options.statementTimeoutMs ?? 0,
    plan_cache_mode: PLAN_CACHE_MODE,
    ...PLANNER_SETTINGS,
  };
  const open = (max = 1): postgres.Sql =>
    postgres(url, {
      max,
      prepare: !pooled,
      // Parameters are text and results JSON text: no array types to learn, and no statement at each
      // connection's start (one ended by the server then was a rejection nobody could catch).
      fetch_types: false,
      onnotice: () => {},
      connection: {
        // PgBouncer keeps these per client; it refuses a connection that asks for other settings.
        application_name: 'engage',
        TimeZone: 'UTC',
        // CSV prints dates and timestamps as PostgreSQL does (compile/csv.ts): always in ISO form.
        DateStyle: 'ISO, MDY',
        ...(pooled ? {} : settings),
      },
    });
  /**
   * The settings for one transaction, behind a pooler. The values are the configuration's (checked
   * at start-up), written once; a parameter would cost the statement a round trip to describe it.
   */
  const localSettings = `SELECT ${Object.entries(settings)
    .map(([name, value]) => `set_config('${name}', '${value}', true)`)
    .join(', ')}`;
  const connect = (): Connection => ({ sql: open(), prepared: new Set(), full: false });
  const connections = Array.from({ length: size }, connect);
  /** A connection of its own for /ready, so a saturated pool cannot delay the answer. */
  let pinger: postgres.Sql | undefined;
  let closed = false;
  /** Past the statement timeout and a margin a driver still owing an answer is stuck: none without a timeout. */
  const deadlineMs = options.statementTimeoutMs ? options.statementTimeoutMs + DEADLINE_MARGIN_MS : 0;

  /**
   * `run`'s promise, or STATEMENT_STALLED once the deadline passes with the driver owing an answer.
   * `run` gets `owing(false)` to stop the clock while the caller's own code runs (a transaction's body).
   */
  const answered = <T>(run: (owing: (yes: boolean) => void) => Promise<T>): Promise<T> => {
    if (!deadlineMs) return run(() => {});
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const owing = (yes: boolean) => {
        clearTimeout(timer);
        if (yes) timer = setTimeout(() => reject(stalled(deadlineMs)), deadlineMs);
      };
      owing(true);
      run(owing)
        .then(resolve, reject)
        .finally(() => owing(false));
    });
  };

  /**
   * One statement in a transaction of its own, with the settings made for that transaction, behind a
   * pooler. The four are pipelined: postgres.js sends them in order, with no other statement between.
   */
  const settled = async <T>(sql: postgres.Sql, text: string, params: readonly SqlParam[]): Promise<T> => {
    const outcomes = await Promise.allSettled([
      sql.unsafe('BEGIN'),
      sql.unsafe(localSettings),
      sql.unsafe(text, params as SqlParam[]),
      // After a failed statement PostgreSQL takes COMMIT as ROLLBACK.
      sql.unsafe('COMMIT'),
    ]);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    return (outcomes[2] as PromiseFulfilledResult<T>).value;
  };

  /** `inTransaction`: `sql` is a transaction's, which made the settings when it began. */
  const queryable = (
    connection: Connection,
    sql: postgres.Sql | postgres.TransactionSql,
    inTransaction: boolean,
  ): Queryable => ({
    query: (text, params = []) => {
      if (pooled && !inTransaction) return answered(() => settled(sql as postgres.Sql, text, params));
      let prepare = !pooled && (seen.again(text) || connection.prepared.has(text));
      if (prepare && !connection.prepared.has(text)) {
        if (connection.prepared.size >= MAX_PREPARED) {
          connection.full = true;
          prepare = false;
        } else connection.prepared.add(text);
      }
      return answered(() => sql.unsafe(text, params as SqlParam[], { prepare }) as never);
    },
  });

  /**
   * Runs `fn` on a connection `lane` is admitted to. A connection full of prepared statements is
   * then replaced, and so is a broken or stuck one, before its slot serves anyone else; ending a
   * broken one at once rejects whatever it still holds (CONNECTION_DESTROYED, a 503).
   */
  const onConnection = <T>(
    lane: string | undefined,
    exclusive: boolean,
    fn: (connection: Connection) => Promise<T>,
  ): Promise<T> =>
    admission.run(lane ?? '', exclusive, async (slot) => {
      const connection = connections[slot]!;
      let broken = false;
      try {
        return await fn(connection);
      } catch (error) {
        broken = isBroken(error);
        throw error;
      } finally {
        // Statements pipelined with this one may have replaced it already.
        if ((connection.full || broken) && connections[slot] === connection) {
          connections[slot] = connect();
          void connection.sql.end({ timeout: broken ? 0 : 5 }).catch(() => {});
        }
      }
    });

  /** A transaction whose BEGIN and COMMIT are under the deadline; each statement inside has its own. */
  const transaction = <T>(c: Connection, fn: (tx: Queryable) => Promise<T>): Promise<T> =>
    answered(
      (owing) =>
        c.sql.begin(async (tx) => {
          if (pooled) await tx.unsafe(localSettings);
          owing(false);
          try {
            return await fn(queryable(c, tx, true));
          } finally {
            owing(true);
          }
        }) as Promise<T>,
    );

  return {
    kind: 'postgres',
    query: (text, params, lane) => onConnection(lane, false, (c) => queryable(c, c.sql, false).query(text, params)),
    transaction: (fn, lane) => onConnection(lane, true, (c) => transaction(c, fn)),
    exec: (text) => onConnection(undefined, true, async (c) => void (await answered(() => c.sql.unsafe(text)))),
    ping: async () => {
      if (closed) throw Object.assign(new Error('the pool is closed'), { code: 'CONNECTION_ENDED' });
      pinger ??= open();
      const sql = pinger;
      try {
        await answered(() => sql`SELECT 1`);
      } catch (error) {
        // A stranded ping would fail every later one: start afresh.
        if (isBroken(error) && pinger === sql) {
          pinger = undefined;
          void sql.end({ timeout: 0 }).catch(() => {});
        }
        throw error;
      }
    },
    stats: () => admission.stats(),
    close: async () => {
      closed = true;
      await Promise.all([...connections, ...(pinger ? [{ sql: pinger }] : [])].map((c) => c.sql.end({ timeout: 5 })));
    },
  };
}
