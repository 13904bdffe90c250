/**
 * Views and materialized views as resources: read (and written, where the view is auto-updatable
 * and the definition offers writes), filtered by the tenant like a table, keyed and related by what
 * the definition declares, embedded both ways.
 */
import {
  foreignKey,
  integer,
  numeric,
  pgMaterializedView,
  pgTable,
  pgView,
  primaryKey,
  text,
  uuid,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, defineResource, type Engine } from '../index.ts';
import { installedEngine, type TestDatabase } from './database.ts';
import { request, send } from './requests.ts';

const [A, B] = ['aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'];

const TABLES = `
  CREATE TABLE author (shop_id uuid NOT NULL, id integer NOT NULL, name text NOT NULL, PRIMARY KEY (shop_id, id));
  CREATE TABLE book (shop_id uuid NOT NULL, id integer NOT NULL, title text NOT NULL, author_id integer,
    price numeric, PRIMARY KEY (shop_id, id), FOREIGN KEY (shop_id, author_id) REFERENCES author (shop_id, id));
  CREATE VIEW cheap_book AS SELECT shop_id, id, title, author_id, price FROM book WHERE price < 10;
  INSERT INTO author VALUES ('${A}', 1, 'Le Guin'), ('${A}', 2, 'Jemisin'), ('${B}', 1, 'Borges');
  INSERT INTO book VALUES ('${A}', 1, 'Lathe', 1, 8), ('${A}', 2, 'Dispossessed', 1, 12), ('${A}', 3, 'Broken Earth', 2, 9),
    ('${B}', 1, 'Ficciones', 1, 5);
  CREATE MATERIALIZED VIEW author_stats AS SELECT shop_id, author_id, count(*)::int AS books FROM book
    GROUP BY shop_id, author_id;
`;

const author = pgTable(
  'author',
  { shop_id: uuid().notNull(), id: integer().notNull(), name: text().notNull() },
  (t) => [primaryKey({ columns: [t.shop_id, t.id] })],
);
const book = pgTable(
  'book',
  {
    shop_id: uuid().notNull(),
    id: integer().notNull(),
    title: text().notNull(),
    author_id: integer(),
    price: numeric(),
  },
  (t) => [
    primaryKey({ columns: [t.shop_id, t.id] }),
    foreignKey({ columns: [t.shop_id, t.author_id], foreignColumns: [author.shop_id, author.id] }),
  ],
);
const cheapBook = pgView('cheap_book', {
  shop_id: uuid().notNull(),
  id: integer().notNull(),
  title: text().notNull(),
  author_id: integer(),
  price: numeric(),
}).existing();
const authorStats = pgMaterializedView('author_stats', {
  shop_id: uuid().notNull(),
  author_id: integer(),
  books: integer(),
}).existing();

const resources = [
  defineResource({ name: 'author', table: author, verbs: ['GET'], orderable: ['name'] }),
  defineResource({ name: 'book', table: book, verbs: ['GET'] }),
  defineResource({
    name: 'cheap_book',
    table: cheapBook,
    verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
    key: ['id'],
    references: { author_id: 'author' },
    orderable: ['title'],
  }),
  defineResource({
    name: 'author_stats',
    table: authorStats,
    verbs: ['GET'],
    key: ['author_id'],
    references: { author_id: 'author' },
  }),
];
const registry = createRegistry(resources, { tenant: 'shop_id' });

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  ({ t, engine } = await installedEngine(TABLES, { registry }));
});
afterAll(() => t?.drop());

const get = (resource: string, query: string, tenant = A) => send(engine, request(resource, query), { tenant });

describe('a view', () => {
  it("is read as a table is: filtered by the caller's tenant, with filters and order", async () => {
    const res = await get('cheap_book', 'select=title,price&order=title');
    expect(res.body).toEqual([
      { title: 'Broken Earth', price: 9 },
      { title: 'Lathe', price: 8 },
    ]);
    expect((await get('cheap_book', 'select=title', B)).body).toEqual([{ title: 'Ficciones' }]);
    expect((await get('cheap_book', 'select=title&price=lt.9')).body).toEqual([{ title: 'Lathe' }]);
  });

  it('embeds through the references it declares, both ways', async () => {
    const books = await get('cheap_book', 'select=title,author(name)&order=title');
    expect(books.body).toEqual([
      { title: 'Broken Earth', author: { name: 'Jemisin' } },
      { title: 'Lathe', author: { name: 'Le Guin' } },
    ]);
    const authors = await get('author', 'select=name,cheap_book(title)&order=name');
    expect(authors.body).toEqual([
      { name: 'Jemisin', cheap_book: [{ title: 'Broken Earth' }] },
      { name: 'Le Guin', cheap_book: [{ title: 'Lathe' }] },
    ]);
  });

  it("is written where it is auto-updatable and offers writes, in the caller's tenant", async () => {
    const created = await send(
      engine,
      request('cheap_book', 'select=title,author(name)', {
        body: { id: 9, title: 'Wizard', author_id: 1, price: 7 },
        headers: { prefer: 'return=representation' },
      }),
      { tenant: A },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual([{ title: 'Wizard', author: { name: 'Le Guin' } }]);
    const [row] = await t.db.query('SELECT shop_id::text AS shop FROM book WHERE id = 9');
    expect(row).toEqual({ shop: A });
    const patched = await send(
      engine,
      request('cheap_book', 'id=eq.9&select=price', {
        method: 'PATCH',
        body: { price: 6 },
        headers: { prefer: 'return=representation' },
      }),
      { tenant: A },
    );
    expect(patched.body).toEqual([{ price: 6 }]);
    expect((await send(engine, request('cheap_book', 'id=eq.9', { method: 'DELETE' }), { tenant: B })).status).toBe(
      204,
    );
    expect((await get('cheap_book', 'id=eq.9&select=id')).body).toEqual([{ id: 9 }]);
    expect((await send(engine, request('cheap_book', 'id=eq.9', { method: 'DELETE' }), { tenant: A })).status).toBe(
      204,
    );
    expect(await t.db.query('SELECT id FROM book WHERE id = 9')).toEqual([]);
  });

  it('needs a key, and refers only to resources keyed by one field', () => {
    const keyless = defineResource({ name: 'cheap_book', table: cheapBook, verbs: ['GET'] });
    expect(() => createRegistry([keyless], { tenant: 'shop_id' })).toThrow(
      /cheap_book: view cheap_book has no key; declare the fields that tell its rows apart: key: \['id'\]/,
    );
    const bad = defineResource({
      name: 'cheap_book',
      table: cheapBook,
      verbs: ['GET'],
      key: ['id'],
      references: { title: 'nope' },
    });
    expect(() => createRegistry([bad], { tenant: 'shop_id' })).toThrow(/references.title must name a resource/);
    const tableKey = defineResource({ name: 'book', table: book, verbs: ['GET'], key: ['id'] });
    expect(() => createRegistry([tableKey], { tenant: 'shop_id' })).toThrow(/key and references are a view's/);
  });
});

describe('a materialized view', () => {
  it('is read, with its references', async () => {
    const res = await get('author_stats', 'select=books,author(name)&order=author_id');
    expect(res.body).toEqual([
      { books: 2, author: { name: 'Le Guin' } },
      { books: 1, author: { name: 'Jemisin' } },
    ]);
  });

  it('is read-only', async () => {
    expect((await send(engine, request('author_stats', '', { body: { books: 1 } }), { tenant: A })).status).toBe(405);
    const writable = defineResource({ name: 's', table: authorStats, verbs: ['GET', 'POST'], key: ['author_id'] });
    expect(() => createRegistry([writable], { tenant: 'shop_id' })).toThrow(/a materialized view is read-only/);
  });
});
