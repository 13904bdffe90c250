/** The port on postgres.js: a pool of connections, every statement prepared and cached by text. */
import postgres from 'postgres';
import type { Database, DatabaseOptions, Queryable, Row, SqlParam } from './port.ts';

const queryable = (sql: postgres.Sql | postgres.TransactionSql): Queryable => ({
  query: <T extends Row>(text: string, params: readonly SqlParam[] = []) =>
    sql.unsafe(text, params as SqlParam[], { prepare: true }) as unknown as Promise<T[]>,
});

export function connectPostgres(url: string, options: DatabaseOptions = {}): Database & { readonly sql: postgres.Sql } {
  const sql = postgres(url, {
    max: options.poolSize ?? 10,
    onnotice: () => {},
    connection: {
      application_name: 'engage',
      TimeZone: 'UTC',
      statement_timeout: options.statementTimeoutMs ?? 0,
    },
  });
  return {
    kind: 'postgres',
    sql,
    ...queryable(sql),
    transaction: (fn) => sql.begin((tx) => fn(queryable(tx))) as Promise<never>,
    exec: async (text) => {
      await sql.unsafe(text);
    },
    close: () => sql.end({ timeout: 5 }),
  };
}
