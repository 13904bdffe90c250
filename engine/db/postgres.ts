/**
 * The port on postgres.js, every statement prepared and cached by text.
 *
 * The pool is n single-connection clients, and each statement goes to the one with the fewest
 * statements in flight. One postgres.js client with n connections would do the same job, but its
 * pool keeps busy connections in a queue that only shrinks when it drains; under steady load it
 * grows by one slot per statement and each release scans it (8% of the server's CPU after 10 s of
 * by-id reads in a profile). A single connection never grows that queue, and still pipelines.
 */
import postgres from 'postgres';
import { type Database, type DatabaseOptions, PLAN_CACHE_MODE, type Queryable, type SqlParam } from './port.ts';

/** Weight of an open transaction in the choice of a connection: others are preferred while it runs. */
const TRANSACTION_LOAD = 1000;

const queryable = (sql: postgres.Sql | postgres.TransactionSql): Queryable => ({
  query: (text, params = []) => sql.unsafe(text, params as SqlParam[], { prepare: true }) as never,
});

interface Connection {
  readonly sql: postgres.Sql;
  /** Statements in flight, plus TRANSACTION_LOAD per open transaction. */
  load: number;
}

export function connectPostgres(url: string, options: DatabaseOptions = {}): Database {
  const connections: Connection[] = Array.from({ length: Math.max(1, options.poolSize ?? 10) }, () => ({
    load: 0,
    sql: postgres(url, {
      max: 1,
      onnotice: () => {},
      connection: {
        application_name: 'engage',
        TimeZone: 'UTC',
        statement_timeout: options.statementTimeoutMs ?? 0,
        plan_cache_mode: PLAN_CACHE_MODE,
      },
    }),
  }));

  /** Runs `fn` on the least loaded connection, counting `weight` against it meanwhile. */
  async function onLeastLoaded<T>(weight: number, fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
    let least = connections[0]!;
    for (const c of connections) if (c.load < least.load) least = c;
    least.load += weight;
    try {
      return await fn(least.sql);
    } finally {
      least.load -= weight;
    }
  }

  return {
    kind: 'postgres',
    query: (text, params) => onLeastLoaded(1, (sql) => queryable(sql).query(text, params)),
    transaction: (fn) => onLeastLoaded(TRANSACTION_LOAD, (sql) => sql.begin((tx) => fn(queryable(tx))) as never),
    exec: (text) => onLeastLoaded(1, async (sql) => void (await sql.unsafe(text))),
    close: async () => void (await Promise.all(connections.map((c) => c.sql.end({ timeout: 5 })))),
  };
}
