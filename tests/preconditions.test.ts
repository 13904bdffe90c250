/**
 * Optimistic concurrency: a singular read or a write of one record answers its version as an ETag;
 * If-Match makes PATCH and DELETE conditional in the same statement (412, nothing written, when any
 * record matched is at another version); If-None-Match on a singular GET answers 304 when nothing
 * changed. Two editors who send If-Match cannot overwrite each other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const OBJECT = 'application/vnd.pgrst.object+json';

describe('ETag, If-Match and If-None-Match', () => {
  let t: TestApp;
  let org: Organisation;
  let other: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
    other = await createOrganisation(t);
  });
  afterAll(() => t?.drop());

  const deal = async (name: string, owner = org) => (await insertRows(t.db, 'deal', owner.id, [{ name }]))[0]!;
  const get = (id: string, headers: Record<string, string> = {}) =>
    t.call(`/deal?id=eq.${id}&select=name`, org.token, { headers: { Accept: OBJECT, ...headers } });
  const etagOf = async (id: string) => (await get(id)).headers.get('etag')!;
  const patch = (filter: string, body: object, headers: Record<string, string>) =>
    t.call(`/deal?${filter}`, org.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', ...headers },
      body: JSON.stringify(body),
    });
  const nameOf = async (id: string) => ((await (await get(id)).json()) as { name: string }).name;
  const code = async (res: Response) => ((await res.json()) as { code: string }).code;

  it('a singular read answers a strong ETag; a list answers none', async () => {
    const id = await deal('Tagged');
    const res = await get(id);
    expect(res.status).toBe(200);
    expect(res.headers.get('etag')).toMatch(/^"\d+"$/);
    expect(await get(id).then((r) => r.headers.get('etag'))).toBe(res.headers.get('etag'));
    const list = await t.call(`/deal?id=eq.${id}`, org.token);
    expect(list.headers.get('etag')).toBeNull();
  });

  it('If-None-Match with the current ETag (or *, or its weak form) is 304 without a body', async () => {
    const id = await deal('Cached');
    const etag = await etagOf(id);
    for (const tags of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get(id, { 'If-None-Match': tags });
      expect(res.status).toBe(304);
      expect(res.headers.get('etag')).toBe(etag);
      expect(await res.text()).toBe('');
    }
    const changed = await get(id, { 'If-None-Match': '"1"' });
    expect(changed.status).toBe(200);
    expect(await changed.json()).toEqual({ name: 'Cached' });
  });

  it('two editors with If-Match: the second gets 412 and the first one’s change stays', async () => {
    const id = await deal('Draft');
    const seen = await etagOf(id);
    const first = await patch(`id=eq.${id}`, { name: 'First' }, { 'If-Match': seen });
    expect(first.status).toBe(200);
    const next = first.headers.get('etag');
    expect(next).toMatch(/^"\d+"$/);
    expect(next).not.toBe(seen);
    expect(next).toBe(await etagOf(id));
    const second = await patch(`id=eq.${id}`, { name: 'Second' }, { 'If-Match': seen });
    expect(second.status).toBe(412);
    expect(await code(second)).toBe('PRECONDITION_FAILED');
    expect(await nameOf(id)).toBe('First');
    // With the new ETag the second editor's change goes through.
    expect((await patch(`id=eq.${id}`, { name: 'Second' }, { 'If-Match': next! })).status).toBe(200);
    expect(await nameOf(id)).toBe('Second');
  });

  it('only one of two concurrent writes with the same If-Match goes through', async () => {
    const id = await deal('Raced');
    const seen = await etagOf(id);
    const results = await Promise.all(
      ['A', 'B', 'C'].map((name) => patch(`id=eq.${id}`, { name }, { 'If-Match': seen })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 412, 412]);
    const winner = results.find((r) => r.status === 200)!;
    expect(await nameOf(id)).toBe(((await winner.json()) as Array<{ name: string }>)[0]!.name);
  });

  it('DELETE with a stale If-Match is 412 and deletes nothing; with the current one it deletes', async () => {
    const id = await deal('Doomed');
    const seen = await etagOf(id);
    await patch(`id=eq.${id}`, { name: 'Changed' }, {});
    const stale = await t.call(`/deal?id=eq.${id}`, org.token, { method: 'DELETE', headers: { 'If-Match': seen } });
    expect(stale.status).toBe(412);
    expect((await get(id)).status).toBe(200);
    const current = await etagOf(id);
    const res = await t.call(`/deal?id=eq.${id}`, org.token, { method: 'DELETE', headers: { 'If-Match': current } });
    expect(res.status).toBe(204);
    expect((await get(id)).status).toBe(406);
  });

  it('over several records every one must be at a version listed', async () => {
    const a = await deal('Many A');
    const b = await deal('Many B');
    // Versions are times: two records written within one tick of the database's clock share one.
    await t.db.query(`UPDATE deal SET updated_at = updated_at + interval '1 second' WHERE id = $1`, [b]);
    const [ta, tb] = [await etagOf(a), await etagOf(b)];
    expect(ta).not.toBe(tb);
    const filter = `id=in.(${a},${b})`;
    const one = await patch(filter, { currency: 'EUR' }, { 'If-Match': ta });
    expect(one.status).toBe(412);
    const both = await patch(filter, { currency: 'EUR' }, { 'If-Match': `${ta}, ${tb}` });
    expect(both.status).toBe(200);
    expect(((await both.json()) as unknown[]).length).toBe(2);
    expect(both.headers.get('etag')).toBeNull();
  });

  it('If-Match: * writes what exists and is 412 when nothing matches', async () => {
    const id = await deal('Star');
    expect((await patch(`id=eq.${id}`, { name: 'Starred' }, { 'If-Match': '*' })).status).toBe(200);
    const none = await patch('name=eq.nothing-has-this-name', { name: 'x' }, { 'If-Match': '*' });
    expect(none.status).toBe(412);
  });

  it('a weak or malformed If-Match never lets a write through', async () => {
    const id = await deal('Strict');
    const etag = await etagOf(id);
    for (const tags of [`W/${etag}`, etag.slice(1, -1), `${etag} junk`, '']) {
      const res = await patch(`id=eq.${id}`, { name: 'Written' }, { 'If-Match': tags });
      expect(res.status, tags).toBe(412);
    }
    expect(await nameOf(id)).toBe('Strict');
  });

  it('another organisation’s record is never matched, whatever its ETag', async () => {
    const theirs = await deal('Theirs', other);
    const res = await t.call(`/deal?id=eq.${theirs}&select=name`, other.token, { headers: { Accept: OBJECT } });
    const etag = res.headers.get('etag')!;
    const attempt = await patch(`id=eq.${theirs}`, { name: 'Mine' }, { 'If-Match': etag });
    expect(attempt.status).toBe(412);
    const after = await t.call(`/deal?id=eq.${theirs}&select=name`, other.token, { headers: { Accept: OBJECT } });
    expect(await after.json()).toEqual({ name: 'Theirs' });
  });
});
