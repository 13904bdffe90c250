/**
 * Two server processes on one PostgreSQL database (the issue "Scale-out"), each spawned as
 * `npm start` runs it (without the build) on a port of its own: import jobs are split between
 * them and nothing is imported twice; a keyset walk that alternates servers page by page is the
 * walk one server gives; a write through one is read at once through the other (the read cache
 * holds compiled statements, never rows); a token revoked with the CLI is refused by both on the
 * very next request.
 *
 * On PostgreSQL even when the suite runs on PGlite, which serves one process.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../server/demo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { childEnv, killAll, ROOT, type Server, startServer } from './helpers/servers.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Import jobs, and rows in each: enough that both servers' workers are busy at once. */
const JOBS = 6;
const JOB_ROWS = 6000;

/** `node bin/engage.js ...args` on the test database: its exit code and output. */
function cli(databaseUrl: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['bin/engage.js', ...args], {
      cwd: ROOT,
      env: childEnv(databaseUrl),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function request(server: Server, token: string, method: string, path: string, body?: string, type?: string) {
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(type ? { 'Content-Type': type } : {}) },
    body,
  });
  const text = await response.text();
  return { status: response.status, text };
}

/** The parsed body of a request that must succeed. */
async function api<T = unknown>(
  server: Server,
  token: string,
  method: string,
  path: string,
  body?: unknown,
  type?: string,
) {
  const json = typeof body === 'string' || body === undefined ? undefined : JSON.stringify(body);
  const { status, text } = await request(
    server,
    token,
    method,
    path,
    json ?? (body as string | undefined),
    type ?? (json ? 'application/json' : undefined),
  );
  if (status >= 300) throw new Error(`${server.name} ${method} ${path}: ${status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

describe('two server processes on one database', () => {
  let database: TestDatabase;
  let url: string;
  let organisationId: string;
  let token: string;
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    database = await createTestDatabase({ postgres: true });
    url = database.url!;
    const demo = (await seedDemo(database.db, database.engine))!;
    organisationId = demo.organisationId;
    token = demo.token;
    [a, b] = await Promise.all([startServer('engage-a', url), startServer('engage-b', url)]);
  }, 120_000);

  afterAll(async () => {
    await killAll();
    await database?.drop();
  }, 60_000);

  const count = async (sql: string, params: string[] = []) => {
    const [row] = await database.db.query<{ n: number }>(sql, params);
    return row!.n;
  };

  it('import jobs are split between the servers, each job run by one, each row imported once', async () => {
    // Files first, then every job at once, half started through each server (which wakes its worker).
    const prefixes = Array.from({ length: JOBS }, (_, k) => `mp${k}`);
    const files = await Promise.all(
      prefixes.map((prefix, k) => {
        const lines = Array.from(
          { length: JOB_ROWS },
          (_, i) => `${prefix}-${i},Imported ${i},${prefix}.${i}@example.com`,
        );
        const csv = `external_id,display_name,email\n${lines.join('\n')}\n`;
        return api<{ id: string }>(k % 2 ? b : a, token, 'POST', '/v1/files', csv, 'text/csv');
      }),
    );
    const jobs = await Promise.all(
      files.map((file, k) =>
        api<{ id: string; status: string }>(k % 2 ? b : a, token, 'POST', '/v1/contacts/imports', { file_id: file.id }),
      ),
    );
    expect(new Set(jobs.map((job) => job.id)).size).toBe(JOBS);

    // Which server's backend holds each running job's row lock (a batch in its transaction), sampled
    // until every job is done: the row's xmax is the locking transaction, and the backend running it
    // names its server. Both from one pg_stat_activity row: behind PgBouncer a backend serves either
    // server in turn, so a name read apart from the transaction could be the next client's.
    const ranBy = new Map<string, Set<string>>();
    let mostRunning = 0;
    const ids = jobs.map((job) => job.id);
    for (const deadline = Date.now() + 25_000; ; await sleep(20)) {
      const holders = await database.db.query<{ id: string; application_name: string }>(
        `SELECT j.id::text AS id, a.application_name FROM import_job j
         JOIN pg_stat_activity a ON a.backend_xid = j.xmax
         WHERE j.status = 'running'`,
      );
      for (const { id, application_name } of holders) {
        ranBy.set(id, (ranBy.get(id) ?? new Set()).add(application_name));
      }
      const states = await database.db.query<{ status: string }>(
        'SELECT status FROM import_job WHERE id = ANY($1::uuid[])',
        [`{${ids.join(',')}}`],
      );
      mostRunning = Math.max(mostRunning, states.filter((s) => s.status === 'running').length);
      if (states.every((s) => s.status === 'succeeded' || s.status === 'failed')) break;
      if (Date.now() > deadline) throw new Error(`jobs not done: ${states.map((s) => s.status).join(', ')}`);
    }

    // Every job finished once, through either server, with every row created and none updated (a
    // row written twice would be matched on external_id the second time and counted as updated).
    for (const [k, job] of jobs.entries()) {
      const done = await api(k % 2 ? a : b, token, 'GET', `/v1/imports/${job.id}`);
      expect(done).toMatchObject({
        status: 'succeeded',
        processed: JOB_ROWS,
        created: JOB_ROWS,
        updated: 0,
        failed: 0,
      });
      const [rows] = await database.db.query<{ n: number; distinct: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT external_id)::int AS distinct FROM contact
         WHERE organisation_id = $1::uuid AND external_id LIKE $2`,
        [organisationId, `${prefixes[k]}-%`],
      );
      expect(rows).toEqual({ n: JOB_ROWS, distinct: JOB_ROWS });
    }
    // Each process runs one job at a time, so two running at once were on both servers; the lock
    // holders name them, and no job was run by two.
    expect(mostRunning).toBe(2);
    const workers = new Set([...ranBy.values()].flatMap((names) => [...names]));
    expect([...workers].sort()).toEqual(['engage-a', 'engage-b']);
    for (const [id, names] of ranBy) expect([id, [...names]]).toEqual([id, [expect.any(String)]]);
  }, 40_000);

  it('a keyset walk alternating servers page by page is the walk one server gives', async () => {
    const walk = async (pick: (page: number) => Server) => {
      const ids: string[] = [];
      let cursor: string | null = null;
      for (let page = 0; ; page++) {
        const query: string = cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`;
        const body: { data: Array<{ id: string }>; next_cursor: string | null } = await api(
          pick(page),
          token,
          'GET',
          `/v1/contacts?limit=1000${query}`,
        );
        ids.push(...body.data.map((row) => row.id));
        cursor = body.next_cursor;
        if (cursor === null) return ids;
      }
    };
    const [alone, alternating] = await Promise.all([walk(() => a), walk((page) => (page % 2 ? b : a))]);
    const total = await count('SELECT count(*)::int AS n FROM contact WHERE organisation_id = $1::uuid', [
      organisationId,
    ]);
    expect(total).toBeGreaterThan(JOBS * JOB_ROWS);
    expect(alone.length).toBe(total);
    expect(new Set(alone).size).toBe(total);
    expect(alternating).toEqual(alone);
    // In (created_at, id) order, as the database sorts them.
    const ordered = await database.db.query<{ id: string }>(
      'SELECT id::text AS id FROM contact WHERE organisation_id = $1::uuid ORDER BY created_at, id',
      [organisationId],
    );
    expect(alone).toEqual(ordered.map((row) => row.id));
  }, 30_000);

  it('a write through one server is read at once through the other', async () => {
    const calendars = '/api/v1/calendar?select=name,external_id&name=like.cache-*&order=name';
    const contacts = '/api/v1/contact?select=display_name,city&external_id=like.cache-*&order=display_name';
    // The same reads on both, so each has compiled and kept them.
    for (const server of [a, b, a, b]) {
      expect(await api(server, token, 'GET', calendars)).toEqual([]);
      expect(await api(server, token, 'GET', contacts)).toEqual([]);
    }

    // Calendars through the query engine's writes.
    await api(a, token, 'POST', '/api/v1/calendar', { name: 'cache-1', type: 'virtual', external_id: 'one' });
    expect(await api(b, token, 'GET', calendars)).toEqual([{ name: 'cache-1', external_id: 'one' }]);
    await api(b, token, 'PATCH', '/api/v1/calendar?name=eq.cache-1', { external_id: 'two' });
    expect(await api(a, token, 'GET', calendars)).toEqual([{ name: 'cache-1', external_id: 'two' }]);
    await api(a, token, 'DELETE', '/api/v1/calendar?name=eq.cache-1');
    expect(await api(b, token, 'GET', calendars)).toEqual([]);

    // Contacts through batch imports: created, then updated (matched on external_id).
    const batch = (city: string) => ({ items: [{ external_id: 'cache-1', display_name: 'Cached', city }] });
    await api(a, token, 'POST', '/v1/contacts/imports/batch', batch('Bern'));
    expect(await api(b, token, 'GET', contacts)).toEqual([{ display_name: 'Cached', city: 'Bern' }]);
    await api(b, token, 'POST', '/v1/contacts/imports/batch', batch('Chur'));
    expect(await api(a, token, 'GET', contacts)).toEqual([{ display_name: 'Cached', city: 'Chur' }]);
    expect(await api(b, token, 'GET', contacts)).toEqual([{ display_name: 'Cached', city: 'Chur' }]);
  }, 20_000);

  it('a token revoked with the CLI is refused by both servers on the very next request', async () => {
    const created = await cli(url, ['token', 'create', '--organisation', organisationId, '--name', 'scale-out']);
    expect(created.code, created.stderr).toBe(0);
    const secret = created.stdout.trim().split('\n').at(-1)!;
    const tokenId = /Created token (\S+)/.exec(created.stdout)?.[1];
    expect(secret).toMatch(/^engage_/);
    expect(tokenId).toBeDefined();

    const paths = ['/api/v1/contact?select=id&limit=1', '/v1/contacts?limit=1'];
    for (const server of [a, b, a, b]) {
      for (const path of paths) expect((await request(server, secret, 'GET', path)).status).toBe(200);
    }

    const revoked = await cli(url, ['token', 'revoke', tokenId!]);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const server of [b, a]) {
      for (const path of paths) {
        const response = await request(server, secret, 'GET', path);
        expect(`${server.name} ${path} ${response.status}`).toBe(`${server.name} ${path} 401`);
      }
      // A write too.
      const write = await request(server, secret, 'POST', '/api/v1/calendar', '{"name":"x"}', 'application/json');
      expect(write.status).toBe(401);
      // Other tokens of the organisation still work.
      expect((await request(server, token, 'GET', paths[0]!)).status).toBe(200);
    }
  }, 30_000);

  it('both servers are still up', () => {
    for (const server of [a, b]) expect(server.child.exitCode, server.output()).toBeNull();
  });
});
