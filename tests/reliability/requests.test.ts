/**
 * Reliability: tens of thousands of generated requests through `app.request`, each response held
 * to the contract (harness.ts `send`): never a 5xx, always a Request-Id, and every error the
 * contract's JSON body with no SQL or stack in it. Seeds are fixed, so a run is reproducible; a
 * failure prints the request and response (and fast-check the seed and path to replay it).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  arbitraryRequest,
  dealDetailsRequest,
  headerRequest,
  readRequest,
  treeRequest,
  v1Request,
  writeRequest,
} from './arbitraries.ts';
import { type Fixture, property, requestCount, setUp } from './harness.ts';

/** Requests this file must send per run: the figure the suite promises. */
const MIN_REQUESTS = 20_000;
/** A property of a few thousand requests takes seconds; PostgreSQL in CI may be slower. */
const TIMEOUT = 240_000;

let fixture: Fixture;
const started = Date.now();

beforeAll(async () => {
  fixture = await setUp();
});
afterAll(() => fixture?.t.drop());

describe('every generated request keeps the contract', () => {
  it(
    'reads: grammar-aware filters, trees, select, order and paging on every resource',
    () => property(readRequest, 1001, 6500),
    TIMEOUT,
  );

  it('logic trees, nested and unbalanced', () => property(treeRequest, 1002, 2500), TIMEOUT);

  it('arbitrary query strings, paths and methods', () => property(arbitraryRequest, 1003, 4000), TIMEOUT);

  it('every header, valid and junk, on every method', () => property(headerRequest, 1004, 3500), TIMEOUT);

  it('writes: bodies on POST, PATCH and DELETE of every resource', () => property(writeRequest, 1005, 2800), TIMEOUT);

  it('PATCH /deal_details with custom-field keys', () => property(dealDetailsRequest, 1006, 1000), TIMEOUT);

  it('the versioned API: batch imports, jobs, files and pages', () => property(v1Request, 1007, 1500), TIMEOUT);

  // Last: the count is what the properties above sent, so a property that silently stopped early shows here.
  it(`sent at least ${MIN_REQUESTS} requests`, () => {
    const count = requestCount();
    console.log(`reliability: ${count} generated requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(count).toBeGreaterThanOrEqual(MIN_REQUESTS);
  });
});

// The checks must be able to fail: each broken response below has to be reported, not passed over.
describe('the harness reports a broken contract', () => {
  const error = (fields: Record<string, unknown> = {}) => ({
    name: 'APIError',
    message: 'contact has no field "foo"',
    code: 'UNKNOWN_FIELD',
    is_transient: false,
    timestamp: new Date().toISOString(),
    status_code: 400,
    contact_support: false,
    request_id: 'r1',
    details: null,
    hint: null,
    ...fields,
  });
  const json = {
    'Content-Type': 'application/json; charset=utf-8',
    'Request-Id': 'r1',
    'engage-version': '2026-11-01',
  };
  const cases: Array<[string, () => Response, RegExp]> = [
    [
      'a 5xx',
      () => new Response(JSON.stringify(error({ status_code: 500 })), { status: 500, headers: json }),
      /status 500/,
    ],
    [
      'no Request-Id',
      () => new Response('[]', { status: 200, headers: { 'engage-version': '2026-11-01' } }),
      /no Request-Id/,
    ],
    [
      'a key missing',
      () => new Response(JSON.stringify({ ...error(), hint: undefined }), { status: 400, headers: json }),
      /lacks hint/,
    ],
    [
      'an extra key',
      () => new Response(JSON.stringify(error({ stack: 'x' })), { status: 400, headers: json }),
      /extra keys stack/,
    ],
    [
      'another request_id',
      () => new Response(JSON.stringify(error({ request_id: 'r2' })), { status: 400, headers: json }),
      /request_id/,
    ],
    [
      'SQL in the message',
      () =>
        new Response(JSON.stringify(error({ message: 'syntax error at or near "FROM"' })), {
          status: 400,
          headers: json,
        }),
      /message leaks/,
    ],
    [
      'a stack in details',
      () =>
        new Response(JSON.stringify(error({ details: 'Error: x\n    at plan (/srv/engine/plan.ts:10:5)' })), {
          status: 400,
          headers: json,
        }),
      /details leaks/,
    ],
  ];
  it.each(cases)('%s', async (_, respond, problem) => {
    const original = fixture.t.app.request;
    fixture.t.app.request = respond as unknown as typeof original;
    try {
      const req = { method: 'GET', path: '/api/v1/contact', auth: 'Bearer %T', headers: {} };
      await expect(property(fc.constant(req), 1, 1)).rejects.toThrow(problem);
    } finally {
      fixture.t.app.request = original;
    }
  });
});
