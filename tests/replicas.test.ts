/**
 * Read routing (engine/db/replicas.ts) over fake databases whose positions the test sets, with a
 * fake clock: which database a read goes to, with and without a Consistency-Token, as a replica
 * falls behind or fails. The same on a real streaming replica: tests/scale/replicas.test.ts.
 */

import type { Database, Row } from '@engage/engine';
import { withReplicas } from '@engage/engine/postgres';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { POLL_MS } from '../engine/db/replicas.ts';
import { parsePosition } from '../engine/wal-position.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';

/** A database that answers position queries with `position` and every other statement with its name. */
function fake(name: string, position: string | null) {
  const db = {
    name,
    position: position as string | null,
    down: false,
    kind: 'postgres' as const,
    async query<T extends Row = Row>(text: string): Promise<T[]> {
      if (db.down) throw Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
      if (text.includes('wal_')) return [{ position: db.position }] as unknown as T[];
      if (text === 'bad') throw Object.assign(new Error('division by zero'), { code: '22012' });
      return [{ served: name }] as unknown as T[];
    },
    transaction: async <T>(fn: (tx: Database) => Promise<T>) => fn(db as unknown as Database),
    exec: async () => {},
    ping: async () => {},
    close: async () => {},
  };
  return db;
}

const served = async (db: Database, text = 'SELECT 1') => (await db.query<{ served: string }>(text))[0]!.served;

describe('parsePosition', () => {
  it('reads both hexadecimal halves, in order', () => {
    expect(parsePosition('0/16B3748')).toBe(0x16b3748n);
    expect(parsePosition('1/0')! > parsePosition('0/FFFFFFFF')!).toBe(true);
    expect(parsePosition('a/b')).toBe((10n << 32n) + 11n);
  });

  it('refuses what is not a position', () => {
    for (const text of ['', '0', '0/', '/1', '0/1/2', 'g/1', '123456789/0', ' 0/1']) {
      expect(parsePosition(text), text).toBeUndefined();
    }
  });
});

describe('withReplicas', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  async function routed(replicaPositions: Array<string | null>, maxLagMs = 1000) {
    const primary = fake('primary', '0/100');
    const replicas = replicaPositions.map((p, i) => fake(`replica${i + 1}`, p));
    const db = withReplicas(primary as unknown as Database, replicas as unknown as Database[], { maxLagMs });
    await vi.advanceTimersByTimeAsync(POLL_MS);
    return { primary, replicas, db, reader: db.reader! };
  }

  it('sends reads to replicas in turn, and to a replica that has replayed a token', async () => {
    const { db, reader } = await routed(['0/100', '0/100']);
    const seen = new Set<string>();
    for (let i = 0; i < 4; i++) seen.add(await served(reader(undefined)));
    expect(seen).toEqual(new Set(['replica1', 'replica2']));
    expect(await served(reader('0/100'))).toMatch(/^replica/);
    expect(await served(db)).toBe('primary');
  });

  it('sends a read whose token no replica has replayed to the primary', async () => {
    const { reader, replicas } = await routed(['0/F0', '0/100']);
    expect(await served(reader('0/101'))).toBe('primary');
    // Only the replica at 0/100 has replayed 0/F8.
    for (let i = 0; i < 3; i++) expect(await served(reader('0/F8'))).toBe('replica2');
    replicas[0]!.position = '0/200';
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(await served(reader('0/101'))).toBe('replica1');
  });

  it('skips a replica behind what the primary had written READ_MAX_LAG_MS ago', async () => {
    const { db, primary, reader } = await routed(['0/100'], 500);
    primary.position = '0/200';
    await vi.advanceTimersByTimeAsync(400);
    // 0/200 was written less than 500 ms ago: the replica may still serve.
    expect(await served(reader(undefined))).toBe('replica1');
    expect(db.replicas!()).toEqual([{ replayed: '0/100', serving: true }]);
    await vi.advanceTimersByTimeAsync(200);
    expect(await served(reader(undefined))).toBe('primary');
    // What GET /ready reports.
    expect(db.replicas!()).toEqual([{ replayed: '0/100', serving: false }]);
  });

  it('serves no read from a replica while the primary cannot tell its position, until the lag is known again', async () => {
    const { db, primary, reader } = await routed(['0/100'], 500);
    await vi.advanceTimersByTimeAsync(600);
    expect(await served(reader(undefined))).toBe('replica1');
    primary.down = true;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    // Whatever the primary wrote meanwhile is unknown: the replica may be any distance behind.
    expect(db.replicas!()).toEqual([{ replayed: '0/100', serving: false }]);
    primary.down = false;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(db.replicas!()[0]!.serving).toBe(false);
    await vi.advanceTimersByTimeAsync(600);
    expect(db.replicas!()).toEqual([{ replayed: '0/100', serving: true }]);
    expect(await served(reader(undefined))).toBe('replica1');
  });

  it('skips a replica that is down or not in recovery, until a poll finds it replaying', async () => {
    const { db, reader, replicas } = await routed(['0/100', null]);
    expect(db.replicas!()).toEqual([
      { replayed: '0/100', serving: true },
      { replayed: null, serving: false },
    ]);
    expect(await served(reader(undefined))).toBe('replica1');
    expect(await served(reader(undefined))).toBe('replica1');
    replicas[0]!.down = true;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(await served(reader(undefined))).toBe('primary');
    replicas[0]!.down = false;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(await served(reader(undefined))).toBe('replica1');
  });

  it("runs a read its replica cannot serve on the primary; the caller's own errors stand", async () => {
    const { reader, replicas } = await routed(['0/100']);
    const chosen = reader(undefined);
    replicas[0]!.down = true;
    expect(await served(chosen)).toBe('primary');
    // Left out at once, not only after the next poll.
    replicas[0]!.down = false;
    expect(await served(reader(undefined))).toBe('primary');
    await vi.advanceTimersByTimeAsync(POLL_MS);
    await expect(reader(undefined).query('bad')).rejects.toMatchObject({ code: '22012' });
    // A failure of the request itself leaves the replica in use.
    expect(await served(reader(undefined))).toBe('replica1');
  });

  it("gives the primary's position, or nothing when the primary cannot tell", async () => {
    const { db, primary } = await routed(['0/100']);
    expect(await db.position!()).toBe('0/100');
    primary.down = true;
    expect(await db.position!()).toBeUndefined();
  });
});

describe('Consistency-Token without replicas', () => {
  let t: TestApp;
  let org: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('is not given by writes, is accepted by reads, and refused with 400 when it is not a position', async () => {
    const created = await t.call('/calendar', org.token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{"name":"Front desk"}',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('Consistency-Token')).toBeNull();
    const read = await t.call('/calendar?select=name', org.token, { headers: { 'Consistency-Token': '0/16B3748' } });
    expect(await read.json()).toEqual([{ name: 'Front desk' }]);
    for (const path of ['/calendar', '/v1/contacts']) {
      const response =
        path === '/calendar'
          ? await t.call(path, org.token, { headers: { 'Consistency-Token': 'latest' } })
          : await t.app.request(path, {
              headers: { Authorization: `Bearer ${org.token}`, 'Consistency-Token': 'latest' },
            });
      expect(response.status, path).toBe(400);
      const body = (await response.json()) as { code: string; message: string };
      expect(body.code).toBe('INVALID_REQUEST');
      expect(body.message).toContain('Consistency-Token');
    }
  });

  it('is checked after the token: a bad token with a bad Consistency-Token is 401', async () => {
    const response = await t.call('/calendar', 'not-a-token', { headers: { 'Consistency-Token': 'latest' } });
    expect(response.status).toBe(401);
  });
});
