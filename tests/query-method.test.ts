/**
 * HTTP QUERY: a GET whose query string (or the rest of it) is the request's form-encoded body, for
 * filters too long for a URL. It answers exactly as the GET of the same query.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const FORM = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('QUERY', () => {
  let t: TestApp;
  let org: Organisation;
  let ids: string[];
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
    ids = await insertRows(t.db, 'contact', org.id, [
      { display_name: 'Ann', city: 'Bern' },
      { display_name: 'Ben', city: 'Bern' },
      { display_name: 'Cy', city: 'Chur' },
    ]);
  });
  afterAll(() => t?.drop());

  const query = (path: string, body: string, headers: Record<string, string> = FORM, token = org.token) =>
    t.call(path, token, { method: 'QUERY', headers, body });

  it('answers as the GET of the same query string: status, Content-Range and body', async () => {
    const q = 'city=eq.Bern&select=display_name&order=display_name.desc';
    const get = await t.call(`/contact?${q}`, org.token, { headers: { Prefer: 'count=exact' } });
    const res = await query('/contact', q, { ...FORM, Prefer: 'count=exact' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBe('0-1/2');
    expect(res.headers.get('content-range')).toBe(get.headers.get('content-range'));
    expect(await res.text()).toBe(await get.text());
  });

  it('adds the body to the query string of the URL', async () => {
    const res = await query('/contact?select=display_name', 'city=eq.Chur');
    expect(await res.json()).toEqual([{ display_name: 'Cy' }]);
  });

  it('takes an in.() of 5,000 ids, far past what a URL may hold', async () => {
    const list = [...Array.from({ length: 4998 }, () => crypto.randomUUID()), ids[0], ids[2]];
    const body = `id=in.(${list.join(',')})&select=display_name&order=display_name`;
    expect(body.length).toBeGreaterThan(180_000);
    const res = await query('/contact', body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ display_name: 'Ann' }, { display_name: 'Cy' }]);
  });

  it('is refused with the same errors as GET', async () => {
    const res = await query('/contact', 'nope=eq.1');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_FIELD');
    const unknown = await query('/nothing', 'id=eq.1');
    expect(unknown.status).toBe(404);
  });

  it('is 415 for a body that is not form-encoded, and 401 first for a bad token', async () => {
    const json = await query('/contact', '{"city":"Bern"}', { 'Content-Type': 'application/json' });
    expect(json.status).toBe(415);
    const body = (await json.json()) as { code: string; hint: string };
    expect(body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(body.hint).toContain('application/x-www-form-urlencoded');
    const untyped = await query('/contact', 'city=eq.Bern', {});
    expect(untyped.status).toBe(415);
    const badToken = await query('/contact', '{}', { 'Content-Type': 'application/json' }, 'nope');
    expect(badToken.status).toBe(401);
  });

  it('is offered where GET is: OPTIONS names its body type in Accept-Query', async () => {
    const res = await t.call('/contact', org.token, { method: 'OPTIONS' });
    expect(res.headers.get('accept-query')).toBe('application/x-www-form-urlencoded');
  });
});
