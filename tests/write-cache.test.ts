/**
 * Compiled PATCHes are kept by shape (engine/write-cache.ts), the body bound on every request. These
 * tests make the same PATCH again and again, the statement held, and try to have it write another
 * organisation's rows, take another body's values, outlive a revoked token or let a bad body or id
 * through; a cache of size 0 (every PATCH compiled) must answer each request exactly the same.
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
