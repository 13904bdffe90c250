/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): request bodies (size, media
 * type, JSON), and the enums, dates and integers of resources the spec does not let clients write.
 * Each test checks the response (status, headers, body) and then the database itself.
 */

import { randomUUID } from 'node:crypto';
import { createRegistry, defineResource } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryOptions, resources } from '../schema/registry.ts';
import * as tables from '../schema/tables.ts';
import { createApp } from '../server/app.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, fieldsOf, type Sent, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation. */
let a: Organisation;

const { send, post, query, countWhere, countLike } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('bodies: size, media type, JSON', () => {
  it('a body over 1 MiB is 413 PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const name = uniq('big');
    const raw = JSON.stringify({ name, external_id: 'x'.repeat(1024 * 1024) });
    const res = await send('POST', '/calendar', { raw });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('a body of exactly 1 MiB is accepted', async () => {
    const name = uniq('big');
    const prefix = JSON.stringify({ name, description: '' });
    const raw = JSON.stringify({ name, description: 'x'.repeat(1024 * 1024 - prefix.length) });
    expect(Buffer.byteLength(raw)).toBe(1024 * 1024);
    const res = await send('POST', '/appointment_type', { raw });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(await countWhere('appointment_type', 'name', name)).toBe(1);
    await query('DELETE FROM appointment_type WHERE name = $1', [name]);
  });

  it('a value too long for its unique index is a 400, not a 500', async () => {
    const name = uniq('big');
    // Random text does not compress: far over what a btree index entry may hold.
    const external_id = Array.from({ length: 4000 }, () => randomUUID()).join('');
    const res = await post('/calendar', { name, external_id });
    expect(res.status, res.text.slice(0, 300)).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('a body without a Content-Type is read as JSON, as PostgREST does', async () => {
    const name = uniq('media');
    const res = await t.call('/calendar', a.token, {
      method: 'POST',
      body: new TextEncoder().encode(JSON.stringify({ name })),
    });
    expect(res.status, await res.text()).toBe(201);
    expect(await countWhere('calendar', 'name', name)).toBe(1);
  });

  it('a bulk insert of 5000 items is one request that writes them all', async () => {
    const p = uniq('many');
    const items = Array.from({ length: 5000 }, (_, i) => ({ name: `${p}-${i}`, external_id: `${p}-${i}` }));
    const res = await post('/calendar', items, { Prefer: 'count=exact' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('content-range')).toBe('*/5000');
    expect(await countLike('calendar', 'name', p)).toBe(5000);
    await query('DELETE FROM calendar WHERE name LIKE $1', [`${p}%`]);
  });

  it('a body that is not JSON by its media type is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    const name = uniq('media');
    for (const type of ['text/plain', 'text/csv', 'application/x-www-form-urlencoded']) {
      const res = await send('POST', '/calendar', { raw: JSON.stringify({ name }), headers: { 'Content-Type': type } });
      expectError(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
      const patched = await send('PATCH', `/calendar?name=eq.${name}`, {
        raw: JSON.stringify({ name }),
        headers: { 'Content-Type': type },
      });
      expectError(patched, 415, 'UNSUPPORTED_MEDIA_TYPE');
    }
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('application/json with a charset is fine', async () => {
    const name = uniq('media');
    const res = await send('POST', '/calendar', {
      raw: JSON.stringify({ name }),
      headers: { 'Content-Type': 'application/json; charset=utf-8' },
    });
    expect(res.status).toBe(201);
  });

  it('malformed or empty JSON is 400 INVALID_JSON', async () => {
    for (const raw of ['{"name": ', '{name: 1}', '', '   ']) {
      const res = await send('POST', '/calendar', { raw });
      expectError(res, 400, 'INVALID_JSON');
    }
    const res = await send('PATCH', `/calendar?id=eq.${randomUUID()}`, { raw: '[1,' });
    expectError(res, 400, 'INVALID_JSON');
  });

  it('a JSON value that is neither an object nor an array is 400 VALIDATION_FAILED', async () => {
    for (const raw of ['5', '"calendar"', 'null', 'true']) {
      const res = await send('POST', '/calendar', { raw });
      expectError(res, 400, 'VALIDATION_FAILED');
    }
  });

  it('DELETE ignores a JSON content type without a body (as postgrest-js sends it)', async () => {
    const name = uniq('media');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await send('DELETE', `/calendar?id=eq.${id}`, { headers: { 'Content-Type': 'application/json' } });
    expect(res.status).toBe(204);
    expect(await countWhere('calendar', 'id', id!)).toBe(0);
  });
});

describe('enums, dates and integers of resources the spec does not let clients write', () => {
  // contact and custom_field offer no POST in the spec; their body rules are still derived from
  // the registry, checked here through a registry that offers POST on them.
  let call: (path: string, body: unknown) => Promise<Sent>;
  beforeAll(() => {
    const extra = [
      defineResource({ name: 'contact', table: tables.contact, verbs: ['POST'] }),
      defineResource({ name: 'custom_field', table: tables.custom_field, verbs: ['POST'] }),
    ];
    const engine = engageEngine(t.db, {
      registry: createRegistry(
        [...resources.filter((r) => r.name !== 'contact' && r.name !== 'custom_field'), ...extra],
        registryOptions,
      ),
    });
    const app = createApp({ engine, ping: async () => {} });
    call = async (path, body) => {
      const res = await app.request(`/api/v1${path}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${a.token}`,
          'Content-Type': 'application/json',
          Prefer: 'return=representation',
        },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
    };
  });

  it('transactional opt-ins take only their enum values', async () => {
    const name = uniq('opt');
    const ok = await call('/contact', {
      display_name: name,
      email_transactional_opt_in: 'consent_granted',
      sms_transactional_opt_in: null,
      whatsapp_marketing_opt_in: true,
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body[0]).toMatchObject({
      email_transactional_opt_in: 'consent_granted',
      sms_transactional_opt_in: null,
      whatsapp_marketing_opt_in: true,
    });
    const bad = await call('/contact', {
      display_name: name,
      email_transactional_opt_in: 'maybe',
      postal_transactional_opt_in: 'yes',
      sms_marketing_opt_in: 'yes',
    });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(bad)).toEqual([
      'email_transactional_opt_in',
      'postal_transactional_opt_in',
      'sms_marketing_opt_in',
    ]);
    expect(await countWhere('contact', 'display_name', name)).toBe(1);
  });

  it('dates are YYYY-MM-DD and real; integers are whole numbers', async () => {
    const name = uniq('date');
    const ok = await call('/contact', {
      display_name: name,
      birthday: '2000-02-29',
      number_of_marketing_opt_in_requests: 3,
    });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body[0]).toMatchObject({ birthday: '2000-02-29', number_of_marketing_opt_in_requests: 3 });
    for (const birthday of ['2001-02-29', '10.12.1815', '1815-12-10T00:00:00Z', '1815-1-1', 18151210]) {
      const bad = await call('/contact', { display_name: name, birthday });
      expectError(bad, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(bad), String(birthday)).toEqual(['birthday']);
    }
    for (const n of [1.5, 'three', 2 ** 31]) {
      const bad = await call('/contact', { display_name: name, number_of_marketing_opt_in_requests: n });
      expectError(bad, 400, 'VALIDATION_FAILED');
    }
    expect(await countWhere('contact', 'display_name', name)).toBe(1);
  });

  it('custom_field type and entity take only their enum values; key, type and entity are required', async () => {
    const key = uniq('cfk');
    const ok = await call('/custom_field', { name: key, key, type: 'string_list', entity: 'appointment' });
    expect(ok.status, ok.text).toBe(201);
    const bad = await call('/custom_field', { name: key, key: `${key}-2`, type: 'text', entity: 'company' });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(bad)).toEqual(['entity', 'type']);
    const missing = await call('/custom_field', { name: key, key: `${key}-3`, entity: 'deal' });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(missing.body.context).toEqual([expect.objectContaining({ field: 'type' })]);
    expect(await countWhere('custom_field', 'name', key)).toBe(1);
  });
});
