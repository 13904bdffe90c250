/**
 * Reads on a real streaming replica (READ_DATABASE_URL): where GET goes, what a Consistency-Token
 * changes, and what happens when the replica falls behind or goes away. tests/scale/run.sh builds
 * the primary and the replica (tests/scale/replica.sh) and runs this with PRIMARY_URL and
 * REPLICA_URL set, replication asynchronous. Replay is paused on the replica to hold it behind.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLL_MS } from '../../engine/db/replicas.ts';
import { buildApi } from '../../server/build.ts';
import { type OpenDatabase, openDatabase } from '../../server/database.ts';
import { engageEngine } from '../../server/engine.ts';
import { createOrganisation, type Organisation } from '../helpers/app.ts';

const { PRIMARY_URL, REPLICA_URL } = process.env;
if (!PRIMARY_URL || !REPLICA_URL)
  throw new Error('run through tests/scale/run.sh replica: PRIMARY_URL and REPLICA_URL');

const name = `engage_replica_${randomBytes(4).toString('hex')}`;
const on = (base: string) => `${base}/${name}`;
const admin = postgres(`${PRIMARY_URL}/postgres`, { max: 1, onnotice: () => {} });
const primary = postgres(on(PRIMARY_URL), { max: 1, onnotice: () => {} });
const replica = postgres(on(REPLICA_URL), { max: 1, onnotice: () => {} });
const opened: OpenDatabase[] = [];
const apps: ReturnType<typeof buildApi>['app'][] = [];
let organisation: Organisation;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(check: () => Promise<boolean>, what: string) {
  for (let i = 0; i < 200; i += 1) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting until ${what}`);
}

/** The API with reads on `replicas` (READ_DATABASE_URL). */
async function api(replicas: string, maxLagMs: number) {
  const db = await openDatabase({
    DATABASE_URL: on(PRIMARY_URL!),
    READ_DATABASE_URL: replicas,
    READ_MAX_LAG_MS: maxLagMs,
    STATEMENT_TIMEOUT_MS: 5000,
  });
  opened.push(db);
  // The first poll of positions: until it answers, reads go to the primary.
  await sleep(3 * POLL_MS);
  const { app } = buildApi({ db });
  apps.push(app);
  return (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('Authorization', `Bearer ${organisation.token}`);
    return Promise.resolve(app.request(path.startsWith('/v1/') ? path : `/api/v1${path}`, { ...init, headers }));
  };
}

const calendars = async (response: Response) => {
  expect(response.status).toBe(200);
  return ((await response.json()) as Array<{ name: string }>).map((c) => c.name);
};

/** A calendar written on the primary behind the API's back: no Consistency-Token for it. */
const writeDirectly = (calendar: string) =>
  primary`INSERT INTO calendar (organisation_id, name) VALUES (${organisation.id}, ${calendar})`;

const replayed = async () => (await replica`SELECT pg_last_wal_replay_lsn()::text AS lsn`)[0]!.lsn as string;
const written = async () => (await primary`SELECT pg_current_wal_lsn()::text AS lsn`)[0]!.lsn as string;
const pause = () => replica`SELECT pg_wal_replay_pause()`;
/** Resumes replay and waits until the replica has replayed everything the primary has written. */
async function resume() {
  await replica`SELECT pg_wal_replay_resume()`;
  const target = await written();
  await until(
    async () => (await replica`SELECT pg_last_wal_replay_lsn() >= ${target}::pg_lsn AS ok`)[0]!.ok === true,
    'the replica catches up',
  );
}

beforeAll(async () => {
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const db = await openDatabase({ DATABASE_URL: on(PRIMARY_URL) });
  await db.migrate();
  organisation = await createOrganisation({ db, engine: engageEngine(db) });
  await db.close();
  await until(
    async () => (await replica`SELECT count(*)::int AS n FROM api_token`)[0]!.n === 1,
    'the replica has the token',
  );
});

afterAll(async () => {
  await replica`SELECT pg_wal_replay_resume()`.catch(() => {});
  await Promise.all(opened.map((db) => db.close()));
  await Promise.all([primary.end(), replica.end()]);
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe('reads on a streaming replica', () => {
  it('GET is served by the replica; a write and a read carrying its Consistency-Token by the primary', async () => {
    const call = await api(on(REPLICA_URL), 60_000);
    await pause();
    try {
      await writeDirectly('unseen');
      // The replica has not replayed the row: only it can have answered without it.
      expect(await calendars(await call('/calendar?select=name'))).not.toContain('unseen');

      const created = await call('/calendar', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'mine' }),
      });
      expect(created.status).toBe(201);
      const token = created.headers.get('Consistency-Token');
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      // At once, with replay still paused: the primary serves the read that must see the write.
      const mine = await calendars(await call('/calendar?select=name', { headers: { 'Consistency-Token': token! } }));
      expect(mine).toEqual(expect.arrayContaining(['mine', 'unseen']));
      // Without the token the replica answers, still behind.
      expect(await calendars(await call('/calendar?select=name'))).not.toContain('mine');
      // HEAD takes the token too (keyset pages: the batch import's test).
      const head = await call('/calendar?name=eq.mine', {
        method: 'HEAD',
        headers: { 'Consistency-Token': token!, Prefer: 'count=exact' },
      });
      expect(head.headers.get('Content-Range')).toBe('0-0/1');
    } finally {
      await resume();
    }
  });

  it('a batch of reads is served by the replica; a batch that writes, by the primary, with a Consistency-Token', async () => {
    const call = await api(on(REPLICA_URL), 60_000);
    const batch = (operations: unknown[], headers: Record<string, string> = {}) =>
      call('/$batch', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...headers },
        body: JSON.stringify({ operations }),
      });
    const names = async (response: Response) => {
      expect(response.status).toBe(200);
      const { results } = (await response.json()) as { results: Array<{ body: Array<{ name: string }> | null }> };
      return results.map((r) => (r.body ?? []).map((c) => c.name));
    };
    await pause();
    try {
      await writeDirectly('batch-unseen');
      const reads = [
        { method: 'GET', path: '/calendar?select=name&name=like.batch-*' },
        { method: 'GET', path: '/calendar?select=name&name=eq.batch-mine' },
      ];
      expect(await names(await batch(reads))).toEqual([[], []]);
      const wrote = await batch([{ method: 'POST', path: '/calendar', body: { name: 'batch-mine' } }, reads[0]]);
      const token = wrote.headers.get('Consistency-Token');
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      expect((await names(wrote))[1]).toEqual(expect.arrayContaining(['batch-unseen', 'batch-mine']));
      // The token sends the reads to the primary while the replica is behind.
      const seen = await names(await batch(reads, { 'Consistency-Token': token! }));
      expect(seen[1]).toEqual(['batch-mine']);
    } finally {
      await resume();
    }
  });

  it('a batch import through /v1 answers with a Consistency-Token too', async () => {
    const call = await api(on(REPLICA_URL), 60_000);
    await pause();
    try {
      const batch = await call('/v1/contacts/imports/batch', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ items: [{ external_id: 'batch-1', display_name: 'Batched' }] }),
      });
      expect(batch.status).toBe(200);
      const token = batch.headers.get('Consistency-Token')!;
      expect(token).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
      const read = (headers: Record<string, string>) =>
        call('/contact?select=display_name&external_id=eq.batch-1', { headers }).then((r) => r.json());
      expect(await read({ 'Consistency-Token': token })).toEqual([{ display_name: 'Batched' }]);
      expect(await read({})).toEqual([]);
      const page = (await (
        await call('/v1/contacts?limit=10', { headers: { 'Consistency-Token': token } })
      ).json()) as {
        data: Array<{ external_id: string }>;
      };
      expect(page.data.map((c) => c.external_id)).toContain('batch-1');
    } finally {
      await resume();
    }
  });

  it('once the replica has replayed past the token, it serves the read', async () => {
    const call = await api(on(REPLICA_URL), 60_000);
    const created = await call('/calendar', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'replayed' }),
    });
    const token = created.headers.get('Consistency-Token')!;
    await until(
      async () => (await replica`SELECT ${await replayed()}::pg_lsn >= ${token}::pg_lsn AS ok`)[0]!.ok,
      'replay',
    );
    // Let a poll see the replica's position, then hold the replica there.
    await sleep(300);
    await pause();
    try {
      await writeDirectly('later');
      const names = await calendars(await call('/calendar?select=name', { headers: { 'Consistency-Token': token } }));
      expect(names).toContain('replayed');
      expect(names).not.toContain('later');
    } finally {
      await resume();
    }
  });

  it('a replica further behind than READ_MAX_LAG_MS is skipped: reads go to the primary', async () => {
    const call = await api(on(REPLICA_URL), 300);
    await pause();
    try {
      await writeDirectly('lagging');
      expect(await calendars(await call('/calendar?select=name'))).not.toContain('lagging');
      // The primary writes on (each write a new position) while the replica stays where it is.
      await until(async () => {
        await primary`SELECT pg_switch_wal()`.catch(() => {});
        await writeDirectly(`tick-${randomBytes(3).toString('hex')}`);
        return (await calendars(await call('/calendar?select=name'))).includes('lagging');
      }, 'reads leave the lagging replica');
    } finally {
      await resume();
    }
  });

  it('a replica that is down, or fails a read, costs no error: the primary answers', async () => {
    await writeDirectly('everywhere');
    await resume();
    // Nothing listens on port 9: every connection to that "replica" is refused.
    const down = await api(`postgres://root@127.0.0.1:9/${name},${on(REPLICA_URL)}`, 60_000);
    for (let i = 0; i < 6; i += 1) expect(await calendars(await down('/calendar?select=name'))).toContain('everywhere');
    const ready = (await (await apps.at(-1)!.request('/ready')).json()) as { replicas: unknown };
    expect(ready.replicas).toEqual([
      { replayed: null, serving: false },
      { replayed: expect.stringMatching(/^[0-9A-F]+\/[0-9A-F]+$/), serving: true },
    ]);

    const call = await api(on(REPLICA_URL), 60_000);
    expect(await calendars(await call('/calendar?select=name'))).toContain('everywhere');
    // The replica's backends end under the API's connections: the next read on them fails there.
    await replica`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = ${name} AND application_name = 'engage'`;
    for (let i = 0; i < 4; i += 1) expect(await calendars(await call('/calendar?select=name'))).toContain('everywhere');
  });

  it('a Consistency-Token that is not a position is refused with 400', async () => {
    const call = await api(on(REPLICA_URL), 60_000);
    const response = await call('/calendar', { headers: { 'Consistency-Token': 'yesterday' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toContain('Consistency-Token');
  });
});
