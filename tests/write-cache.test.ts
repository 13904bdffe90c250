/**
 * Compiled PATCHes and POSTs of one object are kept by shape (engine/write-cache.ts), the body bound
 * on every request. These tests make the same write again and again, the statement held, and try to
 * have it write another organisation's rows, take another body's values, outlive a revoked token or
 * let a bad body or id through; each must be answered as the first request of its shape is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let one: Organisation;
let two: Organisation;
let ones: string[];
let twos: string[];
beforeAll(async () => {
  t = await createTestApp();
  one = await createOrganisation(t);
  two = await createOrganisation(t);
  ones = await insertRows(t.db, 'deal', one.id, [{ name: 'One A' }, { name: 'One B' }]);
  twos = await insertRows(t.db, 'deal', two.id, [{ name: 'Two A' }]);
});
afterAll(() => t?.drop());

const patch = (id: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  t.call(`/deal?id=eq.${id}`, token, {
    method: 'PATCH',
    headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', ...headers },
    body: JSON.stringify(body),
  });

/** An error body without what differs between any two requests. */
const withoutRequest = ({ request_id, timestamp, ...rest }: Record<string, unknown>) => rest;

const names = async (organisation: string) =>
  (
    await t.db.query<{ name: string; status_key: string | null }>(
      'SELECT name, status_key FROM deal WHERE organisation_id = $1::text::uuid ORDER BY name',
      [organisation],
    )
  ).map((r) => `${r.name}:${r.status_key}`);

describe('held PATCHes over HTTP', () => {
  it('write each request’s own body to its own record, however often the shape repeats', async () => {
    for (let round = 0; round < 3; round++) {
      const [a, b] = [
        await patch(ones[0]!, one.token, { status_key: `a${round}` }),
        await patch(ones[1]!, one.token, { status_key: `b${round}` }),
      ];
      expect(a.status).toBe(200);
      expect(((await a.json()) as Array<{ status_key: string }>)[0]!.status_key).toBe(`a${round}`);
      expect(((await b.json()) as Array<{ status_key: string }>)[0]!.status_key).toBe(`b${round}`);
      expect(await names(one.id)).toEqual([`One A:a${round}`, `One B:b${round}`]);
    }
  });

  it('never write another organisation’s record, the statement held for both', async () => {
    for (let round = 0; round < 3; round++) {
      const mine = await patch(twos[0]!, two.token, { status_key: `two${round}` });
      expect(await mine.json()).toMatchObject([{ status_key: `two${round}` }]);
      // The same shape with one's token, aimed at two's record: nothing is written.
      const theirs = await patch(twos[0]!, one.token, { status_key: 'stolen' });
      expect(theirs.status).toBe(200);
      expect(await theirs.json()).toEqual([]);
      expect(await names(two.id)).toEqual([`Two A:two${round}`]);
    }
  });

  it('refuse a body naming another organisation, after the same keys naming its own were held', async () => {
    const own = await patch(ones[0]!, one.token, { organisation_id: one.id, status_key: 'own' });
    expect(own.status).toBe(200);
    const other = await patch(ones[0]!, one.token, { organisation_id: two.id, status_key: 'moved' });
    expect(other.status).toBe(403);
    expect(await names(one.id)).toContain('One A:own');
    expect(await names(two.id)).toHaveLength(1);
  });

  it('tell bodies with other keys apart', async () => {
    expect((await patch(ones[0]!, one.token, { status_key: 'k1' })).status).toBe(200);
    expect((await patch(ones[0]!, one.token, { name: 'One A' })).status).toBe(200);
    // Setting the name alone left the status as it was.
    expect(await names(one.id)).toEqual(['One A:k1', 'One B:b2']);
    expect((await patch(ones[0]!, one.token, { status_key: 'k2', name: 'One A' })).status).toBe(200);
    expect(await names(one.id)).toEqual(['One A:k2', 'One B:b2']);
  });

  it('refuse a bad value or a bad id exactly as the first request of the shape is refused', async () => {
    const fresh = await createTestApp();
    try {
      const org = await createOrganisation(fresh);
      const [id] = await insertRows(fresh.db, 'deal', org.id, [{ name: 'Fresh' }]);
      const send = (app: TestApp, token: string, deal: string, body: unknown) =>
        app.call(`/deal?id=eq.${deal}`, token, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      // In a fresh app each bad request is the first of its shape; here the shape is held.
      expect((await patch(ones[0]!, one.token, { value: 5 })).status).toBe(200);
      for (const [deal, body] of [
        [ones[0]!, { value: 'lots' }],
        ['not-a-uuid', { value: 5 }],
        ['not-a-uuid', { value: 'lots' }],
        [ones[0]!, { value: 5, nope: 1 }],
      ] as const) {
        const held = await send(t, one.token, deal, body);
        const first = await send(fresh, org.token, deal === ones[0] ? id! : deal, body);
        expect(held.status).toBe(400);
        expect(withoutRequest(await held.json())).toEqual(withoutRequest(await first.json()));
      }
    } finally {
      await fresh.drop();
    }
  });

  it('stop a revoked token on a PATCH it made before', async () => {
    const third = await createOrganisation(t);
    const [id] = await insertRows(t.db, 'deal', third.id, [{ name: 'Third' }]);
    expect((await patch(id!, third.token, { status_key: 'x' })).status).toBe(200);
    await t.db.query('UPDATE api_token SET revoked_at = now() WHERE organisation_id = $1::text::uuid', [third.id]);
    expect((await patch(id!, third.token, { status_key: 'y' })).status).toBe(401);
    expect(await names(third.id)).toEqual(['Third:x']);
  });

  it('honour headers that differ between otherwise equal PATCHes', async () => {
    const minimal = await patch(ones[1]!, one.token, { status_key: 'm' }, { Prefer: 'return=minimal' });
    expect(minimal.status).toBe(204);
    const full = await patch(ones[1]!, one.token, { status_key: 'r' });
    expect(full.status).toBe(200);
    const stale = await patch(ones[1]!, one.token, { status_key: 's' }, { 'If-Match': '"1"' });
    expect(stale.status).toBe(412);
    expect(await names(one.id)).toContain('One B:r');
  });
});

const post = (token: string, body: unknown, headers: Record<string, string> = {}) =>
  t.call('/deal?select=name,status_key,contact_id', token, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', ...headers },
    body: JSON.stringify(body),
  });

const posted = async (organisation: string) =>
  (
    await t.db.query<{ name: string; contact_id: string | null }>(
      "SELECT name, contact_id::text FROM deal WHERE organisation_id = $1::text::uuid AND name LIKE 'Posted%' ORDER BY name",
      [organisation],
    )
  ).map((r) => `${r.name}:${r.contact_id}`);

describe('held POSTs over HTTP', () => {
  it('insert each request’s own body for its own organisation, however often the shape repeats', async () => {
    for (let round = 0; round < 3; round++) {
      const mine = await post(one.token, { name: `Posted one ${round}`, status_key: `s${round}` });
      const theirs = await post(two.token, { name: `Posted two ${round}`, status_key: `t${round}` });
      expect(mine.status).toBe(201);
      expect(await mine.json()).toEqual([{ name: `Posted one ${round}`, status_key: `s${round}`, contact_id: null }]);
      expect(await theirs.json()).toEqual([{ name: `Posted two ${round}`, status_key: `t${round}`, contact_id: null }]);
    }
    expect(await posted(one.id)).toEqual([0, 1, 2].map((n) => `Posted one ${n}:null`));
    expect(await posted(two.id)).toEqual([0, 1, 2].map((n) => `Posted two ${n}:null`));
  });

  it('refuse a body naming another organisation, after the same keys naming its own were held', async () => {
    expect((await post(one.token, { organisation_id: one.id, name: 'Posted own' })).status).toBe(201);
    const other = await post(one.token, { organisation_id: two.id, name: 'Posted moved' });
    expect(other.status).toBe(403);
    expect(await posted(two.id)).not.toContain('Posted moved:null');
    expect(await posted(one.id)).toContain('Posted own:null');
  });

  it('compile a body naming another record apart, and set the reference it names', async () => {
    const [contact] = await insertRows(t.db, 'contact', one.id, [{ display_name: 'Ref', external_id: 'held-ref' }]);
    expect((await post(one.token, { name: 'Posted plain' })).status).toBe(201);
    const named = await post(one.token, { name: 'Posted named', contact: { external_id: 'held-ref' } });
    expect(named.status).toBe(201);
    expect(await named.json()).toMatchObject([{ name: 'Posted named', contact_id: contact }]);
    // And the plain shape, held before, still inserts without one.
    expect((await post(one.token, { name: 'Posted plain 2' })).status).toBe(201);
    expect(await posted(one.id)).toEqual(
      expect.arrayContaining([`Posted named:${contact}`, 'Posted plain:null', 'Posted plain 2:null']),
    );
  });

  it('refuse a bad body exactly as the first request of the shape is refused', async () => {
    const fresh = await createTestApp();
    try {
      const org = await createOrganisation(fresh);
      const send = (app: TestApp, token: string, body: unknown) =>
        app.call('/deal', token, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
      // In a fresh app each bad request is the first of its shape; here the shape is held.
      expect((await send(t, one.token, { name: 'Posted valued', value: 5 })).status).toBe(201);
      for (const body of [
        { name: 'Posted bad', value: 'lots' },
        { name: 5, value: 5 },
        { name: 'Posted extra', value: 5, nope: 1 },
        { name: 'Posted ref', value: 5, contact: { external_id: 'nobody' } },
      ]) {
        const held = await send(t, one.token, body);
        const first = await send(fresh, org.token, body);
        expect(held.status).toBeGreaterThanOrEqual(400);
        expect(held.status).toBe(first.status);
        expect(withoutRequest(await held.json())).toEqual(withoutRequest(await first.json()));
      }
      expect(await posted(one.id)).not.toContain('Posted bad:null');
    } finally {
      await fresh.drop();
    }
  });

  it('honour headers that differ between otherwise equal POSTs', async () => {
    const minimal = await post(one.token, { name: 'Posted minimal' }, { Prefer: 'return=minimal' });
    expect(minimal.status).toBe(201);
    expect(await minimal.text()).toBe('');
    const full = await post(one.token, { name: 'Posted full' });
    expect(await full.json()).toEqual([{ name: 'Posted full', status_key: null, contact_id: null }]);
    const dry = await post(one.token, { name: 'Posted dry' }, { Prefer: 'return=representation, tx=rollback' });
    expect(dry.status).toBe(201);
    expect(await posted(one.id)).toEqual(expect.arrayContaining(['Posted minimal:null', 'Posted full:null']));
    expect(await posted(one.id)).not.toContain('Posted dry:null');
  });
});

describe('held writes with an Idempotency-Key', () => {
  const keyed = (key: string, body: unknown) =>
    t.call(`/deal?id=eq.${ones[1]}`, one.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', 'Idempotency-Key': key },
      body: JSON.stringify(body),
    });

  it('run each key once, answer its retries with the first response, and bind each key’s own', async () => {
    for (let round = 0; round < 3; round++) {
      const first = await keyed(`held-${round}`, { status_key: `key${round}` });
      expect(first.status).toBe(200);
      expect(await first.json()).toMatchObject([{ status_key: `key${round}` }]);
      expect(await names(one.id)).toContain(`One B:key${round}`);
    }
    // A retry of the second key, written through the held statement: its response again, nothing written.
    const retry = await keyed('held-1', { status_key: 'key1' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(await retry.json()).toMatchObject([{ status_key: 'key1' }]);
    expect(await names(one.id)).toContain('One B:key2');
  });

  it('refuse a key sent first with another body, and a malformed key, as the first request of the shape', async () => {
    expect((await keyed('held-body', { status_key: 'first' })).status).toBe(200);
    const reused = await keyed('held-body', { status_key: 'second' });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED' });
    const malformed = await keyed('"', { status_key: 'third' });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'INVALID_IDEMPOTENCY_KEY' });
    expect(await names(one.id)).toContain('One B:first');
  });

  it('keep POSTs with keys apart: each key inserts once, with its own body', async () => {
    const send = (key: string, name: string) => post(one.token, { name }, { 'Idempotency-Key': key });
    for (const n of [1, 2, 3]) expect((await send(`held-post-${n}`, `Posted keyed ${n}`)).status).toBe(201);
    const again = await send('held-post-2', 'Posted keyed 2');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await posted(one.id)).filter((row) => row.startsWith('Posted keyed'))).toEqual([
      'Posted keyed 1:null',
      'Posted keyed 2:null',
      'Posted keyed 3:null',
    ]);
  });
});
