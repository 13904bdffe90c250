/**
 * Every error a read can meet, each checked against the whole contract (docs/contract.md section 5):
 * the body (name, message, code, is_transient, timestamp, status_code, contact_support,
 * request_id, and hint/context only), `Content-Type: application/json; charset=utf-8`, the
 * Request-Id and engage-version headers, and the extra headers some codes carry (Allow,
 * WWW-Authenticate, Retry-After, Content-Range). Database failures are produced with a closed
 * database and with fake databases that reject the way the drivers do.
 */

import { type AddressInfo, connect } from 'node:net';
import type { ApiError, Database } from '@engage/engine';
import { bearerToken, engageApp } from '@engage/engine/hono';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapDatabaseError } from '../engine/db/errors.ts';
import { registry } from '../schema/registry.ts';
import { createApp } from '../server/app.ts';
import { engageEngine } from '../server/engine.ts';
import {
  createOrganisation,
  createTestApp,
  ERROR_KEYS,
  insertRows,
  OPTIONAL_ERROR_KEYS,
  type Organisation,
  type TestApp,
} from './helpers/app.ts';

const MIB = 1024 * 1024;
const VERSION = '2026-11-01';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A token of the right shape that no organisation owns. */
const UNKNOWN_TOKEN = `engage_${'Q'.repeat(43)}`;

const contactFields = registry.get('contact')!.fields.map((f) => f.name);

let t: TestApp;
let org: Organisation;

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  await insertRows(t.db, 'contact', org.id, [
    {
      display_name: 'Ada',
      full_name: 'Ada Lovelace',
      email: 'ada@example.com',
      city: 'Zürich',
      birthday: '1815-12-10',
    },
    { display_name: 'Bob', full_name: 'Bob Builder', email: 'bob@example.com', city: 'Bern' },
    { display_name: 'Bob', full_name: 'Bob Marley', email: null, city: 'Kingston' },
  ]);
  await insertRows(t.db, 'segment', org.id, [{ name: 'All', is_default: true }]);
  const [appointment] = await insertRows(t.db, 'appointment', org.id, [
    { name: 'First', start_time: '2026-12-01T09:00:00Z' },
  ]);
  const [tags] = await insertRows(t.db, 'custom_field', org.id, [
    { name: 'Tags', key: 'tags', type: 'string_list', entity: 'appointment' },
  ]);
  await insertRows(t.db, 'appointment_custom_field', org.id, [
    { appointment_id: appointment, custom_field_id: tags, key: 'tags', string_list_value: ['x', 'y'] },
  ]);
});
afterAll(() => t?.drop());

type Body = Record<string, unknown> & {
  message: string;
  hint?: string | null;
  details?: string | null;
  context?: unknown;
};

interface Expectation {
  /** Whether the path is under an API prefix, so engage-version must be present. Default true. */
  versioned?: boolean;
  /** For HEAD: no body to read. */
  head?: boolean;
}

/** Checks status, content type, headers and the whole body of an error response; returns the body. */
async function expectError(res: Response, status: number, code: string, options: Expectation = {}): Promise<Body> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const requestId = res.headers.get('request-id');
  expect(requestId).toBeTruthy();
  if (options.versioned ?? true) expect(res.headers.get('engage-version')).toBe(VERSION);
  if (options.head) {
    expect(text).toBe('');
    return { message: '' };
  }
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = JSON.parse(text) as Body;
  for (const key of ERROR_KEYS) expect(body, `body lacks ${key}`).toHaveProperty(key);
  for (const key of Object.keys(body))
    expect([...ERROR_KEYS, ...OPTIONAL_ERROR_KEYS], `unexpected key ${key}`).toContain(key);
  expect(body.name).toBe('APIError');
  expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(body.status_code).toBe(res.status);
  expect(body.is_transient).toBe(status === 503 || status === 504);
  expect(body.contact_support).toBe(code === 'INTERNAL_ERROR');
  expect(body.request_id).toBe(requestId);
  const timestamp = String(body.timestamp);
  expect(new Date(timestamp).toISOString()).toBe(timestamp);
  expect(Math.abs(Date.now() - Date.parse(timestamp))).toBeLessThan(60_000);
  for (const key of ['hint', 'details'] as const) {
    const value = body[key];
    if (value === null) continue;
    expect(typeof value).toBe('string');
    expect(String(value).length).toBeGreaterThan(0);
  }
  return body;
}

const get = (path: string, headers: Record<string, string> = {}, token: string | null = org.token) =>
  t.call(path, token, { headers });
const allowOf = (res: Response) =>
  (res.headers.get('allow') ?? '')
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean)
    .sort();

/** A Node server for `fetch` on a free port of 127.0.0.1, once it listens. */
async function listen(fetch: (request: Request) => Response | Promise<Response>) {
  const server = serve({ fetch, hostname: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** A request written to a socket in one write, chunked or with a Content-Length: its status and body. */
async function inOneWrite(port: number, path: string, token: string, body: Uint8Array, chunked: boolean) {
  const head =
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n` +
    'Content-Type: application/json\r\nPrefer: return=representation\r\n' +
    (chunked ? 'Transfer-Encoding: chunked\r\n\r\n' : `Content-Length: ${body.byteLength}\r\n\r\n`);
  const framed = chunked
    ? [Buffer.from(`${body.byteLength.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]
    : [body];
  const socket = connect(port, '127.0.0.1');
  socket.write(Buffer.concat([Buffer.from(head), ...framed]));
  const received: Buffer[] = [];
  for await (const chunk of socket) received.push(chunk as Buffer);
  const text = Buffer.concat(received).toString('utf8');
  return { status: Number(text.slice(9, 12)), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

/** A stream of `total` zero bytes in chunks of 64 KiB, counting what was pulled from it. */
function byteStream(total: number) {
  const pulled = { bytes: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) {
        controller.close();
        return;
      }
      const size = Math.min(64 * 1024, total - pulled.bytes);
      pulled.bytes += size;
      controller.enqueue(new Uint8Array(size).fill(32));
    },
  });
  return { stream, pulled };
}

const streamed = (stream: ReadableStream<Uint8Array>, method = 'POST'): RequestInit =>
  ({ method, body: stream, duplex: 'half', headers: { 'Content-Type': 'application/json' } }) as RequestInit;

const sized = (bytes: number, method = 'POST'): RequestInit => ({
  method,
  body: new Uint8Array(bytes).fill(32),
  headers: { 'Content-Type': 'application/json', 'Content-Length': String(bytes) },
});

/** An app over a database port that fails every statement with `failure`. */
function appOver(failure: () => unknown) {
  const fail = async (): Promise<never> => {
    throw failure();
  };
  const db: Database = {
    kind: 'postgres',
    query: fail,
    transaction: fail,
    exec: fail,
    ping: fail,
    close: async () => {},
  };
  return createApp({ engine: engageEngine(db), ping: fail });
}

describe('400 INVALID_QUERY: malformed parameters say where (column) and what was expected', () => {
  it.each([
    ['display_name=foo', 'display_name=foo'],
    ['city=not.not.eq.x', 'city=not.not.eq.x'],
    ['is_blocked=is.maybe', 'is_blocked=is.maybe'],
    ['email=like(some).x', 'email=like(some).x'],
    ['or=(city.eq.Bern', 'or=(city.eq.Bern'],
    ['or=()', 'or=()'],
    ['and=(city.eq.a,or(city.eq.b)', 'and=(city.eq.a,or(city.eq.b)'],
    ['or=city.eq.Bern', 'or=city.eq.Bern'],
    ['select=id,,display_name', 'select=id,,display_name'],
    ['select=id,deal(name', 'select=id,deal(name'],
    ['order=display_name.sideways', 'order=display_name.sideways'],
    ['order=display_name.desc.nullslasttt', 'order=display_name.desc.nullslasttt'],
    ['limit=ten', 'limit=ten'],
    ['limit=-1', 'limit=-1'],
    ['limit=1.5', 'limit=1.5'],
    ['offset=x', 'offset=x'],
  ])('%s', async (query, where) => {
    const body = await expectError(await get(`/contact?${query}`), 400, 'INVALID_QUERY');
    expect(body.message).toContain(where);
    expect(body.message).toMatch(/column \d+/);
    expect(body.message).toContain('expected');
  });

  it('the column points at the offending character', async () => {
    const body = await expectError(await get('/contact?order=display_name.sideways'), 400, 'INVALID_QUERY');
    // "order=display_name." is 19 characters: the 19th, the ".", starts what cannot be parsed.
    expect(body.message).toContain('column 19');
    const limit = await expectError(await get('/contact?limit=ten'), 400, 'INVALID_QUERY');
    expect(limit.message).toContain('column 7');
  });
});

describe('400 INVALID_QUERY: values and operators that do not fit their field', () => {
  it.each([
    ['/contact?number_of_marketing_opt_in_requests=eq.many', ['many', 'number_of_marketing_opt_in_requests']],
    ['/contact?number_of_marketing_opt_in_requests=eq.99999999999', ['99999999999']],
    ['/contact?id=eq.not-a-uuid', ['not-a-uuid', 'id']],
    ['/contact?id=in.(1,2)', ['"1"']],
    ['/contact?is_blocked=eq.maybe', ['maybe', 'is_blocked']],
    ['/contact?birthday=eq.someday', ['someday']],
    ['/contact?created_at=gt.2026-13-45', ['2026-13-45']],
    ['/contact?email=match.(', ['regular expression']],
    ['/contact?city=cs.{a}', ['cs', 'city']],
    ['/contact?number_of_marketing_opt_in_requests=like.1*', ['like', 'number_of_marketing_opt_in_requests']],
    ['/contact?email=like(any).abc', ['like(any)', 'abc']],
    ['/contact?select=display_name::regclass', ['regclass']],
    ['/contact?select=id->x', ['id->x']],
    ['/contact?order=display_name->x', ['display_name->x']],
    ['/contact?city=eq.%E0%A4%A', ['percent-encoding']],
    ['/appointment_custom_field?string_list_value=cs.{unclosed', ['{unclosed', 'string_list_value', 'array literal']],
    ['/deal?value=eq.1e999999', ['1e999999', 'value']],
    // White space PostgreSQL does not skip (NBSP, a byte-order mark) is the field's error, not the database's.
    ['/contact?number_of_marketing_opt_in_requests=eq.%C2%A01', ['number_of_marketing_opt_in_requests']],
    ['/contact?birthday=eq.%EF%BB%BF2000-01-01', ['birthday']],
  ])('%s', async (path, fragments) => {
    const body = await expectError(await get(path), 400, 'INVALID_QUERY');
    for (const fragment of fragments) expect(body.message).toContain(fragment);
  });

  it('a malformed Range header, or a Range-Unit other than items', async () => {
    const range = await expectError(await get('/contact', { Range: 'abc' }), 400, 'INVALID_QUERY');
    expect(range.message).toContain('Range');
    expect(range.message).toContain('abc');
    const unit = await expectError(
      await get('/contact', { Range: '0-1', 'Range-Unit': 'bytes' }),
      400,
      'INVALID_QUERY',
    );
    expect(unit.message).toContain('Range-Unit');
  });

  it("a timestamp's offset whose + was not percent-encoded (so a space) is told how to write it", async () => {
    const body = await expectError(await get('/deal?won_at=lt.2026-12-01T10:00:00+01:00'), 400, 'INVALID_QUERY');
    expect(body.hint).toContain('%2B');
    const ok = await get('/deal?won_at=lt.2026-12-01T10:00:00%2B01:00');
    expect(ok.status).toBe(200);
  });

  it('HEAD answers the same status and headers, without a body', async () => {
    const res = await t.call('/contact?limit=ten', org.token, { method: 'HEAD' });
    await expectError(res, 400, 'INVALID_QUERY', { head: true });
  });
});

describe('400 INVALID_QUERY whatever the data: values PostgreSQL refuses, over an organisation with no rows', () => {
  // Plans are generic, so a filter is converted per row; these must fail even where no row is read.
  let empty: Organisation;
  beforeAll(async () => {
    empty = await createOrganisation(t);
  });
  const refused = [
    '/contact?birthday=eq.someday',
    '/contact?birthday=in.(2020-01-01,never)',
    '/contact?created_at=gt.2026-13-45',
    '/contact?email=match.(',
    '/contact?full_name=fts.%26%26%26',
    '/contact?full_name=fts(nolang).x',
    '/contact?or=(city.eq.Bern,birthday.lt.soon)',
    '/deal?value=eq.1e999999',
    '/appointment_custom_field?string_list_value=cs.{unclosed',
  ];
  it.each(refused)('GET %s', async (path) => {
    await expectError(await t.call(path, empty.token), 400, 'INVALID_QUERY');
  });
  const json = { 'Content-Type': 'application/json' };
  it.each([
    '/deal?value=eq.1e999999',
    '/deal?won_at=lt.soon',
    '/deal?name=match.(',
    '/deal?name=fts.%26%26%26',
    '/deal?or=(currency.eq.CHF,won_at.lt.soon)',
  ])('PATCH and DELETE %s', async (path) => {
    await expectError(
      await t.call(path, empty.token, { method: 'PATCH', headers: json, body: '{"name":"Nowhere"}' }),
      400,
      'INVALID_QUERY',
    );
    await expectError(await t.call(path, empty.token, { method: 'DELETE' }), 400, 'INVALID_QUERY');
  });
});

describe('400 INVALID_QUERY, not 500: requests PostgreSQL refuses', () => {
  // Each of these is well formed but asks for something the database cannot do; the caller
  // must change the request, so it is a 400 that says what is wrong, never an INTERNAL_ERROR.
  it.each([
    ['a to_tsquery syntax error', '/contact?full_name=fts.%26%26%26'],
    ['a to_tsquery with a bad weight', '/contact?full_name=fts.a:X'],
    ['an unknown text search configuration', '/contact?full_name=fts(nolang).x'],
    ['a cast PostgreSQL cannot do (uuid to int)', '/contact?select=id::int'],
    ['a cast PostgreSQL cannot do (date to boolean)', '/contact?select=birthday::boolean'],
    ['a cast PostgreSQL cannot do (boolean to jsonb)', '/contact?select=is_blocked::jsonb'],
    ['in on an array field', '/appointment_custom_field?string_list_value=in.(a,b)'],
  ])('%s', async (_what, path) => {
    await expectError(await get(path), 400, 'INVALID_QUERY');
  });
});

describe('400 UNKNOWN_FIELD: the message names the field, the hint lists the allowed ones', () => {
  it.each([
    ['filter', '/contact?nope=eq.1'],
    ['select', '/contact?select=id,nope'],
    ['order', '/contact?order=nope'],
    ['or-tree', '/contact?or=(nope.eq.1,city.eq.Bern)'],
    ['not.and-tree', '/contact?not.and=(city.eq.Bern,nope.is.null)'],
  ])('an unknown field in %s', async (_where, path) => {
    const body = await expectError(await get(path), 400, 'UNKNOWN_FIELD');
    expect(body.message).toContain('"nope"');
    for (const field of contactFields) expect(body.hint).toContain(field);
  });

  it('a field that may not be ordered on (contact?order=email)', async () => {
    const body = await expectError(await get('/contact?order=email'), 400, 'UNKNOWN_FIELD');
    expect(body.message).toContain('email');
    expect(body.hint).toContain('created_at');
    expect(body.hint).toContain('display_name');
    expect(body.hint).not.toContain('email');
    const second = await expectError(await get('/contact?order=display_name,city.desc'), 400, 'UNKNOWN_FIELD');
    expect(second.message).toContain('city');
  });

  it('a resource without order fields (segment?order=name)', async () => {
    const body = await expectError(await get('/segment?order=name'), 400, 'UNKNOWN_FIELD');
    expect(body.message).toContain('name');
    expect(body.hint).toBeTruthy();
  });

  it('a filter or order on something not embedded (x.y=eq.1, x.order=...) is NOT_EMBEDDED', async () => {
    for (const path of [
      '/contact?x.y=eq.1',
      '/contact?x.order=display_name',
      '/contact?select=id,deal(id)&x.limit=1',
    ]) {
      const body = await expectError(await get(path), 400, 'NOT_EMBEDDED');
      expect(body.message).toContain('"x" is not an embedded resource');
      expect(body.hint).toContain('x(...)');
    }
  });
});

describe('400 INVALID_PREFERENCE', () => {
  it('an unknown preference with handling=strict; ignored without it', async () => {
    const body = await expectError(
      await get('/contact', { Prefer: 'handling=strict, count=bogus' }),
      400,
      'INVALID_PREFERENCE',
    );
    expect(body.message).toContain('count=bogus');
    const lenient = await get('/contact', { Prefer: 'count=bogus' });
    expect(lenient.status).toBe(200);
  });
});

describe('400 INVALID_VERSION_HEADER and the engage-version header', () => {
  it('an unsupported engage-version is refused with a hint listing the supported ones', async () => {
    const body = await expectError(
      await get('/contact', { 'engage-version': '1999-01-01' }),
      400,
      'INVALID_VERSION_HEADER',
    );
    expect(body.message).toContain('1999-01-01');
    expect(body.hint).toContain('2026-11-01');
    await expectError(await get('/contact', { 'engage-version': 'latest' }), 400, 'INVALID_VERSION_HEADER');
  });

  it('absent means the current version, which the response names; the supported value is echoed', async () => {
    const absent = await get('/contact');
    expect(absent.status).toBe(200);
    expect(absent.headers.get('engage-version')).toBe(VERSION);
    const explicit = await get('/contact', { 'engage-version': VERSION });
    expect(explicit.status).toBe(200);
    expect(explicit.headers.get('engage-version')).toBe(VERSION);
    const options = await t.call('/contact', org.token, { method: 'OPTIONS' });
    expect(options.headers.get('engage-version')).toBe(VERSION);
    const openapi = await get('/');
    expect(openapi.status).toBe(200);
    expect(openapi.headers.get('engage-version')).toBe(VERSION);
  });
});

describe('401 UNAUTHORIZED', () => {
  it.each([
    ['no Authorization header', null],
    ['a Basic header', 'Basic dXNlcjpwYXNz'],
    ['a malformed bearer token', 'Bearer not-a-token'],
    ['an unknown bearer token', `Bearer ${UNKNOWN_TOKEN}`],
  ])('%s', async (_what, header) => {
    const res = await t.app.request('/api/v1/contact', { headers: header === null ? {} : { Authorization: header } });
    await expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it('a revoked or an expired token', async () => {
    const revoked = await t.engine.tokens!.create(org.id, { name: 'revoked' });
    expect(await t.engine.tokens!.revoke(revoked.id)).toBe(true);
    await expectError(await get('/contact', {}, revoked.token), 401, 'UNAUTHORIZED');
    const expired = await t.engine.tokens!.create(org.id, { name: 'expired', expiresInDays: 1 });
    await t.db.query("UPDATE api_token SET expires_at = now() - interval '1 second' WHERE id = $1::uuid", [expired.id]);
    await expectError(await get('/contact', {}, expired.token), 401, 'UNAUTHORIZED');
  });

  it('a bad token is reported before anything else that is wrong with the request', async () => {
    for (const path of ['/contact?nope=eq.1', '/contact?limit=ten', '/nope', '/contact/123', '/']) {
      const res = await get(path, {}, UNKNOWN_TOKEN);
      await expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    await expectError(await t.call('/segment', UNKNOWN_TOKEN, { method: 'POST', body: '{}' }), 401, 'UNAUTHORIZED');
    await expectError(await get('/contact', { Accept: 'application/xml' }, UNKNOWN_TOKEN), 401, 'UNAUTHORIZED');
  });
});

describe('404 NOT_FOUND', () => {
  it('an unknown resource, with a hint naming the resources', async () => {
    const body = await expectError(await get('/nope'), 404, 'NOT_FOUND');
    expect(body.message).toContain('nope');
    expect(body.hint).toContain('contact');
    await expectError(await t.call('/nope', org.token, { method: 'OPTIONS' }), 404, 'NOT_FOUND');
  });

  it('a deeper path below a resource', async () => {
    await expectError(await get('/contact/123'), 404, 'NOT_FOUND');
    await expectError(await get(`/contact/${org.id}/notes`), 404, 'NOT_FOUND');
  });

  it('a path outside the APIs, with and without a token', async () => {
    await expectError(await t.app.request('/nope'), 404, 'NOT_FOUND', { versioned: false });
    await expectError(
      await t.app.request('/nope', { headers: { Authorization: `Bearer ${org.token}` } }),
      404,
      'NOT_FOUND',
      { versioned: false },
    );
  });

  it('under /api/v1 without a token it is 401, not 404', async () => {
    await expectError(await t.app.request('/api/v1/nope'), 401, 'UNAUTHORIZED');
    await expectError(await t.app.request('/api/v1/contact/123'), 401, 'UNAUTHORIZED');
  });
});

describe("405 METHOD_NOT_ALLOWED with an Allow header listing exactly the resource's verbs", () => {
  it.each([
    ['POST', 'segment', ['GET', 'HEAD', 'OPTIONS']],
    ['DELETE', 'segment', ['GET', 'HEAD', 'OPTIONS']],
    ['PATCH', 'contact_note', ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']],
    ['PUT', 'contact', ['GET', 'HEAD', 'OPTIONS']],
    ['PATCH', 'contact', ['GET', 'HEAD', 'OPTIONS']],
    ['GET', 'appointment_type', ['POST', 'PATCH', 'OPTIONS']],
    ['POST', 'deal_details', ['GET', 'HEAD', 'PATCH', 'OPTIONS']],
    ['PATCH', 'custom_field', ['GET', 'HEAD', 'DELETE', 'OPTIONS']],
    ['POST', 'custom_entity', ['GET', 'HEAD', 'DELETE', 'OPTIONS']],
    ['PUT', 'calendar', ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']],
    ['PUT', 'deal', ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']],
  ])('%s /%s', async (method, resource, allowed) => {
    const init: RequestInit = { method };
    if (method !== 'GET' && method !== 'DELETE')
      Object.assign(init, { body: 'not json', headers: { 'Content-Type': 'application/json' } });
    const res = await t.call(`/${resource}`, org.token, init);
    const body = await expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(allowOf(res)).toEqual([...allowed].sort());
    expect(body.message).toContain(method);
  });

  it('HEAD on a resource without GET is 405 too, without a body', async () => {
    const res = await t.call('/appointment_type', org.token, { method: 'HEAD' });
    await expectError(res, 405, 'METHOD_NOT_ALLOWED', { head: true });
    expect(allowOf(res)).toEqual(['OPTIONS', 'PATCH', 'POST']);
  });
});

describe('OPTIONS', () => {
  it.each([
    ['contact', ['GET', 'HEAD', 'OPTIONS']],
    ['contact_note', ['GET', 'HEAD', 'POST', 'DELETE', 'OPTIONS']],
    ['appointment_type', ['POST', 'PATCH', 'OPTIONS']],
    ['calendar', ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS']],
  ])('/%s answers 200, no body, and Allow', async (resource, allowed) => {
    const res = await t.call(`/${resource}`, org.token, { method: 'OPTIONS' });
    expect(res.status).toBe(200);
    expect(allowOf(res)).toEqual([...allowed].sort());
    expect(await res.text()).toBe('');
    expect(res.headers.get('request-id')).toBeTruthy();
  });
});

describe('406 NOT_ACCEPTABLE', () => {
  it.each([['image/png'], ['application/xml'], ['text/html, text/plain;q=0.5'], ['application/json;q=0']])(
    'Accept: %s',
    async (accept) => {
      const body = await expectError(await get('/contact', { Accept: accept }), 406, 'NOT_ACCEPTABLE');
      expect(body.hint).toContain('application/json');
      expect(body.hint).toContain('text/csv');
    },
  );

  it('an acceptable type anywhere in the list is served', async () => {
    for (const accept of ['text/html, */*', 'text/html;q=1, application/json;q=0.5', 'application/*']) {
      const res = await get('/contact', { Accept: accept });
      expect(res.status, accept).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect(await res.json()).toHaveLength(3);
    }
  });

  it('a singular response of zero or two rows', async () => {
    const object = { Accept: 'application/vnd.pgrst.object+json' };
    const zero = await expectError(await get('/contact?city=eq.Nowhere', object), 406, 'NOT_ACCEPTABLE');
    expect(zero.message).toContain('0 rows');
    const two = await expectError(await get('/contact?display_name=eq.Bob', object), 406, 'NOT_ACCEPTABLE');
    expect(two.message).toContain('2 rows');
    const one = await get('/contact?display_name=eq.Ada&select=city', object);
    expect(one.status).toBe(200);
    expect(await one.json()).toEqual({ city: 'Zürich' });
  });
});

describe('413 PAYLOAD_TOO_LARGE for a body over 1 MiB on any /api/v1 route', () => {
  it.each([
    ['POST', '/calendar'],
    ['POST', '/contact_note'],
    ['PATCH', '/deal_details?id=eq.00000000-0000-0000-0000-000000000000'],
    ['DELETE', '/custom_field?id=eq.00000000-0000-0000-0000-000000000000'],
    ['POST', '/segment'],
    ['PUT', '/contact'],
    ['POST', '/nope'],
    ['POST', '/'],
  ])('%s %s with a Content-Length over the limit', async (method, path) => {
    const body = await expectError(await t.call(path, org.token, sized(MIB + 1, method)), 413, 'PAYLOAD_TOO_LARGE');
    expect(body.message).toContain(String(MIB));
  });

  it('a chunked body over the limit, cut off while reading rather than read whole', async () => {
    const { stream, pulled } = byteStream(64 * MIB);
    await expectError(await t.call('/calendar', org.token, streamed(stream)), 413, 'PAYLOAD_TOO_LARGE');
    expect(pulled.bytes).toBeGreaterThan(MIB);
    expect(pulled.bytes).toBeLessThan(4 * MIB);
    const small = byteStream(MIB + 1);
    await expectError(await t.call('/contact_note', org.token, streamed(small.stream)), 413, 'PAYLOAD_TOO_LARGE');
  });

  it('a body of exactly 1 MiB is not refused for its size', async () => {
    const exact = await t.call('/calendar', org.token, sized(MIB));
    expect(exact.status).not.toBe(413);
    const chunked = await t.call('/calendar', org.token, streamed(byteStream(MIB).stream));
    expect(chunked.status).not.toBe(413);
  });

  it('over a real socket: Content-Length and chunked', async () => {
    const server = await listen(t.app.fetch);
    try {
      const url = `http://127.0.0.1:${server.port}/api/v1/calendar`;
      const headers = { Authorization: `Bearer ${org.token}`, 'Content-Type': 'application/json' };
      const withLength = await fetch(url, { method: 'POST', headers, body: new Uint8Array(2 * MIB).fill(32) });
      await expectError(withLength, 413, 'PAYLOAD_TOO_LARGE');
      const chunked = await fetch(url, {
        method: 'POST',
        headers,
        body: byteStream(2 * MIB).stream,
        duplex: 'half',
      } as RequestInit);
      await expectError(chunked, 413, 'PAYLOAD_TOO_LARGE');

      // Under the limit a chunked body is read whole: a character split across chunks survives,
      // and a leading byte-order mark is dropped as Request.text() drops it.
      const names = Array.from({ length: 2000 }, (_, i) => `Zürich – Raum ${i}`);
      const bytes = new TextEncoder().encode(`\uFEFF${JSON.stringify(names.map((name) => ({ name })))}`);
      const split = bytes.indexOf(0xc3) + 1; // inside the first "ü"
      const parts = [bytes.subarray(0, split), bytes.subarray(split, 70_000), bytes.subarray(70_000)];
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = parts.shift();
          if (next) controller.enqueue(next);
          else controller.close();
        },
      });
      const created = await fetch(url, {
        method: 'POST',
        headers: { ...headers, Prefer: 'return=representation' },
        body,
        duplex: 'half',
      } as RequestInit);
      expect(created.status, await created.clone().text()).toBe(201);
      expect(((await created.json()) as Array<{ name: string }>).map((c) => c.name)).toEqual(names);
    } finally {
      await server.close();
    }
  });

  it('over a real socket, a body sent with its headers: the BOM dropped, the limit kept', async () => {
    const limited = engageApp({ engine: t.engine, scope: bearerToken(), bodyLimit: 64 });
    const [server, small] = await Promise.all([listen(t.app.fetch), listen(limited.fetch)]);
    const [port, smallPort] = [server.port, small.port];
    try {
      for (const chunked of [false, true]) {
        const name = `Zürich – ${chunked ? 'chunked' : 'sized'}`;
        const bytes = new TextEncoder().encode(`\uFEFF${JSON.stringify({ name })}`);
        const created = await inOneWrite(port, '/api/v1/calendar', org.token, bytes, chunked);
        expect(created.status, created.body).toBe(201);
        expect(
          JSON.parse(created.body.slice(created.body.indexOf('['), created.body.lastIndexOf(']') + 1)),
        ).toMatchObject([{ name }]);
      }
      // A chunked body declares no length: one over the limit is refused once read.
      const over = await inOneWrite(smallPort, '/calendar', org.token, new Uint8Array(65).fill(32), true);
      expect(over.status).toBe(413);
      expect(JSON.parse(over.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
      const within = await inOneWrite(smallPort, '/calendar', org.token, new Uint8Array(64).fill(32), true);
      expect(within.status).toBe(400);
    } finally {
      await Promise.all([server.close(), small.close()]);
    }
  });

  it('over a real socket, a client that goes away mid-body: a 400 for its request, nothing written', async () => {
    const seen: ApiError[] = [];
    let arrived = () => {};
    const headersIn = new Promise<void>((resolve) => (arrived = resolve));
    const hono = engageApp({
      engine: t.engine,
      scope: bearerToken(),
      check: () => arrived(),
      onError: (error) => seen.push(error),
    });
    const server = await listen(hono.fetch);
    try {
      const socket = connect(server.port, '127.0.0.1');
      socket.write(
        `POST /calendar HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${org.token}\r\n` +
          'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name": "cut',
      );
      await headersIn;
      socket.destroy();
      await expect.poll(() => seen.length).toBe(1);
      expect(seen[0]).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
      expect(seen[0]!.message).toMatch(/connection closed before the whole request body arrived/);
      const cut = await t.call('/calendar?name=like.cut*', org.token);
      expect(await cut.json()).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

describe('416 RANGE_NOT_SATISFIABLE', () => {
  it('an offset past the end with a count', async () => {
    const res = await get('/contact?offset=10', { Prefer: 'count=exact' });
    const body = await expectError(res, 416, 'RANGE_NOT_SATISFIABLE');
    expect(res.headers.get('content-range')).toBe('*/3');
    expect(body.message).toContain('10');
    const header = await get('/contact', { Prefer: 'count=exact', Range: '5-' });
    await expectError(header, 416, 'RANGE_NOT_SATISFIABLE');
    expect(header.headers.get('content-range')).toBe('*/3');
  });

  it('a Range whose upper bound is below its lower one (5-2)', async () => {
    await expectError(await get('/contact', { Range: '5-2' }), 416, 'RANGE_NOT_SATISFIABLE');
  });

  it('without a count an offset past the end is an empty page, not an error', async () => {
    const res = await get('/contact?offset=10');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBe('*/*');
    expect(await res.json()).toEqual([]);
  });
});

describe('503 DATABASE_UNAVAILABLE when the database is gone', () => {
  let dead: TestApp;
  let deadOrg: Organisation;
  beforeAll(async () => {
    dead = await createTestApp();
    deadOrg = await createOrganisation(dead);
    await dead.db.close();
  });
  afterAll(async () => {
    // The database is closed already; drop() closes it again (PGlite refuses that) and removes it.
    await dead?.drop().catch(() => {});
  });

  it('a read answers 503, transient, with Retry-After', async () => {
    for (const path of ['/api/v1/contact', '/api/v1/contact?select=id&limit=1', '/api/v1/']) {
      const res = await dead.app.request(path, { headers: { Authorization: `Bearer ${deadOrg.token}` } });
      const body = await expectError(res, 503, 'DATABASE_UNAVAILABLE');
      expect(body.is_transient).toBe(true);
      expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    }
  });

  it('/ready answers 503 while /health stays 200', async () => {
    const ready = await dead.app.request('/ready');
    await expectError(ready, 503, 'DATABASE_UNAVAILABLE', { versioned: false });
    expect(ready.headers.get('retry-after')).toMatch(/^\d+$/);
    const health = await dead.app.request('/health');
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const live = await t.app.request('/ready');
    expect(live.status).toBe(200);
  });
});

describe('driver failures mapped by SQLSTATE (fake databases)', () => {
  const request = (app: ReturnType<typeof createApp>, path = '/api/v1/contact', method = 'GET') =>
    app.request(path, { method, headers: { Authorization: `Bearer ${UNKNOWN_TOKEN}` } });

  it('57014 (statement timeout) is 504 QUERY_TIMEOUT, transient', async () => {
    const app = appOver(() => ({ code: '57014', message: 'canceling statement due to statement timeout' }));
    const res = await request(app);
    const body = await expectError(res, 504, 'QUERY_TIMEOUT');
    expect(body.is_transient).toBe(true);
    expect(body.contact_support).toBe(false);
    expect(JSON.stringify(body)).not.toContain('canceling statement');
    const asError = appOver(() =>
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    );
    await expectError(await request(asError, '/api/v1/contact?select=id&order=display_name'), 504, 'QUERY_TIMEOUT');
    await expectError(await request(asError, '/api/v1/contact', 'HEAD'), 504, 'QUERY_TIMEOUT', { head: true });
  });

  it.each([
    ['ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'],
    ['CONNECTION_ENDED', 'write CONNECTION_ENDED localhost:5432'],
    ['08006', 'connection failure'],
    ['57P01', 'terminating connection due to administrator command'],
    ['53300', 'sorry, too many clients already'],
  ])('%s is 503 DATABASE_UNAVAILABLE with Retry-After', async (code, message) => {
    const res = await request(appOver(() => Object.assign(new Error(message), { code })));
    const text = await res.clone().text();
    await expectError(res, 503, 'DATABASE_UNAVAILABLE');
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(text).not.toContain(message);
  });

  it("an engage_fail code the engine never raises is a 500, not a client's error", () => {
    const error = mapDatabaseError({ code: 'EN001', message: 'NO_SUCH_CHECK', detail: '' });
    expect(error.code).toBe('INTERNAL_ERROR');
    const invalid = mapDatabaseError({
      code: 'EN001',
      message: 'VALIDATION_FAILED',
      detail: JSON.stringify([{ field: 'source', message: 'must be a number' }]),
    });
    expect([invalid.code, invalid.message]).toEqual([
      'VALIDATION_FAILED',
      'the body is not valid: source must be a number',
    ]);
  });

  it('an unknown failure is 500 INTERNAL_ERROR with contact_support, and no SQL, stack or driver message', async () => {
    const secret = 'relation "secret_table" does not exist';
    const failures: Array<() => unknown> = [
      () =>
        Object.assign(new Error(`${secret}: SELECT * FROM "contact" WITH scope AS (SELECT 1)`), {
          code: '42P01',
          detail: 'SELECT token_hash FROM api_token',
          query: 'WITH scope AS (SELECT organisation_id FROM api_token) SELECT 1',
        }),
      () => new TypeError(`Cannot read properties of undefined (reading 'rows') ${secret}`),
      () => `${secret} SELECT 1`,
      () => undefined,
    ];
    for (const failure of failures) {
      const res = await request(appOver(failure));
      const text = await res.clone().text();
      const body = await expectError(res, 500, 'INTERNAL_ERROR');
      expect(body.contact_support).toBe(true);
      expect(body.is_transient).toBe(false);
      for (const leak of [
        'secret_table',
        'SELECT',
        'FROM "',
        'WITH scope',
        'api_token',
        'token_hash',
        '42P01',
        'TypeError',
        'rows',
        '.ts:',
      ]) {
        expect(text).not.toContain(leak);
      }
      expect(text).not.toMatch(/\bat .*:\d+:\d+/);
    }
  });
});

describe("values PostgreSQL refuses are told in our words, never PostgreSQL's", () => {
  /** PostgreSQL's own words for these failures, none of which may reach a caller. */
  const POSTGRES_TEXT = new RegExp(
    [
      'integer out of range',
      'value out of range',
      'field overflow',
      'invalid regular expression',
      'must not end with escape',
      'syntax error in tsquery',
      'cannot cast type',
      'unsupported Unicode',
      'byte sequence',
    ].join('|'),
    'i',
  );
  let deals: Organisation;
  beforeAll(async () => {
    deals = await createOrganisation(t);
    await insertRows(t.db, 'deal', deals.id, [{ name: 'abcd', value: '1e40' }]);
  });
  it.each([
    ['a number computed out of its range (a cast in select)', '/deal?select=value::int', 'out of range'],
    ['a stored number out of a narrower type', '/deal?select=value::float4&value=gt.0', 'out of range'],
    ['a regular expression that does not compile', '/deal?name=match.(', 'regular expression'],
    ['a like pattern ending with its escape character', '/deal?name=like.abc%5C', 'backslash'],
    ['a to_tsquery syntax error', '/deal?name=fts.%26%26%26', 'full-text search'],
    ['a cast that does not exist', '/deal?select=id::int', 'cast'],
    ['a NUL character in a JSON key', '/custom_entity?data->a%00b=eq.1', 'cannot store'],
  ])('%s: %s', async (_what, path, words) => {
    const body = await expectError(await t.call(path, deals.token), 400, 'INVALID_QUERY');
    expect(body.message).toContain(words);
    for (const text of [body.message, body.details, body.hint]) expect(text ?? '').not.toMatch(POSTGRES_TEXT);
  });

  it.each([
    '22001',
    '22003',
    '22007',
    '22008',
    '22012',
    '22021',
    '22023',
    '22P02',
    '22P05',
    '2201B',
    '22025',
    '42846',
    '42601',
    '42704',
    '54000',
  ])('SQLSTATE %s: no message, detail or hint of PostgreSQL reaches the caller', (code) => {
    // The words that make 42601 and 42704 a caller's search, with PostgreSQL's quoting of the value.
    const postgres = 'syntax error in tsquery: text search configuration "9999999-01-01" SELECT $1::text::date';
    const error = mapDatabaseError({ code, message: postgres, detail: postgres, hint: postgres });
    expect(error.status).toBe(400);
    for (const text of [error.message, error.details, error.hint]) expect(text ?? '').not.toMatch(/9999999|SELECT/);
  });
});

describe('no response body ever carries SQL', () => {
  it('across a batch of malformed requests', async () => {
    const paths = [
      '/contact?display_name=foo',
      '/contact?or=(city.eq.Bern',
      '/contact?select=id,,x',
      '/contact?order=email',
      '/contact?nope=eq.1',
      '/contact?id=eq.x',
      '/contact?birthday=eq.someday',
      '/contact?created_at=gt.2026-13-45',
      '/contact?email=match.(',
      '/contact?full_name=fts.%26%26%26',
      '/contact?full_name=fts(nolang).x',
      '/contact?select=id::int',
      '/contact?select=birthday::boolean',
      '/contact?city=eq.a%00b',
      '/contact?select=%22a%00%22',
      '/appointment_custom_field?string_list_value=in.(a,b)',
      '/appointment_custom_field?string_list_value=cs.{unclosed',
      '/deal?value=eq.1e999999',
      '/contact?number_of_marketing_opt_in_requests=gt(any).{1,x}',
      '/contact?or=(city.eq."unterminated)',
      '/contact?limit=99999999999999999999',
    ];
    for (const path of paths) {
      const res = await get(path);
      const text = await res.text();
      expect(res.status, `${path}: ${text}`).toBeGreaterThanOrEqual(400);
      for (const leak of ['SELECT', 'FROM "', 'WITH scope', 'api_token', 'token_hash'])
        expect(text, path).not.toContain(leak);
    }
  });

  it('values that look like SQL are only values', async () => {
    const dropped = await get(`/contact?city=eq.${encodeURIComponent("'; DROP TABLE contact; --")}`);
    expect(dropped.status).toBe(200);
    expect(await dropped.json()).toEqual([]);
    const tree = await get(
      `/contact?select=display_name&or=${encodeURIComponent('(city.eq."x\') OR 1=1 --",display_name.eq.Ada)')}`,
    );
    expect(tree.status).toBe(200);
    expect(await tree.json()).toEqual([{ display_name: 'Ada' }]);
    const after = await get('/contact?select=id');
    expect(await after.json()).toHaveLength(3);
  });
});

describe('Request-Id', () => {
  it('a sane incoming Request-Id is echoed in the header and the error body', async () => {
    const ok = await get('/contact', { 'Request-Id': 'client-abc_123' });
    expect(ok.headers.get('request-id')).toBe('client-abc_123');
    const failed = await get('/contact?nope=eq.1', { 'Request-Id': 'client-err-42' });
    expect(failed.headers.get('request-id')).toBe('client-err-42');
    const body = await expectError(failed, 400, 'UNKNOWN_FIELD');
    expect(body.request_id).toBe('client-err-42');
  });

  it.each([
    ['too long', 'x'.repeat(1000)],
    ['with spaces', 'has some spaces'],
    ['with double quotes', 'quo"ted'],
    ['with single quotes', "it's"],
    ['with angle brackets', '<script>'],
  ])('an insane one (%s) is replaced by a new uuid', async (_what, id) => {
    const res = await get('/contact?nope=eq.1', { 'Request-Id': id });
    const header = res.headers.get('request-id');
    expect(header).toMatch(UUID);
    expect(header).not.toBe(id);
    const body = await expectError(res, 400, 'UNKNOWN_FIELD');
    expect(body.request_id).toBe(header);
  });

  it('without one every response gets a fresh uuid, on every route', async () => {
    const responses = await Promise.all([
      get('/contact'),
      get('/contact', {}, null),
      get('/nope'),
      t.app.request('/health'),
      t.app.request('/ready'),
      t.app.request('/nope'),
      t.call('/contact', org.token, { method: 'OPTIONS' }),
      t.call('/calendar', org.token, sized(MIB + 1)),
    ]);
    const ids = responses.map((r) => r.headers.get('request-id'));
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
