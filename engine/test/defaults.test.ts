/**
 * The database's defaults and names, on a bookshop made by plain SQL whose drizzle schema declares
 * less than the database has (no defaults, foreign keys without names): `Prefer: missing=default`
 * writes the database's own default whatever it is; items of a bulk insert give the same keys
 * unless `columns=` says which; generated columns are never written; relations answer to the
 * foreign key's name as PostgreSQL made it.
 */
import { sql } from 'drizzle-orm';
import { integer, numeric, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine, createRegistry, defineResource, type Engine } from '../index.ts';
import { type TestDatabase, testDatabase } from './database.ts';
import { request, send } from './requests.ts';

const TABLES = `
  CREATE TABLE genre (code text PRIMARY KEY, label text NOT NULL);
  CREATE TABLE book (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    isbn uuid NOT NULL DEFAULT gen_random_uuid(),
    title text NOT NULL DEFAULT 'untitled',
    tags text[] NOT NULL DEFAULT '{}',
    price numeric(10, 2),
    price_with_vat numeric GENERATED ALWAYS AS (price * 1.081) STORED,
    genre_code text REFERENCES genre (code),
    added_at timestamptz NOT NULL DEFAULT now(),
    copies integer NOT NULL DEFAULT 1
  );
  INSERT INTO genre VALUES ('sf', 'Science fiction'), ('crime', 'Crime');
`;

const genre = pgTable('genre', { code: text().primaryKey(), label: text().notNull() });
// As a hand-written schema often is: the defaults left to the database, the foreign key unnamed.
const book = pgTable('book', {
  id: integer().primaryKey().generatedAlwaysAsIdentity(),
  isbn: uuid().notNull(),
  title: text().notNull(),
  tags: text().array().notNull(),
  price: numeric({ precision: 10, scale: 2 }),
  price_with_vat: numeric().generatedAlwaysAs(sql`price * 1.081`),
  genre_code: text().references(() => genre.code),
  added_at: timestamp({ withTimezone: true, mode: 'string' }).notNull(),
  copies: integer().notNull(),
});

const registry = (relations?: Record<string, string | false>) =>
  createRegistry([
    defineResource({
      name: 'book',
      table: book,
      verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
      orderable: ['title'],
      relations,
    }),
    defineResource({ name: 'genre', table: genre, verbs: ['GET'] }),
  ]);

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  t = await testDatabase(TABLES);
  engine = createEngine({ registry: registry(), db: t.db });
  await engine.install();
});
afterAll(() => t?.drop());

const post = (body: unknown, query = '', prefer = 'return=representation') =>
  send(engine, request('book', `select=title,tags,copies,genre_code&${query}`, { body, headers: { prefer } }));

describe('defaults', () => {
  it('a field an item leaves out gets the database default, its own or its SQL expression', async () => {
    const res = await post({ price: '12.50' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toEqual([{ title: 'untitled', tags: [], copies: 1, genre_code: null }]);
  });

  it('items of a bulk insert give the same fields: otherwise a 400, and nothing is written', async () => {
    const before = await t.db.query('SELECT count(*)::int AS n FROM book');
    const res = await post([{ title: 'Dune', genre_code: 'sf' }, { title: 'Emma' }]);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.message).toContain('item 1 leaves out "genre_code", which item 0 gives');
    expect(res.body.context).toEqual([{ item: 1, field: 'genre_code', message: 'is missing' }]);
    expect(await t.db.query('SELECT count(*)::int AS n FROM book')).toEqual(before);
  });

  it('with columns=, a key an item leaves out is null, as PostgREST does', async () => {
    const res = await post([{ title: 'Dune', genre_code: 'sf' }, { title: 'Emma' }], 'columns=title,genre_code');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.map((b: { genre_code: string | null }) => b.genre_code)).toEqual(['sf', null]);
    // A NOT NULL field it leaves out is then null too, which the database refuses.
    const refused = await post([{ title: 'Dune', tags: ['x'] }, { title: 'Emma' }], 'columns=title,tags');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED', context: [{ field: 'tags' }] });
  });

  it('with missing=default, each item gets the database default of each field it leaves out', async () => {
    const items = [{ title: 'Dune', tags: ['classic'], copies: 3 }, { tags: ['new'] }, { title: 'Emma' }, {}];
    const { status, headers, body } = await send(
      engine,
      request('book', 'columns=title,tags,copies&select=title,tags,copies,added_at', {
        body: items,
        headers: { prefer: 'return=representation,missing=default' },
      }),
    );
    expect(status, JSON.stringify(body)).toBe(201);
    expect(headers['Preference-Applied']).toContain('missing=default');
    for (const row of body) expect(row.added_at).toMatch(/^\d{4}-/);
    expect(body.map(({ added_at: _, ...rest }: { added_at: string }) => rest)).toEqual(
      expect.arrayContaining([
        { title: 'Dune', tags: ['classic'], copies: 3 },
        { title: 'untitled', tags: ['new'], copies: 1 },
        { title: 'Emma', tags: [], copies: 1 },
        { title: 'untitled', tags: [], copies: 1 },
      ]),
    );
    expect(body).toHaveLength(4);
  });
});

describe('generated columns', () => {
  it('are read, and a body giving one is a 400 naming it', async () => {
    const created = await send(
      engine,
      request('book', 'select=price,price_with_vat', {
        body: { price: 10 },
        headers: { prefer: 'return=representation' },
      }),
    );
    expect(created.body).toEqual([{ price: 10.0, price_with_vat: 10.81 }]);
    for (const body of [{ price_with_vat: 1 }, { id: 99 }]) {
      const refused = await post(body);
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        context: [{ field: Object.keys(body)[0], message: 'is generated by the database: leave it out' }],
      });
    }
  });
});

describe("foreign keys by the database's names", () => {
  it('an embed hint names the foreign key as PostgreSQL named it, or as drizzle does', async () => {
    for (const hint of ['book_genre_code_fkey', 'book_genre_code_genre_code_fk', 'genre_code']) {
      const res = await send(engine, request('book', `select=title,genre!${hint}(label)&genre_code=eq.sf&limit=1`));
      expect(res.status, `${hint}: ${JSON.stringify(res.body)}`).toBe(200);
      expect(res.body).toEqual([{ title: 'Dune', genre: { label: 'Science fiction' } }]);
    }
  });

  it('relations renames a relation by either name', () => {
    const renamed = registry({ book_genre_code_fkey: 'kind' });
    expect(renamed.get('book')!.relations.map((r) => r.name)).toEqual(['kind']);
    expect(() => registry({ book_nope_fkey: 'x' })).toThrow(/book_genre_code_fkey/);
  });
});

describe('a write answers as a read would', () => {
  it('order= orders the rows a write returns', async () => {
    const items = [{ title: 'Beta' }, { title: 'Alpha' }, { title: 'Gamma' }];
    for (const [order, titles] of [
      ['title', ['Alpha', 'Beta', 'Gamma']],
      ['title.desc', ['Gamma', 'Beta', 'Alpha']],
    ] as const) {
      const res = await send(
        engine,
        request('book', `select=title&order=${order}`, { body: items, headers: { prefer: 'return=representation' } }),
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.map((b: { title: string }) => b.title)).toEqual(titles);
    }
  });
});
