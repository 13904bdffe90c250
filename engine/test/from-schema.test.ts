/**
 * From an existing database: a schema made by plain SQL, pulled by `drizzle-kit pull` (a child
 * process, as a team runs it), served through `resourcesFrom` with a few lines: its tables and
 * views, their types, defaults, foreign keys and embeds as the database has them.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../db/port.ts';
import { createEngine, createRegistry, type Engine, resourcesFrom } from '../index.ts';
import { openPglite } from '../pglite.ts';
import { connectPostgres } from '../postgres.ts';
import { request, send } from './requests.ts';

const TABLES = `
  CREATE TABLE author (id integer PRIMARY KEY, name text NOT NULL, mentor_id integer REFERENCES author (id));
  CREATE TABLE book (id serial PRIMARY KEY, title text NOT NULL DEFAULT 'untitled', price numeric(10, 2),
    author_id integer REFERENCES author (id), tags text[] NOT NULL DEFAULT '{}', published timestamp);
  CREATE VIEW cheap_book AS SELECT id, title, price, author_id FROM book WHERE price < 10;
  INSERT INTO author VALUES (1, 'Le Guin', NULL), (2, 'Jemisin', 1);
  INSERT INTO book (title, price, author_id, published) VALUES ('Lathe', 8, 1, '1971-01-01 00:00:00'),
    ('The Fifth Season', 12.5, 2, NULL);
`;

const ENGINE = fileURLToPath(new URL('..', import.meta.url));
/** Inside the package, so that the pulled schema's imports resolve. */
const work = mkdtempSync(join(ENGINE, 'test', '.pulled-'));
let db: Database;
let engine: Engine;
let drop = async () => {};

/** The database made by plain SQL, and its credentials for drizzle-kit. */
async function database(): Promise<{ db: Database; credentials: string }> {
  const server = process.env.DATABASE_URL;
  if (!server) {
    const dir = join(work, 'data');
    const made = await openPglite(dir);
    await made.exec(TABLES);
    await made.close();
    return {
      db: await openPglite(dir),
      credentials: `driver: 'pglite', dbCredentials: { url: ${JSON.stringify(dir)} }`,
    };
  }
  const name = `engine_pull_${process.pid}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = Object.assign(new URL(server), { pathname: `/${name}` }).toString();
  const made = connectPostgres(url, { poolSize: 2 });
  await made.exec(TABLES);
  drop = async () => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end({ timeout: 5 });
  };
  return { db: made, credentials: `dbCredentials: { url: ${JSON.stringify(url)} }` };
}

beforeAll(async () => {
  const made = await database();
  db = made.db;
  writeFileSync(
    join(work, 'drizzle.config.mjs'),
    `export default { dialect: 'postgresql', ${made.credentials}, out: ${JSON.stringify(join(work, 'out'))} };\n`,
  );
  await promisify(execFile)(
    process.execPath,
    [
      join(ENGINE, '..', 'node_modules', 'drizzle-kit', 'bin.cjs'),
      'pull',
      '--config',
      join(work, 'drizzle.config.mjs'),
    ],
    {
      cwd: work,
    },
  );
  const schema = (await import(join(work, 'out', 'schema.ts'))) as Record<string, unknown>;
  const registry = createRegistry(
    resourcesFrom(schema, { verbs: ['GET', 'POST'], views: { cheap_book: { references: { author_id: 'author' } } } }),
  );
  engine = createEngine({ registry, db });
  await engine.install();
}, 120_000);
afterAll(async () => {
  await db?.close();
  await drop();
  rmSync(work, { recursive: true, force: true });
});

it('serves every table and view of the pulled schema, with its embeds', async () => {
  expect(engine.registry.resources.map((r) => r.name).sort()).toEqual(['author', 'book', 'cheap_book']);
  const books = await send(
    engine,
    request('book', 'select=title,price,published,author(name,mentor:mentor_id(name))&order=title'),
  );
  expect(books.body).toEqual([
    { title: 'Lathe', price: 8.0, published: '1971-01-01T00:00:00', author: { name: 'Le Guin', mentor: null } },
    {
      title: 'The Fifth Season',
      price: 12.5,
      published: null,
      author: { name: 'Jemisin', mentor: { name: 'Le Guin' } },
    },
  ]);
  const cheap = await send(engine, request('cheap_book', 'select=title,author(name)'));
  expect(cheap.body).toEqual([{ title: 'Lathe', author: { name: 'Le Guin' } }]);
  const mentees = await send(engine, request('author', 'select=name,mentees:author(name)&id=eq.1'));
  expect(mentees.body).toEqual([{ name: 'Le Guin', mentees: [{ name: 'Jemisin' }] }]);
});

it("writes with the database's own defaults, whatever the pulled schema says of them", async () => {
  const created = await send(
    engine,
    request('book', 'select=title,tags', { body: {}, headers: { prefer: 'return=representation' } }),
  );
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  expect(created.body).toEqual([{ title: 'untitled', tags: [] }]);
});
