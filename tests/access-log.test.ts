/**
 * The access log: one pino line per request with its request id, method, route, status,
 * duration, rows, organisation and bytes; 5xx errors logged with their cause; never a token, an
 * Authorization header or a body, whatever the request.
 */

import { Writable } from 'node:stream';
import type { Database } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/app.ts';
import { buildApi } from '../server/build.ts';
import { engageEngine } from '../server/engine.ts';
import { createLogger } from '../server/logger.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

/** Everything a logger wrote, line by line. */
function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, stream, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

let t: TestDatabase;
let org: Organisation;
const out = capture();
let app: ReturnType<typeof buildApi>['app'];
const SECRET_BODY = 'do-not-log-this-body-7f3a';

const call = async (path: string, init: RequestInit & { token?: string | null } = {}) => {
  const headers = new Headers(init.headers);
  if (init.token !== null) headers.set('Authorization', `Bearer ${init.token ?? org.token}`);
  const res = await app.request(path, { ...init, headers });
  await res.arrayBuffer(); // the line is written once the body is sent
  return res;
};

beforeAll(async () => {
  t = await createTestDatabase();
  org = await createOrganisation(t);
  await insertRows(t.db, 'contact', org.id, [
    { display_name: 'Ada', email: 'ada@example.com' },
    { display_name: 'Bob', email: 'bob@example.com' },
    { display_name: 'Cy', email: 'cy@example.com' },
  ]);
  ({ app } = buildApi({ db: t.db, logger: createLogger('info', { destination: out.stream }) }));
});
afterAll(() => t?.drop());

describe('access log', () => {
  it('writes one line per request with its fields', async () => {
    const before = out.lines.length;
    const res = await app.request('/api/v1/contact?select=id,display_name&limit=2', {
      headers: { Authorization: `Bearer ${org.token}` },
    });
    const text = await res.text();
    expect(res.status).toBe(200);
    const records = out.records().slice(before);
    expect(records).toHaveLength(1);
    const line = records[0]!;
    expect(line).toMatchObject({
      level: 30,
      requestId: res.headers.get('request-id'),
      method: 'GET',
      route: '/api/v1/:resource',
      status: 200,
      rows: 2,
      bytes: Buffer.byteLength(text),
    });
    expect(typeof line.durationMs).toBe('number');
  });

  it('names the organisation once the request has resolved it', async () => {
    const before = out.lines.length;
    const res = await call('/v1/imports/00000000-0000-4000-8000-000000000001');
    expect(res.status).toBe(404);
    const [line] = out.records().slice(before);
    expect(line).toMatchObject({ route: '/v1/imports/:id', status: 404, organisationId: org.id, code: 'NOT_FOUND' });
  });

  it('logs 4xx with their code, one line each, and 404s of unknown paths', async () => {
    const before = out.lines.length;
    await call('/api/v1/contact?select=nope');
    await call('/api/v1/contact', { token: null });
    await call('/nothing/here');
    const records = out.records().slice(before);
    expect(records.map((r) => [r.status, r.code])).toEqual([
      [400, expect.any(String)],
      [401, 'UNAUTHORIZED'],
      [404, 'NOT_FOUND'],
    ]);
    expect(records[2]!.route).toBe('*');
  });

  it('logs a 5xx with its cause server-side, and the response does not show it', async () => {
    const failing = capture();
    const cause = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432 secret-host-detail'), {
      code: 'ECONNREFUSED',
    });
    const db: Database = {
      kind: 'postgres',
      query: () => Promise.reject(cause),
      transaction: () => Promise.reject(cause),
      exec: () => Promise.reject(cause),
      ping: () => Promise.reject(cause),
      close: async () => {},
    };
    const broken = createApp({
      engine: engageEngine(db),
      ping: () => db.ping(),
      logger: createLogger('info', { destination: failing.stream }),
    });
    const res = await broken.request('/api/v1/contact', { headers: { Authorization: `Bearer ${org.token}` } });
    const body = await res.text();
    expect(res.status).toBeGreaterThanOrEqual(500);
    expect(body).not.toContain('secret-host-detail');
    const records = failing.records();
    const error = records.find((r) => r.level === 50)!;
    expect(JSON.stringify(error.err)).toContain('secret-host-detail');
    expect(JSON.stringify(error.err)).toContain('stack');
    const access = records.filter((r) => r.route !== undefined);
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ status: res.status, method: 'GET' });
  });

  it('never logs a token, an Authorization header or a body', async () => {
    await call('/api/v1/contact', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ display_name: SECRET_BODY }),
    });
    await call('/api/v1/contact?select=id', { token: 'engage_not-a-real-token-but-secret' });
    await call('/api/v1/contact?select=id', { headers: { Authorization: 'Basic c2VjcmV0OnNlY3JldA==' }, token: null });
    const all = out.lines.join('\n');
    expect(out.lines.length).toBeGreaterThan(5);
    for (const secret of [org.token, 'engage_not-a-real-token-but-secret', 'c2VjcmV0OnNlY3JldA==', SECRET_BODY]) {
      expect(all).not.toContain(secret);
    }
    expect(all.toLowerCase()).not.toContain('bearer');
  });

  it('writes pretty lines with LOG_FORMAT=pretty', async () => {
    const pretty = capture();
    const log = createLogger('info', { format: 'pretty', destination: pretty.stream });
    const { app: prettyApp } = buildApi({ db: t.db, logger: log });
    await (await prettyApp.request('/health')).text();
    expect(pretty.lines.join('\n')).toMatch(/INFO.*GET \/health 200/);
    expect(() => JSON.parse(pretty.lines[0]!)).toThrow();
  });
});
