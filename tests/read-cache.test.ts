/**
 * Compiled reads are kept by request. The unit half checks what makes two requests the same; the
 * HTTP half tries to make a cached statement leak across tenants, outlive a revoked token, or
 * answer a request whose headers differ.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRead } from '../engine/compile/read.ts';
import type { Scope } from '../engine/compile/scope.ts';
import { parseRequest, type RawRequest } from '../engine/parse/index.ts';
import { planRead } from '../engine/plan/read.ts';
import { type CompiledRead, ReadCache } from '../engine/read-cache.ts';
import { registry } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { SCOPING } from './helpers/scoping.ts';

const raw = (query: string, headers: Record<string, string> = {}, method = 'GET'): RawRequest => ({
  method,
  resource: 'contact',
  query,
  header: (name) => headers[name],
});

/** A cache whose compile records each call and returns a statement with the scope as $1. */
function counting(capacity = 10) {
  const cache = new ReadCache(capacity);
  const compiled: string[] = [];
  const read = (r: RawRequest, scope: Scope) =>
    cache.read(r, scope, (): CompiledRead => {
      compiled.push(r.query);
      const value = 'tokenHash' in scope ? scope.tokenHash : scope.tenant;
      return { plan: { query: r.query } as never, statement: { text: `SELECT ${r.query}`, params: [value, r.query] } };
    });
  return { cache, compiled, read };
}

const A: Scope = { tokenHash: 'a'.repeat(64) };
const B: Scope = { tokenHash: 'b'.repeat(64) };

describe('ReadCache', () => {
  it('compiles a request once and answers repeats with the caller’s own scope as $1', () => {
    const { compiled, read } = counting();
    expect(read(raw('id=eq.1'), A).statement.params).toEqual([A.tokenHash, 'id=eq.1']);
    const again = read(raw('id=eq.1'), B);
    expect(compiled).toEqual(['id=eq.1']);
    expect(again.statement).toEqual({ text: 'SELECT id=eq.1', params: [B.tokenHash, 'id=eq.1'] });
    // The held statement keeps its own scope: answering B did not change what A gets.
    expect(read(raw('id=eq.1'), A).statement.params[0]).toBe(A.tokenHash);
  });

  it('tells requests apart by query, method, scope kind and every header the parser reads', () => {
    const { compiled, read } = counting();
    read(raw('x'), A);
    read(raw('y'), A);
    read(raw('x', {}, 'HEAD'), A);
    read(raw('x'), { tenant: '00000000-0000-4000-8000-000000000001' });
    for (const header of ['prefer', 'accept', 'range', 'range-unit']) read(raw('x', { [header]: 'v' }), A);
    read(raw('x', { 'x-other': 'v' }), A);
    expect(compiled).toEqual(['x', 'y', 'x', 'x', 'x', 'x', 'x', 'x']);
  });

  it('keeps at most its capacity, dropping the least recently used', () => {
    const { cache, compiled, read } = counting(2);
    read(raw('a'), A);
    read(raw('b'), A);
    read(raw('a'), A); // a is now the most recent
    read(raw('c'), A); // drops b
    expect(cache.size).toBe(2);
    read(raw('a'), A);
    read(raw('b'), A);
    expect(compiled).toEqual(['a', 'b', 'c', 'b']);
  });

  it('does not hold very long query strings, nor anything at capacity 0', () => {
    const long = counting();
    const query = `id=in.(${'1,'.repeat(1500)}1)`;
    long.read(raw(query), A);
    long.read(raw(query), A);
    expect(long.compiled).toHaveLength(2);
    expect(long.cache.size).toBe(0);
    const none = counting(0);
    none.read(raw('a'), A);
    none.read(raw('a'), A);
    expect(none.compiled).toHaveLength(2);
  });
});

describe('compiled reads', () => {
  // The cache swaps the caller's scope into $1, so every read must bind its scope there first.
  const queries = [
    ['contact', 'select=id,email&or=(city.eq.Bern,email.like.*x*)&order=display_name&limit=5&offset=2'],
    ['deal_details', 'value=gte.10'],
    ['appointment', 'start_time=gte.2026-01-01&start_time=lt.2027-01-01'],
  ] as const;
  for (const scope of [A, { tenant: '00000000-0000-4000-8000-000000000002' }] satisfies Scope[]) {
    for (const [resource, query] of queries) {
      it(`bind the ${'tokenHash' in scope ? 'token' : 'organisation'} as $1: ${resource}?${query}`, () => {
        const request = parseRequest({
          method: 'GET',
          resource,
          query,
          header: (name) => (name === 'prefer' ? 'count=exact' : undefined),
        });
        const { text, params } = compileRead(planRead(registry.get(resource)!, request, 1000), scope, SCOPING);
        expect(params[0]).toBe('tokenHash' in scope ? scope.tokenHash : scope.tenant);
        expect(params.slice(1)).not.toContain(params[0]);
        expect(text.indexOf('$1::')).toBe(text.indexOf('$'));
      });
    }
  }
});

describe('cached reads over HTTP', () => {
  let t: TestApp;
  let one: Organisation;
  let two: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    one = await createOrganisation(t);
    two = await createOrganisation(t);
    await insertRows(t.db, 'contact', one.id, [
      { display_name: 'One A', city: 'Bern' },
      { display_name: 'One B', city: 'Bern' },
    ]);
    await insertRows(t.db, 'contact', two.id, [{ display_name: 'Two A', city: 'Bern' }]);
  });
  afterAll(() => t?.drop());

  const names = async (res: Response) =>
    ((await res.json()) as Array<{ display_name: string }>).map((c) => c.display_name);
  const path = '/contact?city=eq.Bern&select=display_name&order=display_name';

  it('answers each organisation with its own rows, however often the same request is made', async () => {
    for (let round = 0; round < 3; round++) {
      expect(await names(await t.call(path, one.token))).toEqual(['One A', 'One B']);
      expect(await names(await t.call(path, two.token))).toEqual(['Two A']);
    }
  });

  it('stops a revoked token on a request it made before', async () => {
    const third = await createOrganisation(t);
    expect((await t.call(path, third.token)).status).toBe(200);
    await t.db.query(`UPDATE api_token SET revoked_at = now() WHERE organisation_id = $1::text::uuid`, [third.id]);
    const res = await t.call(path, third.token);
    expect(res.status).toBe(401);
  });

  it('honours headers that differ between otherwise equal requests', async () => {
    const plain = await t.call(path, one.token);
    expect(plain.headers.get('content-range')).toBe('0-1/*');
    const counted = await t.call(path, one.token, { headers: { Prefer: 'count=exact' } });
    expect(counted.headers.get('content-range')).toBe('0-1/2');
    const ranged = await t.call(path, one.token, { headers: { Range: '1-1' } });
    expect(ranged.headers.get('content-range')).toBe('1-1/*');
    expect(await names(ranged)).toEqual(['One B']);
    const head = await t.call(path, one.token, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
  });

  it('still refuses a bad request every time it is made', async () => {
    for (let round = 0; round < 2; round++) {
      const res = await t.call('/contact?nope=eq.1', one.token);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_FIELD');
    }
  });
});
