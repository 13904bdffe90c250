/**
 * Idempotency-Key on writes: the first request with a key runs and its response is kept with the
 * key, per organisation, in the write's own transaction; a retry gets that response back marked
 * `Idempotent-Replayed: true` and writes nothing; the key with another request is 422; a retry while
 * the first runs is 409. A failed first request keeps nothing, so its retry runs afresh.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';

describe('Idempotency-Key', () => {
  let t: TestApp;
  let org: Organisation;
  let other: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
    other = await createOrganisation(t);
  });
  afterAll(() => t?.drop());

  const post = (key: string | null, body: object, who = org, prefer = 'return=representation') =>
    t.call('/deal', who.token, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Prefer: prefer,
        ...(key === null ? {} : { 'Idempotency-Key': key }),
      },
      body: JSON.stringify(body),
    });
  const dealsNamed = async (name: string, who = org) =>
    (await (await t.call(`/deal?name=eq.${encodeURIComponent(name)}&select=id`, who.token)).json()) as unknown[];
  const error = async (res: Response) => (await res.json()) as { code: string; is_transient: boolean };

  it('a retry gets the first response, marked replayed, and writes nothing', async () => {
    const key = randomUUID();
    const first = await post(key, { name: 'Once' });
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const body = await first.text();
    for (let i = 0; i < 3; i++) {
      const again = await post(key, { name: 'Once' });
      expect(again.status).toBe(201);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.headers.get('content-type')).toBe(first.headers.get('content-type'));
      expect(again.headers.get('location')).toBe(first.headers.get('location'));
      expect(again.headers.get('etag')).toBe(first.headers.get('etag'));
      expect(again.headers.get('request-id')).not.toBe(first.headers.get('request-id'));
      expect(await again.text()).toBe(body);
    }
    expect(await dealsNamed('Once')).toHaveLength(1);
  });

  it('PATCH and DELETE replay too: a retried DELETE answers as the first did', async () => {
    const created = (await (await post(null, { name: 'Patched' })).json()) as Array<{ id: string }>;
    const id = created[0]!.id;
    const patch = (key: string) =>
      t.call(`/deal?id=eq.${id}`, org.token, {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', 'Idempotency-Key': key },
        body: JSON.stringify({ value: 5 }),
      });
    const key = randomUUID();
    const first = await patch(key);
    expect(first.status).toBe(200);
    const again = await patch(key);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());

    const del = (key: string) =>
      t.call(`/deal?id=eq.${id}`, org.token, {
        method: 'DELETE',
        headers: { Prefer: 'return=representation', 'Idempotency-Key': key },
      });
    const deleteKey = randomUUID();
    const gone = await del(deleteKey);
    expect(gone.status).toBe(200);
    expect(((await gone.json()) as unknown[]).length).toBe(1);
    const replayed = await del(deleteKey);
    expect(replayed.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replayed.json()) as unknown[]).length).toBe(1);
    // Without the key, the retry runs: nothing is left to delete.
    expect(((await (await del(randomUUID())).json()) as unknown[]).length).toBe(0);
  });

  it('the key with another body, method or path is 422 IDEMPOTENCY_KEY_REUSED and writes nothing', async () => {
    const key = randomUUID();
    expect((await post(key, { name: 'First body' })).status).toBe(201);
    const reused = await post(key, { name: 'Second body' });
    expect(reused.status).toBe(422);
    expect(await error(reused)).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', is_transient: false });
    const elsewhere = await t.call('/deal?name=eq.First%20body', org.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ name: 'First body' }),
    });
    expect(elsewhere.status).toBe(422);
    expect(await dealsNamed('Second body')).toHaveLength(0);
  });

  it('keys are per organisation: another organisation’s same key runs', async () => {
    const key = randomUUID();
    expect((await post(key, { name: 'Shared key' })).status).toBe(201);
    const theirs = await post(key, { name: 'Shared key' }, other);
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get('idempotent-replayed')).toBeNull();
    expect(await dealsNamed('Shared key', other)).toHaveLength(1);
    expect(await dealsNamed('Shared key')).toHaveLength(1);
  });

  it('a failed request keeps nothing: its retry with the same key runs', async () => {
    const key = randomUUID();
    const bad = await post(key, { name: 'Refused', value: 'not a number' });
    expect(bad.status).toBe(400);
    const missing = await post(key, { name: 'Refused', contact_id: randomUUID() });
    expect(missing.status).toBe(409);
    const fixed = await post(key, { name: 'Refused' });
    expect(fixed.status).toBe(201);
    expect(fixed.headers.get('idempotent-replayed')).toBeNull();
  });

  it('return=minimal and a dry run: the replay has no body; Prefer: tx=rollback writes nothing and keeps no key', async () => {
    const key = randomUUID();
    const first = await post(key, { name: 'Minimal' }, org, 'return=minimal');
    expect(first.status).toBe(201);
    const again = await post(key, { name: 'Minimal' }, org, 'return=minimal');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe('');

    const dryKey = randomUUID();
    const dry = await post(dryKey, { name: 'Dry' }, org, 'tx=rollback, return=representation');
    expect(dry.status).toBe(201);
    expect(await dealsNamed('Dry')).toHaveLength(0);
    const real = await post(dryKey, { name: 'Dry' });
    expect(real.headers.get('idempotent-replayed')).toBeNull();
    expect(await dealsNamed('Dry')).toHaveLength(1);
  });

  it('a malformed key is 400 INVALID_IDEMPOTENCY_KEY; a quoted key is the same key bare', async () => {
    for (const key of ['', 'x'.repeat(256), 'tab\there', 'é']) {
      const res = await post(key, { name: 'Bad key' });
      expect(res.status, JSON.stringify(key)).toBe(400);
      expect((await error(res)).code).toBe('INVALID_IDEMPOTENCY_KEY');
    }
    expect(await dealsNamed('Bad key')).toHaveLength(0);
    const key = randomUUID();
    expect((await post(`"${key}"`, { name: 'Quoted' })).status).toBe(201);
    expect((await post(key, { name: 'Quoted' })).headers.get('idempotent-replayed')).toBe('true');
    expect((await post('k'.repeat(255), { name: 'Longest' })).status).toBe(201);
  });

  it('a bad token is 401 before anything about the key', async () => {
    const res = await t.call('/deal', 'not-a-token', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': '' },
      body: '{}',
    });
    expect(res.status).toBe(401);
  });

  it('concurrent requests with one key write once; the others replay or are told it is in progress', async () => {
    const key = randomUUID();
    const results = await Promise.all(Array.from({ length: 8 }, () => post(key, { name: 'Raced' })));
    const fresh = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const res of results) {
      if (res.status === 409)
        expect(await error(res)).toMatchObject({ code: 'IDEMPOTENCY_KEY_IN_PROGRESS', is_transient: true });
      else expect(res.status).toBe(201);
    }
    expect(await dealsNamed('Raced')).toHaveLength(1);
  });

  it('an expired key runs again', async () => {
    const key = randomUUID();
    expect((await post(key, { name: 'Expiring' })).status).toBe(201);
    await t.db.query(`UPDATE "engage_idempotency" SET "expires_at" = now() - interval '1 second' WHERE "key" = $1`, [
      key,
    ]);
    const again = await post(key, { name: 'Expiring' });
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await dealsNamed('Expiring')).toHaveLength(2);
  });
});

describe('Idempotency-Key on /v1', () => {
  let t: TestApp;
  let org: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
  });
  afterAll(() => t?.drop());

  const v1 = (path: string, key: string, body: string, type = 'application/json') =>
    Promise.resolve(
      t.app.request(`/v1${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.token}`, 'Content-Type': type, 'Idempotency-Key': key },
        body,
      }),
    );
  const count = async (table: string) =>
    Number(
      (
        await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${table}" WHERE "organisation_id" = $1`, [
          org.id,
        ])
      )[0]!.n,
    );

  it('a retried batch import writes once and answers the first result', async () => {
    const key = randomUUID();
    const body = JSON.stringify({ items: [{ display_name: 'Batch once', external_id: 'batch-once' }] });
    const first = await v1('/contacts/imports/batch', key, body);
    expect(first.status).toBe(200);
    const again = await v1('/contacts/imports/batch', key, body);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // Without the key the same batch would report an update; the replay reports the create.
    expect(await again.json()).toEqual(await first.json());
    const other = await v1('/contacts/imports/batch', key, JSON.stringify({ items: [] }));
    expect(other.status).toBe(422);
  });

  it('a retried upload keeps one file and answers its id; a retried job start queues one job', async () => {
    const before = await count('file');
    const key = randomUUID();
    const csv = 'display_name\nFrom file\n';
    const first = await v1('/files', key, csv, 'text/csv');
    expect(first.status).toBe(201);
    const file = (await first.json()) as { id: string };
    const again = await v1('/files', key, csv, 'text/csv');
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(((await again.json()) as { id: string }).id).toBe(file.id);
    expect(await count('file')).toBe(before + 1);
    expect((await v1('/files', key, 'display_name\nOther\n', 'text/csv')).status).toBe(422);
    expect(await count('file')).toBe(before + 1);

    const jobs = await count('import_job');
    const jobKey = randomUUID();
    const start = JSON.stringify({ file_id: file.id });
    const job = await v1('/contacts/imports', jobKey, start);
    expect(job.status).toBe(202);
    const retried = await v1('/contacts/imports', jobKey, start);
    expect(retried.status).toBe(202);
    expect(((await retried.json()) as { id: string }).id).toBe(((await job.json()) as { id: string }).id);
    expect(await count('import_job')).toBe(jobs + 1);
  });
});
