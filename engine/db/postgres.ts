/**
 * The port on postgres.js: a pool of single-connection clients behind admission control
 * (admission.ts), each running one statement or transaction at a time.
 *
 * One postgres.js client with n connections would pool too, but its pool keeps busy connections in
 * a queue that only shrinks when it drains; under steady load it grows by one slot per statement
 * and each release scans it (8% of the server's CPU after 10 s of by-id reads in a profile).
 *
 * Statements are prepared from their second use on, and a connection that has prepared
 * MAX_PREPARED of them is replaced by a fresh one: each prepared statement holds memory in its
 * backend for as long as the connection lives, and callers choose the statements' shapes.
 */
import postgres from 'postgres';
import { Admission, type AdmissionOptions } from './admission.ts';
import { type Database, type DatabaseOptions, PLAN_CACHE_MODE, type Queryable, type SqlParam } from './port.ts';

/** Prepared statements one connection keeps before it is replaced (about 80 KB of backend memory each). */
export const MAX_PREPARED = 256;
/** Statement texts remembered to tell a repeated shape from a one-off. */
const SEEN_TEXTS = 4096;

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
    slots: size,
    laneLimit: options.laneLimit ?? Math.ceil(size / 2),
    queueTimeoutMs: options.queueTimeoutMs ?? 5000,
    queueMax: options.queueMax ?? 1000,
  };
  const admission = new Admission(admissionOptions);
  const seen = new SeenTexts();
  const open = (max = 1): postgres.Sql =>
    postgres(url, {
      max,
      onnotice: () => {},
      connection: {
        application_name: 'engage',
        TimeZone: 'UTC',
        statement_timeout: options.statementTimeoutMs ?? 0,
        plan_cache_mode: PLAN_CACHE_MODE,
      },
    });
  const connect = (): Connection => ({ sql: open(), prepared: new Set(), full: false });
  const connections = Array.from({ length: size }, connect);
  /** A connection of its own for /ready, so a saturated pool cannot delay the answer. */
  let pinger: postgres.Sql | undefined;

  const queryable = (connection: Connection, sql: postgres.Sql | postgres.TransactionSql): Queryable => ({
    query: (text, params = []) => {
      let prepare = seen.again(text) || connection.prepared.has(text);
      if (prepare && !connection.prepared.has(text)) {
        if (connection.prepared.size >= MAX_PREPARED) {
          connection.full = true;
          prepare = false;
        } else connection.prepared.add(text);
      }
      return sql.unsafe(text, params as SqlParam[], { prepare }) as never;
    },
  });

  /** Runs `fn` on a connection `lane` is admitted to; a connection full of statements is then replaced. */
  const onConnection = <T>(lane: string | undefined, fn: (connection: Connection) => Promise<T>): Promise<T> =>
    admission.run(lane ?? '', async (slot) => {
      const connection = connections[slot]!;
      try {
        return await fn(connection);
      } finally {
        if (connection.full) {
          connections[slot] = connect();
          void connection.sql.end({ timeout: 5 });
        }
      }
    });

  return {
    kind: 'postgres',
    query: (text, params, lane) => onConnection(lane, (c) => queryable(c, c.sql).query(text, params)),
    transaction: (fn, lane) => onConnection(lane, (c) => c.sql.begin((tx) => fn(queryable(c, tx))) as never),
    exec: (text) => onConnection(undefined, async (c) => void (await c.sql.unsafe(text))),
    ping: async () => {
      pinger ??= open();
      await pinger`SELECT 1`;
    },
    close: async () => {
      await Promise.all([...connections, ...(pinger ? [{ sql: pinger }] : [])].map((c) => c.sql.end({ timeout: 5 })));
    },
  };
}
