/**
 * Shared by tests/relations*.test.ts: two organisations with contacts, deals, appointments and
 * custom-field values, including references that cross organisations (written past the foreign
 * keys), and the helpers that compute a request's expected JSON with hand-written SQL.
 */
import type { Queryable } from '@engage/engine';
import { timestamp, uuid } from 'drizzle-orm/pg-core';
import { expect } from 'vitest';
import {
  createOrganisation,
  ERROR_KEYS,
  insertRows,
  OPTIONAL_ERROR_KEYS,
  type Organisation,
  type TestApp,
} from './app.ts';

const timestamptz = () => timestamp({ withTimezone: true, mode: 'string' });
/** The columns every tenant table has (schema/tables.ts), for the tables a test defines. */
export const tenantColumns = () => ({
  id: uuid().notNull().defaultRandom(),
  created_at: timestamptz().notNull().defaultNow(),
  updated_at: timestamptz().notNull().defaultNow(),
  organisation_id: uuid().notNull(),
});

export interface RelationsFixture {
  readonly org: Organisation;
  readonly other: Organisation;
  /** Org A's contacts by display name: Ada, Bob, Cy, Dee. */
  readonly contact: Readonly<Record<'Ada' | 'Bob' | 'Cy' | 'Dee', string>>;
  /** Org B's contact "Aaron (B)", which org A's deal "Cross" and appointment "CrossAppt" name. */
  readonly theirs: string;
  /** Org A's appointments by name. */
  readonly appointment: Readonly<Record<string, string>>;
}

/** Rows inserted past the foreign keys (and every other trigger), for references that cross organisations. */
export function insertUnchecked(
  db: TestApp['db'],
  table: string,
  organisationId: string,
  rows: Array<Record<string, unknown>>,
): Promise<string[]> {
  return db.transaction(async (tx: Queryable) => {
    await tx.query('SET LOCAL session_replication_role = replica');
    return insertRows(tx, table, organisationId, rows);
  });
}

export async function seedRelations(t: TestApp): Promise<RelationsFixture> {
  const org = await createOrganisation(t);
  const other = await createOrganisation(t);
  const [ada, bob, cy, dee] = await insertRows(t.db, 'contact', org.id, [
    {
      display_name: 'Ada',
      full_name: 'Ada Lovelace',
      email: 'ada@x.test',
      city: 'Zürich',
      number_of_marketing_opt_in_requests: 2,
    },
    { display_name: 'Bob', full_name: 'Bob Builder', email: 'bob@x.test', city: 'Bern' },
    { display_name: 'Cy', full_name: null, email: null, city: 'Zürich' },
    { display_name: 'Dee', full_name: 'Dee Dee', email: 'dee@x.test', city: 'Basel' },
  ]);
  // Org B: "Aaron (B)" sorts before every contact of A; "Impostor (B)" has the same id as A's Ada
  // (the key is (organisation_id, id)), so a join that forgets the organisation finds it.
  const [theirs] = await insertRows(t.db, 'contact', other.id, [
    { display_name: 'Aaron (B)', full_name: 'Aaron Other', email: 'aaron@b.test', city: 'Bern' },
    { id: ada, display_name: 'Impostor (B)', full_name: 'Impostor', email: 'impostor@b.test', city: 'Basel' },
  ]);
  await insertRows(t.db, 'deal', org.id, [
    { name: 'Big', contact_id: ada, value: 1000.5, currency: 'CHF', won_at: '2026-10-01T00:00:00Z' },
    { name: 'Mid', contact_id: ada, value: 500, currency: 'EUR', won_at: '2026-09-01T00:00:00Z' },
    { name: 'Tiny', contact_id: ada, value: 2, currency: 'EUR', lost_at: '2026-08-01T00:00:00Z' },
    { name: 'Small', contact_id: bob, value: 10, currency: 'EUR', lost_at: '2026-10-02T00:00:00Z' },
    { name: 'Zero', contact_id: cy, value: null, currency: null },
    { name: 'Orphan', value: 1, currency: 'CHF' },
  ]);
  // A deal of A naming B's contact: the foreign key refuses it, so it is written past it.
  await insertUnchecked(t.db, 'deal', org.id, [{ name: 'Cross', contact_id: theirs, value: 7, currency: 'CHF' }]);
  // Deals of B naming A's contacts' ids: Sneaky through B's Impostor (a valid key in B), Dangling past the key.
  await insertRows(t.db, 'deal', other.id, [
    { name: 'TheirDeal', contact_id: theirs, value: 999, currency: 'CHF', won_at: '2026-01-01T00:00:00Z' },
    { name: 'Sneaky', contact_id: ada, value: 5000, currency: 'EUR', won_at: '2026-11-01T00:00:00Z' },
  ]);
  await insertUnchecked(t.db, 'deal', other.id, [{ name: 'Dangling', contact_id: bob, value: 3000, currency: 'EUR' }]);

  const names = ['First', 'Second', 'Third', 'Fourth'];
  const ids = await insertRows(t.db, 'appointment', org.id, [
    { name: 'First', contact_id: ada, start_time: '2026-12-01T09:00:00Z' },
    { name: 'Second', contact_id: bob, start_time: '2026-12-02T09:00:00Z' },
    { name: 'Third', start_time: '2026-12-03T09:00:00Z' },
    { name: 'Fourth', contact_id: ada, start_time: '2026-12-04T09:00:00Z' },
  ]);
  const [crossAppt] = await insertUnchecked(t.db, 'appointment', org.id, [
    { name: 'CrossAppt', contact_id: theirs, start_time: '2026-12-05T09:00:00Z' },
  ]);
  await insertRows(t.db, 'appointment', other.id, [
    { name: 'TheirAppt', contact_id: ada, start_time: '2026-12-06T09:00:00Z' },
  ]);
  const appointment = Object.fromEntries([...names.map((n, i) => [n, ids[i]!]), ['CrossAppt', crossAppt!]]);

  const [room, size] = await insertRows(t.db, 'custom_field', org.id, [
    { name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
    { name: 'Size', key: 'size', type: 'number', entity: 'appointment' },
  ]);
  await insertRows(t.db, 'appointment_custom_field', org.id, [
    { appointment_id: appointment.First, custom_field_id: room, key: 'room', string_value: 'A1', value: 'A1' },
    { appointment_id: appointment.First, custom_field_id: size, key: 'size', number_value: 12.5, value: '12.5' },
    { appointment_id: appointment.Fourth, custom_field_id: room, key: 'room', string_value: 'B2', value: 'B2' },
  ]);
  // B's own custom field, with a value naming A's appointment First (past the keys).
  const [theirRoom] = await insertRows(t.db, 'custom_field', other.id, [
    { name: 'Leak', key: 'leak', type: 'string', entity: 'appointment' },
  ]);
  await insertUnchecked(t.db, 'appointment_custom_field', other.id, [
    { appointment_id: appointment.First, custom_field_id: theirRoom, key: 'leak', string_value: 'LEAK', value: 'LEAK' },
  ]);
  return { org, other, contact: { Ada: ada!, Bob: bob!, Cy: cy!, Dee: dee! }, theirs: theirs!, appointment };
}

export interface Answer {
  readonly res: Response;
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: JSON bodies are compared whole.
  readonly body: any;
}

/** A GET (or `init.method`) below /api/v1 with the token; the body parsed when there is one. */
export async function call(
  t: TestApp,
  token: string,
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<Answer> {
  const res = await t.call(path, token, { method, headers });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {}
  return { res, status: res.status, body };
}

/** A 200 answer's body; fails with the body when the status is another. */
export async function ok(t: TestApp, token: string, path: string, headers: Record<string, string> = {}) {
  const answer = await call(t, token, path, headers);
  expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(200);
  return answer.body;
}

/**
 * The rows of a hand-written query as the API would give them: `sql` is a SELECT whose columns are
 * the response's keys (json columns for embeds); its rows, in its order, as one JSON array built by
 * PostgreSQL. `$1` is the organisation's id unless `params` says otherwise.
 */
// biome-ignore lint/suspicious/noExplicitAny: JSON rows.
export async function rowsOf(t: TestApp, sql: string, params: readonly (string | null)[]): Promise<any[]> {
  const [row] = await t.db.query<{ j: string }>(
    `SELECT coalesce(json_agg(x), '[]'::json)::text AS j FROM (${sql}) x`,
    params,
  );
  return JSON.parse(row!.j);
}

/** A value with every array sorted (by its elements' JSON), for results whose request has no order. */
export function unordered(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value.map(unordered).sort((a, b) => {
      const x = JSON.stringify(a);
      const y = JSON.stringify(b);
      return x < y ? -1 : x > y ? 1 : 0;
    });
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unordered(v)]));
  }
  return value;
}

/** Checks an error answer: status, code, the contract's keys; returns the body. */
export function expectError(answer: Answer, status: number, code: string) {
  const { body } = answer;
  expect(answer.status, JSON.stringify(body)).toBe(status);
  expect(answer.res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  for (const key of ERROR_KEYS) expect(body, `body lacks ${key}`).toHaveProperty(key);
  for (const key of Object.keys(body)) {
    expect([...ERROR_KEYS, ...OPTIONAL_ERROR_KEYS], `unexpected key ${key}`).toContain(key);
  }
  expect(body.code).toBe(code);
  expect(body.status_code).toBe(status);
  expect(body.name).toBe('APIError');
  expect(typeof body.message).toBe('string');
  return body;
}
