/**
 * Database functions as PostgREST's `/rpc/<name>`, through the Hono adapter and postgrest-js's
 * `.rpc()` unchanged: arguments from the query string (GET) or a JSON body (POST), checked and
 * named when wrong; rows of a resource filtered, ordered, counted and paged as a read's, inside the
 * caller's tenant; scalars as their JSON; volatile functions by POST only.
 */
import { PostgrestClient } from '@supabase/postgrest-js';
import { integer, numeric, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engageApp } from '../hono/index.ts';
import { createRegistry, defineFunction, defineResource, type Engine } from '../index.ts';
import { installedEngine, type TestDatabase } from './database.ts';

const [A, B] = ['aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa', 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb'];

const TABLES = `
  CREATE TABLE book (workspace_id uuid NOT NULL, id integer NOT NULL, title text NOT NULL, genre text,
    rating numeric, PRIMARY KEY (workspace_id, id));
  INSERT INTO book VALUES ('${A}', 1, 'Dune', 'sf', 4.5), ('${A}', 2, 'Emma', 'classic', 4.1),
    ('${A}', 3, 'Neuromancer', 'sf', 3.9), ('${B}', 1, 'Solaris', 'sf', 4.8);
  CREATE FUNCTION top_books(min_rating numeric, genre text DEFAULT NULL, p_workspace uuid DEFAULT NULL)
    RETURNS SETOF book LANGUAGE sql STABLE
    AS $$ SELECT * FROM book b WHERE b.workspace_id = p_workspace AND b.rating >= min_rating
          AND (top_books.genre IS NULL OR b.genre = top_books.genre) $$;
  CREATE FUNCTION book_count(p_workspace uuid) RETURNS integer LANGUAGE sql STABLE
    AS $$ SELECT count(*)::int FROM book WHERE workspace_id = p_workspace $$;
  CREATE FUNCTION genres(p_workspace uuid) RETURNS SETOF text LANGUAGE sql STABLE
    AS $$ SELECT DISTINCT genre FROM book WHERE workspace_id = p_workspace ORDER BY 1 $$;
  CREATE FUNCTION add_book(title text, p_workspace uuid) RETURNS book LANGUAGE sql VOLATILE
    AS $$ INSERT INTO book (workspace_id, id, title)
          VALUES (p_workspace, (SELECT coalesce(max(id), 0) + 1 FROM book WHERE workspace_id = p_workspace), title)
          RETURNING * $$;
  CREATE FUNCTION echo(payload jsonb) RETURNS jsonb LANGUAGE sql IMMUTABLE AS $$ SELECT payload $$;
  CREATE FUNCTION touch(p_workspace uuid) RETURNS void LANGUAGE plpgsql VOLATILE AS $$ BEGIN END $$;
`;

const book = pgTable(
  'book',
  {
    workspace_id: uuid().notNull(),
    id: integer().notNull(),
    title: text().notNull(),
    genre: text(),
    rating: numeric(),
  },
  (t) => [primaryKey({ columns: [t.workspace_id, t.id] })],
);

const functions = [
  defineFunction({
    name: 'top_books',
    args: { min_rating: 'numeric', genre: { type: 'text', optional: true } },
    returns: { resource: 'book', set: true },
    volatility: 'stable',
    tenantArg: 'p_workspace',
  }),
  defineFunction({ name: 'book_count', returns: 'integer', volatility: 'stable', tenantArg: 'p_workspace' }),
  defineFunction({
    name: 'genres',
    returns: { type: 'text', set: true },
    volatility: 'stable',
    tenantArg: 'p_workspace',
  }),
  defineFunction({
    name: 'add_book',
    args: { title: 'text' },
    returns: { resource: 'book', set: false },
    tenantArg: 'p_workspace',
  }),
  defineFunction({
    name: 'echo',
    args: { payload: 'jsonb' },
    returns: 'jsonb',
    volatility: 'immutable',
    tenantArg: false,
  }),
  defineFunction({ name: 'touch', returns: 'void', tenantArg: 'p_workspace' }),
];

const registry = createRegistry(
  [defineResource({ name: 'book', table: book, verbs: ['GET'], orderable: ['title', 'rating'] })],
  { tenant: 'workspace_id', functions },
);

let t: TestDatabase;
let engine: Engine;
let app: ReturnType<typeof engageApp>;

beforeAll(async () => {
  ({ t, engine } = await installedEngine(TABLES, { registry }));
  // The workspace is the X-Workspace header's (the host's own auth, as simple as it gets).
  app = engageApp({ engine, scope: (c) => ({ tenant: c.req.header('x-workspace') ?? A }) });
});
afterAll(() => t?.drop());

/** postgrest-js on the app, for a workspace. */
const client = (workspace = A) =>
  new PostgrestClient('http://api.test', {
    headers: { 'X-Workspace': workspace },
    fetch: (input, init) => Promise.resolve(app.request(input instanceof Request ? input.url : String(input), init)),
  });

describe("postgrest-js's .rpc(), unchanged", () => {
  it("calls a function by POST, its rows filtered, selected and ordered, inside the caller's workspace", async () => {
    const { data, error, status } = await client()
      .rpc('top_books', { min_rating: 4 })
      .select('title,rating')
      .order('rating', { ascending: false });
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([
      { title: 'Dune', rating: 4.5 },
      { title: 'Emma', rating: 4.1 },
    ]);
    const sf = await client().rpc('top_books', { min_rating: 3, genre: 'sf' }).select('title').eq('title', 'Dune');
    expect(sf.data).toEqual([{ title: 'Dune' }]);
    expect((await client(B).rpc('top_books', { min_rating: 4 }).select('title')).data).toEqual([{ title: 'Solaris' }]);
  });

  it('with { get: true }, { count: "exact" } and { head: true }', async () => {
    const got = await client().rpc('top_books', { min_rating: 4 }, { get: true, count: 'exact' }).select('title');
    expect(got.error).toBeNull();
    expect(got.count).toBe(2);
    expect((got.data as Array<{ title: string }>).map((b) => b.title).sort()).toEqual(['Dune', 'Emma']);
    const head = await client().rpc('top_books', { min_rating: 4 }, { head: true, count: 'exact' });
    expect(head.status).toBe(200);
    expect(head.count).toBe(2);
    expect(head.data).toBeNull();
  });

  it('a scalar is its JSON value; a set of them an array', async () => {
    expect((await client().rpc('book_count')).data).toBe(3);
    expect((await client().rpc('book_count', {}, { get: true })).data).toBe(3);
    expect((await client().rpc('genres', {}, { get: true })).data).toEqual(['classic', 'sf']);
    expect((await client().rpc('echo', { payload: { a: [1, 'x'] } })).data).toEqual({ a: [1, 'x'] });
  });

  it('a volatile function runs by POST, one row as an object; void is 204', async () => {
    const added = await client().rpc('add_book', { title: 'Kindred' }).select('title');
    expect(added.error).toBeNull();
    expect(added.data).toEqual({ title: 'Kindred' });
    const [row] = await t.db.query("SELECT workspace_id::text AS w FROM book WHERE title = 'Kindred'");
    expect(row).toEqual({ w: A });
    const touched = await client().rpc('touch');
    expect(touched.status).toBe(204);
  });
});

describe('refusals, each naming what to change', () => {
  it('GET on a volatile function is 405 with Allow: POST', async () => {
    const res = await app.request('/rpc/add_book?title=x', { headers: { 'X-Workspace': A } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    expect(await t.db.query("SELECT 1 FROM book WHERE title = 'x'")).toEqual([]);
  });

  it('a missing, unknown or ill-typed argument is a 400 naming it; an unknown function 404', async () => {
    const post = (name: string, body: unknown) =>
      app.request(`/rpc/${name}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
    const missing = await post('top_books', {});
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'VALIDATION_FAILED', context: [{ field: 'min_rating' }] });
    const unknown = await post('top_books', { min_rating: 1, colour: 'red' });
    expect(await unknown.json()).toMatchObject({
      code: 'UNKNOWN_FIELD',
      message: 'top_books has no argument "colour"',
    });
    const wrong = await post('top_books', { min_rating: 'high' });
    expect(await wrong.json()).toMatchObject({ code: 'VALIDATION_FAILED', context: [{ field: 'min_rating' }] });
    const query = await app.request('/rpc/top_books?min_rating=high');
    expect(await query.json()).toMatchObject({ code: 'INVALID_QUERY', context: { field: 'min_rating' } });
    const tenant = await post('top_books', { min_rating: 1, p_workspace: B });
    expect(await tenant.json()).toMatchObject({ code: 'UNKNOWN_FIELD' });
    const none = await app.request('/rpc/nope');
    expect(none.status).toBe(404);
    expect(await none.json()).toMatchObject({ code: 'NOT_FOUND', hint: expect.stringContaining('top_books') });
  });

  it('params=single-object passes the whole body to the one json argument', async () => {
    const res = await app.request('/rpc/echo', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Prefer: 'params=single-object' },
      body: JSON.stringify({ any: 'shape' }),
    });
    expect(await res.json()).toEqual({ any: 'shape' });
  });

  it('the OpenAPI document describes each function', () => {
    const paths = (engine.openapi() as { paths: Record<string, Record<string, unknown>> }).paths;
    expect(Object.keys(paths['/rpc/top_books']!).sort()).toEqual(['get', 'post']);
    expect(Object.keys(paths['/rpc/add_book']!)).toEqual(['post']);
  });

  it('the registry refuses a function of a tenanted registry without its tenant argument', () => {
    expect(() =>
      createRegistry([defineResource({ name: 'book', table: book, verbs: ['GET'] })], {
        tenant: 'workspace_id',
        functions: [defineFunction({ name: 'book_count', returns: 'integer' })],
      }),
    ).toThrow(/function book_count: the registry is tenanted: name the argument/);
  });
});
