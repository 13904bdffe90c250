/**
 * A server or CLI command pointed at PgBouncer in transaction mode without DATABASE_PREPARE=0: the
 * pooler refuses the settings sent at connection start, and each exits 1 with one line saying what
 * to set, no stack trace. tests/scale/run.sh runs this with PGBOUNCER_URL set, its PgBouncer up.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
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
