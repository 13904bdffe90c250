/**
 * Input built to hurt: bodies nested thousands of levels deep, text-search configurations that do
 * not exist, patterns long enough to stall a scan. Each gets a 400 with the contract's body, never
 * a 500 and never a slow statement; a saturated pool is a 503 the caller may retry; every response
 * tells caches and browsers not to keep or sniff it.
 */
import type { Database } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PoolBusy } from '../engine/db/admission.ts';
import { MAX_PATTERN_LENGTH, TEXT_SEARCH_CONFIGS } from '../engine/operators.ts';
import { MAX_JSON_DEPTH } from '../engine/parse/body.ts';
import { createApp } from '../server/app.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let a: Organisation;
let dealId: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  [dealId] = (await insertRows(t.db, 'deal', a.id, [{ name: 'Deep' }])) as [string];
  await insertRows(t.db, 'custom_field', a.id, [{ name: 'Notes', key: 'notes', type: 'string', entity: 'deal' }]);
  await insertRows(t.db, 'contact', a.id, [
    { display_name: 'Ada', email: 'ada@example.com', full_name: 'Ada Lovelace' },
  ]);
});
afterAll(() => t?.drop());

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

async function expectError(response: Response, status: number, code: string) {
  const body = (await response.json()) as Record<string, unknown>;
  expect({ status: response.status, code: body.code }).toEqual({ status, code });
  expect(body.request_id).toBe(response.headers.get('Request-Id'));
  return body;
}

const patchDeal = (body: string, token = a.token) =>
  t.call(`/deal_details?id=eq.${dealId}`, token, {
    method: 'PATCH',
    body,
    headers: { 'Content-Type': 'application/json' },
  });

describe(`JSON bodies nest at most ${MAX_JSON_DEPTH} levels`, () => {
  it.each([MAX_JSON_DEPTH + 1, 5_000, 10_000])(
    'a custom-field value %i levels deep is 400 INVALID_JSON',
    async (depth) => {
      const body = await expectError(await patchDeal(`{"notes":${nested(depth - 1)}}`), 400, 'INVALID_JSON');
      expect(body.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    },
  );

  it('with an unknown token the same body is 401: the token is judged first', async () => {
    await expectError(await patchDeal(`{"notes":${nested(10_000)}}`, `engage_${'x'.repeat(43)}`), 401, 'UNAUTHORIZED');
  });

  it(`a value ${MAX_JSON_DEPTH} levels deep is read, and brackets inside strings do not count`, async () => {
    const value = `${nested(MAX_JSON_DEPTH - 1)}`;
    // Read, and judged by the field's type.
    await expectError(await patchDeal(`{"notes":${value}}`), 400, 'VALIDATION_FAILED');
    expect((await patchDeal(`{"notes":"${'['.repeat(5000)}"}`)).status).toBe(204);
    expect((await patchDeal(`{"notes":"\\\\${'['.repeat(5000)}"}`)).status).toBe(204);
  });

  it('a batch import nested too deep is 400 INVALID_JSON', async () => {
    const response = await t.app.request('/v1/contacts/imports/batch', {
      method: 'POST',
      headers: { Authorization: `Bearer ${a.token}`, 'Content-Type': 'application/json' },
      body: `{"items":[{"display_name":"x","tags":${nested(5000)}}]}`,
    });
    await expectError(response, 400, 'INVALID_JSON');
  });
});

describe('text-search configurations are PostgreSQL built-in ones', () => {
  it.each(['nope.english', 'public.english', 'klingon', 'pg_catalog.klingon'])(
    'fts(%s) is 400 naming the choices',
    async (config) => {
      const body = await expectError(
        await t.call(`/contact?full_name=fts(${config}).ada`, a.token),
        400,
        'INVALID_QUERY',
      );
      expect(body.message).toBe(`"${config}" is not a text search configuration of this API`);
      expect(body.hint).toContain('english, finnish');
    },
  );

  it.each([...TEXT_SEARCH_CONFIGS, 'pg_catalog.english'])('fts(%s) runs', async (config) => {
    const response = await t.call(`/contact?full_name=wfts(${config}).ada&select=display_name`, a.token);
    expect(response.status).toBe(200);
  });
});

describe(`patterns have at most ${MAX_PATTERN_LENGTH} characters`, () => {
  const long = 'a'.repeat(MAX_PATTERN_LENGTH + 1);

  it.each([
    `email=ilike.${long}`,
    `email=like.${long}`,
    `email=match.${long}`,
    `email=imatch.${long}`,
    `email=not.ilike.${long}`,
    `email=ilike(any).{${long}}`,
    `or=(email.ilike.${long},display_name.eq.Ada)`,
  ])('%s is 400', async (query) => {
    const body = await expectError(await t.call(`/contact?${query}`, a.token), 400, 'INVALID_QUERY');
    expect(body.message).toMatch(/pattern on email is \d+ characters long; a pattern may have at most 400/);
  });

  it(`a pattern of ${MAX_PATTERN_LENGTH} characters runs, and other operators take longer values`, async () => {
    const pattern = `*${'a'.repeat(MAX_PATTERN_LENGTH - 2)}*`;
    expect((await t.call(`/contact?email=ilike.${pattern}`, a.token)).status).toBe(200);
    expect((await t.call(`/contact?email=eq.${long}`, a.token)).status).toBe(200);
  });
});

describe('a saturated pool', () => {
  it('is 503 DATABASE_UNAVAILABLE, transient, with Retry-After', async () => {
    const busy = async (): Promise<never> => {
      throw new PoolBusy('the database is busy: no connection became free within 5 ms; retry shortly');
    };
    const db: Database = {
      kind: 'postgres',
      query: busy,
      transaction: busy,
      exec: busy,
      ping: busy,
      close: async () => {},
    };
    const app = createApp({ engine: engageEngine(db), ping: busy });
    const response = await app.request('/api/v1/contact', { headers: { Authorization: `Bearer ${a.token}` } });
    const body = await expectError(response, 503, 'DATABASE_UNAVAILABLE');
    expect(body).toMatchObject({ is_transient: true, message: expect.stringContaining('no connection became free') });
    expect(response.headers.get('Retry-After')).toBe('1');
  });
});

describe('responses are neither cached nor sniffed', () => {
  it.each([
    ['a read', '/api/v1/contact', 200],
    ['an error', '/api/v1/contact?nope=eq.1', 400],
    ['an unknown path', '/nowhere', 404],
    ['the OpenAPI document', '/api/v1/', 200],
  ])('%s', async (_, path, status) => {
    const response = await t.app.request(path, { headers: { Authorization: `Bearer ${a.token}` } });
    expect(response.status).toBe(status);
    expect(response.headers.get('Cache-Control')).toBe('no-store');
    expect(response.headers.get('X-Content-Type-Options')).toBe('nosniff');
  });
});
