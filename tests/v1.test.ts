/**
 * The versioned API under /v1 (docs/contract.md sections 5-8): the engage-version header, body limits
 * decided while reading, the three batch imports, import files and jobs (end to end through the
 * worker, and resumed after a crash without duplicates), the keyset listing of contacts, tenant
 * isolation, and the contract's error body on every failure.
 */
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createImports } from '../imports/index.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const VERSION = '2026-11-01';
const MiB = 1024 * 1024;
const BATCH_LIMIT = 5 * MiB;
const BODY_LIMIT = MiB;

/** The main app, with an import worker. */
let t: TestApp;
/** An app with a 1,000-byte file cap and no worker (also used for the crash/restart test). */
let small: TestApp;
let A: Organisation;
let B: Organisation;
/** An organisation whose contacts only the cursor tests create. */
let C: Organisation;
let aContact = '';
let bContact = '';

beforeAll(async () => {
  [t, small] = await Promise.all([createTestApp({ worker: true }), createTestApp({ fileLimit: 1000 })]);
  A = await createOrganisation(t);
  B = await createOrganisation(t);
  C = await createOrganisation(t);
  aContact = (await insertRows(t.db, 'contact', A.id, [{ display_name: 'A own', external_id: 'a-own' }]))[0]!;
  bContact = (
    await insertRows(t.db, 'contact', B.id, [{ display_name: 'B shared', external_id: 'shared-ext', city: 'Bern' }])
  )[0]!;
  await insertRows(t.db, 'custom_field', A.id, [
    { name: 'Score', key: 'score', type: 'number', entity: 'contact' },
    { name: 'VIP', key: 'vip', type: 'boolean', entity: 'contact' },
    { name: 'Since', key: 'since', type: 'date', entity: 'contact' },
    { name: 'Nick', key: 'nick', type: 'string', entity: 'contact' },
    { name: 'Priority', key: 'priority', type: 'number', entity: 'deal' },
    { name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
    { name: 'Tags', key: 'tags', type: 'string_list', entity: 'appointment' },
    { name: 'Booked', key: 'booked', type: 'datetime', entity: 'appointment' },
  ]);
  // A custom field of another organisation: its key means nothing for A.
  await insertRows(t.db, 'custom_field', B.id, [{ name: 'Secret', key: 'secret', type: 'string', entity: 'contact' }]);
});
afterAll(async () => {
  await Promise.all([t?.drop(), small?.drop()]);
});

type Init = RequestInit & { duplex?: 'half' };

/** A request under /v1 with a bearer token (or none). */
async function v1(path: string, token: string | null, init: Init = {}, app: TestApp = t): Promise<Response> {
  const headers = new Headers(init.headers);
  if (token !== null) headers.set('Authorization', `Bearer ${token}`);
  if (init.body instanceof ReadableStream) init = { ...init, duplex: 'half' };
  return app.app.request(`/v1${path}`, { ...init, headers } as RequestInit);
}

const post = (
  path: string,
  body: unknown,
  token: string | null = A.token,
  headers: Record<string, string> = {},
  app: TestApp = t,
) =>
  v1(
    path,
    token,
    {
      method: 'POST',
      body: typeof body === 'string' || body instanceof ReadableStream ? body : JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', ...headers },
    },
    app,
  );

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Json = any;

async function json<T = Json>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text.slice(0, 500)).toBe(status);
  return JSON.parse(text) as T;
}

interface ErrorBody {
  name: string;
  message: string;
  code: string;
  is_transient: boolean;
  timestamp: string;
  status_code: number;
  contact_support: boolean;
  request_id: string;
  hint?: string;
  context?: unknown;
}

/** The contract's error body, complete, with Request-Id and the echoed engage-version. */
async function expectError(res: Response, status: number, code: string | string[]): Promise<ErrorBody> {
  const text = await res.text();
  expect(res.status, text.slice(0, 500)).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = JSON.parse(text) as ErrorBody;
  expect(body).toMatchObject({ name: 'APIError', status_code: status, is_transient: false, contact_support: false });
  expect(Array.isArray(code) ? code : [code]).toContain(body.code);
  expect(typeof body.message).toBe('string');
  expect(body.message.length).toBeGreaterThan(0);
  expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
  expect(Math.abs(Date.now() - Date.parse(body.timestamp))).toBeLessThan(60_000);
  const requestId = res.headers.get('request-id');
  expect(requestId).toBeTruthy();
  expect(body.request_id).toBe(requestId);
  expect(res.headers.get('engage-version')).toBe(VERSION);
  return body;
}

const batch = (
  resource: string,
  items: unknown[],
  token: string | null = A.token,
  headers: Record<string, string> = {},
) => post(`/${resource}/imports/batch`, { items }, token, headers);

interface BatchBody {
  created: number;
  updated: number;
  failed: number;
  results: Array<{
    index: number;
    status: string;
    id?: string;
    error?: { code: string; message: string; context?: unknown };
  }>;
}

const okBatch = async (resource: string, items: unknown[], token = A.token) =>
  json<BatchBody>(await batch(resource, items, token), 200);

const sql = <T extends Record<string, unknown> = Record<string, unknown>>(
  text: string,
  params: string[] = [],
  app: TestApp = t,
) => app.db.query<T>(text, params);

/** Rows of the resource API (/api/v1) for the organisation of `token`. */
async function rest<T = Json>(path: string, token = A.token): Promise<T[]> {
  return json<T[]>(await t.call(path, token), 200);
}

/** A stream of `text` in pieces, as a chunked request body. */
function streamOf(text: string, piece = 64 * 1024): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + piece));
      offset += piece;
    },
  });
}

/** A stream that goes on until `cap` bytes (far past any limit), counting what was pulled. */
function endless(prefix: string, counter: { bytes: number }, cap = 64 * MiB): ReadableStream<Uint8Array> {
  const filler = new Uint8Array(64 * 1024).fill(0x20);
  let started = false;
  return new ReadableStream({
    pull(controller) {
      if (!started) {
        started = true;
        const head = new TextEncoder().encode(prefix);
        counter.bytes += head.length;
        return controller.enqueue(head);
      }
      if (counter.bytes >= cap) return controller.close();
      counter.bytes += filler.length;
      controller.enqueue(filler);
    },
  });
}

/** A batch body of exactly `bytes` bytes: one contact whose address_line1 pads it out. */
function sizedBatch(bytes: number, externalId: string, char = 'x'): string {
  const make = (n: number) =>
    JSON.stringify({ items: [{ external_id: externalId, display_name: 'Big', address_line1: char.repeat(n) }] });
  const overhead = Buffer.byteLength(make(0));
  const per = Buffer.byteLength(char);
  const n = Math.ceil((bytes - overhead) / per);
  const body = make(n);
  if (per === 1) expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

const upload = (
  body: string | ReadableStream<Uint8Array>,
  type: string,
  token: string | null = A.token,
  app: TestApp = t,
) => v1('/files', token, { method: 'POST', body, headers: { 'Content-Type': type } }, app);

interface Job {
  id: string;
  resource: string;
  file_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'failed';
  processed: number;
  created: number;
  updated: number;
  failed: number;
  errors: Array<{ index: number; status: string; error: { code: string; message: string; context?: unknown } }>;
  error?: string;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls GET /v1/imports/{id} until the job is done (bounded). */
async function waitForJob(id: string, token = A.token, app: TestApp = t, timeoutMs = 20_000): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = await json<Job>(await v1(`/imports/${id}`, token, {}, app), 200);
    if (job.status === 'succeeded' || job.status === 'failed') return job;
    if (Date.now() > deadline) throw new Error(`import ${id} is still ${job.status} after ${timeoutMs} ms`);
    await sleep(50);
  }
}

/** Uploads a file and starts its import; returns the 202 job. */
async function startImport(resource: string, content: string, type: string, token = A.token): Promise<Job> {
  const file = await json<{ id: string }>(await upload(content, type, token), 201);
  const job = await json<Job>(await post(`/${resource}/imports`, { file_id: file.id }, token), 202);
  expect(job).toMatchObject({
    resource,
    file_id: file.id,
    status: 'queued',
    processed: 0,
    created: 0,
    updated: 0,
    failed: 0,
    errors: [],
  });
  return job;
}

const cursorOf = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

// ---------------------------------------------------------------------------------------------

describe('engage-version header on /v1', () => {
  const routes: Array<{ name: string; send: (headers: Record<string, string>) => Promise<Response>; ok: number }> = [
    { name: 'GET /v1/contacts', send: (h) => v1('/contacts', A.token, { headers: h }), ok: 200 },
    {
      name: 'POST /v1/contacts/imports/batch',
      send: (h) => post('/contacts/imports/batch', { items: [] }, A.token, h),
      ok: 200,
    },
    {
      name: 'POST /v1/deals/imports/batch',
      send: (h) => post('/deals/imports/batch', { items: [] }, A.token, h),
      ok: 200,
    },
    {
      name: 'POST /v1/files',
      send: (h) =>
        v1('/files', A.token, {
          method: 'POST',
          body: 'display_name\nX\n',
          headers: { 'Content-Type': 'text/csv', ...h },
        }),
      ok: 201,
    },
    {
      name: 'POST /v1/appointments/imports',
      send: (h) => post('/appointments/imports', { file_id: randomUUID() }, A.token, h),
      ok: 404,
    },
    { name: 'GET /v1/imports/{id}', send: (h) => v1(`/imports/${randomUUID()}`, A.token, { headers: h }), ok: 404 },
  ];

  it.each(routes)('$name: absent means the current version, echoed', async ({ send, ok }) => {
    const res = await send({});
    expect(res.status, await res.clone().text()).toBe(ok);
    expect(res.headers.get('engage-version')).toBe(VERSION);
    expect(res.headers.get('request-id')).toBeTruthy();
  });

  it.each(routes)('$name: the supported value is accepted and echoed', async ({ send, ok }) => {
    const res = await send({ 'engage-version': VERSION });
    expect(res.status, await res.clone().text()).toBe(ok);
    expect(res.headers.get('engage-version')).toBe(VERSION);
  });

  it.each(routes)(
    '$name: an unsupported value is 400 INVALID_VERSION_HEADER listing the supported values',
    async ({ send }) => {
      const before = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file');
      const res = await send({ 'engage-version': '2025-01-01' });
      const body = await expectError(res, 400, 'INVALID_VERSION_HEADER');
      expect(body.hint).toContain(VERSION);
      // Nothing was done.
      expect(await sql<{ n: number }>('SELECT count(*)::int AS n FROM file')).toEqual(before);
    },
  );

  it('other unsupported forms are refused too', async () => {
    for (const value of ['2026-11-02', 'latest', '1', '2026-11-01,2025-01-01']) {
      const body = await expectError(
        await v1('/contacts', A.token, { headers: { 'engage-version': value } }),
        400,
        'INVALID_VERSION_HEADER',
      );
      expect(body.hint).toContain(VERSION);
    }
  });

  it('the unsupported-version 400 does not import anything', async () => {
    const res = await batch('contacts', [{ external_id: 'version-refused', display_name: 'No' }], A.token, {
      'engage-version': '1999-01-01',
    });
    await expectError(res, 400, 'INVALID_VERSION_HEADER');
    expect(await sql("SELECT id FROM contact WHERE external_id = 'version-refused'")).toEqual([]);
  });
});

describe('authentication and the error body', () => {
  const calls: Array<[string, (token: string | null) => Promise<Response>]> = [
    ['GET /v1/contacts', (tk) => v1('/contacts', tk)],
    ['POST /v1/contacts/imports/batch', (tk) => batch('contacts', [{ display_name: 'x' }], tk)],
    ['POST /v1/deals/imports/batch', (tk) => batch('deals', [{ name: 'x' }], tk)],
    ['POST /v1/appointments/imports/batch', (tk) => batch('appointments', [{ name: 'x' }], tk)],
    ['POST /v1/files', (tk) => upload('display_name\nX\n', 'text/csv', tk)],
    ['POST /v1/contacts/imports', (tk) => post('/contacts/imports', { file_id: randomUUID() }, tk)],
    ['GET /v1/imports/{id}', (tk) => v1(`/imports/${randomUUID()}`, tk)],
  ];

  it.each(calls)('%s without a token is 401 UNAUTHORIZED with WWW-Authenticate', async (_name, call) => {
    const res = await call(null);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectError(res, 401, 'UNAUTHORIZED');
  });

  it.each(calls)('%s with an unknown token is 401', async (_name, call) => {
    const res = await call(`engage_${'A'.repeat(43)}`);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    await expectError(res, 401, 'UNAUTHORIZED');
  });

  it('nothing is written for a 401', async () => {
    const files = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file');
    await expectError(
      await batch('contacts', [{ external_id: 'unauth', display_name: 'x' }], `engage_${'B'.repeat(43)}`),
      401,
      'UNAUTHORIZED',
    );
    await expectError(await upload('display_name\nX\n', 'text/csv', `engage_${'B'.repeat(43)}`), 401, 'UNAUTHORIZED');
    expect(await sql("SELECT id FROM contact WHERE external_id = 'unauth'")).toEqual([]);
    expect(await sql<{ n: number }>('SELECT count(*)::int AS n FROM file')).toEqual(files);
  });

  it('an incoming Request-Id is kept and repeated in the error body', async () => {
    const res = await v1('/contacts?limit=0', A.token, { headers: { 'Request-Id': 'client-req-42' } });
    expect(res.headers.get('request-id')).toBe('client-req-42');
    expect((await expectError(res, 400, 'INVALID_QUERY')).request_id).toBe('client-req-42');
  });

  it('an unknown /v1 path or import name is 404 NOT_FOUND', async () => {
    await expectError(await v1('/nothing-here', A.token), 404, 'NOT_FOUND');
    await expectError(await batch('calendars', []), 404, 'NOT_FOUND');
    await expectError(await post('/segments/imports', { file_id: randomUUID() }), 404, 'NOT_FOUND');
  });

  it('successful responses carry Request-Id and engage-version too', async () => {
    const res = await batch('contacts', []);
    expect(await json(res, 200)).toEqual({ created: 0, updated: 0, failed: 0, results: [] });
    expect(res.headers.get('request-id')).toBeTruthy();
    expect(res.headers.get('engage-version')).toBe(VERSION);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const file = await upload('display_name\nHeaders\n', 'text/csv');
    expect(file.status).toBe(201);
    expect([file.headers.get('engage-version'), Boolean(file.headers.get('request-id'))]).toEqual([VERSION, true]);
    const job = await post('/contacts/imports', { file_id: ((await file.json()) as { id: string }).id });
    expect(job.status).toBe(202);
    expect([job.headers.get('engage-version'), Boolean(job.headers.get('request-id'))]).toEqual([VERSION, true]);
    const got = await v1(`/imports/${((await job.json()) as { id: string }).id}`, A.token);
    expect(got.status).toBe(200);
    expect([got.headers.get('engage-version'), Boolean(got.headers.get('request-id'))]).toEqual([VERSION, true]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('POST /v1/contacts/imports/batch', () => {
  it('creates records and reports them by index', async () => {
    const body = await okBatch('contacts', [
      {
        external_id: 'c-new-1',
        display_name: 'New One',
        email: 'one@example.com',
        is_blocked: true,
        birthday: '1990-02-03',
        number_of_marketing_opt_in_requests: 4,
      },
      { display_name: 'No external id', email_transactional_opt_in: 'consent_granted' },
    ]);
    expect(body.created).toBe(2);
    expect(body.updated).toBe(0);
    expect(body.failed).toBe(0);
    expect(body.results).toEqual([
      { index: 0, status: 'created', id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
      { index: 1, status: 'created', id: expect.stringMatching(/^[0-9a-f-]{36}$/) },
    ]);
    const [one] = await rest(`/contact?id=eq.${body.results[0]!.id}`);
    expect(one).toMatchObject({
      organisation_id: A.id,
      external_id: 'c-new-1',
      display_name: 'New One',
      email: 'one@example.com',
      is_blocked: true,
      birthday: '1990-02-03',
      number_of_marketing_opt_in_requests: 4,
      campaign_messages_this_month: 0,
    });
    const [two] = await rest(`/contact?id=eq.${body.results[1]!.id}`);
    expect(two).toMatchObject({
      display_name: 'No external id',
      external_id: null,
      is_blocked: false,
      email_transactional_opt_in: 'consent_granted',
    });
  });

  it('updates by external_id: only the fields each item gives change', async () => {
    const first = await okBatch('contacts', [
      { external_id: 'u-1', display_name: 'Old 1', email: 'u1@example.com', city: 'Bern' },
      { external_id: 'u-2', display_name: 'Old 2', email: 'u2@example.com', city: 'Genf' },
    ]);
    const [id1, id2] = first.results.map((r) => r.id);
    const second = await okBatch('contacts', [
      { external_id: 'u-1', city: 'Basel' },
      { external_id: 'u-2', email: null, display_name: 'New 2' },
      { external_id: 'u-3', display_name: 'Created 3' },
    ]);
    expect(second).toMatchObject({ created: 1, updated: 2, failed: 0 });
    expect(second.results).toEqual([
      { index: 0, status: 'updated', id: id1 },
      { index: 1, status: 'updated', id: id2 },
      { index: 2, status: 'created', id: expect.any(String) },
    ]);
    const rows = await rest<{ external_id: string; display_name: string; email: string | null; city: string }>(
      '/contact?external_id=in.(u-1,u-2,u-3)&select=external_id,display_name,email,city&order=display_name',
    );
    expect(rows).toEqual([
      { external_id: 'u-3', display_name: 'Created 3', email: null, city: null },
      { external_id: 'u-2', display_name: 'New 2', email: null, city: 'Genf' },
      { external_id: 'u-1', display_name: 'Old 1', email: 'u1@example.com', city: 'Basel' },
    ]);
    const [count] = await sql<{ n: number }>(
      "SELECT count(*)::int AS n FROM contact WHERE organisation_id = $1 AND external_id IN ('u-1','u-2','u-3')",
      [A.id],
    );
    expect(count!.n).toBe(3);
  });

  it('mixed valid and invalid items: valid ones are written, each failure reported at its index', async () => {
    const body = await okBatch('contacts', [
      { external_id: 'mix-0', display_name: 'Valid 0', score: 7.5 },
      { external_id: 'mix-1', nope: 1 },
      { external_id: 'mix-2', is_blocked: 'yes' },
      { external_id: 'mix-3', email_transactional_opt_in: 'because' },
      { external_id: 'mix-4', unknown_custom: 'x' },
      { external_id: 'mix-5', score: 'high' },
      { external_id: 'mix-0', display_name: 'Duplicate of 0' },
      { external_id: 'mix-7', organisation_id: B.id },
      { external_id: 'mix-8', secret: 'of B' },
      { external_id: 'mix-9', display_name: 'Valid 9', organisation_id: A.id },
      'not an object',
      { external_id: 'mix-11', number_of_marketing_opt_in_requests: 1.5 },
      { external_id: 'mix-12', birthday: '2026-02-30' },
    ]);
    expect(body).toMatchObject({ created: 2, updated: 0, failed: 11 });
    expect(body.results).toHaveLength(13);
    expect(body.results.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const codes = body.results.map((r) => (r.status === 'failed' ? r.error!.code : r.status));
    expect(codes).toEqual([
      'created',
      'UNKNOWN_FIELD',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'UNKNOWN_FIELD',
      'VALIDATION_FAILED',
      'CONFLICT',
      'FORBIDDEN',
      'UNKNOWN_FIELD',
      'created',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
    ]);
    for (const r of body.results) {
      if (r.status === 'failed') {
        expect(r).not.toHaveProperty('id');
        expect(typeof r.error!.message).toBe('string');
      } else expect(r.id).toMatch(/^[0-9a-f-]{36}$/);
    }
    expect(body.results[1]!.error!.context).toEqual([{ field: 'nope', message: expect.any(String) }]);
    expect(body.results[2]!.error!.context).toEqual([{ field: 'is_blocked', message: expect.any(String) }]);
    expect(body.results[3]!.error!.context).toEqual([
      { field: 'email_transactional_opt_in', message: expect.stringContaining('consent_granted') },
    ]);
    expect(body.results[4]!.error!.context).toEqual([{ field: 'unknown_custom', message: expect.any(String) }]);
    expect(body.results[5]!.error!.context).toEqual([{ field: 'score', message: 'must be a number' }]);
    expect(body.results[6]!.error!.message).toContain('mix-0');
    expect(body.results[8]!.error!.context).toEqual([{ field: 'secret', message: expect.any(String) }]);

    const rows = await sql<{ external_id: string; display_name: string; organisation_id: string }>(
      'SELECT external_id, display_name, organisation_id::text AS organisation_id FROM contact' +
        " WHERE external_id LIKE 'mix-%' ORDER BY external_id",
    );
    expect(rows).toEqual([
      { external_id: 'mix-0', display_name: 'Valid 0', organisation_id: A.id },
      { external_id: 'mix-9', display_name: 'Valid 9', organisation_id: A.id },
    ]);
    const values = await sql<{ key: string; number_value: string }>(
      'SELECT key, number_value::text AS number_value FROM contact_custom_field' +
        ' WHERE organisation_id = $1 AND contact_id = $2',
      [A.id, body.results[0]!.id!],
    );
    expect(values).toEqual([{ key: 'score', number_value: '7.5' }]);
  });

  it('writes custom-field values to the value table and updates them on a later import', async () => {
    const first = await okBatch('contacts', [
      { external_id: 'cf-1', display_name: 'Custom', score: 3, vip: true, since: '2020-05-06', nick: 'cc' },
    ]);
    const id = first.results[0]!.id!;
    const read = () =>
      sql<Record<string, unknown>>(
        'SELECT key, value, string_value, number_value::text AS number_value,' +
          ` boolean_value, date_value::text AS date_value, custom_field_id::text AS field
         FROM contact_custom_field WHERE organisation_id = $1 AND contact_id = $2 ORDER BY key`,
        [A.id, id],
      );
    const fields = new Map(
      (
        await sql<{ key: string; id: string }>(
          "SELECT key, id::text AS id FROM custom_field WHERE organisation_id = $1 AND entity = 'contact'",
          [A.id],
        )
      ).map((f) => [f.key, f.id]),
    );
    expect(await read()).toEqual([
      {
        key: 'nick',
        value: 'cc',
        string_value: 'cc',
        number_value: null,
        boolean_value: null,
        date_value: null,
        field: fields.get('nick'),
      },
      {
        key: 'score',
        value: '3',
        string_value: null,
        number_value: '3',
        boolean_value: null,
        date_value: null,
        field: fields.get('score'),
      },
      {
        key: 'since',
        value: '2020-05-06',
        string_value: null,
        number_value: null,
        boolean_value: null,
        date_value: '2020-05-06',
        field: fields.get('since'),
      },
      {
        key: 'vip',
        value: 'true',
        string_value: null,
        number_value: null,
        boolean_value: true,
        date_value: null,
        field: fields.get('vip'),
      },
    ]);
    const second = await okBatch('contacts', [{ external_id: 'cf-1', score: 4.25 }]);
    expect(second.results).toEqual([{ index: 0, status: 'updated', id }]);
    const after = await read();
    expect(after).toHaveLength(4);
    expect(after.find((r) => r.key === 'score')).toMatchObject({ value: '4.25', number_value: '4.25' });
    expect(after.find((r) => r.key === 'vip')).toMatchObject({ boolean_value: true });
    const [contact] = await rest(`/contact?id=eq.${id}&select=display_name`);
    expect(contact).toEqual({ display_name: 'Custom' });
  });

  it('an external_id found only in another organisation creates a new record; the other stays intact', async () => {
    const body = await okBatch('contacts', [{ external_id: 'shared-ext', display_name: 'A version', city: 'Aarau' }]);
    expect(body).toMatchObject({ created: 1, updated: 0, failed: 0 });
    const id = body.results[0]!.id!;
    expect(id).not.toBe(bContact);
    const rows = await sql<{ id: string; organisation_id: string; display_name: string; city: string }>(
      'SELECT id::text AS id, organisation_id::text AS organisation_id, display_name, city FROM contact' +
        " WHERE external_id = 'shared-ext' ORDER BY display_name",
    );
    expect(rows).toEqual([
      { id, organisation_id: A.id, display_name: 'A version', city: 'Aarau' },
      { id: bContact, organisation_id: B.id, display_name: 'B shared', city: 'Bern' },
    ]);
    // A second import in A now updates A's record, still not B's.
    const again = await okBatch('contacts', [{ external_id: 'shared-ext', city: 'Baden' }]);
    expect(again.results).toEqual([{ index: 0, status: 'updated', id }]);
    const [b] = await sql<{ city: string }>('SELECT city FROM contact WHERE organisation_id = $1 AND id = $2', [
      B.id,
      bContact,
    ]);
    expect(b!.city).toBe('Bern');
  });

  it('a batch of several slices (12,000 items; slices of 5,000): repeats, failures and matches across slices', async () => {
    const [existing] = (await okBatch('contacts', [{ external_id: 'sl-existing', display_name: 'Before' }])).results;
    const id = randomUUID();
    const items: Record<string, unknown>[] = Array.from({ length: 12_000 }, (_, i) => ({ external_id: `sl-${i}` }));
    items[1] = { external_id: 'sl-1', id };
    items[6_000] = { external_id: 'sl-6000', id };
    items[7_000] = { external_id: 'sl-3', display_name: 'Repeats item 3' };
    items[10_500] = { external_id: 'sl-10500', is_blocked: 'yes' };
    items[11_999] = { external_id: 'sl-existing', display_name: 'After' };
    const body = await okBatch('contacts', items);
    expect(body).toMatchObject({ created: 11_996, updated: 1, failed: 3 });
    expect(body.results.map((r) => r.index)).toEqual(items.map((_, i) => i));
    const failed = body.results.filter((r) => r.status === 'failed');
    expect(failed.map((r) => [r.index, r.error!.code])).toEqual([
      [6_000, 'CONFLICT'],
      [7_000, 'CONFLICT'],
      [10_500, 'VALIDATION_FAILED'],
    ]);
    expect(failed[0]!.error!.message).toContain('item 1 of this batch');
    expect(failed[1]!.error!.message).toContain('item 3 of this batch');
    expect(body.results[1]).toEqual({ index: 1, status: 'created', id });
    expect(body.results[11_999]).toEqual({ index: 11_999, status: 'updated', id: existing!.id });
    const [row] = await sql<{ n: number; after: number }>(
      "SELECT count(*)::int AS n, (count(*) FILTER (WHERE display_name = 'After'))::int AS after FROM contact" +
        " WHERE organisation_id = $1 AND external_id LIKE 'sl-%'",
      [A.id],
    );
    expect(row).toEqual({ n: 11_997, after: 1 });
  });

  it('a given id already taken in the organisation fails that item with CONFLICT', async () => {
    const body = await okBatch('contacts', [{ id: aContact, display_name: 'steal' }, { display_name: 'fine' }]);
    expect(body).toMatchObject({ created: 1, failed: 1 });
    expect(body.results[0]).toMatchObject({ index: 0, status: 'failed', error: { code: 'CONFLICT' } });
    const [own] = await rest(`/contact?id=eq.${aContact}&select=display_name`);
    expect(own).toEqual({ display_name: 'A own' });
  });

  it('two items giving the same new id fail the second with CONFLICT instead of failing the batch', async () => {
    const id = randomUUID();
    const res = await batch('contacts', [
      { id, display_name: 'same id 1' },
      { id, display_name: 'same id 2' },
      { display_name: 'bystander dup-id' },
    ]);
    const body = await json<BatchBody>(res, 200);
    expect(body).toMatchObject({ created: 2, failed: 1 });
    expect(body.results[0]).toEqual({ index: 0, status: 'created', id });
    expect(body.results[1]).toMatchObject({ index: 1, status: 'failed', error: { code: 'CONFLICT' } });
  });

  it('concurrent batches giving the same new external_id: each answers 200 and one record results', async () => {
    for (let round = 0; round < 3; round++) {
      const external = `race-${round}`;
      const responses = await Promise.all(
        [0, 1, 2, 3].map((i) => batch('contacts', [{ external_id: external, display_name: `Racer ${i}` }])),
      );
      const statuses = await Promise.all(responses.map(async (r) => [r.status, (await r.text()).slice(0, 120)]));
      expect(
        statuses.map(([status]) => status),
        JSON.stringify(statuses),
      ).toEqual([200, 200, 200, 200]);
      const [row] = await sql<{ n: number }>(
        'SELECT count(*)::int AS n FROM contact WHERE organisation_id = $1 AND external_id = $2',
        [A.id, external],
      );
      expect(row!.n).toBe(1);
    }
  });

  it('a timestamp out of range fails its item, not the batch', async () => {
    const res = await batch('contacts', [
      { external_id: 'late-0', display_name: 'fine' },
      { external_id: 'late-1', latest_marketing_opt_in_request_sent_at: '2026-12-01T25:61:00Z' },
    ]);
    const body = await json<BatchBody>(res, 200);
    expect(body.results[0]).toMatchObject({ index: 0, status: 'created' });
    expect(body.results[1]).toMatchObject({ index: 1, status: 'failed', error: { code: 'VALIDATION_FAILED' } });
  });
});

describe('POST /v1/contacts/imports/batch: text PostgreSQL cannot store', () => {
  it('a string with a NUL character fails its item (VALIDATION_FAILED), not the whole batch with a 500', async () => {
    const res = await batch('contacts', [
      { external_id: 'nul-0', display_name: 'fine' },
      { external_id: 'nul-1', display_name: 'a\u0000b' },
    ]);
    const body = await json<BatchBody>(res, 200);
    expect(body).toMatchObject({ created: 1, failed: 1 });
    expect(body.results[1]).toMatchObject({ index: 1, status: 'failed', error: { code: 'VALIDATION_FAILED' } });
    expect(await sql("SELECT external_id FROM contact WHERE external_id LIKE 'nul-%'")).toEqual([
      { external_id: 'nul-0' },
    ]);
  });
});

describe('POST /v1/deals/imports/batch', () => {
  it('creates, updates by external_id, and checks references and enums per item', async () => {
    const body = await okBatch('deals', [
      { external_id: 'd-1', name: 'Deal 1', value: 1200.5, currency: 'CHF', contact_id: aContact, priority: 2 },
      { external_id: 'd-2', name: 'Deal 2', contact_id: bContact },
      { external_id: 'd-3', name: 'Deal 3', currency: 'GBP' },
      { external_id: 'd-4', name: 'Deal 4', contact_id: randomUUID() },
      { external_id: 'd-5', name: 'Deal 5', value: 'lots' },
      { external_id: 'd-6', name: 'Deal 6', organisation_id: B.id },
      { external_id: 'd-7', name: 'Deal 7', priority: 'high' },
      { external_id: 'd-8', name: 'Deal 8', score: 1 },
      { external_id: 'd-9', name: 'Deal 9', value: '99.95', currency: 'EUR', won_at: '2026-10-01T12:00:00+02:00' },
    ]);
    expect(body).toMatchObject({ created: 2, updated: 0, failed: 7 });
    expect(body.results.map((r) => (r.status === 'failed' ? r.error!.code : r.status))).toEqual([
      'created',
      'REFERENCE_NOT_FOUND',
      'VALIDATION_FAILED',
      'REFERENCE_NOT_FOUND',
      'VALIDATION_FAILED',
      'FORBIDDEN',
      'VALIDATION_FAILED',
      'UNKNOWN_FIELD',
      'created',
    ]);
    expect(body.results[1]!.error!.context).toEqual({ fields: ['contact_id'] });
    const rows = await rest(
      '/deal?external_id=in.(d-1,d-9)&select=external_id,name,value,currency,contact_id,won_at,organisation_id',
    );
    expect(rows.sort((x, y) => x.external_id.localeCompare(y.external_id))).toEqual([
      {
        external_id: 'd-1',
        name: 'Deal 1',
        value: 1200.5,
        currency: 'CHF',
        contact_id: aContact,
        won_at: null,
        organisation_id: A.id,
      },
      {
        external_id: 'd-9',
        name: 'Deal 9',
        value: 99.95,
        currency: 'EUR',
        contact_id: null,
        won_at: '2026-10-01T10:00:00+00:00',
        organisation_id: A.id,
      },
    ]);
    const values = await sql<{ key: string; number_value: string }>(
      'SELECT key, number_value::text AS number_value FROM deal_custom_field' +
        ' WHERE organisation_id = $1 AND deal_id = $2',
      [A.id, body.results[0]!.id!],
    );
    expect(values).toEqual([{ key: 'priority', number_value: '2' }]);
    // B's contact got no deal.
    expect(await sql('SELECT id FROM deal WHERE contact_id = $1', [bContact])).toEqual([]);

    const update = await okBatch('deals', [{ external_id: 'd-1', value: 10 }]);
    expect(update.results).toEqual([{ index: 0, status: 'updated', id: body.results[0]!.id }]);
    const [after] = await rest('/deal?external_id=eq.d-1&select=name,value,currency,contact_id');
    expect(after).toEqual({ name: 'Deal 1', value: 10, currency: 'CHF', contact_id: aContact });
  });

  it("an update may not move a deal to another organisation's contact", async () => {
    const body = await okBatch('deals', [{ external_id: 'd-1', contact_id: bContact }]);
    expect(body.results).toEqual([
      { index: 0, status: 'failed', error: expect.objectContaining({ code: 'REFERENCE_NOT_FOUND' }) },
    ]);
    const [deal] = await rest('/deal?external_id=eq.d-1&select=contact_id');
    expect(deal).toEqual({ contact_id: aContact });
  });
});

describe('POST /v1/appointments/imports/batch', () => {
  it('creates with custom fields (visible in appointment_details), updates, and checks references', async () => {
    const body = await okBatch('appointments', [
      {
        external_id: 'ap-1',
        name: 'Checkup',
        start_time: '2026-12-01T09:00:00Z',
        contact_id: aContact,
        room: 'A1',
        tags: ['x', 'y'],
        booked: '2026-11-20T08:30:00Z',
      },
      { external_id: 'ap-2', name: 'Foreign', contact_id: bContact },
      { external_id: 'ap-3', name: 'Bad room', room: 12 },
      { external_id: 'ap-4', name: 'Bad tags', tags: 'x' },
      { external_id: 'ap-5', name: 'Bad time', start_time: 'tomorrow' },
      { external_id: 'ap-6', name: 'Other org', organisation_id: B.id },
      { external_id: 'ap-7', name: 'Plain' },
    ]);
    expect(body).toMatchObject({ created: 2, updated: 0, failed: 5 });
    expect(body.results.map((r) => (r.status === 'failed' ? r.error!.code : r.status))).toEqual([
      'created',
      'REFERENCE_NOT_FOUND',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'VALIDATION_FAILED',
      'FORBIDDEN',
      'created',
    ]);
    const id = body.results[0]!.id!;
    const [details] = await rest(`/appointment_details?id=eq.${id}`);
    expect(details).toMatchObject({
      id,
      organisation_id: A.id,
      name: 'Checkup',
      start_time: '2026-12-01T09:00:00+00:00',
      contact_id: aContact,
      room: 'A1',
      tags: ['x', 'y'],
    });
    expect(Date.parse(details.booked)).toBe(Date.parse('2026-11-20T08:30:00Z'));
    const values = await rest(
      `/appointment_custom_field?appointment_id=eq.${id}&select=key,value,string_value,string_list_value`,
    );
    expect(values).toEqual(
      expect.arrayContaining([
        { key: 'room', value: 'A1', string_value: 'A1', string_list_value: null },
        // `value` holds the text PostgreSQL gives the JSON value, as PATCH /deal_details writes it too.
        { key: 'tags', value: '["x", "y"]', string_value: null, string_list_value: ['x', 'y'] },
      ]),
    );
    expect(values).toHaveLength(3);

    const update = await okBatch('appointments', [{ external_id: 'ap-1', room: 'B2', description: 'moved' }]);
    expect(update.results).toEqual([{ index: 0, status: 'updated', id }]);
    const [after] = await rest(`/appointment_details?id=eq.${id}`);
    expect(after).toMatchObject({
      name: 'Checkup',
      description: 'moved',
      start_time: '2026-12-01T09:00:00+00:00',
      room: 'B2',
      tags: ['x', 'y'],
    });
    expect(await sql("SELECT id FROM appointment WHERE external_id IN ('ap-2','ap-3','ap-4','ap-5','ap-6')")).toEqual(
      [],
    );
  });
});

describe('batch envelope, media type and body limits', () => {
  it.each(['contacts', 'deals', 'appointments'])(
    '%s: a body that is not JSON is 400 INVALID_JSON',
    async (resource) => {
      await expectError(await post(`/${resource}/imports/batch`, '{"items": [', A.token), 400, 'INVALID_JSON');
      await expectError(await post(`/${resource}/imports/batch`, '', A.token), 400, 'INVALID_JSON');
    },
  );

  it.each([
    ['[]', '[]'],
    ['{}', '{}'],
    ['{"items": 5}', '{"items": 5}'],
    ['{"items": {}}', '{"items": {}}'],
    ['null', 'null'],
    ['"items"', '"items"'],
    ['{"items": [], "extra": 1}', '{"items": [], "extra": 1}'],
  ])('a malformed envelope %s is 400', async (_name, text) => {
    await expectError(await post('/contacts/imports/batch', text, A.token), 400, [
      'VALIDATION_FAILED',
      'UNKNOWN_FIELD',
    ]);
  });

  it('another content type is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const res = await v1('/contacts/imports/batch', A.token, {
      method: 'POST',
      body: '{"items": []}',
      headers: { 'Content-Type': 'text/plain' },
    });
    await expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const csv = await v1('/deals/imports/batch', A.token, {
      method: 'POST',
      body: 'name\nx\n',
      headers: { 'Content-Type': 'text/csv' },
    });
    await expectError(csv, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('a body of exactly 5 MiB is imported', async () => {
    const body = sizedBatch(BATCH_LIMIT, 'big-exact');
    expect(Buffer.byteLength(body)).toBe(5_242_880);
    const result = await json<BatchBody>(await post('/contacts/imports/batch', body), 200);
    expect(result).toMatchObject({ created: 1, failed: 0 });
    const [row] = await sql<{ n: number }>(
      "SELECT length(address_line1)::int AS n FROM contact WHERE external_id = 'big-exact'",
    );
    expect(row!.n).toBeGreaterThan(BATCH_LIMIT - 200);
  });

  it('one byte over 5 MiB is 413 PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const body = sizedBatch(BATCH_LIMIT + 1, 'big-over');
    await expectError(await post('/contacts/imports/batch', body), 413, 'PAYLOAD_TOO_LARGE');
    expect(await sql("SELECT id FROM contact WHERE external_id = 'big-over'")).toEqual([]);
  });

  it('the limit counts bytes, not characters', async () => {
    const body = sizedBatch(BATCH_LIMIT + 2, 'big-utf8', 'é');
    expect(body.length).toBeLessThan(BATCH_LIMIT);
    expect(Buffer.byteLength(body)).toBeGreaterThan(BATCH_LIMIT);
    await expectError(await post('/contacts/imports/batch', body), 413, 'PAYLOAD_TOO_LARGE');
    expect(await sql("SELECT id FROM contact WHERE external_id = 'big-utf8'")).toEqual([]);
  });

  it('as a chunked stream: just under 5 MiB succeeds, just over is 413', async () => {
    const under = sizedBatch(BATCH_LIMIT - 10, 'big-stream-under');
    expect(await json<BatchBody>(await post('/contacts/imports/batch', streamOf(under)), 200)).toMatchObject({
      created: 1,
    });
    const over = sizedBatch(BATCH_LIMIT + 10, 'big-stream-over');
    await expectError(await post('/contacts/imports/batch', streamOf(over)), 413, 'PAYLOAD_TOO_LARGE');
    expect(await sql("SELECT external_id FROM contact WHERE external_id LIKE 'big-stream-%'")).toEqual([
      { external_id: 'big-stream-under' },
    ]);
  });

  it('an endless chunked body is cut off at the limit, not read whole', async () => {
    const counter = { bytes: 0 };
    await expectError(
      await post('/appointments/imports/batch', endless('{"items": [', counter)),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(counter.bytes).toBeGreaterThan(BATCH_LIMIT);
    expect(counter.bytes).toBeLessThan(BATCH_LIMIT + 2 * MiB);
  });

  it('POST /v1/contacts/imports takes 1 MiB: exactly 1 MiB is read, one byte more is 413', async () => {
    const make = (size: number) => {
      const base = JSON.stringify({ file_id: randomUUID() });
      return `${base.slice(0, -1)}${' '.repeat(size - Buffer.byteLength(base))}}`;
    };
    const exact = make(BODY_LIMIT);
    expect(Buffer.byteLength(exact)).toBe(BODY_LIMIT);
    // Read and understood: the file does not exist.
    await expectError(await post('/contacts/imports', exact), 404, 'NOT_FOUND');
    await expectError(await post('/contacts/imports', make(BODY_LIMIT + 1)), 413, 'PAYLOAD_TOO_LARGE');
    await expectError(await post('/deals/imports', streamOf(make(BODY_LIMIT + 1))), 413, 'PAYLOAD_TOO_LARGE');
    const counter = { bytes: 0 };
    await expectError(await post('/appointments/imports', endless('{"file_id": ', counter)), 413, 'PAYLOAD_TOO_LARGE');
    expect(counter.bytes).toBeLessThan(BODY_LIMIT + 2 * MiB);
  });

  it('POST /v1/contacts/imports: a malformed body is 400, another type 415', async () => {
    await expectError(await post('/contacts/imports', '{"file_id": "not-a-uuid"}'), 400, 'VALIDATION_FAILED');
    await expectError(await post('/contacts/imports', '{}'), 400, 'VALIDATION_FAILED');
    await expectError(await post('/contacts/imports', 'nope'), 400, 'INVALID_JSON');
    const res = await v1('/contacts/imports', A.token, {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'text/csv' },
    });
    await expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });
});

// ---------------------------------------------------------------------------------------------

describe('POST /v1/files', () => {
  it('stores the body and answers 201 {id, size, content_type, sha256}', async () => {
    const text = 'display_name,city\nZoë,Zürich\n';
    const res = await upload(text, 'text/csv; charset=utf-8');
    const file = await json<{ id: string; size: number; content_type: string; sha256: string }>(res, 201);
    expect(file).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      size: Buffer.byteLength(text),
      content_type: 'text/csv',
      sha256: createHash('sha256').update(text).digest('hex'),
    });
    const [row] = await sql<{ organisation_id: string; size: number; sha256: string }>(
      'SELECT organisation_id::text AS organisation_id, size::int AS size, sha256 FROM file WHERE id = $1',
      [file.id],
    );
    expect(row).toEqual({ organisation_id: A.id, size: file.size, sha256: file.sha256 });
    const chunks = await sql<{ data: string }>('SELECT data FROM file_chunk WHERE file_id = $1 ORDER BY seq', [
      file.id,
    ]);
    expect(chunks.map((c) => c.data).join('')).toBe(text);
    expect(res.headers.get('engage-version')).toBe(VERSION);
  });

  it('takes JSON and NDJSON, also as a chunked stream', async () => {
    const text = JSON.stringify([{ display_name: 'x' }]);
    expect(await json(await upload(text, 'application/json'), 201)).toMatchObject({
      content_type: 'application/json',
      size: text.length,
    });
    const nd = '{"display_name":"a"}\n{"display_name":"b"}\n'.repeat(2000);
    const file = await json<{ size: number; sha256: string }>(
      await upload(streamOf(nd, 1000), 'application/x-ndjson'),
      201,
    );
    expect(file).toMatchObject({ size: nd.length, sha256: createHash('sha256').update(nd).digest('hex') });
  });

  it('an unsupported content type is 415 and stores nothing', async () => {
    const [before] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file');
    for (const type of ['text/plain', 'application/xml', 'multipart/form-data; boundary=x']) {
      await expectError(await upload('a,b\n1,2\n', type), 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    await expectError(await v1('/files', A.token, { method: 'POST', body: 'a\n1\n' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    const [after] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file');
    expect(after).toEqual(before);
  });

  it('an empty file is 400', async () => {
    await expectError(await upload('', 'text/csv'), 400, 'VALIDATION_FAILED');
  });

  it('the file cap: exactly the cap is stored, one byte more is 413, also when chunked', async () => {
    const org = await createOrganisation(small);
    const [before] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file', [], small);
    const [chunksBefore] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file_chunk', [], small);
    const make = (size: number) => `display_name\n${'x'.repeat(size - 'display_name\n'.length - 1)}\n`;
    expect(Buffer.byteLength(make(1000))).toBe(1000);
    expect(await json(await upload(make(1000), 'text/csv', org.token, small), 201)).toMatchObject({ size: 1000 });
    await expectError(await upload(make(1001), 'text/csv', org.token, small), 413, 'PAYLOAD_TOO_LARGE');
    await expectError(await upload(streamOf(make(1001), 100), 'text/csv', org.token, small), 413, 'PAYLOAD_TOO_LARGE');
    const counter = { bytes: 0 };
    await expectError(
      await upload(endless('display_name\n', counter), 'text/csv', org.token, small),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(counter.bytes).toBeLessThan(2 * MiB);
    // Only the file at the cap was kept; the refused ones left no rows behind.
    const [after] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file', [], small);
    expect(after!.n).toBe(before!.n + 1);
    const [chunks] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM file_chunk', [], small);
    expect(chunks!.n).toBe(chunksBefore!.n + 1);
  });

  it('the default cap is 100 MiB: a file of a few MiB is stored', async () => {
    const text = `display_name\n${'y'.repeat(3 * MiB)}\n`;
    expect(await json(await upload(streamOf(text), 'text/csv'), 201)).toMatchObject({ size: text.length });
  });
});

describe('file imports end to end', () => {
  it(
    'CSV of contacts: header row, quoting, empty cells, numbers, booleans, dates,' +
      ' custom-field columns, errors by row',
    async () => {
      const csv = [
        'external_id,display_name,email,is_blocked,number_of_marketing_opt_in_requests,birthday,score,vip,since,nick',
        'csv-1,Ann,ann@example.com,true,3,1990-01-02,4.5,true,2020-01-01,annie',
        'csv-2,"Bob, Jr.",,false,,,,false,,',
        'csv-3,Cy,cy@example.com,maybe,1,,,,,',
        'csv-4,Di,,,x,,,,,',
        'csv-5,Ed,,,,,notanumber,,,',
        'csv-6,"Multi ""quoted""",,,,,-2,,,',
      ].join('\r\n');
      const job = await startImport('contacts', `${csv}\r\n`, 'text/csv');
      const done = await waitForJob(job.id);
      expect(done).toMatchObject({ id: job.id, status: 'succeeded', processed: 6, created: 3, updated: 0, failed: 3 });
      expect(done.finished_at).not.toBeNull();
      expect(done.errors.map((e) => [e.index, e.status, e.error.code])).toEqual([
        [2, 'failed', 'VALIDATION_FAILED'],
        [3, 'failed', 'VALIDATION_FAILED'],
        [4, 'failed', 'VALIDATION_FAILED'],
      ]);
      expect(done.errors[0]!.error.context).toEqual([{ field: 'is_blocked', message: expect.any(String) }]);
      expect(done.errors[1]!.error.context).toEqual([
        { field: 'number_of_marketing_opt_in_requests', message: expect.any(String) },
      ]);
      expect(done.errors[2]!.error.context).toEqual([{ field: 'score', message: 'must be a number' }]);

      const rows = await rest(
        '/contact?external_id=like.csv-*' +
          '&select=external_id,display_name,email,is_blocked,number_of_marketing_opt_in_requests,birthday' +
          '&order=display_name',
      );
      expect(rows).toEqual([
        {
          external_id: 'csv-1',
          display_name: 'Ann',
          email: 'ann@example.com',
          is_blocked: true,
          number_of_marketing_opt_in_requests: 3,
          birthday: '1990-01-02',
        },
        {
          external_id: 'csv-2',
          display_name: 'Bob, Jr.',
          email: null,
          is_blocked: false,
          number_of_marketing_opt_in_requests: 0,
          birthday: null,
        },
        {
          external_id: 'csv-6',
          display_name: 'Multi "quoted"',
          email: null,
          is_blocked: false,
          number_of_marketing_opt_in_requests: 0,
          birthday: null,
        },
      ]);
      const values = await sql<{ external_id: string; key: string; value: string }>(
        'SELECT c.external_id, v.key, v.value FROM contact_custom_field v' +
          ` JOIN contact c ON c.organisation_id = v.organisation_id AND c.id = v.contact_id
       WHERE v.organisation_id = $1 AND c.external_id LIKE 'csv-%' ORDER BY c.external_id, v.key`,
        [A.id],
      );
      expect(values).toEqual([
        { external_id: 'csv-1', key: 'nick', value: 'annie' },
        { external_id: 'csv-1', key: 'score', value: '4.5' },
        { external_id: 'csv-1', key: 'since', value: '2020-01-01' },
        { external_id: 'csv-1', key: 'vip', value: 'true' },
        { external_id: 'csv-2', key: 'vip', value: 'false' },
        { external_id: 'csv-6', key: 'score', value: '-2' },
      ]);

      // A second CSV updates by external_id; empty cells leave fields as they are.
      const update = await startImport(
        'contacts',
        'external_id,email,city\ncsv-1,,Luzern\ncsv-2,bob@example.com,\ncsv-7,,Chur\n',
        'text/csv',
      );
      expect(await waitForJob(update.id)).toMatchObject({
        status: 'succeeded',
        processed: 3,
        created: 1,
        updated: 2,
        failed: 0,
        errors: [],
      });
      const [ann] = await rest('/contact?external_id=eq.csv-1&select=email,city,display_name');
      expect(ann).toEqual({ email: 'ann@example.com', city: 'Luzern', display_name: 'Ann' });
      const [bob] = await rest('/contact?external_id=eq.csv-2&select=email,city');
      expect(bob).toEqual({ email: 'bob@example.com', city: null });
    },
  );

  it('CSV with an unknown column fails every row with UNKNOWN_FIELD', async () => {
    const job = await startImport('contacts', 'display_name,shoe_size\nX,42\nY,43\n', 'text/csv');
    const done = await waitForJob(job.id);
    expect(done).toMatchObject({ status: 'succeeded', processed: 2, created: 0, failed: 2 });
    expect(done.errors.map((e) => [e.index, e.error.code])).toEqual([
      [0, 'UNKNOWN_FIELD'],
      [1, 'UNKNOWN_FIELD'],
    ]);
  });

  it('JSON array of deals', async () => {
    const items = [
      { external_id: 'jd-1', name: 'JSON deal 1', value: 5, currency: 'USD', contact_id: aContact, priority: 9 },
      { external_id: 'jd-2', name: 'JSON deal 2', currency: 'GBP' },
      { external_id: 'jd-3', name: 'JSON deal 3', contact_id: bContact },
      { external_id: 'd-1', name: 'Renamed by file' },
      { external_id: 'jd-1', name: 'dup in file' },
    ];
    const job = await startImport('deals', JSON.stringify(items), 'application/json');
    const done = await waitForJob(job.id);
    expect(done).toMatchObject({ status: 'succeeded', processed: 5, created: 1, updated: 1, failed: 3 });
    expect(done.errors.map((e) => [e.index, e.error.code])).toEqual([
      [1, 'VALIDATION_FAILED'],
      [2, 'REFERENCE_NOT_FOUND'],
      [4, 'CONFLICT'],
    ]);
    const rows = await rest('/deal?external_id=in.(jd-1,jd-2,jd-3,d-1)&select=external_id,name,value,currency');
    expect(rows.sort((a, b) => a.external_id.localeCompare(b.external_id))).toEqual([
      { external_id: 'd-1', name: 'Renamed by file', value: 10, currency: 'CHF' },
      { external_id: 'jd-1', name: 'JSON deal 1', value: 5, currency: 'USD' },
    ]);
  });

  it('NDJSON of appointments, blank lines ignored, custom fields written', async () => {
    const lines = [
      JSON.stringify({
        external_id: 'nd-1',
        name: 'ND 1',
        start_time: '2027-01-01T10:00:00Z',
        room: 'N1',
        tags: ['a'],
      }),
      '',
      JSON.stringify({ external_id: 'nd-2', name: 'ND 2', contact_id: aContact }),
      JSON.stringify({ external_id: 'nd-3', name: 'ND 3', room: 5 }),
      JSON.stringify({ external_id: 'nd-4', name: 'ND 4', organisation_id: B.id }),
      JSON.stringify({ external_id: 'ap-7', name: 'Plain renamed' }),
    ];
    const job = await startImport('appointments', `${lines.join('\n')}\n`, 'application/x-ndjson');
    const done = await waitForJob(job.id);
    expect(done).toMatchObject({ status: 'succeeded', processed: 5, created: 2, updated: 1, failed: 2 });
    expect(done.errors.map((e) => [e.index, e.error.code])).toEqual([
      [2, 'VALIDATION_FAILED'],
      [3, 'FORBIDDEN'],
    ]);
    const [nd1] = await rest('/appointment_details?external_id=eq.nd-1');
    expect(nd1).toMatchObject({
      name: 'ND 1',
      start_time: '2027-01-01T10:00:00+00:00',
      room: 'N1',
      tags: ['a'],
      organisation_id: A.id,
    });
    const [ap7] = await rest('/appointment?external_id=eq.ap-7&select=name');
    expect(ap7).toEqual({ name: 'Plain renamed' });
    expect(await sql("SELECT id FROM appointment WHERE external_id IN ('nd-3','nd-4')")).toEqual([]);
  });

  it('keeps only the first errors of a large file, by index', async () => {
    const rows = Array.from({ length: 250 }, (_, i) => (i % 2 === 0 ? `many-${i},ok` : `many-${i},maybe`));
    const job = await startImport(
      'contacts',
      `external_id,is_blocked\n${rows.join('\n').replaceAll(',ok', ',true')}\n`,
      'text/csv',
    );
    const done = await waitForJob(job.id);
    expect(done).toMatchObject({ status: 'succeeded', processed: 250, created: 125, failed: 125 });
    expect(done.errors.length).toBeGreaterThan(0);
    expect(done.errors.length).toBeLessThanOrEqual(125);
    expect(done.errors[0]!.index).toBe(1);
    expect(done.errors.map((e) => e.index)).toEqual(done.errors.map((_, i) => 2 * i + 1));
  });

  it('an unreadable JSON file fails the job with a reason', async () => {
    const job = await startImport('contacts', '{"display_name": ', 'application/json');
    const done = await waitForJob(job.id);
    expect(done.status).toBe('failed');
    expect(typeof done.error).toBe('string');
    expect(done.finished_at).not.toBeNull();
  });

  it('two workers on one database run each job once', async () => {
    const second = createImports({ db: t.db, engine: t.engine }).startWorker({ pollMs: 10 });
    try {
      const ids = await Promise.all(
        [0, 1, 2].map(async (k) => {
          const csv = `display_name\n${Array.from({ length: 40 }, (_, i) => `Twice ${k}-${i}`).join('\n')}\n`;
          return (await startImport('contacts', csv, 'text/csv')).id;
        }),
      );
      for (const id of ids)
        expect(await waitForJob(id)).toMatchObject({ status: 'succeeded', processed: 40, created: 40 });
      const [row] = await sql<{ n: number; d: number }>(
        'SELECT count(*)::int AS n, count(DISTINCT display_name)::int AS d FROM contact' +
          " WHERE organisation_id = $1 AND display_name LIKE 'Twice %'",
        [A.id],
      );
      expect(row).toEqual({ n: 120, d: 120 });
    } finally {
      await second.stop();
    }
  });
});

describe('a job interrupted by a crash resumes without duplicates', () => {
  it('a second worker picks up the abandoned job, skips the committed items and finishes', async () => {
    const org = await createOrganisation(small);
    const total = 30;
    const committed = 12;
    const lines = Array.from(
      { length: total },
      (_, i) => `Row ${String(i).padStart(2, '0')},${i === 20 ? 'Bad' : 'Bern'},${i === 20 ? 'maybe' : 'false'}`,
    );
    const csv = `display_name,city,is_blocked\n${lines.join('\n')}\n`;
    expect(Buffer.byteLength(csv)).toBeLessThan(1000);
    const file = await json<{ id: string }>(await upload(csv, 'text/csv', org.token, small), 201);
    const job = await json<Job>(await post('/contacts/imports', { file_id: file.id }, org.token, {}, small), 202);
    expect(job.status).toBe('queued');

    // The crashed process had claimed it and committed the first 12 items (rows and progress together).
    await insertRows(
      small.db,
      'contact',
      org.id,
      Array.from({ length: committed }, (_, i) => ({
        display_name: `Row ${String(i).padStart(2, '0')}`,
        city: 'Crashed run',
      })),
    );
    await small.db.query(
      "UPDATE import_job SET status = 'running', locked_at = now() - interval '1 hour'," +
        ' processed = $1::int, created = $1::int WHERE id = $2::uuid',
      [String(committed), job.id],
    );
    expect(await json<Job>(await v1(`/imports/${job.id}`, org.token, {}, small), 200)).toMatchObject({
      status: 'running',
      processed: committed,
    });

    const worker = createImports({ db: small.db, engine: small.engine }).startWorker({ pollMs: 50 });
    let done: Job;
    try {
      done = await waitForJob(job.id, org.token, small);
    } finally {
      await worker.stop();
    }
    expect(done).toMatchObject({ status: 'succeeded', processed: total, created: total - 1, updated: 0, failed: 1 });
    expect(done.errors.map((e) => [e.index, e.error.code])).toEqual([[20, 'VALIDATION_FAILED']]);

    const rows = await sql<{ display_name: string; n: number; city: string }>(
      'SELECT display_name, count(*)::int AS n, min(city) AS city FROM contact' +
        ' WHERE organisation_id = $1 GROUP BY display_name ORDER BY display_name',
      [org.id],
      small,
    );
    expect(rows).toHaveLength(total - 1);
    for (const row of rows) {
      const i = Number(row.display_name.slice(4));
      expect(row.n, row.display_name).toBe(1);
      expect(row.city, row.display_name).toBe(i < committed ? 'Crashed run' : 'Bern');
    }
  });

  it('a running job with a fresh heartbeat is left to its owner', async () => {
    const org = await createOrganisation(small);
    const file = await json<{ id: string }>(await upload('display_name\nFresh\n', 'text/csv', org.token, small), 201);
    const job = await json<Job>(await post('/contacts/imports', { file_id: file.id }, org.token, {}, small), 202);
    await small.db.query(`UPDATE import_job SET status = 'running', locked_at = now() WHERE id = $1::uuid`, [job.id]);
    const worker = createImports({ db: small.db, engine: small.engine }).startWorker({ pollMs: 20 });
    await sleep(400);
    await worker.stop();
    expect(await json<Job>(await v1(`/imports/${job.id}`, org.token, {}, small), 200)).toMatchObject({
      status: 'running',
      processed: 0,
    });
    expect(await sql('SELECT id FROM contact WHERE organisation_id = $1', [org.id], small)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('GET /v1/contacts (keyset pages)', () => {
  it('refuses a parameter a page does not take, as /api/v1 does, after a bad token', async () => {
    for (const query of ['?city=eq.Bern', '?select=id', '?limit=2&order=id']) {
      const res = await v1(`/contacts${query}`, C.token);
      expect(res.status, query).toBe(400);
      const body = (await res.json()) as { code: string; message: string };
      expect(body.code).toBe('INVALID_QUERY');
      expect(body.message).toMatch(/takes limit and cursor, not "/);
    }
    expect((await v1('/contacts?city=eq.Bern', 'not-a-token')).status).toBe(401);
  });

  type Page = {
    data: Array<{ id: string; organisation_id: string; created_at: string; display_name: string }>;
    next_cursor: string | null;
  };
  const page = async (query: string, token = C.token) => json<Page>(await v1(`/contacts${query}`, token), 200);
  const ordered = async () =>
    (
      await sql<{ id: string }>(
        'SELECT id::text AS id FROM contact WHERE organisation_id = $1 ORDER BY created_at, id',
        [C.id],
      )
    ).map((r) => r.id);

  async function walk(limit: number, between?: (pageNo: number) => Promise<void>) {
    const seen: string[] = [];
    const sizes: number[] = [];
    let cursor: string | null = null;
    let pageNo = 0;
    do {
      const p = await page(`?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      sizes.push(p.data.length);
      for (const row of p.data) expect(row.organisation_id).toBe(C.id);
      seen.push(...p.data.map((r) => r.id));
      cursor = p.next_cursor;
      if (between && cursor) await between(pageNo);
      pageNo++;
      if (pageNo > 100) throw new Error('the walk does not end');
    } while (cursor);
    return { seen, sizes };
  }

  beforeAll(async () => {
    // 100 contacts in one transaction share created_at, so only the id orders them.
    const items = Array.from({ length: 100 }, (_, i) => ({ external_id: `k-${i}`, display_name: `K ${i}` }));
    expect(await okBatch('contacts', items, C.token)).toMatchObject({ created: 100 });
    await insertRows(t.db, 'contact', C.id, [
      ...Array.from({ length: 10 }, (_, i) => ({ display_name: `Tie ${i}`, created_at: '2020-01-01T00:00:00Z' })),
      ...Array.from({ length: 20 }, (_, i) => ({
        display_name: `Spread ${i}`,
        created_at: `2021-01-${String(i + 1).padStart(2, '0')}T00:00:00.123456Z`,
      })),
    ]);
  });

  it('a walk with limit 25 sees all 130 contacts exactly once, in (created_at, id) order', async () => {
    const expected = await ordered();
    expect(expected).toHaveLength(130);
    const { seen, sizes } = await walk(25);
    expect(sizes).toEqual([25, 25, 25, 25, 25, 5]);
    expect(seen).toEqual(expected);
  });

  it('a last full page has no next_cursor', async () => {
    const { seen, sizes } = await walk(26);
    expect(sizes).toEqual([26, 26, 26, 26, 26]);
    expect(new Set(seen).size).toBe(130);
  });

  it('rows are the contact fields; the default limit is 50, the maximum 1000', async () => {
    const first = await page('');
    expect(first.data).toHaveLength(50);
    expect(first.next_cursor).toEqual(expect.any(String));
    expect(Object.keys(first.data[0]!).slice(0, 4)).toEqual(['id', 'created_at', 'updated_at', 'organisation_id']);
    expect(first.data[0]).toHaveProperty('email_transactional_opt_in');
    expect(first.data[0]!.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/);
    const all = await page('?limit=1000');
    expect(all.data).toHaveLength(130);
    expect(all.next_cursor).toBeNull();
    const one = await page('?limit=1');
    expect(one.data).toHaveLength(1);
    expect(one.data[0]!.display_name).toMatch(/^Tie \d$/);
  });

  it('stays stable while contacts are inserted between pages', async () => {
    const before = await ordered();
    let n = 0;
    const { seen } = await walk(25, async () => {
      n++;
      // Before every row seen so far, in the middle of the walk's past, and after everything.
      await insertRows(t.db, 'contact', C.id, [
        { display_name: `Early ${n}`, created_at: '1999-01-01T00:00:00Z' },
        { display_name: `Past ${n}`, created_at: '2020-01-01T00:00:00Z' },
      ]);
      await okBatch('contacts', [{ display_name: `Now ${n}` }, { display_name: `Now ${n}b` }], C.token);
    });
    expect(n).toBeGreaterThanOrEqual(5);
    // No row twice, and every row that existed before the walk exactly once, in order.
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => before.includes(id))).toEqual(before);
    // Rows added after the walk's position are reached (they sort last).
    const added = (await ordered()).filter((id) => !before.includes(id));
    expect(added.length).toBe(4 * n);
    const seenAdded = seen.filter((id) => !before.includes(id));
    expect(seenAdded.length).toBeGreaterThanOrEqual(2 * (n - 1));
  });

  it("lists only the caller's contacts", async () => {
    const a = await json<Page>(await v1('/contacts?limit=1000', A.token), 200);
    expect(a.data.length).toBeGreaterThan(0);
    for (const row of a.data) expect(row.organisation_id).toBe(A.id);
    expect(a.data.map((r) => r.id)).not.toContain(bContact);
    const b = await json<Page>(await v1('/contacts?limit=1000', B.token), 200);
    expect(b.data.map((r) => r.id)).toEqual([bContact]);
    expect(b.next_cursor).toBeNull();
    // A cursor taken in one organisation shows nothing of it to another.
    const c = await page('?limit=5');
    const other = await json<Page>(await v1(`/contacts?limit=1000&cursor=${c.next_cursor}`, B.token), 200);
    for (const row of other.data) expect(row.organisation_id).toBe(B.id);
  });

  it.each(['0', '1001', 'abc', '-1', '2.5', '', '99999'])('limit=%s is 400 INVALID_QUERY', async (limit) => {
    await expectError(await v1(`/contacts?limit=${limit}`, C.token), 400, 'INVALID_QUERY');
  });

  it.each([
    ['not base64 JSON', 'abc'],
    ['garbage characters', '!!!***'],
    ['a JSON object', cursorOf({ a: 1 })],
    ['a one-element array', cursorOf(['2026-01-01T00:00:00Z'])],
    ['strings that are not a timestamp and uuid', cursorOf(['yesterday', 'someone'])],
    ['a bad uuid', cursorOf(['2026-01-01T00:00:00Z', 'not-a-uuid'])],
    ['a bad timestamp', cursorOf(['not a time', randomUUID()])],
  ])('a bad cursor (%s) is 400 INVALID_QUERY', async (_name, cursor) => {
    await expectError(await v1(`/contacts?cursor=${encodeURIComponent(cursor)}`, C.token), 400, 'INVALID_QUERY');
  });
});

// ---------------------------------------------------------------------------------------------

describe('tenant isolation of files and jobs', () => {
  let bFile: string;
  let bJob: string;

  beforeAll(async () => {
    bFile = (await json<{ id: string }>(await upload('display_name\nB only\n', 'text/csv', B.token), 201)).id;
    bJob = (await json<Job>(await post('/contacts/imports', { file_id: bFile }, B.token), 202)).id;
    await waitForJob(bJob, B.token);
  });

  it("another organisation's file cannot be imported: 404, and no job is made", async () => {
    const [before] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM import_job WHERE organisation_id = $1', [
      A.id,
    ]);
    for (const resource of ['contacts', 'deals', 'appointments']) {
      await expectError(await post(`/${resource}/imports`, { file_id: bFile }), 404, 'NOT_FOUND');
    }
    await expectError(await post('/contacts/imports', { file_id: randomUUID() }), 404, 'NOT_FOUND');
    const [after] = await sql<{ n: number }>('SELECT count(*)::int AS n FROM import_job WHERE organisation_id = $1', [
      A.id,
    ]);
    expect(after).toEqual(before);
  });

  it("another organisation's job is 404, as are unknown and malformed ids", async () => {
    expect(await json<Job>(await v1(`/imports/${bJob}`, B.token), 200)).toMatchObject({
      id: bJob,
      status: 'succeeded',
      created: 1,
    });
    await expectError(await v1(`/imports/${bJob}`, A.token), 404, 'NOT_FOUND');
    await expectError(await v1(`/imports/${randomUUID()}`, A.token), 404, 'NOT_FOUND');
    await expectError(await v1('/imports/not-a-uuid', A.token), 404, 'NOT_FOUND');
  });

  it('the B import wrote into B only', async () => {
    const rows = await sql<{ organisation_id: string }>(
      "SELECT organisation_id::text AS organisation_id FROM contact WHERE display_name = 'B only'",
    );
    expect(rows).toEqual([{ organisation_id: B.id }]);
  });
});
