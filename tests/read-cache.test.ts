/**
 * Compiled reads are kept by request. The unit half checks what makes two requests the same; the
 * HTTP half tries to make a cached statement leak across tenants, outlive a revoked token, or
 * answer a request whose headers differ.
 */
import { ApiError, type RawRequest, type Scope } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRead } from '../engine/compile/read.ts';
import { parseRequest } from '../engine/parse/index.ts';
import { queryShape } from '../engine/parse/query.ts';
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
    // An empty header is not an absent one.
    read(raw('x', { prefer: '' }), A);
    read(raw('x', { 'x-other': 'v' }), A);
    expect(compiled).toEqual(['x', 'y', 'x', 'x', 'x', 'x', 'x', 'x', 'x']);
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

/** A cache over the real parse, plan and compile of contact reads; `fresh` compiles without it. */
function compiling() {
  const cache = new ReadCache(10);
  const compiled: string[] = [];
  const fresh = (query: string, scope: Scope, headers: Record<string, string> = {}): CompiledRead => {
    const plan = planRead(registry.get('contact')!, parseRequest({ ...raw(query, headers), method: 'GET' }), 1000);
    return { plan, statement: compileRead(plan, scope, SCOPING) };
  };
  const read = (query: string, scope: Scope = A, headers: Record<string, string> = {}) =>
    cache.read(raw(query, headers), scope, () => {
      compiled.push(query);
      return fresh(query, scope, headers);
    }).statement;
  return {
    compiled,
    read,
    fresh: (query: string, scope: Scope = A, headers = {}) => fresh(query, scope, headers).statement,
  };
}

/** What a call throws, as the client would see it. */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    const { code, message, details } = error as ApiError;
    return { code, message, details };
  }
  throw new Error('expected an error');
}

const U1 = '00000000-0000-4000-8000-0000000000a1';
const U2 = '00000000-0000-4000-8000-0000000000a2';

describe('queryShape', () => {
  it('takes out the values of comparisons on plain fields, decoded, and keeps everything else as written', () => {
    const query =
      'id=eq.1&select=id,city&city=not.eq.Bern%20X&name=gte.a+b&deal.value=eq.5&limit=eq.5&or=(a.eq.1)' +
      '&display_name=like.A*&email=in.(a,b)&x="q"';
    expect(queryShape(query)).toEqual({
      text:
        'id=eq.\0&select=id,city&city=not.eq.\0&name=gte.\0&deal.value=eq.5&limit=eq.5&or=(a.eq.1)' +
        '&display_name=like.A*&email=in.(a,b)&x="q"',
      slots: [
        { field: 'id', value: '1', part: 0 },
        { field: 'city', value: 'Bern X', part: 2 },
        { field: 'name', value: 'a b', part: 3 },
      ],
    });
    expect(queryShape('?id=eq.1&id=lt.')?.text).toBe('id=eq.\0&id=lt.\0');
  });

  it('gives up on a malformed value, leaving parseQuery to report it', () => {
    expect(queryShape('id=eq.%E0%A4%A')).toBeNull();
  });
});

describe('ReadCache by shape', () => {
  it('compiles a shape once and answers each request exactly as compiling it would', () => {
    const { compiled, read, fresh } = compiling();
    const shape = (id: string, city: string, name: string) =>
      `city=eq.${city}&display_name=gt.${name}&id=not.eq.${id}&select=id,city&order=display_name&limit=5`;
    read(shape(U1, 'Bern', 'A'));
    for (const [id, city, name] of [
      [U2, 'Z%C3%BCrich', 'B'],
      [U1, 'Bern', 'A'],
      [U2, 'a+b', ''],
    ] as const) {
      expect(read(shape(id, city, name))).toEqual(fresh(shape(id, city, name)));
      expect(read(shape(id, city, name), B)).toEqual(fresh(shape(id, city, name), B));
    }
    expect(compiled).toEqual([shape(U1, 'Bern', 'A')]);
  });

  it('checks each value as the planner does, with the same error', () => {
    const { read, fresh } = compiling();
    read(`id=eq.${U1}`);
    for (const bad of ['nope', '', `${U1}x`]) {
      expect(thrown(() => read(`id=eq.${bad}`))).toEqual(thrown(() => fresh(`id=eq.${bad}`)));
    }
  });

  it('checks dates and timestamps as the planner does: ISO 8601 only, as bodies take them', () => {
    const { read, fresh } = compiling();
    read('birthday=gte.2000-01-01&created_at=lt.2026-11-26T07:00:00.000Z');
    for (const [birthday, created] of [
      ['tomorrow', '2026-12-01'],
      ['2000-01-01', 'now'],
      ['01/02/2026', '2026-12-01'],
      ['2000-01-01', '2026-12-01T25:00:00'],
    ]) {
      const query = `birthday=gte.${birthday}&created_at=lt.${created}`;
      expect(thrown(() => read(query))).toEqual(thrown(() => fresh(query)));
    }
    expect(read('birthday=gte.1999-12-31&created_at=lt.2026-12-01')).toEqual(
      fresh('birthday=gte.1999-12-31&created_at=lt.2026-12-01'),
    );
  });

  it('binds a value where the compiler put it, even one equal to another parameter', () => {
    const { compiled, read, fresh } = compiling();
    read('display_name=eq.5&limit=5');
    expect(read('display_name=eq.6&limit=5')).toEqual(fresh('display_name=eq.6&limit=5'));
    expect(read('display_name=eq.5&limit=5')).toEqual(fresh('display_name=eq.5&limit=5'));
    const exact = { prefer: 'count=exact' };
    read('city=eq.Bern&limit=2', A, exact);
    expect(read('city=eq.Basel&limit=2', A, exact)).toEqual(fresh('city=eq.Basel&limit=2', A, exact));
    expect(compiled).toEqual(['display_name=eq.5&limit=5', 'city=eq.Bern&limit=2']);
  });

  it('holds whole a read whose count the planner estimates from its filter values', () => {
    const { compiled, read, fresh } = compiling();
    const planned = { prefer: 'count=planned' };
    read('city=eq.Bern', A, planned);
    expect(read('city=eq.Basel', A, planned)).toEqual(fresh('city=eq.Basel', A, planned));
    expect(compiled).toEqual(['city=eq.Bern', 'city=eq.Basel']);
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

  it('answers each id with its own row, from one compiled shape', async () => {
    const mine = await insertRows(t.db, 'contact', one.id, [{ display_name: 'One C' }, { display_name: 'One D' }]);
    const theirs = await insertRows(t.db, 'contact', two.id, [{ display_name: 'Two B' }]);
    const byId = (id: string) => `/contact?id=eq.${id}&select=display_name`;
    for (let round = 0; round < 2; round++) {
      expect(await names(await t.call(byId(mine[0]!), one.token))).toEqual(['One C']);
      expect(await names(await t.call(byId(mine[1]!), one.token))).toEqual(['One D']);
      expect(await names(await t.call(byId(theirs[0]!), one.token))).toEqual([]);
      expect(await names(await t.call(byId(theirs[0]!), two.token))).toEqual(['Two B']);
      const bad = await t.call(byId('not-a-uuid'), one.token);
      expect(bad.status).toBe(400);
    }
  });

  it('refuses a PostgreSQL date word in a shape it answered with a date', async () => {
    const byBirthday = (value: string) => `/contact?birthday=gte.${value}&select=display_name`;
    expect((await t.call(byBirthday('2000-01-01'), one.token)).status).toBe(200);
    const res = await t.call(byBirthday('tomorrow'), one.token);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string; hint: string };
    expect(body.code).toBe('INVALID_QUERY');
    expect(body.message).toBe('"tomorrow" is not a date (YYYY-MM-DD), as field birthday requires');
    expect(body.hint).toContain('send an ISO 8601 value instead');
  });

  it('still refuses a bad request every time it is made', async () => {
    for (let round = 0; round < 2; round++) {
      const res = await t.call('/contact?nope=eq.1', one.token);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_FIELD');
    }
  });
});
