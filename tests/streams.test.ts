/**
 * Streams of changes over HTTP, as an integrator holds one: `GET /api/v1/<resource>` with
 * `Accept: text/event-stream` and a bearer token; contacts (GET-only here) change through /v1
 * imports and other programs, and their streams see it; failures are the contract's error bodies.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SseReader } from '../engine/test/sse.ts';
import { buildApi } from '../server/build.ts';
import { createOrganisation, createTestApp, ERROR_KEYS, type Organisation, type TestApp } from './helpers/app.ts';

const VERSION = '2026-11-01';
let t: TestApp;
let org: Organisation;
let other: Organisation;
const readers: SseReader[] = [];

beforeAll(async () => {
  t = await createTestApp({ streams: { reauthSeconds: 1, heartbeatSeconds: 1 } });
  org = await createOrganisation(t);
  other = await createOrganisation(t);
});
afterAll(async () => {
  await Promise.all(readers.map((r) => r.cancel().catch(() => {})));
  await t?.drop();
});

async function stream(path: string, who = org, headers: Record<string, string> = {}) {
  const res = await t.call(path, who.token, { headers: { Accept: 'text/event-stream', ...headers } });
  if (res.status !== 200) return { res, reader: null };
  const reader = new SseReader(res.body!);
  readers.push(reader);
  return { res, reader };
}

const importContacts = (who: Organisation, items: unknown[]) =>
  t.app.request('/v1/contacts/imports/batch', {
    method: 'POST',
    headers: { Authorization: `Bearer ${who.token}`, 'Content-Type': 'application/json', 'engage-version': VERSION },
    body: JSON.stringify({ items }),
  });

async function expectError(res: Response, status: number, code: string) {
  const body = await res.json();
  expect(res.status).toBe(status);
  expect(Object.keys(body).sort()).toEqual(expect.arrayContaining([...ERROR_KEYS].sort()));
  expect(body.code).toBe(code);
  expect(body.request_id).toBe(res.headers.get('request-id'));
  return body;
}

describe('GET /api/v1/contact as a stream', () => {
  it('sees contacts imported through /v1 and changed by another program, from the Change-Position of a read', async () => {
    const read = await t.call('/contact?select=id,display_name&city=eq.Basel', org.token);
    expect(read.status).toBe(200);
    const position = read.headers.get('change-position');
    expect(position).toMatch(/^\d+_\d+/);
    // Imported between the read and the stream: still delivered, as the stream starts at the read.
    expect((await importContacts(org, [{ external_id: 'b-1', display_name: 'Basel One', city: 'Basel' }])).status).toBe(
      200,
    );
    const { res, reader } = await stream('/contact?select=id,display_name&city=eq.Basel', org, {
      'Last-Event-ID': position!,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('x-accel-buffering')).toBe('no');
    expect(res.headers.get('request-id')).toBeTruthy();
    await importContacts(other, [{ external_id: 'b-1', display_name: 'Not yours', city: 'Basel' }]);
    await t.db.query("UPDATE contact SET display_name = 'Basel Uno' WHERE organisation_id = $1", [org.id]);
    await t.db.query("UPDATE contact SET city = 'Bern' WHERE organisation_id = $1", [org.id]);
    const events = await reader!.next(3);
    expect(events.map((e) => [e.event, e.data.record?.display_name])).toEqual([
      ['insert', 'Basel One'],
      ['update', 'Basel Uno'],
      ['delete', undefined],
    ]);
    expect(Object.keys(events[0]!.data.record).sort()).toEqual(['display_name', 'id']);
    expect(events[2]!.data.key).toEqual({ id: events[0]!.data.record.id });
  });

  it('answers failures with the contract error body: no token, a bad position, an embed', async () => {
    const anonymous = await t.app.request('/api/v1/contact', { headers: { Accept: 'text/event-stream' } });
    await expectError(anonymous, 401, 'UNAUTHORIZED');
    const bad = await stream('/contact', org, { 'Last-Event-ID': 'yesterday' });
    const body = await expectError(bad.res, 400, 'INVALID_QUERY');
    expect(body.message).toContain('not a position this server wrote');
    const embed = await stream('/deal?select=id,contact(display_name)', org);
    await expectError(embed.res, 400, 'INVALID_QUERY');
  });

  it('ends a stream once its token is revoked', async () => {
    const short = await createOrganisation(t);
    const { reader } = await stream('/deal', short);
    const [token] = await t.engine.tokens!.list(short.id);
    await t.engine.tokens!.revoke(token!.id);
    await reader!.end();
    const again = await stream('/deal', short);
    await expectError(again.res, 401, 'UNAUTHORIZED');
  });
});

describe('metrics', () => {
  it('counts open streams, events and their lag', async () => {
    const api = buildApi({ db: t.db, metrics: {} });
    const who = await createOrganisation(t);
    const res = await api.app.request('/api/v1/contact_note', {
      headers: { Authorization: `Bearer ${who.token}`, Accept: 'text/event-stream' },
    });
    const reader = new SseReader(res.body!);
    readers.push(reader);
    const [contact] = await t.db.query<{ id: string }>(
      "INSERT INTO contact (organisation_id, display_name) VALUES ($1, 'noted') RETURNING id",
      [who.id],
    );
    await t.db.query("INSERT INTO contact_note (organisation_id, contact_id, text) VALUES ($1, $2, 'hi')", [
      who.id,
      contact!.id,
    ]);
    await reader.next(1);
    const { text } = await api.metrics!.render();
    expect(text).toMatch(/^engage_streams_open 1$/m);
    expect(text).toMatch(/^engage_stream_events_total 1$/m);
    expect(text).toMatch(/^engage_stream_lag_seconds_count 1$/m);
    await reader.cancel();
    api.engine.close();
  });
});
