/**
 * Rate limits (RATE_LIMIT=N/S): off by default, with no header; on, each token may make N requests
 * per window of S seconds, counted in PostgreSQL so that every process shares the count, with the
 * IETF RateLimit header fields on every response and 429 RATE_LIMITED with Retry-After past it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { organisation } from '../schema/tables.ts';
import { buildApi } from '../server/build.ts';
import { loadConfig } from '../server/config.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Windows are aligned to the clock (compile/rate-limit.ts): requests a test counts together must not
 * straddle the end of one. Waits for the next window of `seconds` when this one ends within 5 s.
 */
async function oneWindowAhead(seconds: number) {
  const left = seconds * 1000 - (Date.now() % (seconds * 1000));
  if (left < 5000) await sleep(left + 20);
}

describe('rate limits', () => {
  let off: TestApp;
  let on: TestApp;
  beforeAll(async () => {
    off = await createTestApp();
    on = await createTestApp({ rateLimit: { requests: 3, seconds: 60 } });
  });
  afterAll(async () => {
    await off?.drop();
    await on?.drop();
  });

  it('are off by default: no header, no limit', async () => {
    const org = await createOrganisation(off);
    for (let i = 0; i < 5; i++) {
      const res = await off.call('/contact', org.token);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit')).toBeNull();
      expect(res.headers.get('ratelimit-policy')).toBeNull();
    }
  });

  it('count each token’s requests, then answer 429 with Retry-After', async () => {
    const org = await createOrganisation(on);
    await oneWindowAhead(60);
    for (const remaining of [2, 1, 0]) {
      const res = await on.call('/contact', org.token);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-policy')).toBe('"default";q=3;w=60');
      expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"default";r=${remaining};t=\\d+$`));
    }
    const limited = await on.call('/contact', org.token);
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get('retry-after'));
    expect(retry).toBeGreaterThanOrEqual(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(limited.headers.get('ratelimit')).toBe(`"default";r=0;t=${retry}`);
    const body = (await limited.json()) as { code: string; is_transient: boolean; status_code: number };
    expect(body).toMatchObject({ code: 'RATE_LIMITED', is_transient: true, status_code: 429 });
    // The versioned API counts against the same limit.
    const v1 = await on.app.request('/v1/contacts', { headers: { Authorization: `Bearer ${org.token}` } });
    expect(v1.status).toBe(429);
    // Another token has a count of its own.
    const other = await createOrganisation(on);
    expect((await on.call('/contact', other.token)).status).toBe(200);
  });

  it('an organisation’s own rate_limit replaces RATE_LIMIT’s number of requests, for its tokens only', async () => {
    const strict = await createOrganisation(on);
    const generous = await createOrganisation(on);
    await on.db.query('UPDATE organisation SET rate_limit = 1 WHERE id = $1', [strict.id]);
    await on.db.query('UPDATE organisation SET rate_limit = 5 WHERE id = $1', [generous.id]);
    await oneWindowAhead(60);
    const first = await on.call('/contact', strict.token);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-policy')).toBe('"default";q=1;w=60');
    expect(first.headers.get('ratelimit')).toMatch(/^"default";r=0;t=\d+$/);
    expect((await on.call('/contact', strict.token)).status).toBe(429);
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await on.call('/contact', generous.token)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });

  it('are in the OpenAPI document only when on: 429 with its headers on every operation', async () => {
    const operations = (doc: { paths: Record<string, Record<string, { responses?: object }>> }) =>
      Object.values(doc.paths).flatMap((item) =>
        Object.entries(item)
          .filter(([method]) => method !== 'servers')
          .map(([, op]) => op.responses ?? {}),
      );
    const org = await createOrganisation(off);
    const plain = await (await off.call('/', org.token)).json();
    // Off, only a stream of changes (a GET) may be 429, past the streams a tenant may hold, and
    // without the rate limit's headers.
    const writes = Object.values(plain.paths as Record<string, Record<string, { responses?: object }>>).flatMap(
      (item) => ['post', 'patch', 'put', 'delete'].flatMap((method) => (item[method] ? [item[method].responses] : [])),
    );
    expect(writes.length).toBeGreaterThan(0);
    expect(writes.some((r) => '429' in (r ?? {}))).toBe(false);
    expect(Object.keys(plain.components.responses.TooManyRequests.headers)).toEqual(['Request-Id']);
    const limited = on.engine.openapi() as { paths: Record<string, Record<string, { responses?: object }>> } & {
      components: { responses: Record<string, { headers: object }> };
    };
    expect(operations(limited).every((r) => '429' in r)).toBe(true);
    expect(limited.paths['/v1/contacts']!.get!.responses).toHaveProperty('429');
    expect(Object.keys(limited.components.responses.TooManyRequests!.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'RateLimit', 'RateLimit-Policy']),
    );
  });

  it('tell a token that is not valid so, before its limit', async () => {
    const bogus = `engage_${'x'.repeat(43)}`;
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await on.call('/contact', bogus)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
  });

  it('share one count between the processes of a deployment', async () => {
    const org = await createOrganisation(on);
    const second = buildApi({ db: on.db, rateLimit: { requests: 3, seconds: 60 } });
    const call = (app: typeof second.app) =>
      app.request('/api/v1/contact', { headers: { Authorization: `Bearer ${org.token}` } });
    await oneWindowAhead(60);
    const statuses = [
      (await call(on.app)).status,
      (await call(second.app)).status,
      (await call(on.app)).status,
      (await call(second.app)).status,
    ];
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('start counting again when the window ends', async () => {
    const t = await createTestApp({ rateLimit: { requests: 1, seconds: 1 } });
    try {
      const org: Organisation = await createOrganisation(t);
      // Start at the beginning of a window, so that two requests fall in it.
      await sleep(1000 - (Date.now() % 1000) + 20);
      expect((await t.call('/contact', org.token)).status).toBe(200);
      expect((await t.call('/contact', org.token)).status).toBe(429);
      await sleep(1100);
      expect((await t.call('/contact', org.token)).status).toBe(200);
    } finally {
      await t.drop();
    }
  });

  it('an engine refuses a limit that is not whole requests per whole seconds', () => {
    for (const rateLimit of [
      { requests: 0, seconds: 60 },
      { requests: 10, seconds: 0.5 },
    ]) {
      expect(() => engageEngine(on.db, { rateLimit })).toThrow(/whole number of requests per whole number of seconds/);
    }
    const perTenant = { table: organisation, column: 'name' };
    expect(() => engageEngine(on.db, { rateLimit: { requests: 1, seconds: 1, perTenant } })).toThrow(/integer column/);
  });

  it('are configured as N/S, and a malformed value stops the server from starting', () => {
    expect(loadConfig({ RATE_LIMIT: '100/60' }).RATE_LIMIT).toEqual({ requests: 100, seconds: 60 });
    expect(loadConfig({}).RATE_LIMIT).toBeUndefined();
    for (const bad of ['100', '0/60', '100/0', '1.5/60', 'a/b', '100/60/1']) {
      expect(() => loadConfig({ RATE_LIMIT: bad }), bad).toThrow(/RATE_LIMIT must be N\/S/);
    }
  });
});
