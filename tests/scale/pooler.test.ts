/**
 * A server or CLI command pointed at PgBouncer in transaction mode without DATABASE_PREPARE=0: the
 * pooler refuses the settings sent at connection start, and each exits 1 with one line saying what
 * to set, no stack trace. With it, the postgres.js port answers every statement of a burst.
 * tests/scale/run.sh runs this with PGBOUNCER_URL set, its PgBouncer up.
 */

import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connectPostgres } from '@engage/engine/postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../helpers/ports.ts';

const { PGBOUNCER_URL } = process.env;
if (!PGBOUNCER_URL) throw new Error('run through tests/scale/run.sh pgbouncer: PGBOUNCER_URL');

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const name = `engage_pooler_${randomBytes(4).toString('hex')}`;
const admin = postgres('postgres://root@127.0.0.1:5432/postgres', { max: 1, onnotice: () => {} });

beforeAll(async () => {
  await admin.unsafe(`CREATE DATABASE ${name}`);
});
afterAll(async () => {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

/** `node ...args` through PgBouncer with the default DATABASE_PREPARE: its exit code and stderr. */
function run(args: string[], extra: Record<string, string> = {}): Promise<{ code: number | null; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra, DATABASE_URL: `${PGBOUNCER_URL}/${name}` };
  for (const unset of ['DATABASE_PREPARE', 'PGLITE_DIR', 'READ_DATABASE_URL', 'WORKERS']) delete env[unset];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stderr }));
  });
}

const HINT = /^unsupported startup parameter: \w+: behind PgBouncer in transaction mode, set DATABASE_PREPARE=0\.$/;

it('the server (engage serve, as npm start runs it) exits 1 with one line naming DATABASE_PREPARE=0', async () => {
  const { code, stderr } = await run(['bin/engage.js', 'serve'], { PORT: String(await freePort()) });
  expect(code).toBe(1);
  expect(stderr.trim()).toMatch(HINT);
});

it('the token CLI exits 1 with the same line', async () => {
  const { code, stderr } = await run(['bin/engage.js', 'token', 'create', '--organisation', randomUUID()]);
  expect(code).toBe(1);
  expect(stderr.trim()).toMatch(HINT);
});

it('behind it with DATABASE_PREPARE=0, the port answers every statement of a burst on few connections', async () => {
  // PgBouncer 1.18 hands the server back at the first ReadyForQuery: a statement pipelined behind
  // another would be answered to nobody and wait for ever. The deadline turns such a loss into a failure.
  const db = connectPostgres(`${PGBOUNCER_URL}/${name}`, { poolSize: 2, prepare: false, statementTimeoutMs: 1000 });
  try {
    // Statements without parameters are sent at once; one with them is first described (Parse, Describe, Sync).
    const burst = Array.from({ length: 400 }, (_, i) =>
      i % 2
        ? db.query<{ n: number }>('SELECT $1::text::int AS n', [String(i)])
        : db.query<{ n: number }>(`SELECT ${i} AS n`),
    );
    const answers = await Promise.allSettled(burst);
    expect(answers.filter((a) => a.status === 'rejected')).toEqual([]);
    expect(answers.map((a) => a.status === 'fulfilled' && a.value[0]?.n)).toEqual([...Array(400).keys()]);
  } finally {
    await db.close();
  }
});
