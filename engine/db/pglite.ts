/** The port on PGlite: PostgreSQL compiled to WebAssembly, in a directory or in memory. */
import { PGlite } from '@electric-sql/pglite';
import {
  type Database,
  type DatabaseOptions,
  PLAN_CACHE_MODE,
  PLANNER_SETTINGS,
  type Queryable,
  type Row,
  type SqlParam,
} from './port.ts';

type PGliteLike = Pick<PGlite, 'query'>;

const queryable = (pg: PGliteLike): Queryable => ({
  query: async <T extends Row>(text: string, params: readonly SqlParam[] = []) =>
    (await pg.query<T>(text, params as SqlParam[])).rows,
});

/** `dataDir` undefined: in memory. */
export async function openPglite(
  dataDir: string | undefined,
  options: DatabaseOptions = {},
): Promise<Database & { readonly pg: PGlite }> {
  const pg = await PGlite.create(dataDir);
  await pg.exec(
    `SET TIME ZONE 'UTC'; SET DateStyle = 'ISO, MDY';` +
      ` SET statement_timeout = ${Math.trunc(options.statementTimeoutMs ?? 0)};` +
      ` SET plan_cache_mode = ${PLAN_CACHE_MODE};` +
      Object.entries(PLANNER_SETTINGS)
        .map(([name, value]) => ` SET ${name} = ${value};`)
        .join(''),
  );
  return {
    kind: 'pglite',
    pg,
    ...queryable(pg),
    transaction: (fn) => pg.transaction((tx) => fn(queryable(tx))),
    exec: async (text) => {
      await pg.exec(text);
    },
    // PGlite runs one statement at a time, so this waits its turn; /ready bounds the wait.
    ping: async () => void (await pg.query('SELECT 1')),
    close: () => pg.close(),
  };
}
