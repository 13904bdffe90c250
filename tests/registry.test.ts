/**
 * Adding a resource means a table and a registry entry, nothing else: the new resource is listed,
 * filtered, ordered, refused on verbs it does not offer, and described in OpenAPI. With custom
 * fields and a collection of the versioned API, it also gets a `*_details` view of its custom
 * fields, keyset pages and batch imports, still from schema/ alone (tables and registry entries
 * here stand for the ones an operator would add to schema/tables.ts and schema/registry.ts). It is
 * `incident`, not docs/adding-a-resource.md's `ticket`, so that following that page breaks nothing here.
 */
import { createRegistry, defineResource } from '@engage/engine';
import {
  boolean,
  date,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry, registryOptions, resources } from '../schema/registry.ts';
import { custom_field } from '../schema/tables.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

// Keyed by (organisation_id, id), its keyset served by an index, imports matched on external_id.
const incident = pgTable(
  'incident',
  {
    id: uuid().notNull().defaultRandom(),
    created_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    updated_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    organisation_id: uuid().notNull(),
    subject: text(),
    priority: integer(),
    state: text({ enum: ['open', 'closed'] }),
    external_id: text(),
  },
  (t) => [
    primaryKey({ columns: [t.organisation_id, t.id] }),
    index('incident_created_at_id_idx').on(t.organisation_id, t.created_at, t.id),
    unique('incident_external_id_key').on(t.organisation_id, t.external_id),
  ],
);

const timestamptz = () => timestamp({ withTimezone: true, mode: 'string' });

/** Its custom-field values, shaped like every value table of schema/tables.ts. */
const incidentValues = pgTable('incident_custom_field', {
  incident_id: uuid().notNull(),
  custom_field_id: uuid().notNull(),
  created_at: timestamptz().notNull().defaultNow(),
  updated_at: timestamptz().notNull().defaultNow(),
  organisation_id: uuid().notNull(),
  key: text(),
  value: text(),
  date_value: date({ mode: 'string' }),
  string_value: text(),
  number_value: numeric(),
  boolean_value: boolean(),
  datetime_value: timestamptz(),
  string_list_value: text().array(),
});
const incidentFields = {
  entity: 'incident',
  values: incidentValues,
  parentKey: 'incident_id',
  definitions: custom_field,
};

const incidentResource = defineResource({
  name: 'incident',
  table: incident,
  description: 'Incidents reported.',
  verbs: ['GET'],
  orderable: ['priority'],
  filterable: ['subject', 'priority', 'state'],
  collection: 'incidents',
  keyset: ['created_at', 'id'],
  imports: { key: ['external_id'], customFields: incidentFields },
});

const incidentDetails = defineResource({
  name: 'incident_details',
  table: incident,
  description: 'Incidents with their custom fields.',
  verbs: ['GET', 'PATCH'],
  customFields: incidentFields,
});

let t: TestApp;
let org: Organisation;

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, incidentResource, incidentDetails] });
  // The migration an operator would generate with drizzle-kit for the new table.
  await t.db.exec(`CREATE TABLE incident (
    id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
    subject text, priority integer, state text, external_id text, PRIMARY KEY (organisation_id, id),
    UNIQUE (organisation_id, external_id));
    CREATE INDEX incident_created_at_id_idx ON incident (organisation_id, created_at, id);
    CREATE TABLE incident_custom_field (
      incident_id uuid NOT NULL, custom_field_id uuid NOT NULL, created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL, key text, value text,
      date_value date, string_value text, number_value numeric, boolean_value boolean, datetime_value timestamptz,
      string_list_value text[], PRIMARY KEY (organisation_id, incident_id, custom_field_id),
      FOREIGN KEY (organisation_id, incident_id) REFERENCES incident (organisation_id, id) ON DELETE CASCADE,
      FOREIGN KEY (organisation_id, custom_field_id) REFERENCES custom_field (organisation_id, id) ON DELETE CASCADE);
    ALTER TABLE custom_field DROP CONSTRAINT custom_field_entity_check;
    ALTER TABLE custom_field ADD CONSTRAINT custom_field_entity_check
      CHECK (entity in ('contact', 'deal', 'appointment', 'incident'));`);
  org = await createOrganisation(t);
  const other = await createOrganisation(t);
  await insertRows(t.db, 'incident', org.id, [
    { subject: 'Printer on fire', priority: 1, state: 'open' },
    { subject: 'Password reset', priority: 3, state: 'closed' },
    { subject: 'Slow laptop', priority: 2, state: 'open' },
  ]);
  await insertRows(t.db, 'incident', other.id, [{ subject: 'Not yours', priority: 0, state: 'open' }]);
});
afterAll(() => t?.drop());

describe('a resource added through the registry alone', () => {
  it('is listed, filtered and ordered', async () => {
    const res = await t.call('/incident?state=eq.open&order=priority.desc&select=subject,priority', org.token);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { subject: 'Slow laptop', priority: 2 },
      { subject: 'Printer on fire', priority: 1 },
    ]);
  });

  it('keeps to the registry: fields that are not filterable or orderable are 400, other verbs 405', async () => {
    expect((await t.call('/incident?created_at=gt.2020-01-01', org.token)).status).toBe(400);
    const order = await t.call('/incident?order=subject', org.token);
    expect(order.status).toBe(400);
    expect((await order.json()).code).toBe('UNKNOWN_FIELD');
    const post = await t.call('/incident', org.token, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
  });

  it('is described in OpenAPI with its fields, filters and order fields', async () => {
    const res = await t.call('/', org.token);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(Object.keys(doc.paths['/incident'])).toEqual(expect.arrayContaining(['get', 'head']));
    expect(doc.paths['/incident'].post).toBeUndefined();
    const schema = doc.components.schemas.incident;
    expect(schema.properties.priority.type).toEqual(['integer', 'null']);
    expect(schema.properties.state.enum).toEqual(expect.arrayContaining(['open', 'closed']));
    expect(JSON.stringify(doc.paths['/incident'].get.parameters)).toContain('filter.incident.subject');
    expect(JSON.stringify(doc.components.parameters['order.incident'])).toContain('priority');
  });

  it('refuses a definition that names a field its table lacks', () => {
    expect(() => createRegistry([{ ...incidentResource, orderable: ['nope'] }], registryOptions)).toThrow(/nope/);
  });

  it('gives its writes events once it names them, and refuses events without subscribers', () => {
    const withEvents = createRegistry([{ ...incidentResource, events: 'incident' }, ...resources], registryOptions);
    // Imports create and update incidents; nothing deletes one.
    expect(withEvents.get('incident')!.events).toMatchObject({ created: 'incident.created', deleted: null });
    expect(withEvents.events!.types).toEqual(expect.arrayContaining(['incident.created', 'incident.updated']));
    expect(withEvents.events!.types).not.toContain('incident.deleted');
    expect(() => createRegistry([{ ...incidentResource, events: 'incident' }], { tenant: 'organisation_id' })).toThrow(
      /no subscribers/,
    );
  });

  it('refuses a field shown once that the database does not generate', () => {
    expect(() => createRegistry([{ ...incidentResource, shownOnce: ['subject'] }], registryOptions)).toThrow(
      /generates/,
    );
  });
});

describe('a resource with custom fields and keyset pages, added in the registry alone', () => {
  const v1 = (path: string, token: string, init: RequestInit = {}) =>
    t.app.request(`/v1${path}`, { ...init, headers: { Authorization: `Bearer ${token}`, ...init.headers } });

  it('walks its collection in keyset pages, its organisation only', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 5; page++) {
      const res = await v1(`/incidents?limit=2${cursor ? `&cursor=${cursor}` : ''}`, org.token);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: Array<{ subject: string }>; next_cursor: string | null };
      expect(body.data.length).toBeLessThanOrEqual(2);
      seen.push(...body.data.map((r) => r.subject));
      cursor = body.next_cursor;
      if (cursor === null) break;
    }
    expect(seen.sort()).toEqual(['Password reset', 'Printer on fire', 'Slow laptop']);
    expect((await v1('/incidents?cursor=bm90IG91cnM', org.token)).status).toBe(400);
  });

  it('shows, writes and imports its custom fields', async () => {
    await insertRows(t.db, 'custom_field', org.id, [{ key: 'sla_hours', type: 'number', entity: 'incident' }]);
    const [incidentId] = await insertRows(t.db, 'incident', org.id, [
      { subject: 'VPN down', priority: 1, state: 'open' },
    ]);

    const patch = await t.call(`/incident_details?id=eq.${incidentId}`, org.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: '{"state":"closed","sla_hours":4}',
    });
    expect(patch.status).toBe(204);
    // Custom fields come with every field (`*`), as on appointment_details.
    const shown = await t.call(`/incident_details?id=eq.${incidentId}`, org.token);
    expect(await shown.json()).toEqual([
      expect.objectContaining({ subject: 'VPN down', state: 'closed', sla_hours: 4 }),
    ]);

    const misfit = await t.call(`/incident_details?id=eq.${incidentId}`, org.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: '{"sla_hours":"soon"}',
    });
    expect(misfit.status).toBe(400);
    expect((await misfit.json()).context).toEqual([{ field: 'sla_hours', message: 'must be a number' }]);

    const batch = await v1('/incidents/imports/batch', org.token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        items: [
          { subject: 'Imported', sla_hours: 8 },
          { subject: 'Bad', sla_hours: 'x' },
        ],
      }),
    });
    expect(batch.status).toBe(200);
    const result = (await batch.json()) as { results: Array<{ status: string; id?: string }> };
    expect(result.results.map((r) => r.status)).toEqual(['created', 'failed']);
    const imported = await t.call(`/incident_details?id=eq.${result.results[0]!.id}`, org.token);
    expect(await imported.json()).toEqual([expect.objectContaining({ subject: 'Imported', sla_hours: 8 })]);
  });
});

describe('relations, from the foreign keys of schema/tables.ts', () => {
  const relations = (name: string) =>
    registry
      .get(name)!
      .relations.map(
        (r) => `${r.name}:${r.cardinality}:${r.foreignKey}:${r.parentFields.join(',')}->${r.targetFields.join(',')}`,
      )
      .sort();

  it('reads each foreign key both ways: to one from the referencing resource, to many from the referenced', () => {
    expect(relations('deal')).toEqual(['contact:one:deal_contact_fkey:contact_id->id']);
    expect(relations('contact')).toEqual(
      expect.arrayContaining([
        'appointment:many:appointment_contact_fkey:id->contact_id',
        'appointment_details:many:appointment_contact_fkey:id->contact_id',
        'contact_note:many:contact_note_contact_fkey:id->contact_id',
        'custom_entity:many:custom_entity_contact_fkey:id->contact_id',
        'deal:many:deal_contact_fkey:id->contact_id',
        'deal_details:many:deal_contact_fkey:id->contact_id',
      ]),
    );
    // Exactly the references to contacts, read back: a resource added with one (docs/adding-a-resource.md) too.
    const back = registry.resources.flatMap((r) =>
      r.relations
        .filter((x) => x.cardinality === 'one' && x.target.name === 'contact')
        .map((x) => `${r.name}:many:${x.foreignKey}:${x.targetFields.join(',')}->${x.parentFields.join(',')}`),
    );
    expect(relations('contact')).toEqual(back.sort());
  });

  it('relates through a junction table many to many: appointment_custom_field pairs appointments and fields', () => {
    expect(relations('appointment')).toContain('custom_field:many:appointment_custom_field:id->id');
    expect(relations('custom_field')).toContain('appointment:many:appointment_custom_field:id->id');
  });

  it('leads only to resources that offer GET (appointment_type has none, so nothing embeds it)', () => {
    for (const resource of registry.resources) {
      for (const relation of resource.relations) expect(relation.target.verbs.has('GET')).toBe(true);
    }
    const contactNote = resources.find((r) => r.name === 'contact_note')!;
    const writeOnly = createRegistry(
      resources.map((r) => (r === contactNote ? { ...r, verbs: ['POST'] } : r)),
      registryOptions,
    );
    expect(writeOnly.get('contact')!.relations.map((r) => r.name)).not.toContain('contact_note');
  });

  it('renames or hides a relation by its foreign key, and refuses a name that is no foreign key of it', () => {
    const deal = resources.find((r) => r.name === 'deal')!;
    const rename = (relations: Record<string, string | false>) =>
      createRegistry(
        resources.map((r) => (r === deal ? { ...deal, relations } : r)),
        registryOptions,
      ).get('deal')!.relations;
    expect(rename({ deal_contact_fkey: 'buyer' }).map((r) => r.name)).toEqual(['buyer']);
    expect(rename({ deal_contact_fkey: false })).toEqual([]);
    expect(() => rename({ nope_fkey: 'x' })).toThrow(/nope_fkey/);
  });
});
