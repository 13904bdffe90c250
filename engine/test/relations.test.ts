/**
 * Relations as PostgREST has them on a schema of foreign keys made by plain SQL: a table that
 * refers to itself embeds the rows pointing at it by its own name, and the row it points at by the
 * foreign key's field; an embed several relations fit is PostgREST's 300 with the candidates.
 */
import { foreignKey, integer, pgTable, text } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRegistry, defineResource, type Engine } from '../index.ts';
import { installedEngine, type TestDatabase } from './database.ts';
import { request, send } from './requests.ts';

const TABLES = `
  CREATE TABLE author (id integer PRIMARY KEY, name text NOT NULL, mentor_id integer REFERENCES author (id));
  CREATE TABLE book (id integer PRIMARY KEY, title text NOT NULL,
    author_id integer REFERENCES author (id), editor_id integer REFERENCES author (id));
  INSERT INTO author VALUES (1, 'Le Guin', NULL), (2, 'Jemisin', 1), (3, 'Leckie', 1), (4, 'Okorafor', 2);
  INSERT INTO book VALUES (1, 'The Fifth Season', 2, 1);
`;

const author = pgTable('author', { id: integer().primaryKey(), name: text().notNull(), mentor_id: integer() }, (t) => [
  foreignKey({ columns: [t.mentor_id], foreignColumns: [t.id] }),
]);
const book = pgTable('book', {
  id: integer().primaryKey(),
  title: text().notNull(),
  author_id: integer().references(() => author.id),
  editor_id: integer().references(() => author.id),
});

const registry = createRegistry([
  defineResource({ name: 'author', table: author, verbs: ['GET'], orderable: ['name'] }),
  defineResource({ name: 'book', table: book, verbs: ['GET'] }),
]);

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  ({ t, engine } = await installedEngine(TABLES, { registry }));
});
afterAll(() => t?.drop());

describe('a table that refers to itself', () => {
  it('embeds the rows pointing at each row by its own name, and the row it points at by the field', async () => {
    const res = await send(
      engine,
      request('author', 'select=name,mentor:mentor_id(name),mentees:author(name)&id=in.(1,2)&order=name'),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual([
      { name: 'Jemisin', mentor: { name: 'Le Guin' }, mentees: [{ name: 'Okorafor' }] },
      { name: 'Le Guin', mentor: null, mentees: expect.arrayContaining([{ name: 'Jemisin' }, { name: 'Leckie' }]) },
    ]);
  });
});

describe('an embed several relations fit', () => {
  it("is PostgREST's 300, listing the candidates in details and the forms in the hint", async () => {
    const res = await send(engine, request('book', 'select=title,author(name)'));
    expect(res.status).toBe(300);
    expect(res.body.code).toBe('AMBIGUOUS_RELATION');
    expect(res.body.details).toEqual([
      {
        cardinality: 'many-to-one',
        embedding: 'book with author',
        relationship: 'book_author_id_author_id_fk using book(author_id) and author(id)',
      },
      {
        cardinality: 'many-to-one',
        embedding: 'book with author',
        relationship: 'book_editor_id_author_id_fk using book(editor_id) and author(id)',
      },
    ]);
    expect(res.body.hint).toBe('Say which: author!book_author_id_author_id_fk, author!book_editor_id_author_id_fk.');
    const chosen = await send(engine, request('book', 'select=title,author!book_editor_id_fkey(name)'));
    expect(chosen.body).toEqual([{ title: 'The Fifth Season', author: { name: 'Le Guin' } }]);
  });
});
