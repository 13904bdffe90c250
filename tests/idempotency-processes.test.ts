/**
 * Idempotency-Key across server processes, cut connections and a restart, on PostgreSQL (even when
 * the suite runs on PGlite, which serves one process). A write is held behind a row the test is
 * inserting with the same key, its client goes away mid-request, and it is retried through the
 * other process: whether
 * the first request went on to commit or died with its process, exactly one row is written, and
 * every later retry, through any process, gets that write's response.
 */
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../server/demo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { kill, killAll, type Server, startServer } from './helpers/servers.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Idempotency-Key across processes', () => {
  let database: TestDatabase;
  let admin: postgres.Sql;
  let token: string;
  let organisationId: string;
  let a: Server;
  let b: Server;

  beforeAll(async () => {
    database = await createTestDatabase({ postgres: true });
    // Unprepared: the suite also runs through PgBouncer in transaction mode (tests/scale/run.sh).
    admin = postgres(database.url!, { max: 2, prepare: false, onnotice: () => {} });
    ({ token, organisationId } = (await seedDemo(database.db, database.engine))!);
    [a, b] = await Promise.all([startServer('idem-a', database.url!), startServer('idem-b', database.url!)]);
  }, 120_000);

  afterAll(async () => {
    await killAll();
    await admin?.end();
    await database?.drop();
  }, 60_000);

  const post = (server: Server, key: string, deal: { id: string; name: string }, signal?: AbortSignal) =>
    fetch(`http://127.0.0.1:${server.port}/api/v1/deal`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Prefer: 'return=representation',
        'Idempotency-Key': key,
      },
      body: JSON.stringify(deal),
      signal,
    });
  const rowsNamed = async (name: string) =>
    Number((await admin`SELECT count(*)::int AS n FROM "deal" WHERE "name" = ${name}`)[0]!.n);

  /**
   * Holds a write of the deal `id` until `release` is called: an uncommitted row with its key makes
   * the write's insert wait, and is then rolled back.
   */
  async function holdDeal(id: string) {
    const conn = await admin.reserve();
    await conn`BEGIN`;
    await conn`INSERT INTO "deal" ("organisation_id", "id", "name") VALUES (${organisationId}, ${id}, 'held')`;
    return async () => {
      await conn`ROLLBACK`;
      conn.release();
    };
  }

  /** Resolves once a backend of `server` waits for a lock. */
  async function blocked(server: Server) {
    for (const deadline = Date.now() + 15_000; Date.now() < deadline; await sleep(20)) {
      const [row] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE application_name = ${server.name} AND wait_event_type = 'Lock'`;
      if (row!.n > 0) return;
    }
    throw new Error(`${server.name} never waited for the lock`);
  }

  /** A write started on `server` and cut off by its client once it waits for the lock. */
  async function cutOff(server: Server, key: string, deal: { id: string; name: string }) {
    const controller = new AbortController();
    const sent = post(server, key, deal, controller.signal).catch((error: Error) => error);
    await blocked(server);
    controller.abort();
    expect(await sent).toBeInstanceOf(Error);
  }

  /** Retries until the first request is no longer running (409 IDEMPOTENCY_KEY_IN_PROGRESS). */
  async function retry(server: Server, key: string, deal: { id: string; name: string }) {
    for (const deadline = Date.now() + 20_000; ; await sleep(50)) {
      const res = await post(server, key, deal);
      if (res.status !== 409 || Date.now() > deadline) return res;
      expect(((await res.json()) as { code: string }).code).toBe('IDEMPOTENCY_KEY_IN_PROGRESS');
    }
  }

  it('a write whose client left still commits once; the retry through the other process gets its response', async () => {
    const key = crypto.randomUUID();
    const deal = { id: crypto.randomUUID(), name: 'Cut, committed' };
    const release = await holdDeal(deal.id);
    await cutOff(a, key, deal);
    // The first request still runs, held at the lock: the retry is told so, and writes nothing.
    const early = await post(b, key, deal);
    expect(early.status).toBe(409);
    expect(early.headers.get('retry-after')).toBe('1');
    await release();
    const res = await retry(b, key, deal);
    expect(res.status).toBe(201);
    expect(res.headers.get('idempotent-replayed')).toBe('true');
    expect(await res.json()).toMatchObject([deal]);
    expect(await rowsNamed(deal.name)).toBe(1);
  }, 60_000);

  it('a write whose process died is written once, and replayed by a restarted process', async () => {
    const key = crypto.randomUUID();
    const deal = { id: crypto.randomUUID(), name: 'Cut, crashed' };
    const release = await holdDeal(deal.id);
    await cutOff(a, key, deal);
    await kill(a);
    await release();
    // Its statement may still have committed after its process died (then the retry replays it) or
    // not (then the retry writes): either way, once.
    const res = await retry(b, key, deal);
    expect(res.status).toBe(201);
    const body = await res.text();
    a = await startServer('idem-a2', database.url!);
    const replayed = await post(a, key, deal);
    expect(replayed.status).toBe(201);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(await replayed.text()).toBe(body);
    expect(await rowsNamed(deal.name)).toBe(1);
  }, 90_000);

  it('concurrent retries through both processes write once', async () => {
    const key = crypto.randomUUID();
    const deal = { id: crypto.randomUUID(), name: 'Raced twice' };
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => post(i % 2 ? a : b, key, deal)));
    const statuses = results.map((r) => `${r.status}${r.headers.get('idempotent-replayed') ? ' replayed' : ''}`);
    expect(statuses.filter((s) => s === '201')).toHaveLength(1);
    expect(statuses.every((s) => s === '201' || s === '201 replayed' || s === '409')).toBe(true);
    expect(await rowsNamed('Raced twice')).toBe(1);
  }, 30_000);
});
