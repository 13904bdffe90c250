/**
 * Adding a resource means a table and a registry entry, nothing else: the new resource is listed,
 * filtered, ordered, refused on verbs it does not offer, and described in OpenAPI.
 */
import { integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, defineResource } from '../engine/registry.ts';
import { resources } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const ticket = pgTable('ticket', {
  id: uuid().notNull().defaultRandom(),
  created_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
  updated_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
  organisation_id: uuid().notNull(),
  subject: text(),
  priority: integer(),
  state: text({ enum: ['open', 'closed'] }),
});

const ticketResource = defineResource({
  name: 'ticket',
  table: ticket,
  description: 'Support tickets.',
  verbs: ['GET'],
  orderable: ['priority'],
  filterable: ['subject', 'priority', 'state'],
});

let t: TestApp;
let org: Organisation;

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, ticketResource] });
  // The migration an operator would generate with drizzle-kit for the new table.
  await t.db.exec(`CREATE TABLE ticket (
    id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
    subject text, priority integer, state text, PRIMARY KEY (organisation_id, id))`);
  org = await createOrganisation(t.db);
  const other = await createOrganisation(t.db);
  await insertRows(t.db, 'ticket', org.id, [
    { subject: 'Printer on fire', priority: 1, state: 'open' },
    { subject: 'Password reset', priority: 3, state: 'closed' },
    { subject: 'Slow laptop', priority: 2, state: 'open' },
  ]);
  await insertRows(t.db, 'ticket', other.id, [{ subject: 'Not yours', priority: 0, state: 'open' }]);
});
afterAll(() => t?.drop());

describe('a resource added through the registry alone', () => {
  it('is listed, filtered and ordered', async () => {
    const res = await t.call('/ticket?state=eq.open&order=priority.desc&select=subject,priority', org.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { subject: 'Slow laptop', priority: 2 },
      { subject: 'Printer on fire', priority: 1 },
    ]);
  });

  it('keeps to the registry: fields that are not filterable or orderable are 400, other verbs 405', async () => {
    expect((await t.call('/ticket?created_at=gt.2020-01-01', org.token)).status).toBe(400);
    const order = await t.call('/ticket?order=subject', org.token);
    expect(order.status).toBe(400);
    expect((await order.json()).code).toBe('UNKNOWN_FIELD');
    const post = await t.call('/ticket', org.token, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('is described in OpenAPI with its fields, filters and order fields', async () => {
    const res = await t.call('/', org.token);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(Object.keys(doc.paths['/ticket'])).toEqual(expect.arrayContaining(['get', 'head']));
    expect(doc.paths['/ticket'].post).toBeUndefined();
    const schema = doc.components.schemas.ticket;
    expect(schema.properties.priority.type).toEqual(['integer', 'null']);
    expect(schema.properties.state.enum).toEqual(expect.arrayContaining(['open', 'closed']));
    expect(JSON.stringify(doc.paths['/ticket'].get.parameters)).toContain('filter.ticket.subject');
    expect(JSON.stringify(doc.components.parameters['order.ticket'])).toContain('priority');
  });

  it('refuses a definition that names a field its table lacks', () => {
    expect(() => createRegistry([{ ...ticketResource, orderable: ['nope'] }])).toThrow(/nope/);
  });
});
