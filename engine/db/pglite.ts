/** The port on PGlite: PostgreSQL compiled to WebAssembly, in a directory or in memory. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
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

/**
 * Creates a new data directory in a child process. PostgreSQL's initdb, run in WebAssembly, grows
 * the memory of the process running it to about 800 MB, which a process never hands back; the
 * child's goes with it, so a server's first start costs what its later starts do (about 300 MB).
 */
async function initialiseApart(dataDir: string): Promise<void> {
  const module = import.meta.resolve('@electric-sql/pglite');
  const script =
    'const { PGlite } = await import(process.argv[1]);' +
    ' const pg = await PGlite.create(process.argv[2]); await pg.close();';
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, module, dataDir], { stdio: 'inherit' });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`creating the PGlite data directory ${dataDir} failed (exit code ${code})`);
}

/** `dataDir` left out or undefined: in memory. */
export async function openPglite(
  dataDir?: string,
  options: DatabaseOptions = {},
): Promise<Database & { readonly pg: PGlite }> {
  if (dataDir !== undefined && !existsSync(join(dataDir, 'PG_VERSION'))) await initialiseApart(dataDir);
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
    // One connection, which runs one statement at a time; PGlite queues the rest itself, unseen.
    stats: () => ({ size: 1, inUse: 0, waiting: 0 }),
    close: () => pg.close(),
  };
}
