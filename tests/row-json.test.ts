/**
 * Where Node builds a read's JSON from its rows (engine/row-json.ts), the body is byte for byte what
 * PostgreSQL's json_agg gives for the same rows: every field kind, with the values whose JSON is
 * least obvious (escapes, numeric and timestamp words, BC dates, micro-seconds, nested JSON).
 */
import type { Engine } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ident } from '../engine/compile/sql.ts';
import { engageEngine } from '../server/engine.ts';
import { insertRows } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

const ORG = '7f0b1d2e-3c4a-4b5c-8d6e-9f0a1b2c3d4e';
const TRICKY_TEXT = [
  '',
  'plain',
  'quote " and \\ backslash',
  'tab\tnew\nline\r\u0001\u001f\u007f',
  'Zürich ☕ 🎉',
  '\u2028\u2029',
  '</script>',
];

describe('JSON built in Node from rows', () => {
  let database: TestDatabase;
  let engine: Engine;
  let byDatabase: Engine;

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.query('INSERT INTO organisation (id, name) VALUES ($1::text::uuid, $2)', [ORG, 'rows']);
    engine = engageEngine(database.db, { jsonBuiltBy: 'node' });
    byDatabase = engageEngine(database.db);
    const timestamps = ['2026-01-01T00:00:00Z', '1999-12-31T23:59:59.999999Z', 'infinity', '-infinity', null];
    const dates = ['2000-02-29', '0044-03-15 BC', 'infinity', null];
    await insertRows(
      database.db,
      'contact',
      ORG,
      TRICKY_TEXT.map((text, i) => ({
        display_name: text,
        city: i % 2 ? null : text,
        is_blocked: i % 3 === 0 ? null : i % 3 === 1,
        number_of_marketing_opt_in_requests: [-2147483648, 2147483647, 0, null][i % 4],
        latest_marketing_opt_in_request_sent_at: timestamps[i % timestamps.length],
        birthday: dates[i % dates.length],
      })),
    );
    const values = ['1.50', '-0.000001', '123456789012345678901234567890.123', 'NaN', 'Infinity', '-Infinity', null];
    await insertRows(
      database.db,
      'deal',
      ORG,
      values.map((value, i) => ({ value, name: TRICKY_TEXT[i] })),
    );
    const data = [{ a: 1, b: [true, null, 'x"y'], c: { ü: 1.5e300 } }, [], 'text', 0, null];
    await insertRows(
      database.db,
      'custom_entity',
      ORG,
      data.map((d) => ({ data: d })),
    );
  });

  afterAll(async () => {
    await database?.drop();
  });

  /** The engine's response to a GET of `resource`. */
  const get = (on: Engine, resource: string, query: string, headers: Record<string, string>) =>
    on.handle(
      { method: 'GET', resource, query, header: (name) => headers[name.toLowerCase()] ?? null, body: null },
      { tenant: ORG },
    );
  const body = async (resource: string, query: string, accept = 'application/json') =>
    (await get(engine, resource, query, { accept })).body as string;

  /** PostgreSQL's JSON of the same rows: json_agg over the resource's fields, by id. */
  async function postgres(resource: string, single = false): Promise<string> {
    const { table, fields } = engine.registry.get(resource)!;
    const list = fields.map((f) => `t.${ident(f.name)}`).join(', ');
    const agg = single ? '(json_agg(t) -> 0)::text' : "coalesce(json_agg(t), '[]')::text";
    const [row] = await database.db.query<{ body: string }>(
      `SELECT ${agg} AS body FROM (SELECT ${list} FROM ${ident(table)} t` +
        ' WHERE t.organisation_id = $1::text::uuid ORDER BY t.id) t',
      [ORG],
    );
    return row!.body;
  }

  for (const resource of ['contact', 'deal', 'custom_entity']) {
    it(`gives ${resource}'s every field kind as PostgreSQL does`, async () => {
      const expected = await postgres(resource);
      expect(expected.length).toBeGreaterThan(100);
      expect(await body(resource, 'order=id')).toBe(expected);
    });
  }

  it('answers as the engine that leaves the JSON to PostgreSQL: status, headers and body', async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ['order=id&limit=3&offset=2', { prefer: 'count=exact' }],
      ['select=id,name,value&value=gt.1&order=value.desc', {}],
      ['select=n:name,v:value&order=id&limit=1', { accept: 'application/vnd.pgrst.object+json' }],
      ['order=id&offset=50', { prefer: 'count=exact' }],
      ['select=id&id=eq.00000000-0000-0000-0000-000000000000', {}],
    ];
    for (const [query, headers] of cases) {
      const [node, database] = await Promise.all([
        get(engine, 'deal', query, headers).catch((error: Error) => error),
        get(byDatabase, 'deal', query, headers).catch((error: Error) => error),
      ]);
      expect(node, query).toEqual(database);
    }
  });

  it('gives one object as PostgreSQL does, and an empty page as []', async () => {
    const [first] = await database.db.query<{ id: string }>(
      'SELECT id::text FROM deal WHERE organisation_id = $1::text::uuid ORDER BY id LIMIT 1',
      [ORG],
    );
    const single = await body('deal', `id=eq.${first!.id}`, 'application/vnd.pgrst.object+json');
    expect(single).toBe(await postgres('deal', true));
    expect(await body('deal', 'name=eq.nothing-has-this')).toBe('[]');
  });
});
