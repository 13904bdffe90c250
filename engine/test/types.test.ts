/**
 * Every column type the engine has a record for (field-kinds.ts), and types it has none for, on one
 * table: served without refusal; each value output exactly as PostgreSQL's to_json writes it (by
 * PostgreSQL and by Node); each read from the JSON a PostgREST client sends; a bad value refused
 * with a 400 naming the field, in a body and in a filter; and every operator on every kind it
 * applies to holds for the row, its negation does not, while on a kind it does not apply to it is
 * a 400. Arrays of every kind with equality are made from their element's samples.
 */

import * as pg from 'drizzle-orm/pg-core';
import { customType, type PgColumnBuilderBase, pgEnum, pgTable, serial } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldKind } from '../field-kinds.ts';
import { createEngine, createRegistry, defineResource, type Engine, typescriptTypes } from '../index.ts';
import { OPERATORS, type Operator } from '../operators.ts';
import { AGGREGATE_KINDS } from '../plan/casts.ts';
import { type TestDatabase, testDatabase } from './database.ts';
import { request, send } from './requests.ts';

/** A type of PostgreSQL's as a column holds it, and what a client sends and filters it with. */
interface Sample {
  readonly name: string;
  /** The column's SQL type. */
  readonly sql: string;
  readonly column: () => PgColumnBuilderBase;
  readonly kind: FieldKind;
  /** The row's value as SQL text. */
  readonly literal: string;
  /** The same value as a PostgREST client sends it in a body. */
  readonly input: unknown;
  /** Filter values: equal to the row's, below it and above it (ordered kinds). */
  readonly equal: string;
  readonly lower?: string;
  readonly higher?: string;
  /** Values for which other operators hold. */
  readonly holds?: Partial<Record<Operator, string>>;
  /** A value of the wrong form, in a body and in a filter. */
  readonly badBody: unknown;
  readonly badFilter: string;
}

const range = (name: string) => customType<{ data: string }>({ dataType: () => name });
const mood = pgEnum('mood', ['sad', 'ok', 'happy']);

const SCALARS: readonly Sample[] = [
  {
    name: 'smallint',
    sql: 'smallint',
    column: () => pg.smallint(),
    kind: 'smallint',
    literal: '5',
    input: 5,
    equal: '5',
    lower: '4',
    higher: '6',
    badBody: 40000,
    badFilter: '40000',
  },
  {
    name: 'integer',
    sql: 'integer',
    column: () => pg.integer(),
    kind: 'integer',
    literal: '5',
    input: '5',
    equal: '5',
    lower: '-4',
    higher: '+6',
    badBody: 1.5,
    badFilter: '3000000000',
  },
  {
    name: 'bigint',
    sql: 'bigint',
    column: () => pg.bigint({ mode: 'number' }),
    kind: 'bigint',
    literal: '9007199254740993',
    input: '9007199254740993',
    equal: '9007199254740993',
    lower: '9007199254740992',
    higher: '9007199254740994',
    // A JSON number a double cannot carry exactly: 2^53 + 1 arrives as 2^53.
    badBody: 2 ** 53,
    badFilter: '9223372036854775808',
  },
  {
    name: 'real',
    sql: 'real',
    column: () => pg.real(),
    kind: 'real',
    literal: '1.5',
    input: 1.5,
    equal: '1.5',
    lower: '1.25',
    higher: '1.75',
    badBody: '1e39',
    badFilter: 'one',
  },
  {
    name: 'double',
    sql: 'double precision',
    column: () => pg.doublePrecision(),
    kind: 'double precision',
    literal: '2.5',
    input: '2.5',
    equal: '2.5',
    lower: '2.25',
    higher: '2.75',
    badBody: 'two',
    badFilter: '1e999',
  },
  {
    name: 'numeric',
    sql: 'numeric',
    column: () => pg.numeric(),
    kind: 'numeric',
    literal: '12000.50',
    input: '12000.50',
    equal: '12000.5',
    lower: '12000.49',
    higher: '1.2001e4',
    badBody: 'much',
    badFilter: '1e5000',
  },
  {
    name: 'numeric_10_2',
    sql: 'numeric(10, 2)',
    column: () => pg.numeric({ precision: 10, scale: 2 }),
    kind: 'numeric',
    literal: '1234.56',
    input: 1234.56,
    equal: '1234.56',
    lower: '1234.555',
    higher: '1234.565',
    badBody: 123456789.5,
    badFilter: 'x',
  },
  {
    name: 'varchar',
    sql: 'varchar(20)',
    column: () => pg.varchar({ length: 20 }),
    kind: 'text',
    literal: 'alpha beta',
    input: 'alpha beta',
    equal: 'alpha beta',
    lower: 'alpha',
    higher: 'beta',
    holds: {
      like: 'alpha*',
      ilike: 'ALPHA*',
      match: '^alp',
      imatch: '^ALP',
      fts: 'alpha',
      plfts: 'beta',
      phfts: 'alpha beta',
      wfts: '"alpha beta"',
    },
    badBody: 'x'.repeat(21),
    badFilter: 'a\u0000b',
  },
  {
    name: 'char',
    sql: 'char(4)',
    column: () => pg.char({ length: 4 }),
    kind: 'text',
    literal: 'ab',
    input: 'ab',
    equal: 'ab',
    lower: 'aa',
    higher: 'ac',
    holds: { like: 'ab*', ilike: 'AB*', match: '^ab', imatch: '^AB', fts: 'ab', plfts: 'ab', phfts: 'ab', wfts: 'ab' },
    badBody: 'abcde',
    badFilter: 'a\u0000',
  },
  {
    name: 'text',
    sql: 'text',
    column: () => pg.text(),
    kind: 'text',
    literal: 'alpha beta',
    input: 'alpha beta',
    equal: 'alpha beta',
    lower: 'aaa',
    higher: 'zzz',
    holds: {
      like: 'alpha*',
      ilike: 'ALPHA*',
      match: '^alp',
      imatch: '^ALP',
      fts: 'alpha',
      plfts: 'alpha beta',
      phfts: 'alpha beta',
      wfts: 'alpha -gamma',
    },
    badBody: 5,
    badFilter: 'x\u0000',
  },
  {
    name: 'boolean',
    sql: 'boolean',
    column: () => pg.boolean(),
    kind: 'boolean',
    literal: 'true',
    input: true,
    equal: 'true',
    lower: 'false',
    badBody: 'yes',
    badFilter: 'maybe',
  },
  {
    name: 'date',
    sql: 'date',
    column: () => pg.date(),
    kind: 'date',
    literal: '2026-01-02',
    input: '2026-01-02',
    equal: '2026-01-02',
    lower: '2026-01-01',
    higher: '2026-01-03',
    badBody: '2026-02-30',
    badFilter: 'tomorrow',
  },
  {
    name: 'time',
    sql: 'time',
    column: () => pg.time(),
    kind: 'time',
    literal: '10:30:00',
    input: '10:30',
    equal: '10:30:00',
    lower: '10:29:59.5',
    higher: '10:30:01',
    badBody: '25:00',
    badFilter: 'noon',
  },
  {
    name: 'timetz',
    sql: 'time with time zone',
    column: () => pg.time({ withTimezone: true }),
    kind: 'timetz',
    literal: '10:30:00+02',
    input: '10:30:00+02:00',
    equal: '10:30:00+02:00',
    lower: '10:30:00+03:00',
    higher: '10:30:00+01:00',
    badBody: '10:30 CET',
    badFilter: '10:61',
  },
  {
    name: 'timestamp',
    sql: 'timestamp',
    column: () => pg.timestamp({ mode: 'string' }),
    kind: 'timestamp',
    literal: '2026-01-02 03:04:05',
    input: '2026-01-02T03:04:05',
    equal: '2026-01-02T03:04:05',
    lower: '2026-01-02',
    higher: '2026-01-02 03:04:06',
    badBody: '2026-13-01T00:00:00',
    badFilter: 'now',
  },
  {
    name: 'timestamptz',
    sql: 'timestamptz',
    column: () => pg.timestamp({ withTimezone: true, mode: 'string' }),
    kind: 'timestamptz',
    literal: '2026-01-02T03:04:05Z',
    input: '2026-01-02T04:04:05+01:00',
    // Without an offset, a filter value is read in UTC.
    equal: '2026-01-02T03:04:05',
    lower: '2026-01-02T03:04:04Z',
    higher: '2026-01-02T04:04:06+01:00',
    badBody: '2026-01-02T03:04:05',
    badFilter: '2026-01-02T03:04:05 01:00',
  },
  {
    name: 'interval',
    sql: 'interval',
    column: () => pg.interval(),
    kind: 'interval',
    literal: '1 day 02:00:00',
    input: 'P1DT2H',
    equal: 'P1DT2H',
    lower: '1 day',
    higher: '2 days',
    badBody: 'forever',
    badFilter: 'a while',
  },
  {
    name: 'uuid',
    sql: 'uuid',
    column: () => pg.uuid(),
    kind: 'uuid',
    literal: '11111111-1111-4111-8111-111111111111',
    input: '11111111-1111-4111-8111-111111111111',
    equal: '11111111-1111-4111-8111-111111111111',
    lower: '00000000-0000-4000-8000-000000000000',
    higher: 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF',
    badBody: 'not-a-uuid',
    badFilter: '1234',
  },
  {
    name: 'json',
    sql: 'json',
    column: () => pg.json(),
    kind: 'json',
    literal: '{"b":1,"a":[1,2]}',
    input: { b: 1, a: [1, 2] },
    equal: '{"b":1,"a":[1,2]}',
    badBody: 'a\u0000b',
    badFilter: '{',
  },
  {
    name: 'jsonb',
    sql: 'jsonb',
    column: () => pg.jsonb(),
    kind: 'jsonb',
    literal: '{"a":1,"t":["x"]}',
    input: { a: 1, t: ['x'] },
    equal: '{"t":["x"],"a":1}',
    lower: '{}',
    higher: '{"a":1,"t":["x"],"u":2}',
    holds: { cs: '{"a":1}', cd: '{"a":1,"t":["x"],"z":2}' },
    badBody: { a: '\u0000' },
    badFilter: '{a:1}',
  },
  {
    name: 'bytea',
    sql: 'bytea',
    column: () => customType<{ data: string }>({ dataType: () => 'bytea' })(),
    kind: 'bytea',
    literal: '\\x48656c6c6f',
    input: '\\x48656c6c6f',
    equal: '\\x48656C6C6F',
    lower: '\\x48',
    higher: '\\x49',
    badBody: '\\xZZ',
    badFilter: '\\9',
  },
  {
    name: 'inet',
    sql: 'inet',
    column: () => pg.inet(),
    kind: 'inet',
    literal: '192.168.0.1',
    input: '192.168.0.1',
    equal: '192.168.0.1/32',
    lower: '192.168.0.0',
    higher: '::1',
    badBody: '300.1.1.1',
    badFilter: '192.168.0.1/33',
  },
  {
    name: 'cidr',
    sql: 'cidr',
    column: () => pg.cidr(),
    kind: 'cidr',
    literal: '10.0.0.0/8',
    input: '10/8',
    equal: '10.0.0.0/8',
    lower: '9.0.0.0/8',
    higher: '11.0.0.0/8',
    badBody: '10.0.0.1/8',
    badFilter: 'ten',
  },
  {
    name: 'macaddr',
    sql: 'macaddr',
    column: () => pg.macaddr(),
    kind: 'macaddr',
    literal: '08:00:2b:01:02:03',
    input: '08-00-2b-01-02-03',
    equal: '08002b:010203',
    lower: '08:00:2b:01:02:02',
    higher: '0800.2b01.0204',
    badBody: '08:00:2b',
    badFilter: 'zz:00:2b:01:02:03',
  },
  {
    name: 'macaddr8',
    sql: 'macaddr8',
    column: () => pg.macaddr8(),
    kind: 'macaddr8',
    literal: '08:00:2b:01:02:03:04:05',
    input: '08002b0102030405',
    equal: '08:00:2b:01:02:03:04:05',
    lower: '08:00:2b:01:02:03:04:04',
    higher: '08:00:2b:01:02:03:04:06',
    badBody: '08:00',
    badFilter: 'nope',
  },
  {
    name: 'mood',
    sql: 'mood',
    column: () => mood(),
    kind: 'enum',
    literal: 'ok',
    input: 'ok',
    equal: 'ok',
    lower: 'sad',
    higher: 'happy',
    badBody: 'angry',
    badFilter: 'angry',
  },
  {
    name: 'int4range',
    sql: 'int4range',
    column: () => range('int4range')(),
    kind: 'int4range',
    literal: '[1,10)',
    input: '[1,9]',
    equal: '[1,10)',
    lower: '[0,10)',
    higher: '(1,10)',
    holds: {
      cs: '[2,3)',
      cd: '[0,20)',
      ov: '[5,15)',
      sl: '[20,30)',
      sr: '[-10,0)',
      nxr: '[0,20)',
      nxl: '[0,5)',
      adj: '[10,20)',
    },
    badBody: '[1,',
    badFilter: '[a,b)',
  },
  {
    name: 'int8range',
    sql: 'int8range',
    column: () => range('int8range')(),
    kind: 'int8range',
    literal: '[1,9007199254740993)',
    input: '[1,9007199254740993)',
    equal: '[1,9007199254740993)',
    lower: '[0,1)',
    higher: '[2,3)',
    holds: {
      cs: '[2,3)',
      cd: '(,)',
      ov: '[5,6)',
      sl: '[9007199254740994,)',
      sr: '(,0)',
      nxr: '(,)',
      nxl: '(,)',
      adj: '[9007199254740993,9007199254740999)',
    },
    badBody: '[x,1)',
    badFilter: '(1.5,2)',
  },
  {
    name: 'numrange',
    sql: 'numrange',
    column: () => range('numrange')(),
    kind: 'numrange',
    literal: '[1.5,2.5)',
    input: '[1.5,2.5)',
    equal: '[1.50,2.50)',
    lower: '[1,2)',
    higher: '[2,3)',
    holds: {
      cs: '[2,2.1)',
      cd: '[1,3)',
      ov: '[2,3)',
      sl: '[3,4)',
      sr: '[0,1)',
      nxr: '[0,3)',
      nxl: '[1,2)',
      adj: '[2.5,3)',
    },
    badBody: 'one to two',
    badFilter: '[one,two)',
  },
  {
    name: 'daterange',
    sql: 'daterange',
    column: () => range('daterange')(),
    kind: 'daterange',
    literal: '[2026-01-01,2026-02-01)',
    input: '[2026-01-01,2026-01-31]',
    equal: '[2026-01-01,2026-02-01)',
    lower: '[2025-01-01,2026-02-01)',
    higher: '[2026-01-02,)',
    holds: {
      cs: '[2026-01-10,2026-01-11)',
      cd: '[2025-01-01,2027-01-01)',
      ov: '[2026-01-31,2026-03-01)',
      sl: '[2026-03-01,)',
      sr: '[2025-01-01,2025-02-01)',
      nxr: '(,)',
      nxl: '(,)',
      adj: '[2026-02-01,2026-03-01)',
    },
    badBody: '[2026-02-30,)',
    badFilter: '[2026-01-01,tomorrow)',
  },
  {
    name: 'tsrange',
    sql: 'tsrange',
    column: () => range('tsrange')(),
    kind: 'tsrange',
    literal: '[2026-01-01 00:00:00,2026-01-02 00:00:00)',
    input: '["2026-01-01T00:00:00","2026-01-02T00:00:00")',
    equal: '["2026-01-01 00:00:00","2026-01-02 00:00:00")',
    lower: '[2025-01-01,2026-01-02)',
    higher: '[2026-01-01 00:00:01,)',
    holds: {
      cs: '["2026-01-01 12:00:00","2026-01-01 13:00:00")',
      cd: '(,)',
      ov: '["2026-01-01 23:00:00",)',
      sl: '["2026-01-03 00:00:00",)',
      sr: '(,"2025-12-31 00:00:00")',
      nxr: '(,)',
      nxl: '(,)',
      adj: '["2026-01-02 00:00:00",)',
    },
    badBody: '[2026-01-01 25:00,)',
    badFilter: '[now,)',
  },
  {
    name: 'tstzrange',
    sql: 'tstzrange',
    column: () => range('tstzrange')(),
    kind: 'tstzrange',
    literal: '[2026-01-01 00:00:00+00,2026-01-02 00:00:00+00)',
    input: '["2026-01-01T01:00:00+01:00","2026-01-02T00:00:00Z")',
    equal: '["2026-01-01T00:00:00Z","2026-01-02T00:00:00Z")',
    lower: '[2025-01-01T00:00:00Z,)',
    higher: '[2026-01-01T00:00:01Z,)',
    holds: {
      cs: '["2026-01-01T12:00:00Z","2026-01-01T13:00:00Z")',
      cd: '(,)',
      ov: '["2026-01-01T23:00:00Z",)',
      sl: '["2026-01-03T00:00:00Z",)',
      sr: '(,"2025-12-31T00:00:00Z")',
      nxr: '(,)',
      nxl: '(,)',
      adj: '["2026-01-02T00:00:00Z",)',
    },
    badBody: '[yesterday,)',
    badFilter: '[2026-01-01T00:00:00Z,2026-13-01T00:00:00Z)',
  },
  {
    name: 'money',
    sql: 'money',
    column: () => customType<{ data: string }>({ dataType: () => 'money' })(),
    kind: 'other',
    literal: '12.50',
    input: '12.50',
    equal: '12.5',
    holds: { neq: '1', isdistinct: '1' },
    badBody: 'much',
    badFilter: 'lots',
  },
];

/** A PostgreSQL array literal of `values`, each quoted. */
const literalOf = (values: readonly string[]) =>
  `{${values.map((v) => `"${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join(',')}}`;

/**
 * The array of each scalar sample with equality and an order: its row holds the sample's value
 * twice; filters compare whole arrays, and cs, cd and ov compare elements.
 */
const ARRAYS: readonly Sample[] = SCALARS.filter((s) => s.lower !== undefined && s.kind !== 'enum').map((s) => ({
  name: `${s.name}_list`,
  sql: `${s.sql}[]`,
  column: () => (s.column() as unknown as { array(): PgColumnBuilderBase }).array(),
  kind: `${s.kind}[]` as FieldKind,
  literal: literalOf([s.literal, s.literal]),
  input: [s.input, s.input],
  equal: literalOf([s.equal, s.equal]),
  lower: literalOf([s.lower!]),
  higher: s.higher === undefined ? undefined : literalOf([s.higher]),
  holds: {
    cs: literalOf([s.equal]),
    cd: literalOf([s.lower!, s.equal]),
    ov: literalOf([s.lower!, s.equal]),
  },
  badBody: [s.badBody],
  badFilter: literalOf([s.badFilter]),
}));

const MOOD_LIST: Sample = {
  name: 'mood_list',
  sql: 'mood[]',
  column: () => mood().array(),
  kind: 'enum[]',
  literal: '{sad,ok}',
  input: ['sad', 'ok'],
  equal: '{sad,ok}',
  lower: '{sad}',
  higher: '{happy}',
  holds: { cs: '{ok}', cd: '{sad,ok,happy}', ov: '{ok}' },
  badBody: ['angry'],
  badFilter: '{angry}',
};

const SAMPLES: readonly Sample[] = [...SCALARS, ...ARRAYS, MOOD_LIST];

const column = (s: Sample) => `c_${s.name}`;

const table = pgTable('every_type', {
  id: serial().primaryKey(),
  ...Object.fromEntries(SAMPLES.map((s) => [column(s), s.column()])),
  c_point: pg.point({ mode: 'tuple' }),
});

const TABLES = `
  CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
  CREATE TABLE every_type (id serial PRIMARY KEY, ${SAMPLES.map((s) => `${column(s)} ${s.sql}`).join(', ')},
    c_point point);
`;

const registry = createRegistry([
  defineResource({
    name: 'every_type',
    table,
    verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
    orderable: SAMPLES.map(column),
  }),
]);

let t: TestDatabase;
let engines: Record<'database' | 'node', Engine>;
const engine = () => engines.database;

beforeAll(async () => {
  t = await testDatabase(TABLES);
  engines = {
    database: createEngine({ registry, db: t.db }),
    node: createEngine({ registry, db: t.db, jsonBuiltBy: 'node' }),
  };
  await engine().install();
  const names = [...SAMPLES.map(column), 'c_point'];
  await t.db.query(
    `INSERT INTO every_type (${names.join(', ')})` +
      ` VALUES (${SAMPLES.map((s, i) => `$${i + 1}::text::${s.sql}`).join(', ')}, $${names.length}::text::point)`,
    [...SAMPLES.map((s) => s.literal), '(1,2)'],
  );
});
afterAll(() => t?.drop());

/** The row's to_json, key by key, as PostgreSQL's text. */
async function toJson(id: number): Promise<Record<string, string>> {
  const [row] = await t.db.query<{ pairs: Record<string, string> }>(
    'SELECT json_object_agg(key, value::text) AS pairs FROM every_type e, json_each(to_json(e)) WHERE e.id = $1::int4',
    [String(id)],
  );
  return row!.pairs;
}

/** A JSON object's top-level values as their text, key by key (numbers as written, layout dropped). */
function valueTexts(body: string): Record<string, string> {
  const texts: Record<string, string> = {};
  let i = body.indexOf('{') + 1;
  const skip = () => {
    while (/\s/.test(body[i] ?? '')) i++;
  };
  /** The end of the value (or key) starting at `from`. */
  const valueEnd = (from: number) => {
    let depth = 0;
    let inString = false;
    for (let j = from; j < body.length; j++) {
      const c = body[j]!;
      if (inString) {
        if (c === '\\') j++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') {
        if (depth === 0) return j;
        depth--;
      } else if (c === ',' && depth === 0) return j;
    }
    return body.length;
  };
  for (skip(); body[i] !== '}'; skip()) {
    const keyEnd = body.indexOf(':', i);
    const key = JSON.parse(body.slice(i, keyEnd).trim()) as string;
    i = keyEnd + 1;
    skip();
    const end = valueEnd(i);
    texts[key] = body.slice(i, end).trim();
    i = body[end] === ',' ? end + 1 : end;
  }
  return texts;
}

describe('every type is served, each value as PostgreSQL writes it', () => {
  it('the registry reads every column, with its kind', () => {
    const resource = registry.get('every_type')!;
    for (const s of SAMPLES) expect(resource.field(column(s))?.kind, s.name).toBe(s.kind);
    expect(resource.field('c_point')?.kind).toBe('other');
  });

  it.each(['database', 'node'] as const)('a read gives each value as to_json does (JSON built by %s)', async (by) => {
    const res = await engines[by].handle(
      request('every_type', 'id=eq.1', { headers: { accept: 'application/vnd.pgrst.object+json' } }),
    );
    expect(res.status).toBe(200);
    expect(valueTexts(res.body!)).toEqual(await toJson(1));
  });
});

describe('a body in PostgREST form is read as the SQL literal is', () => {
  let id: number;
  beforeAll(async () => {
    const body = Object.fromEntries(SAMPLES.map((s) => [column(s), s.input]));
    const res = await send(
      engine(),
      request('every_type', '', { body: { ...body, c_point: '(1,2)' }, headers: { prefer: 'return=representation' } }),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    id = res.body[0].id;
  });

  it.each(SAMPLES.map((s) => [s.name, s] as const))('%s', async (_, s) => {
    const [sent, shown] = [await toJson(id), await toJson(1)];
    if (s.kind === 'json') {
      expect(JSON.parse(sent[column(s)]!)).toEqual(JSON.parse(shown[column(s)]!));
    } else {
      expect(sent[column(s)]).toBe(shown[column(s)]);
    }
  });
});

describe('a value of the wrong form is a 400 naming the field', () => {
  it.each(SAMPLES.map((s) => [s.name, s] as const))('%s in a body', async (_, s) => {
    const res = await send(engine(), request('every_type', '', { body: { [column(s)]: s.badBody } }));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.context).toContainEqual(expect.objectContaining({ field: column(s) }));
  });

  it.each(SAMPLES.map((s) => [s.name, s] as const))('%s in a filter', async (_, s) => {
    const op = s.kind === 'json' || s.kind === 'json[]' ? 'cs' : 'eq';
    const filter = `${column(s)}=${op}.${encodeURIComponent(s.badFilter)}`;
    const res = await send(engine(), request('every_type', filter));
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.body.code).toBe('INVALID_QUERY');
    expect(JSON.stringify(res.body)).toContain(column(s));
  });
});

/** A value for which `<op>` holds for the row, or undefined when the sample has none. */
function holding(s: Sample, op: Operator): string | undefined {
  const byOperator: Partial<Record<Operator, string | undefined>> = {
    eq: s.equal,
    neq: s.lower ?? s.higher,
    gt: s.lower,
    gte: s.equal,
    lt: s.higher,
    lte: s.equal,
    isdistinct: s.lower ?? s.higher,
    in:
      s.equal &&
      `(${[s.equal, s.lower]
        .filter(Boolean)
        .map((v) => JSON.stringify(v))
        .join(',')})`,
    is: s.kind === 'boolean' ? 'true' : 'not_null',
    ...s.holds,
  };
  return byOperator[op];
}

describe('every operator on every kind it applies to', () => {
  const pairs = SAMPLES.flatMap((s) =>
    (Object.keys(OPERATORS) as Operator[])
      .filter((op) => (OPERATORS[op].kinds as readonly FieldKind[]).includes(s.kind))
      .map((op) => [op, s.name, s] as const),
  );

  it('each sample has a value for each operator of its kind', () => {
    const missing = pairs.filter(([op, , s]) => holding(s, op) === undefined).map(([op, name]) => `${op} on ${name}`);
    // Ordered kinds without a value above the row (boolean: nothing is above true).
    expect(missing.filter((m) => !/^lt on (boolean)/.test(m))).toEqual([]);
  });

  it.each(pairs.filter(([op, , s]) => holding(s, op) !== undefined))(
    '%s on %s: holds for the rows, and its negation does not',
    async (op, _, s) => {
      const value = encodeURIComponent(holding(s, op)!);
      const count = async (filter: string) => {
        const res = await send(engine(), request('every_type', `select=id&${filter}`));
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body as unknown[]).length;
      };
      const all = await count('');
      expect(await count(`${column(s)}=${op}.${value}`)).toBe(all);
      expect(await count(`${column(s)}=not.${op}.${value}`)).toBe(0);
    },
  );

  const refused = SAMPLES.flatMap((s) =>
    (Object.keys(OPERATORS) as Operator[])
      .filter((op) => op !== 'is' && !(OPERATORS[op].kinds as readonly FieldKind[]).includes(s.kind))
      .map((op) => [op, s.name, s] as const),
  );
  it.each(refused)('%s on %s is a 400 naming what the field takes', async (op, _, s) => {
    const value = op === 'in' ? '(x)' : 'x';
    const res = await send(engine(), request('every_type', `${column(s)}=${op}.${value}`));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('INVALID_QUERY');
    expect(res.body.message).toMatch(/field takes /);
  });
});

describe('order and aggregates, where PostgreSQL has them', () => {
  const aggregates = SAMPLES.flatMap((s) =>
    (Object.keys(AGGREGATE_KINDS) as Array<keyof typeof AGGREGATE_KINDS>).map((fn) => [fn, s.name, s] as const),
  );
  it.each(aggregates)('%s() of %s: as SQL computes it, or a 400 where PostgreSQL has none', async (fn, _, s) => {
    const applies = (AGGREGATE_KINDS[fn] as readonly FieldKind[]).includes(s.kind);
    const res = await engine()
      .handle(
        request('every_type', `select=${column(s)}.${fn}()`, {
          headers: { accept: 'application/vnd.pgrst.object+json' },
        }),
      )
      .catch((error: unknown) => engine().asApiError(error));
    if (!applies) {
      expect(res.status).toBe(400);
      return;
    }
    expect(res.status).toBe(200);
    const [row] = await t.db.query<{ value: string }>(
      `SELECT json_build_object('${fn}', ${fn}(${column(s)}))::text AS value FROM every_type`,
    );
    expect(valueTexts((res as { body: string }).body)).toEqual(valueTexts(row!.value));
  });

  it.each(SAMPLES.map((s) => [s.name, s] as const))('order=%s', async (_, s) => {
    const res = await send(engine(), request('every_type', `select=id&order=${column(s)}.desc`));
    // A type the engine has no record for is ordered as PostgreSQL orders it.
    const ordered = s.lower !== undefined || s.kind === 'other';
    expect(res.status, JSON.stringify(res.body)).toBe(ordered ? 200 : 400);
  });
});

describe('OpenAPI and TypeScript types', () => {
  it('describe every field by its kind', () => {
    const document = engine().openapi() as {
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const properties = document.components.schemas.every_type!.properties;
    expect(properties.c_bigint).toMatchObject({ type: ['integer', 'null'], format: 'int64' });
    expect(properties.c_varchar).toMatchObject({ type: ['string', 'null'], maxLength: 20 });
    expect(properties.c_mood).toMatchObject({ enum: ['sad', 'ok', 'happy', null] });
    expect(properties.c_integer_list).toMatchObject({ type: ['array', 'null'], items: { type: 'integer' } });
    expect(properties.c_tstzrange).toMatchObject({ type: ['string', 'null'] });
    for (const s of SAMPLES) expect(properties[column(s)], s.name).toBeDefined();
    const types = typescriptTypes(registry);
    expect(types).toMatch(/c_bigint: number \| null;/);
    expect(types).toMatch(/c_mood: 'sad' \| 'ok' \| 'happy' \| null;/);
    expect(types).toMatch(/c_mood_list: \('sad' \| 'ok' \| 'happy'\)\[\] \| null;/);
    expect(types).toMatch(/c_money: unknown \| null;/);
    expect(types).toMatch(/c_text_list: string\[\] \| null;/);
  });
});
