/**
 * Streams across server processes on one PostgreSQL database, each spawned as `npm start` runs
 * it: a write through one server reaches a stream held on the other; a server that stops ends its
 * streams cleanly; the client reconnects to a restarted server with its Last-Event-ID and gets
 * what was written while it was away, once.
 *
 * On PostgreSQL even when the suite runs on PGlite, which serves one process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseReader } from '../engine/test/sse.ts';
import { createOrganisation, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { killAll, type Server, startServer } from './helpers/servers.ts';

let t: TestDatabase;
let org: Organisation;
let a: Server;
let b: Server;

beforeAll(async () => {
  t = await createTestDatabase({ postgres: true });
  org = await createOrganisation(t);
  [a, b] = await Promise.all([startServer('streams-a', t.url!), startServer('streams-b', t.url!)]);
}, 120_000);
afterAll(async () => {
  await killAll();
  await t?.drop();
});

const headers = (extra: Record<string, string> = {}) => ({ Authorization: `Bearer ${org.token}`, ...extra });

async function stream(server: Server, lastEventId?: string) {
  const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/deal?select=id,name&name=like.proc*`, {
    headers: headers({ Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) }),
  });
  expect(res.status).toBe(200);
  return new SseReader(res.body!);
}

const createDeal = (server: Server, name: string) =>
  fetch(`http://127.0.0.1:${server.port}/api/v1/deal`, {
    method: 'POST',
    headers: headers({ 'Content-Type': 'application/json' }),
    body: JSON.stringify({ name, value: 1, currency: 'CHF' }),
  });

describe('streams across processes', () => {
  it('a write through one server reaches the stream held on another; a restart loses nothing', async () => {
    const reader = await stream(a);
    expect((await createDeal(b, 'proc 1')).status).toBe(201);
    const [first] = await reader.next(1);
    expect(first!.data.record.name).toBe('proc 1');

    a.child.kill('SIGTERM');
    // The stream ends as a response does, not as a broken connection.
    await reader.end();
    await a.exited;
    expect((await createDeal(b, 'proc 2')).status).toBe(201);
    await t.db.query("INSERT INTO deal (organisation_id, name, value, currency) VALUES ($1, 'proc 3', 1, 'CHF')", [
      org.id,
    ]);

    a = await startServer('streams-a2', t.url!);
    const again = await stream(a, reader.lastId!);
    const events = await again.next(2);
    expect(events.map((e) => e.data.record.name)).toEqual(['proc 2', 'proc 3']);
    expect((await createDeal(a, 'proc 4')).status).toBe(201);
    const [last] = await again.next(1);
    expect(last!.data.record.name).toBe('proc 4');
    await again.cancel();
  });
});
