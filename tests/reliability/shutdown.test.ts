/**
 * Reliability: SIGTERM never resets a request. The real server process is stopped while 16 reads
 * are in flight that cannot finish within its drain (SHUTDOWN_TIMEOUT_MS): the `contact` table is
 * locked from outside, so each read waits, on the lock or for one of the pool's connections. When
 * the drain ends, every request still open is answered 503 SHUTTING_DOWN with the contract's error
 * body, `Retry-After` and `Connection: close`; and the process exits at once, not waiting for the
 * statements it gave up on.
 *
 * On PostgreSQL whatever the suite runs on (a lock held from another connection needs a server).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { seedDemo } from '../../server/demo.ts';
import { ERROR_KEYS } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { holdLocks, waitingOnLocks } from '../helpers/locks.ts';
import { freePort } from '../helpers/ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SHUTDOWN_TIMEOUT_MS = 1000;
const REQUESTS = 16;
/** How long after the drain ends the process may take to exit. */
const EXIT_MARGIN_MS = 2000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let database: TestDatabase;
let locker: postgres.Sql;
let server: ChildProcess;
let exited: Promise<number | null>;
let port: number;
let token: string;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  database = await createTestDatabase({ postgres: true });
  token = (await seedDemo(database.db, database.engine))!.token;
  locker = postgres(database.url!, { max: 1, onnotice: () => {} });
  port = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: database.url,
    HOST: '127.0.0.1',
    PORT: String(port),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    // Reads wait on the lock for as long as the test holds it.
    LOCK_TIMEOUT_MS: '0',
    DB_POOL_SIZE: '4',
    LOG_LEVEL: 'silent',
    WORKERS: '1',
  };
  delete env.PGLITE_DIR;
  server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], { cwd: ROOT, env, stdio: 'ignore' });
  exited = new Promise((resolve) => server.once('exit', (code) => resolve(code)));
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    if (server.exitCode !== null) throw new Error('the server exited on start');
    if (Date.now() > deadline) throw new Error('the server did not start within 60 s');
    if (
      await fetch(`http://127.0.0.1:${port}/ready`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
  }
}, 120_000);

afterAll(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  await locker?.end({ timeout: 5 });
  await database?.drop();
});

type Outcome =
  | { kind: 'answered'; status: number; headers: Record<string, string | string[] | undefined>; body: string }
  | { kind: 'socket'; error: string };

/** A read on a connection of its own: its answer as sent, or the socket's failure. */
function read(): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/api/v1/contact?select=id', agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ kind: 'answered', status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ kind: 'socket', error: error.code ?? error.message }),
      );
    });
    req.setHeader('Authorization', `Bearer ${token}`);
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ kind: 'socket', error: error.code ?? error.message }));
    req.end();
  });
}

/** Locks the contact table until the returned function is called. */
const lockContacts = () => holdLocks(locker, (sql) => sql`LOCK TABLE contact IN ACCESS EXCLUSIVE MODE`);

it('answers every request still in flight when the drain ends 503 SHUTTING_DOWN, and exits at once', async () => {
  const unlock = await lockContacts();
  try {
    const reads = Array.from({ length: REQUESTS }, read);
    for (const deadline = Date.now() + 10_000; (await waitingOnLocks(database.db)) === 0; await sleep(25)) {
      if (Date.now() > deadline) throw new Error('no read reached the database');
    }
    // Time for the server to accept every connection, on a machine busy with other tests: one still
    // in the listen backlog when the server stops listening is reset by the kernel, not the server.
    await sleep(1000);
    const signalled = performance.now();
    server.kill('SIGTERM');
    const outcomes = await Promise.all(reads);
    const answeredMs = performance.now() - signalled;
    const code = await Promise.race([exited, sleep(SHUTDOWN_TIMEOUT_MS + 10_000).then(() => 'still running')]);
    const exitMs = performance.now() - signalled;

    const label = (o: Outcome) => (o.kind === 'socket' ? `socket ${o.error}` : `${o.status}`);
    expect(outcomes.map(label).filter((l) => l !== '200' && l !== '503')).toEqual([]);
    const refused = outcomes.filter((o) => o.kind === 'answered' && o.status === 503);
    // Nothing can be read while the lock is held: every read was cut off by the drain.
    expect(refused).toHaveLength(REQUESTS);
    for (const o of refused) {
      if (o.kind !== 'answered') continue;
      expect(o.headers['retry-after']).toBe('1');
      expect(o.headers.connection).toBe('close');
      expect(o.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(o.headers['request-id']).toMatch(UUID);
      const body = JSON.parse(o.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual([...ERROR_KEYS].sort());
      expect(body).toMatchObject({
        name: 'APIError',
        code: 'SHUTTING_DOWN',
        status_code: 503,
        is_transient: true,
        contact_support: false,
        request_id: o.headers['request-id'],
      });
    }
    expect(answeredMs).toBeGreaterThanOrEqual(SHUTDOWN_TIMEOUT_MS - 50);
    // The statements given up on still wait on the lock: the process does not wait for them.
    expect(code).toBe(0);
    expect(exitMs).toBeLessThan(SHUTDOWN_TIMEOUT_MS + EXIT_MARGIN_MS);
  } finally {
    await unlock();
  }
}, 60_000);
