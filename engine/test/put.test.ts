/**
 * PUT as PostgREST has it: one record named by an eq filter on each key field, created with the
 * body or replaced by it in one upsert; 204, or with the representation 201 (created) or 200.
 */
import { integer, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, defineResource, type Engine } from '../index.ts';
import { installedEngine, type TestDatabase } from './database.ts';
import { request, send } from './requests.ts';

const TABLES = `
  CREATE TABLE shelf (room text, slot integer, label text NOT NULL DEFAULT 'empty', note text,
    PRIMARY KEY (room, slot));
  CREATE TABLE poster (id integer PRIMARY KEY, title text);
`;
const shelf = pgTable(
  'shelf',
  { room: text().notNull(), slot: integer().notNull(), label: text().notNull(), note: text() },
  (t) => [primaryKey({ columns: [t.room, t.slot] })],
);
const poster = pgTable('poster', { id: integer().primaryKey(), title: text() });

const registry = createRegistry([
  defineResource({ name: 'shelf', table: shelf, verbs: ['GET', 'PUT'] }),
  defineResource({ name: 'poster', table: poster, verbs: ['GET', 'POST'] }),
]);

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  ({ t, engine } = await installedEngine(TABLES, { registry }));
});
afterAll(() => t?.drop());

const put = (query: string, body: unknown, prefer?: string) =>
  send(engine, request('shelf', query, { method: 'PUT', body, headers: prefer ? { prefer } : {} }));

describe('PUT', () => {
  it('creates the record the filters name (201 with it), then replaces the fields the body gives (200)', async () => {
    const created = await put(
      'room=eq.a&slot=eq.1&select=room,slot,label,note',
      { label: 'maps' },
      'return=representation',
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual([{ room: 'a', slot: 1, label: 'maps', note: null }]);
    const replaced = await put(
      'room=eq.a&slot=eq.1&select=label,note',
      { label: 'atlases', note: 'top' },
      'return=representation',
    );
    expect(replaced.status).toBe(200);
    expect(replaced.body).toEqual([{ label: 'atlases', note: 'top' }]);
    const minimal = await put('room=eq.a&slot=eq.1', { room: 'a', slot: 1, label: 'globes' });
    expect(minimal.status).toBe(204);
    expect(await t.db.query('SELECT label, note FROM shelf')).toEqual([{ label: 'globes', note: 'top' }]);
  });

  it('needs an eq filter on each key field and nothing else: 405 otherwise, nothing written', async () => {
    for (const query of ['room=eq.b', 'room=eq.b&slot=gt.1', 'room=eq.b&slot=eq.1&label=eq.x', 'or=(room.eq.b)']) {
      const res = await put(query, { label: 'x' });
      expect(res.status, query).toBe(405);
      expect(res.body.message).toContain('give exactly room=eq.<value> and slot=eq.<value>');
    }
    expect((await put('room=eq.b&slot=eq.1&limit=1', { label: 'x' })).status).toBe(400);
    expect(await t.db.query("SELECT * FROM shelf WHERE room = 'b'")).toEqual([]);
  });

  it("refuses a body whose key is not the filters'", async () => {
    const res = await put('room=eq.c&slot=eq.1', { room: 'd', label: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'VALIDATION_FAILED', context: [{ field: 'room' }] });
  });

  it('is a verb a resource offers: 405 with Allow where it does not', async () => {
    const res = await send(engine, request('poster', 'id=eq.1', { method: 'PUT', body: { title: 'x' } }));
    expect(res.status).toBe(405);
    expect(res.headers.Allow).toBe('GET, HEAD, POST, OPTIONS');
  });
});
