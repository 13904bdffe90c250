/**
 * Nested inserts: a POST item names the record a to-one relation points at by its key or another
 * unique set of fields (a deal's contact by its external_id), resolved in the caller's organisation,
 * and creates the records of a to-many relation with it (a board with its pins), all in one
 * statement: a reference to nothing, or a child that fails, writes nothing at all.
 */
import { defineResource } from '@engage/engine';
import { foreignKey, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resources } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const board = pgTable(
  'nest_board',
  {
    organisation_id: uuid().notNull(),
    id: uuid().notNull().defaultRandom(),
    name: text().notNull(),
  },
  (t) => [primaryKey({ columns: [t.organisation_id, t.id] })],
);
const pin = pgTable(
  'nest_pin',
  {
    organisation_id: uuid().notNull(),
    id: uuid().notNull().defaultRandom(),
    board_id: uuid().notNull(),
    label: text().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.organisation_id, t.id] }),
    foreignKey({ columns: [t.organisation_id, t.board_id], foreignColumns: [board.organisation_id, board.id] }),
  ],
);
const NESTED = [
  defineResource({ name: 'nest_board', table: board, verbs: ['GET', 'POST'] }),
  defineResource({ name: 'nest_pin', table: pin, verbs: ['GET', 'POST'], events: undefined }),
];

describe('nested inserts', () => {
  let t: TestApp;
  let org: Organisation;
  let other: Organisation;
  beforeAll(async () => {
    t = await createTestApp({ resources: [...resources, ...NESTED] });
    await t.db.exec(`CREATE TABLE nest_board (organisation_id uuid NOT NULL, id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL, PRIMARY KEY (organisation_id, id));
      CREATE TABLE nest_pin (organisation_id uuid NOT NULL, id uuid NOT NULL DEFAULT gen_random_uuid(),
        board_id uuid NOT NULL, label text NOT NULL CHECK (label <> 'boom'), PRIMARY KEY (organisation_id, id),
        FOREIGN KEY (organisation_id, board_id) REFERENCES nest_board (organisation_id, id));`);
    org = await createOrganisation(t);
    other = await createOrganisation(t);
  });
  afterAll(() => t?.drop());

  const post = (path: string, body: unknown, who = org) =>
    t.call(path, who.token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
      body: JSON.stringify(body),
    });
  const error = async (res: Response) => (await res.json()) as { code: string; message: string; context: unknown };
  const count = async (path: string) => ((await (await t.call(path, org.token)).json()) as unknown[]).length;

  it('a deal names its contact by external_id or id, in the caller’s organisation', async () => {
    const [contact] = await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada', external_id: 'nest-ada' }]);
    await insertRows(t.db, 'contact', other.id, [{ display_name: 'Theirs', external_id: 'nest-theirs' }]);
    const res = await post('/deal?select=name,contact_id', [
      { name: 'By external id', contact: { external_id: 'nest-ada' } },
      { name: 'By id', contact: { id: contact } },
      { name: 'By field', contact_id: contact },
      { name: 'None', contact_id: null },
    ]);
    expect(res.status).toBe(201);
    expect(await res.json()).toEqual([
      { name: 'By external id', contact_id: contact },
      { name: 'By id', contact_id: contact },
      { name: 'By field', contact_id: contact },
      { name: 'None', contact_id: null },
    ]);
  });

  it('a reference to no record of the caller’s is 409 REFERENCE_NOT_FOUND and writes nothing', async () => {
    for (const external_id of ['nest-nobody', 'nest-theirs']) {
      const res = await post('/deal', [{ name: 'Orphan ok' }, { name: 'Orphan', contact: { external_id } }]);
      expect(res.status).toBe(409);
      expect(await error(res)).toMatchObject({ code: 'REFERENCE_NOT_FOUND', context: { relation: 'contact' } });
    }
    expect(await count('/deal?name=like.Orphan*')).toBe(0);
  });

  it('refuses a reference by fields that are not unique, or given beside the foreign key', async () => {
    const [contact] = await insertRows(t.db, 'contact', org.id, [{ display_name: 'Bob' }]);
    const bad = await post('/deal', [
      { name: 'X', contact: { display_name: 'Bob' } },
      { name: 'Y', contact: { id: contact }, contact_id: contact },
      { name: 'Z', contact: 'nest-ada' },
      { name: 'W', contact: { id: 'not-a-uuid' } },
      { name: 'V', contact: { external_id: true } },
    ]);
    expect(bad.status).toBe(400);
    expect((await error(bad)).context).toEqual([
      expect.objectContaining({ item: 0, field: 'contact', message: expect.stringContaining('{id} or {external_id}') }),
      expect.objectContaining({ item: 1, field: 'contact' }),
      expect.objectContaining({ item: 2, field: 'contact' }),
      expect.objectContaining({ item: 3, field: 'contact', message: 'id must be a uuid' }),
      expect.objectContaining({ item: 4, field: 'contact', message: 'external_id must be a string' }),
    ]);
  });

  it('a board is created with its pins, each pointing at it', async () => {
    const res = await post('/nest_board?select=id,name', [
      { name: 'Board one', nest_pin: [{ label: 'a' }, { label: 'b' }] },
      { name: 'Board two', nest_pin: [] },
      { name: 'Board three' },
    ]);
    expect(res.status).toBe(201);
    const boards = (await res.json()) as Array<{ id: string; name: string }>;
    expect(boards.map((b) => b.name)).toEqual(['Board one', 'Board two', 'Board three']);
    const pins = (await (await t.call(`/nest_pin?select=board_id,label`, org.token)).json()) as Array<{
      board_id: string;
      label: string;
    }>;
    expect(pins.sort((x, y) => (x.label < y.label ? -1 : 1))).toEqual([
      { board_id: boards[0]!.id, label: 'a' },
      { board_id: boards[0]!.id, label: 'b' },
    ]);
  });

  it('a child that fails leaves no board and no pin; a child naming its parent itself is refused', async () => {
    const boards = await count('/nest_board');
    const failing = await post('/nest_board', { name: 'Doomed', nest_pin: [{ label: 'ok' }, { label: 'boom' }] });
    expect(failing.status).toBe(400);
    const invalid = await post('/nest_board', {
      name: 'Invalid',
      nest_pin: [{ label: 'ok' }, { label: 5 }, { board_id: crypto.randomUUID(), label: 'x' }],
    });
    expect(invalid.status).toBe(400);
    expect((await error(invalid)).context).toEqual([
      expect.objectContaining({ field: 'nest_pin.1.label' }),
      expect.objectContaining({ field: 'nest_pin.2.board_id' }),
    ]);
    expect(await count('/nest_board')).toBe(boards);
    expect(await count('/nest_pin?label=eq.ok')).toBe(0);
    const upsert = await t.call('/nest_board', org.token, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'resolution=merge-duplicates' },
      body: JSON.stringify({ name: 'Upserted', nest_pin: [{ label: 'u' }] }),
    });
    expect(upsert.status).toBe(400);
  });

  it('OpenAPI describes references and children in the create body', async () => {
    const doc = (await (await t.call('/', org.token)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, { oneOf?: unknown[]; items?: unknown }> }> };
    };
    expect(doc.components.schemas['deal.create']!.properties.contact!.oneOf).toHaveLength(2);
    expect(doc.components.schemas['nest_board.create']!.properties.nest_pin!.items).toEqual({
      $ref: '#/components/schemas/nest_pin.create',
    });
  });
});
