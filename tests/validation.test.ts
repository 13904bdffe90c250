/**
 * Values the database would refuse are refused up front with the field named, and database
 * failures that a retry may cure are transient: edges found in review. Server-managed fields are
 * the server's, whichever a resource declares.
 */
import { createRegistry, defineResource } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapDatabaseError } from '../engine/db/errors.ts';
import { bodySchemas, inspectItem } from '../engine/plan/body.ts';
import { registryOptions } from '../schema/registry.ts';
import { calendar } from '../schema/tables.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let org: Organisation;
beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
});
afterAll(() => t?.drop());

const post = (path: string, body: string) =>
  t.call(path, org.token, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
    body,
  });

describe('values refused before the database sees them', () => {
  it.each([
    ['a timestamp offset PostgreSQL cannot hold', '/deal', '{"won_at":"2026-12-01T09:00:00+16:00"}', 'won_at'],
    ['an unpaired surrogate', '/calendar', '{"name":"\\ud800"}', 'name'],
    ['a NUL character', '/calendar', '{"name":"a\\u0000b"}', 'name'],
    ['an exponent numeric cannot hold', '/deal', '{"value":"1e5000"}', 'value'],
    [
      'indexed text too long for its index',
      '/calendar',
      JSON.stringify({ external_id: 'x'.repeat(1001) }),
      'external_id',
    ],
  ])('%s is 400 VALIDATION_FAILED naming the field', async (_, path, body, field) => {
    const res = await post(path, body);
    expect(res.status).toBe(400);
    const error = await res.json();
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.context.map((p: { field: string }) => p.field)).toEqual([field]);
  });

  it('takes the longest offset PostgreSQL holds and indexed text up to the limit', async () => {
    const deal = await post('/deal', '{"won_at":"2026-12-01T09:00:00+15:59"}');
    expect(deal.status).toBe(201);
    const calendar = await post('/calendar', JSON.stringify({ external_id: 'x'.repeat(1000) }));
    expect(calendar.status).toBe(201);
  });
});

describe('batch imports compare external ids as the case-sensitive text they are', () => {
  it('"ABC" and "abc" are two records', async () => {
    const res = await t.app.request('/v1/contacts/imports/batch', {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items: [{ external_id: 'ABC' }, { external_id: 'abc' }] }),
    });
    expect(await res.json()).toMatchObject({ created: 2, failed: 0 });
  });
});

describe('database failures a retry may cure are transient', () => {
  it.each(['40P01', '40001', '55P03'])('SQLSTATE %s is 503 with Retry-After', (code) => {
    const error = mapDatabaseError({ code, message: 'deadlock detected' });
    expect(error.status).toBe(503);
    expect(error.isTransient).toBe(true);
    expect(error.headers['Retry-After']).toBe('1');
  });

  it('a protocol violation is a bug, not an outage', () => {
    expect(mapDatabaseError({ code: '08P01', message: 'bind message supplies 2 parameters' }).status).toBe(500);
  });
});

describe('server-managed fields a resource declares', () => {
  // The calendar table with `external_id` managed by the server, as a registry entry may say.
  const resource = createRegistry(
    [
      defineResource({
        name: 'managed_calendar',
        table: calendar,
        verbs: ['POST', 'PATCH'],
        serverManaged: ['id', 'created_at', 'updated_at', 'organisation_id', 'external_id'],
      }),
    ],
    registryOptions,
  ).get('managed_calendar')!;
  const schemas = bodySchemas(resource);

  it.each(['create', 'update'] as const)('are ignored in a body on %s, like the timestamps', (mode) => {
    const item = { name: 'Desk', external_id: 'mine', created_at: 'now()' };
    expect(inspectItem(resource, schemas, item, mode)).toEqual({
      row: { name: 'Desk' },
      claimed: null,
      unknown: [],
      invalid: [],
    });
    expect(schemas.writable[mode].has('external_id')).toBe(false);
  });

  it('leave id to be given on create only, and organisation_id to be checked against the token', () => {
    const id = '11111111-1111-4111-8111-111111111111';
    expect(inspectItem(resource, schemas, { id }, 'create').row).toEqual({ id });
    expect(inspectItem(resource, schemas, { id }, 'update').invalid).toEqual([
      { field: 'id', message: 'cannot be changed' },
    ]);
    expect(inspectItem(resource, schemas, { organisation_id: id }, 'create').claimed).toBe(id);
  });
  it('report one problem per field, in field order, whatever order the body gives them in', () => {
    const order = resource.fields.map((f) => f.name);
    expect(order.indexOf('name')).toBeLessThan(order.indexOf('type'));
    const { invalid } = inspectItem(resource, schemas, { type: 'moon', name: 7 }, 'create');
    expect(invalid.map((p) => p.field)).toEqual(['name', 'type']);
    expect(invalid[1]!.message).toMatch(/^must be one of /);
  });
});
