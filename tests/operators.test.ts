/**
 * Every operator of the operator table (engine/operators.ts), on every kind of field it applies
 * to, through the whole engine against the database: a filter that holds for the one row selects
 * it, its negation does not, and every kind it does not apply to is a 400 naming what that kind
 * takes. The samples below are keyed by operator and kind, so an operator added to the table
 * without a sample here fails this test until it has one.
 */
import {
  boolean,
  date,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIELD_KINDS, type FieldKind } from '../engine/field-kinds.ts';
import { OPERATORS, OPERATORS_BY_KIND, type Operator, SCALAR_KINDS } from '../engine/operators.ts';
import { defineResource } from '../engine/registry/index.ts';
import { resources } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const sample = pgTable(
  'operator_sample',
  {
    id: uuid().notNull().defaultRandom(),
    created_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    updated_at: timestamp({ withTimezone: true, mode: 'string' }).notNull().defaultNow(),
    organisation_id: uuid().notNull(),
    a_uuid: uuid(),
    a_text: text(),
    a_boolean: boolean(),
    a_integer: integer(),
    a_numeric: numeric(),
    a_date: date({ mode: 'string' }),
    a_timestamptz: timestamp({ withTimezone: true, mode: 'string' }),
    a_text_list: text().array(),
    a_jsonb: jsonb(),
  },
  (t) => [primaryKey({ columns: [t.organisation_id, t.id] })],
);

/** The field of each kind. */
const FIELD: Record<FieldKind, string> = {
  uuid: 'a_uuid',
  text: 'a_text',
  boolean: 'a_boolean',
  integer: 'a_integer',
  numeric: 'a_numeric',
  date: 'a_date',
  timestamptz: 'a_timestamptz',
  'text[]': 'a_text_list',
  jsonb: 'a_jsonb',
};

const ROW = {
  a_uuid: '11111111-1111-4111-8111-111111111111',
  a_text: 'alpha beta',
  a_boolean: true,
  a_integer: 5,
  a_numeric: '2.5',
  a_date: '2026-01-02',
  a_timestamptz: '2026-01-02T03:04:05Z',
  a_text_list: ['a', 'b'],
  a_jsonb: { a: 1, t: ['x'] },
};

/** The value that equals the row's, and one that is greater, for each kind. */
const EQUAL: Record<FieldKind, string> = {
  uuid: ROW.a_uuid,
  text: ROW.a_text,
  boolean: 'true',
  integer: '5',
  numeric: '2.5',
  date: '2026-01-02',
  timestamptz: '2026-01-02T03:04:05Z',
  'text[]': '{a,b}',
  jsonb: '{"a":1,"t":["x"]}',
};
const LOWER: Record<FieldKind, string> = {
  uuid: '00000000-0000-4000-8000-000000000000',
  text: 'aaa',
  boolean: 'false',
  integer: '4',
  numeric: '2.4',
  date: '2026-01-01',
  timestamptz: '2026-01-02T03:04:04Z',
  'text[]': '{a}',
  jsonb: '{}',
};
const HIGHER: Record<FieldKind, string> = {
  uuid: 'ffffffff-ffff-4fff-bfff-ffffffffffff',
  text: 'zzz',
  boolean: 'true',
  integer: '6',
  numeric: '2.6',
  date: '2026-01-03',
  timestamptz: '2026-01-02T03:04:06Z',
  'text[]': '{b}',
  jsonb: '{"a":1,"t":["x"],"u":2}',
};

/** A value for which `field=<op>.<value>` holds for ROW, by operator and kind. */
function holding(op: Operator, kind: FieldKind): string {
  const byOperator: Partial<Record<Operator, string>> = {
    eq: EQUAL[kind],
    neq: LOWER[kind],
    gt: LOWER[kind],
    gte: EQUAL[kind],
    lt: HIGHER[kind],
    lte: EQUAL[kind],
    isdistinct: LOWER[kind],
    in: `(${EQUAL[kind]},${LOWER[kind]})`,
    is: kind === 'boolean' ? 'true' : 'not_null',
    like: 'alpha*',
    ilike: 'ALPHA*',
    match: '^alp',
    imatch: '^ALP',
    cs: kind === 'jsonb' ? '{"a":1}' : '{a}',
    cd: kind === 'jsonb' ? '{"a":1,"t":["x"],"z":2}' : '{a,b,c}',
    ov: '{b,z}',
    fts: 'alpha',
    plfts: 'alpha beta',
    phfts: 'alpha beta',
    wfts: 'alpha -gamma',
  };
  const value = byOperator[op];
  if (value === undefined) throw new Error(`no sample value for operator ${op}: add one to tests/operators.test.ts`);
  return value;
}

const resource = defineResource({ name: 'operator_sample', table: sample, verbs: ['GET'] });

let t: TestApp;
let org: Organisation;

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, resource] });
  await t.db.exec(`CREATE TABLE operator_sample (
    id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
    a_uuid uuid, a_text text, a_boolean boolean, a_integer integer, a_numeric numeric, a_date date,
    a_timestamptz timestamptz, a_text_list text[], a_jsonb jsonb, PRIMARY KEY (organisation_id, id))`);
  org = await createOrganisation(t);
  await insertRows(t.db, 'operator_sample', org.id, [ROW]);
});
afterAll(() => t?.drop());

const rows = async (filter: string) => {
  const res = await t.call(`/operator_sample?select=id&${filter}`, org.token);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return (body as unknown[]).length;
};

const applies = (op: Operator, kind: FieldKind) => (OPERATORS[op].kinds as readonly FieldKind[]).includes(kind);
const pairs = (Object.keys(OPERATORS) as Operator[]).flatMap((op) =>
  FIELD_KINDS.filter((kind) => applies(op, kind)).map((kind) => [op, kind] as const),
);

describe('every operator on every kind it applies to', () => {
  it.each(pairs)('%s on %s: holds for the row, and its negation does not', async (op, kind) => {
    // Nothing is below a true boolean: `lt.false` must not hold, and its negation must.
    const holds = !(op === 'lt' && kind === 'boolean');
    const raw = holds ? holding(op, kind) : 'false';
    const value = encodeURIComponent(raw);
    expect(await rows(`${FIELD[kind]}=${op}.${value}`)).toBe(holds ? 1 : 0);
    expect(await rows(`${FIELD[kind]}=not.${op}.${value}`)).toBe(holds ? 0 : 1);
    // And inside a logic tree, where a value ends at "," or ")" unless quoted (a list is written as it is).
    const inTree = op === 'in' ? raw : JSON.stringify(raw);
    expect(await rows(`or=(${FIELD[kind]}.${op}.${encodeURIComponent(inTree)})`)).toBe(holds ? 1 : 0);
  });

  const quantifiable = pairs.filter(
    ([op, kind]) => OPERATORS[op].grammar === 'quantifiable' && SCALAR_KINDS.includes(kind),
  );
  it.each(quantifiable.filter(([op, kind]) => !(op === 'lt' && kind === 'boolean')))(
    '%s(any|all) on %s',
    async (op, kind) => {
      const value = holding(op, kind);
      expect(await rows(`${FIELD[kind]}=${op}(any).${encodeURIComponent(`{"${value}","${value}"}`)}`)).toBe(1);
      expect(await rows(`${FIELD[kind]}=${op}(all).${encodeURIComponent(`{"${value}","${value}"}`)}`)).toBe(1);
    },
  );
});

describe('every operator on a kind it does not apply to', () => {
  const refused = (Object.keys(OPERATORS) as Operator[]).flatMap((op) =>
    FIELD_KINDS.filter((kind) => !applies(op, kind)).map((kind) => [op, kind] as const),
  );
  const nonBoolean = FIELD_KINDS.filter((kind) => kind !== 'boolean').map((kind) => ['is', kind] as const);
  it.each([...refused, ...nonBoolean])('%s on %s is a 400 naming what the field takes', async (op, kind) => {
    const value = op === 'in' ? '(x)' : op === 'is' ? 'true' : 'x';
    const res = await t.call(`/operator_sample?${FIELD[kind]}=${op}.${value}`, org.token);
    const body = await res.json();
    expect(res.status).toBe(400);
    expect(body.code).toBe('INVALID_QUERY');
    expect(body.message).toContain(`a ${kind} field takes ${OPERATORS_BY_KIND[kind].join(', ')}`);
  });
});
