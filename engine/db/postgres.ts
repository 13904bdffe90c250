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
 * backend: statements are not prepared, and the settings are the role's (settings.ts), which every
 * server connection takes at its start, instead of the connection's own.
 */
import postgres from 'postgres';
import { type Access, Admission, type AdmissionOptions } from './admission.ts';
import type { Database, DatabaseOptions, Queryable, SqlParam } from './port.ts';
import { connectionSettings } from './settings.ts';

/** Prepared statements one connection keeps before it is replaced (about 80 KB of backend memory each). */
export const MAX_PREPARED = 256;
/** Statement texts remembered to tell a repeated shape from a one-off. */
const SEEN_TEXTS = 4096;
/**
 * Statements pipelined on one connection at most: more wait for the next free one. Behind a
 * transaction pooler (`prepare: false`) none is: PgBouncer before 1.21 hands the server connection
 * back at the first ReadyForQuery, and the answer to a statement pipelined behind it reaches no one.
 */
const PIPELINE_DEPTH = 16;
/**
 * A statement in flight longer than this is taken to be slow, and no other is pipelined behind
 * it. Typical statements take 0.2 to 5 ms.
 */
const YOUNG_MS = 50;
/** How long past the statement timeout an answer may take before the connection counts as stuck. */
const DEADLINE_MARGIN_MS = 2000;
/** A connection is replaced once this old (times 1 to 2, so that they are not all replaced at once). */
const LIFETIME_MS = 30 * 60_000;

/**
 * Failures after which a postgres.js client (3.4) may hold statements that never settle: one
 * handed to it between its socket's 'error' and 'close' events is neither answered nor rejected.
 * Such a client is replaced before its connection serves another statement; what it still owes
 * when its socket closes is rejected then (`lost`).
 */
const BROKEN = new Set(['ECONNRESET', 'EPIPE', 'CONNECTION_CLOSED', '57P01', '57P02', 'STATEMENT_STALLED']);
const isBroken = (error: unknown) => BROKEN.has(String((error as { code?: unknown } | null)?.code));

/** The port's own failure: the database gave no answer within the deadline. A 503 (db/errors.ts). */
const stalled = (ms: number) =>
  Object.assign(new Error(`the database gave no answer within ${ms} ms`), { code: 'STATEMENT_STALLED' });
/** The connection closed with the statement unanswered. A 503, and broken. */
const closedUnanswered = () =>
  Object.assign(new Error('the connection to the database closed before it answered'), { code: 'CONNECTION_CLOSED' });

interface Connection {
  readonly sql: postgres.Sql;
  /** Texts prepared on this connection. */
  readonly prepared: Set<string>;
  /** Past MAX_PREPARED: replaced once its current statement is done. */
  full: boolean;
  /** When it is replaced, once its current statement is done (performance.now()). */
  readonly retireAt: number;
  /** The rejections of the statements handed to it and not yet answered. */
  readonly owed: Set<(error: Error) => void>;
  /**
   * Its socket closed: it takes no statement again. postgres.js would write one to the closed socket
   * from a timer (an exception that ends the process), or open a new session for it, outside the
   * transaction it belongs to.
   */
  gone: boolean;
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
  /** How long a statement waits for a row lock, in ms (lock_timeout; settings.ts has the default). */
  readonly lockTimeoutMs?: number;
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
  const pooled = options.prepare === false;
  const admissionOptions: AdmissionOptions = {
    connections: size,
    laneLimit: options.laneLimit ?? Math.ceil(size / 2),
    depth: pooled ? 1 : PIPELINE_DEPTH,
    youngMs: YOUNG_MS,
    queueTimeoutMs: options.queueTimeoutMs ?? 5000,
    queueMax: options.queueMax ?? 1000,
  };
  const admission = new Admission(admissionOptions);
  const seen = new SeenTexts();
  const settings = connectionSettings(options);
  const open = (onclose: () => void, max = 1): postgres.Sql =>
    postgres(url, {
      max,
      // Connections are replaced here (onConnection), never closed by the driver on its own: a close
      // is then always a failure or our own end, and `lost` can reject what is left unanswered.
      max_lifetime: null,
      onclose,
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
  const connect = (): Connection => {
    const connection: Connection = {
      sql: open(() => lost(connection)),
      prepared: new Set(),
      full: false,
      gone: false,
      retireAt: performance.now() + LIFETIME_MS * (1 + Math.random()),
      owed: new Set(),
    };
    return connection;
  };
  const connections = Array.from({ length: size }, connect);
  /** A connection of its own for /ready, so a saturated pool cannot delay the answer. */
  let pinger: Connection | undefined;
  let closed = false;
  /** Past the statement timeout and a margin a driver still owing an answer is stuck: none without a timeout. */
  const deadlineMs = options.statementTimeoutMs ? options.statementTimeoutMs + DEADLINE_MARGIN_MS : 0;

  /** Ends a connection taken out of use: a broken one at once, rejecting what it holds (a 503). */
  const retire = (connection: Connection, broken: boolean) =>
    void connection.sql.end({ timeout: broken ? 0 : 5 }).catch(() => {});

  /**
   * The socket of `connection` closed. Unless we ended it, it failed: nothing it still owes will be
   * answered, and postgres.js keeps some of it pending for good (statements handed to it between
   * the socket's 'error' and 'close', and those queued for its next connection, which it retries
   * one by one with a growing backoff while the server is down). All are rejected now, and the
   * connection replaced.
   */
  const lost = (connection: Connection) => {
    connection.gone = true;
    const error = closedUnanswered();
    for (const reject of connection.owed) reject(error);
    connection.owed.clear();
    const slot = connections.indexOf(connection);
    if (closed || (slot < 0 && pinger !== connection)) return;
    if (slot >= 0) connections[slot] = connect();
    else pinger = undefined;
    retire(connection, true);
  };

  /**
   * `run`'s promise, rejected at once if the connection's socket closes first (`lost`), or with
   * STATEMENT_STALLED once the deadline passes with the driver owing an answer.
   */
  const answered = <T>(connection: Connection, run: () => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (connection.gone) return reject(closedUnanswered());
      const timer = deadlineMs ? setTimeout(() => reject(stalled(deadlineMs)), deadlineMs) : undefined;
      connection.owed.add(reject);
      run()
        .then(resolve, reject)
        .finally(() => {
          clearTimeout(timer);
          connection.owed.delete(reject);
        });
    });

  const queryable = (connection: Connection, sql: postgres.Sql): Queryable => ({
    query: (text, params = []) => {
      let prepare = !pooled && (seen.again(text) || connection.prepared.has(text));
      if (prepare && !connection.prepared.has(text)) {
        if (connection.prepared.size >= MAX_PREPARED) {
          connection.full = true;
          prepare = false;
        } else connection.prepared.add(text);
      }
      return answered(connection, () => sql.unsafe(text, params as SqlParam[], { prepare }) as never);
    },
  });

  /**
   * Runs `fn` on a connection `lane` is admitted to. A connection full of prepared statements or
   * past its lifetime is then replaced, and so is a broken or stuck one, before its slot serves
   * anyone else; ending a broken one at once rejects whatever it still holds (a 503).
   */
  const onConnection = <T>(
    lane: string | undefined,
    access: Access,
    fn: (connection: Connection) => Promise<T>,
  ): Promise<T> =>
    admission.run(lane ?? '', access, async (slot) => {
      const connection = connections[slot]!;
      let broken = false;
      try {
        return await fn(connection);
      } catch (error) {
        broken = isBroken(error);
        throw error;
      } finally {
        // Statements pipelined with this one may have replaced it already; a closed pool opens none.
        const retiring = connection.full || broken || performance.now() > connection.retireAt;
        if (retiring && !closed && connections[slot] === connection) {
          connections[slot] = connect();
          retire(connection, broken);
        }
      }
    });

  /**
   * A transaction on a connection of its own (one per client, and admitted alone), each statement
   * under the deadline. Not postgres.js's `begin`, which sends its ROLLBACK even on a connection
   * whose socket has closed (see `gone`). A connection that broke takes its transaction with it on
   * the server; only one still in use is rolled back.
   */
  const transaction = async <T>(c: Connection, fn: (tx: Queryable) => Promise<T>): Promise<T> => {
    const run = (text: string) => answered(c, () => c.sql.unsafe(text));
    await run('BEGIN');
    let result: T;
    try {
      result = await fn(queryable(c, c.sql));
    } catch (error) {
      if (!isBroken(error)) await run('ROLLBACK');
      throw error;
    }
    await run('COMMIT');
    return result;
  };

  return {
    kind: 'postgres',
    query: (text, params, lane, locks = false) =>
      onConnection(lane, locks ? 'locking' : 'shared', (c) => queryable(c, c.sql).query(text, params)),
    transaction: (fn, lane) => onConnection(lane, 'exclusive', (c) => transaction(c, fn)),
    exec: (text) =>
      onConnection(undefined, 'exclusive', async (c) => void (await answered(c, () => c.sql.unsafe(text)))),
    ping: async () => {
      if (closed) throw Object.assign(new Error('the pool is closed'), { code: 'CONNECTION_ENDED' });
      pinger ??= connect();
      const c = pinger;
      try {
        await answered(c, () => c.sql`SELECT 1`);
      } catch (error) {
        // A stranded ping would fail every later one: start afresh.
        if (isBroken(error) && pinger === c) {
          pinger = undefined;
          retire(c, true);
        }
        throw error;
      }
    },
    stats: () => admission.stats(),
    close: async () => {
      closed = true;
      await Promise.all([...connections, ...(pinger ? [pinger] : [])].map((c) => c.sql.end({ timeout: 5 })));
    },
  };
}
