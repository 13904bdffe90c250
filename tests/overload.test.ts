/**
 * Overload on PostgreSQL (postgres.js, docs/contract.md section 5): one organisation's slow
 * requests leave connections to the others, a saturated pool answers 503 within the queue timeout,
 * and GET /ready answers at once meanwhile. Requests are made slow by a row lock held from outside,
 * so they stay in flight exactly as long as the test wants.
 */
import postgres from 'postgres';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PREPARED } from '../engine/db/postgres.ts';
import { buildApi } from '../server/build.ts';
import { type DatabaseConfig, openDatabase } from '../server/database.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { holdLocks, waitingOnLocks } from './helpers/locks.ts';

let base: TestDatabase;
let a: Organisation;
let b: Organisation;
let calendarId: string;
/** Holds the row lock that keeps A's PATCHes waiting. */
let locker: postgres.Sql;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  base = await createTestDatabase({ postgres: true });
  a = await createOrganisation(base);
  b = await createOrganisation(base);
  [calendarId] = (await insertRows(base.db, 'calendar', a.id, [{ name: 'Locked' }])) as [string];
  locker = postgres(base.url!, { max: 1, onnotice: () => {} });
});
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});
afterAll(async () => {
  await locker?.end({ timeout: 5 });
  await base?.drop();
});

/** A server on the test database; its writes wait for row locks as long as the test holds them unless told. */
async function serve(config: Omit<DatabaseConfig, 'DATABASE_URL'>) {
  const db = await openDatabase({ DATABASE_URL: base.url, LOCK_TIMEOUT_MS: 0, ...config });
  const { app } = buildApi({ db });
  closers.push(() => db.close());
  const call = (path: string, token: string, init: RequestInit = {}) =>
    Promise.resolve(app.request(path, { ...init, headers: { Authorization: `Bearer ${token}`, ...init.headers } }));
  return { app, call };
}

/** Locks A's calendar row until the returned function is called. */
const lockCalendar = () => holdLocks(locker, (sql) => sql`SELECT 1 FROM calendar WHERE id = ${calendarId} FOR UPDATE`);
const waiting = () => waitingOnLocks(base.db);

async function until(check: () => Promise<boolean>) {
  for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 25));
  expect(await check()).toBe(true);
}

/** Resolves with the response, or with 'still waiting' after `ms`: a hang fails the test instead of stalling it. */
const within = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise, new Promise<'still waiting'>((r) => setTimeout(() => r('still waiting'), ms))]);

const patchLocked = (call: Awaited<ReturnType<typeof serve>>['call']) =>
  call(`/api/v1/calendar?id=eq.${calendarId}`, a.token, {
    method: 'PATCH',
    body: '{"name":"Renamed"}',
    headers: { 'Content-Type': 'application/json' },
  });

describe('a noisy neighbour', () => {
  it("holds at most half the pool: another organisation's request is served while its six wait", async () => {
    const { call } = await serve({ DB_POOL_SIZE: 4, DB_QUEUE_TIMEOUT_MS: 30_000 });
    const unlock = await lockCalendar();
    let settled = 0;
    const slow = Array.from({ length: 6 }, () => patchLocked(call).finally(() => settled++));
    await until(async () => (await waiting()) === 2);

    const cheap = await within(call('/api/v1/contact?select=id', b.token), 5000);
    expect(cheap).not.toBe('still waiting');
    expect((cheap as Response).status).toBe(200);
    // A's requests are all still in flight, and never more than two of them on connections.
    expect(settled).toBe(0);
    expect(await waiting()).toBe(2);

    await unlock();
    expect((await Promise.all(slow)).map((r) => r.status)).toEqual([204, 204, 204, 204, 204, 204]);
  });
});

describe('a row lock', () => {
  it('costs one write its wait: 503 past LOCK_TIMEOUT_MS, while reads of its organisation run beside it', async () => {
    const { call } = await serve({ DB_POOL_SIZE: 2, DB_ORGANISATION_CONNECTIONS: 2, LOCK_TIMEOUT_MS: 300 });
    const unlock = await lockCalendar();
    try {
      const started = Date.now();
      let refusedAt = 0;
      const patch = patchLocked(call).finally(() => (refusedAt = Date.now()));
      await until(async () => (await waiting()) === 1);
      const read = await within(call('/api/v1/calendar?select=id', a.token), 2000);
      expect(read).not.toBe('still waiting');
      expect((read as Response).status).toBe(200);
      expect(refusedAt).toBe(0);
      const refused = await within(patch, 3000);
      expect(refused).not.toBe('still waiting');
      expect((refused as Response).status).toBe(503);
      expect((refused as Response).headers.get('Retry-After')).toBe('1');
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    } finally {
      await unlock();
    }
  });
});

describe('a saturated pool', () => {
  it('answers 503 once the queue timeout passes, and /ready answers at once meanwhile', async () => {
    const { app, call } = await serve({
      DB_POOL_SIZE: 2,
      DB_ORGANISATION_CONNECTIONS: 2,
      DB_QUEUE_TIMEOUT_MS: 300,
      DB_QUEUE_MAX: 2,
    });
    const unlock = await lockCalendar();
    const held = [patchLocked(call), patchLocked(call)];
    await until(async () => (await waiting()) === 2);

    const started = Date.now();
    const refused = await within(call('/api/v1/contact', b.token), 5000);
    expect(refused).not.toBe('still waiting');
    const response = refused as Response;
    const waited = Date.now() - started;
    expect(response.status).toBe(503);
    expect(response.headers.get('Retry-After')).toBe('1');
    expect(await response.json()).toMatchObject({
      code: 'DATABASE_UNAVAILABLE',
      is_transient: true,
      message: 'the database is busy: no connection became free within 300 ms; retry shortly',
    });
    expect(waited).toBeGreaterThanOrEqual(290);

    const ready = await within(Promise.resolve(app.request('/ready')), 1500);
    expect((ready as Response).status).toBe(200);

    // Two may wait; the third is refused without waiting.
    const queued = [call('/api/v1/contact', b.token), call('/api/v1/contact', b.token)];
    const third = await call('/api/v1/contact', b.token);
    expect(third.status).toBe(503);
    expect(((await third.json()) as { message: string }).message).toBe(
      'the database is busy: 2 requests are already waiting for a connection; retry shortly',
    );
    expect((await Promise.all(queued)).map((r) => r.status)).toEqual([503, 503]);

    await unlock();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([204, 204]);
    expect((await call('/api/v1/contact', b.token)).status).toBe(200);
  });
});

/** Well formed, so it reaches the database, and unknown there. */
const UNKNOWN_TOKEN = `engage_${'x'.repeat(43)}`;

describe('prepared statements', () => {
  it(`stay at most ${MAX_PREPARED} per connection, whatever shapes callers send, with any token`, async () => {
    const db = await openDatabase({ DATABASE_URL: base.url, DB_POOL_SIZE: 1 });
    closers.push(() => db.close());
    const { app } = buildApi({ db });
    const shapes = 3 * MAX_PREPARED;
    for (let i = 0; i < shapes; i++) {
      // Each alias is its own statement text; each shape is sent twice, so it is worth preparing.
      for (const token of [a.token, UNKNOWN_TOKEN]) {
        const response = await app.request(`/api/v1/contact?select=c${i}:id`, {
          headers: { Authorization: `Bearer ${token}` },
        });
        expect(response.status).toBe(token === a.token ? 200 : 401);
      }
    }
    const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements');
    expect(row!.n).toBeGreaterThan(0);
    expect(row!.n).toBeLessThanOrEqual(MAX_PREPARED);
  });
});
