/**
 * Tenant isolation: with organisation A's token, nothing of organisation B or C can be read,
 * counted or detected, whatever the filters, select, order, page or headers say. Organisations
 * share names, external_ids and even primary-key ids (keys are (organisation_id, id)), so a
 * missing scope would show up as an extra row, a wrong count or a foreign custom-field value.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let A: Organisation;
let B: Organisation;
let C: Organisation;

type Row = Record<string, unknown>;

/** One of A's rows as the tests model it: its key (id, or appointment_id for the value table) and its text field. */
interface ModelRow {
  key: string;
  text: string | null;
}

interface ResourceCase {
  /** The text field used in name filters. */
  text: string;
  /** The field that identifies a row (appointment_custom_field has no id). */
  key: 'id' | 'appointment_id';
  /** A's rows, in insertion order. */
  a: ModelRow[];
  /** Keys of B's and C's rows that A does not share. */
  foreignOnly: string[];
  /** A key A and B share (same uuid, different organisation). */
  shared: string;
  /** A key only A has. */
  aOnly: string;
}

const READABLE = [
  'segment',
  'appointment',
  'appointment_details',
  'appointment_custom_field',
  'calendar',
  'deal',
  'contact',
  'campaign',
] as const;
type Readable = (typeof READABLE)[number];
const cases = {} as Record<Readable, ResourceCase>;

/** Every table that holds tenant rows, for the "still intact" checks. */
const TABLES = [
  'organisation',
  'api_token',
  'segment',
  'calendar',
  'contact',
  'appointment',
  'appointment_custom_field',
  'custom_field',
  'deal',
  'campaign',
] as const;
let countsBefore: Record<string, number>;

/** Strings that must never appear in a body A receives: B's and C's organisation ids and B/C-only row ids. */
let foreignMarkers: string[];

const NAMES_A = ['Shared', 'A-one', 'A-two'];
const NAMES_B = ['Shared', 'B secret one', 'B secret two', 'B secret three'];
const NAMES_C = ['Shared', 'C secret one'];

async function tableCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const [row] = await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM "${table}"`);
    counts[table] = Number(row!.n);
  }
  for (const org of [A, B, C]) {
    const [row] = await t.db.query<{ n: string }>(
      'SELECT count(*)::text AS n FROM contact WHERE organisation_id = $1::uuid',
      [org.id],
    );
    counts[`contact:${org.id}`] = Number(row!.n);
  }
  return counts;
}

/**
 * Seeds one organisation. `sameIds` reuses A's first ids (appointment, contact, deal, ... and the
 * "room" custom field) so that only the organisation tells the rows apart.
 */
async function seed(
  org: Organisation,
  names: string[],
  externalIds: (string | null)[],
  sameIds?: Record<string, string>,
) {
  const withId = (resource: string, rows: Row[]) =>
    rows.map((row, i) => (i === 0 && sameIds?.[resource] ? { id: sameIds[resource], ...row } : row));
  const ids: Record<string, string[]> = {};
  ids.segment = await insertRows(
    t.db,
    'segment',
    org.id,
    withId(
      'segment',
      names.map((name, i) => ({ name, is_default: i === 0 })),
    ),
  );
  ids.campaign = await insertRows(
    t.db,
    'campaign',
    org.id,
    withId(
      'campaign',
      names.map((name) => ({ name })),
    ),
  );
  ids.calendar = await insertRows(
    t.db,
    'calendar',
    org.id,
    withId(
      'calendar',
      names.map((name, i) => ({ name, type: 'virtual', external_id: externalIds[i] ?? null })),
    ),
  );
  ids.contact = await insertRows(
    t.db,
    'contact',
    org.id,
    withId(
      'contact',
      names.map((name, i) => ({
        display_name: name,
        full_name: name,
        email: `${name.replace(/ /g, '.')}@example.com`,
        external_id: externalIds[i] ?? null,
      })),
    ),
  );
  ids.appointment = await insertRows(
    t.db,
    'appointment',
    org.id,
    withId(
      'appointment',
      names.map((name, i) => ({
        name,
        external_id: externalIds[i] ?? null,
        contact_id: ids.contact![i],
        start_time: `2026-12-0${i + 1}T09:00:00Z`,
      })),
    ),
  );
  ids.deal = await insertRows(
    t.db,
    'deal',
    org.id,
    withId(
      'deal',
      names.map((name, i) => ({
        name,
        external_id: externalIds[i] ?? null,
        contact_id: ids.contact![i],
        value: 100 + i,
        currency: 'CHF',
      })),
    ),
  );
  return ids;
}

beforeAll(async () => {
  t = await createTestApp();
  A = await createOrganisation(t);
  B = await createOrganisation(t);
  C = await createOrganisation(t);

  const a = await seed(A, NAMES_A, ['ext-shared', 'ext-a1', null]);
  const shareFirst = Object.fromEntries(Object.entries(a).map(([resource, ids]) => [resource, ids[0]!]));
  const b = await seed(B, NAMES_B, ['ext-shared', 'ext-a1', 'ext-b2', null], shareFirst);
  const c = await seed(C, NAMES_C, ['ext-shared', 'ext-c1']);

  // Custom fields: B's "room" has the same id and key as A's; B also has a field of its own.
  const [roomA, sizeA] = await insertRows(t.db, 'custom_field', A.id, [
    { name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
    { name: 'Size', key: 'size', type: 'number', entity: 'appointment' },
  ]);
  const [roomB, secretB] = await insertRows(t.db, 'custom_field', B.id, [
    { id: roomA, name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
    { name: 'B secret field', key: 'b_secret_key', type: 'string', entity: 'appointment' },
  ]);
  const [roomC] = await insertRows(t.db, 'custom_field', C.id, [
    { name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
  ]);
  await insertRows(t.db, 'appointment_custom_field', A.id, [
    { appointment_id: a.appointment![0], custom_field_id: roomA, key: 'room', string_value: 'Shared', value: 'Shared' },
    {
      appointment_id: a.appointment![0],
      custom_field_id: sizeA,
      key: 'size',
      number_value: 12,
      string_value: 'A-one',
      value: '12',
    },
    { appointment_id: a.appointment![1], custom_field_id: roomA, key: 'room', string_value: 'A-two', value: 'A-two' },
  ]);
  // B's first appointment has A's first appointment's id: its values must never join onto A's.
  await insertRows(t.db, 'appointment_custom_field', B.id, [
    {
      appointment_id: b.appointment![0],
      custom_field_id: roomB,
      key: 'room',
      string_value: 'B secret zero',
      value: 'B secret zero',
    },
    {
      appointment_id: b.appointment![0],
      custom_field_id: secretB,
      key: 'b_secret_key',
      string_value: 'Shared',
      value: 'Shared',
    },
    {
      appointment_id: b.appointment![1],
      custom_field_id: roomB,
      key: 'room',
      string_value: 'B secret two',
      value: 'B secret two',
    },
    {
      appointment_id: b.appointment![2],
      custom_field_id: roomB,
      key: 'room',
      string_value: 'B secret three',
      value: 'B secret three',
    },
  ]);
  await insertRows(t.db, 'appointment_custom_field', C.id, [
    { appointment_id: c.appointment![0], custom_field_id: roomC, key: 'room', string_value: 'Shared', value: 'Shared' },
    {
      appointment_id: c.appointment![1],
      custom_field_id: roomC,
      key: 'room',
      string_value: 'C secret one',
      value: 'C secret one',
    },
  ]);

  const plain = (resource: string, text: string): ResourceCase => {
    const own = a[resource]!;
    const foreign = [...b[resource]!, ...c[resource]!].filter((id) => !own.includes(id));
    return {
      text,
      key: 'id',
      a: own.map((key, i) => ({ key, text: NAMES_A[i]! })),
      foreignOnly: foreign,
      shared: own[0]!,
      aOnly: own[2]!,
    };
  };
  cases.segment = plain('segment', 'name');
  cases.campaign = plain('campaign', 'name');
  cases.calendar = plain('calendar', 'name');
  cases.contact = plain('contact', 'display_name');
  cases.appointment = plain('appointment', 'name');
  cases.appointment_details = plain('appointment', 'name');
  cases.deal = plain('deal', 'name');
  const appointmentsForeign = [...b.appointment!, ...c.appointment!].filter((id) => !a.appointment!.includes(id));
  cases.appointment_custom_field = {
    text: 'string_value',
    key: 'appointment_id',
    a: [
      { key: a.appointment![0]!, text: 'Shared' },
      { key: a.appointment![0]!, text: 'A-one' },
      { key: a.appointment![1]!, text: 'A-two' },
    ],
    foreignOnly: appointmentsForeign,
    shared: a.appointment![0]!,
    aOnly: a.appointment![1]!,
  };

  const foreignIds = new Set<string>([B.id, C.id, secretB!, roomC!]);
  for (const resource of Object.keys(a))
    for (const id of [...b[resource]!, ...c[resource]!]) if (!a[resource]!.includes(id)) foreignIds.add(id);
  foreignMarkers = [...foreignIds];
  countsBefore = await tableCounts();
});
afterAll(() => t?.drop());

interface Got {
  res: Response;
  status: number;
  text: string;
  body: unknown;
}

async function get(path: string, headers: Record<string, string> = {}, token = A.token, method = 'GET'): Promise<Got> {
  const res = await t.call(path, token, { method, headers });
  const text = await res.text();
  let body: unknown = null;
  if (text) {
    try {
      body = JSON.parse(text);
    } catch {
      body = text;
    }
  }
  return { res, status: res.status, text, body };
}

/** The contract's error body (docs/contract.md section 5), for a 4xx. */
function expectErrorBody(got: Got, status: number, code?: string) {
  expect(got.status, got.text).toBe(status);
  expect(got.res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = got.body as Row;
  expect(body).toMatchObject({ name: 'APIError', is_transient: false, status_code: status, contact_support: false });
  if (code) expect(body.code).toBe(code);
  expect(typeof body.message).toBe('string');
  expect(typeof body.timestamp).toBe('string');
  expect(new Date(body.timestamp as string).toISOString()).toBe(body.timestamp);
  expect(body.request_id).toBe(got.res.headers.get('request-id'));
  // Never the SQL text or a stack trace.
  expect(got.text).not.toMatch(/\bSELECT\b|\bWHERE\b|organisation_id = \(|at .*\.ts:\d+/);
}

/**
 * Every row is A's: no foreign id or secret anywhere in the body, organisation_id (when present) is A's,
 * keys are A's.
 */
function expectOnlyA(resource: Readable, got: Got): Row[] {
  expect([200, 206], got.text).toContain(got.status);
  expect(Array.isArray(got.body), got.text).toBe(true);
  const rows = got.body as Row[];
  for (const marker of foreignMarkers) expect(got.text).not.toContain(marker);
  expect(got.text.toLowerCase()).not.toContain('secret');
  const c = cases[resource];
  const keys = new Set(c.a.map((r) => r.key));
  for (const row of rows) {
    if ('organisation_id' in row) expect(row.organisation_id).toBe(A.id);
    if (c.key in row) expect(keys.has(row[c.key] as string), `${String(row[c.key])} is not one of A's`).toBe(true);
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Filter forms

interface Attack {
  name: string;
  query: (c: ResourceCase) => string;
  /** How many rows A must get (from A's rows); undefined: either a 400 or only A's rows. */
  expected?: (c: ResourceCase) => number;
}

const none = () => 0;
const all = (c: ResourceCase) => c.a.length;
const withText = (value: string) => (c: ResourceCase) => c.a.filter((r) => r.text === value).length;
const withKey = (key: (c: ResourceCase) => string) => (c: ResourceCase) => c.a.filter((r) => r.key === key(c)).length;
const zero = '00000000-0000-0000-0000-000000000000';

const ATTACKS: Attack[] = [
  { name: 'organisation_id=eq.<B>', query: () => `organisation_id=eq.${B.id}`, expected: none },
  { name: 'organisation_id=eq.<C>', query: () => `organisation_id=eq.${C.id}`, expected: none },
  { name: 'organisation_id=eq.<A> (sanity)', query: () => `organisation_id=eq.${A.id}`, expected: all },
  { name: 'organisation_id=neq.<A>', query: () => `organisation_id=neq.${A.id}`, expected: none },
  { name: 'organisation_id=not.eq.<A>', query: () => `organisation_id=not.eq.${A.id}`, expected: none },
  { name: 'organisation_id=is.null', query: () => 'organisation_id=is.null', expected: none },
  { name: 'organisation_id=not.is.null', query: () => 'organisation_id=not.is.null', expected: all },
  { name: 'organisation_id=is.not_null', query: () => 'organisation_id=is.not_null', expected: all },
  { name: 'organisation_id=isdistinct.<A>', query: () => `organisation_id=isdistinct.${A.id}`, expected: none },
  { name: 'organisation_id=isdistinct.<B>', query: () => `organisation_id=isdistinct.${B.id}`, expected: all },
  { name: 'organisation_id=not.isdistinct.<B>', query: () => `organisation_id=not.isdistinct.${B.id}`, expected: none },
  { name: 'organisation_id=in.(<B>,<C>)', query: () => `organisation_id=in.(${B.id},${C.id})`, expected: none },
  { name: 'organisation_id=not.in.(<A>)', query: () => `organisation_id=not.in.(${A.id})`, expected: none },
  { name: 'organisation_id=not.in.(<B>,<C>)', query: () => `organisation_id=not.in.(${B.id},${C.id})`, expected: all },
  {
    name: 'organisation_id=eq(any).{<B>,<C>}',
    query: () => `organisation_id=eq(any).{${B.id},${C.id}}`,
    expected: none,
  },
  { name: 'organisation_id=gt(any).{zero uuid}', query: () => `organisation_id=gt(any).{${zero}}`, expected: all },
  { name: 'organisation_id=lt.<A>', query: () => `organisation_id=lt.${A.id}`, expected: none },
  { name: 'organisation_id=gt.<A>', query: () => `organisation_id=gt.${A.id}`, expected: none },
  { name: 'organisation_id=gte.<zero uuid>', query: () => `organisation_id=gte.${zero}`, expected: all },
  {
    name: 'organisation_id both ways',
    query: () => `organisation_id=eq.${A.id}&organisation_id=eq.${B.id}`,
    expected: none,
  },
  {
    name: 'or=(org.eq.B,org.eq.C)',
    query: () => `or=(organisation_id.eq.${B.id},organisation_id.eq.${C.id})`,
    expected: none,
  },
  {
    name: 'or=(org.eq.B,org.neq.B) tautology',
    query: () => `or=(organisation_id.eq.${B.id},organisation_id.neq.${B.id})`,
    expected: all,
  },
  {
    name: 'or=(org.is.null,org.not.is.null) tautology',
    query: () => 'or=(organisation_id.is.null,organisation_id.not.is.null)',
    expected: all,
  },
  {
    name: 'or=(text.is.null,text.not.is.null,org.eq.B)',
    query: (c) => `or=(${c.text}.is.null,${c.text}.not.is.null,organisation_id.eq.${B.id})`,
    expected: all,
  },
  {
    name: 'or=(org.eq.B,not.and(org.eq.A))',
    query: () => `or=(and(organisation_id.eq.${B.id}),not.and(organisation_id.eq.${A.id}))`,
    expected: none,
  },
  { name: 'not.and=(org.eq.A)', query: () => `not.and=(organisation_id.eq.${A.id})`, expected: none },
  {
    name: 'not.and=(org.eq.A,text.eq.Shared)',
    query: (c) => `not.and=(organisation_id.eq.${A.id},${c.text}.eq.Shared)`,
    expected: (c) => c.a.length - withText('Shared')(c),
  },
  {
    name: 'not.or=(org.eq.A,org.is.null)',
    query: () => `not.or=(organisation_id.eq.${A.id},organisation_id.is.null)`,
    expected: none,
  },
  { name: 'not.or=(org.eq.B)', query: () => `not.or=(organisation_id.eq.${B.id})`, expected: all },
  {
    name: 'and=(or(org.eq.B,org.eq.A),text.eq.Shared)',
    query: (c) => `and=(or(organisation_id.eq.${B.id},organisation_id.eq.${A.id}),${c.text}.eq.Shared)`,
    expected: withText('Shared'),
  },
  {
    name: 'or=(org.in.(B,C),org.eq(any).{B})',
    query: () => `or=(organisation_id.in.(${B.id},${C.id}),organisation_id.eq(any).{${B.id}})`,
    expected: none,
  },
  { name: 'key=eq.<B-only>', query: (c) => `${c.key}=eq.${c.foreignOnly[0]}`, expected: none },
  { name: 'key=in.(<B/C-only...>)', query: (c) => `${c.key}=in.(${c.foreignOnly.join(',')})`, expected: none },
  {
    name: 'key=in.(<B/C-only...>,<A-only>)',
    query: (c) => `${c.key}=in.(${[...c.foreignOnly, c.aOnly].join(',')})`,
    expected: withKey((c) => c.aOnly),
  },
  {
    name: 'key=eq(any).{<B/C-only...>}',
    query: (c) => `${c.key}=eq(any).{${c.foreignOnly.join(',')}}`,
    expected: none,
  },
  {
    name: 'key=not.in.(<A keys>)',
    query: (c) => `${c.key}=not.in.(${c.a.map((r) => r.key).join(',')})`,
    expected: none,
  },
  {
    name: 'key=neq.<A-only>',
    query: (c) => `${c.key}=neq.${c.aOnly}`,
    expected: (c) => c.a.length - withKey((x) => x.aOnly)(c),
  },
  {
    name: 'or=(key.eq.<B-only>,key.eq.<A-only>)',
    query: (c) => `or=(${c.key}.eq.${c.foreignOnly[0]},${c.key}.eq.${c.aOnly})`,
    expected: withKey((c) => c.aOnly),
  },
  {
    name: 'key=eq.<id shared by A and B>',
    query: (c) => `${c.key}=eq.${c.shared}`,
    expected: withKey((c) => c.shared),
  },
  { name: 'key=isdistinct.<B-only>', query: (c) => `${c.key}=isdistinct.${c.foreignOnly[0]}`, expected: all },
  {
    name: 'text=eq.Shared (name in every organisation)',
    query: (c) => `${c.text}=eq.Shared`,
    expected: withText('Shared'),
  },
  { name: 'text=like.*', query: (c) => `${c.text}=like.*`, expected: (c) => c.a.filter((r) => r.text !== null).length },
  { name: 'text=ilike.*secret*', query: (c) => `${c.text}=ilike.*secret*`, expected: none },
  { name: 'text=match.secret', query: (c) => `${c.text}=match.secret`, expected: none },
  { name: 'text=imatch.SECRET', query: (c) => `${c.text}=imatch.SECRET`, expected: none },
  { name: 'text=like(any).{*secret*,B*}', query: (c) => `${c.text}=like(any).{*secret*,B*}`, expected: none },
  {
    name: 'text=in.(B secret one,B secret two)',
    query: (c) => `${c.text}=in.(B secret one,B secret two,C secret one)`,
    expected: none,
  },
  {
    name: 'text=not.eq.Shared',
    query: (c) => `${c.text}=not.eq.Shared`,
    expected: (c) => c.a.filter((r) => r.text !== null && r.text !== 'Shared').length,
  },
  { name: 'text=fts.secret', query: (c) => `${c.text}=fts.secret`, expected: none },
  { name: 'text=wfts.secret', query: (c) => `${c.text}=wfts(simple).secret`, expected: none },
  { name: 'created_at=gte.1970-01-01', query: () => 'created_at=gte.1970-01-01', expected: all },
  {
    name: 'created_at range + org B',
    query: () => `created_at=lt.2999-01-01&created_at=gt.1970-01-01&organisation_id=eq.${B.id}`,
    expected: none,
  },
  {
    name: 'select with aliases and casts',
    query: (c) => `select=org:organisation_id,k:${c.key}::text,organisation_id::text,${c.text}`,
    expected: all,
  },
  {
    name: 'select cast + org B filter',
    query: (c) => `select=organisation_id::text,${c.text}&organisation_id=eq.${B.id}`,
    expected: none,
  },
  { name: 'select=* with limit/offset past A', query: () => 'limit=10&offset=3', expected: none },
];

describe.each(READABLE)('%s: filters cannot reach other organisations', (resource) => {
  it.each(ATTACKS)('$name', async (attack) => {
    const c = cases[resource];
    const got = await get(`/${resource}?${attack.query(c)}`);
    if (attack.expected === undefined && got.status === 400) {
      expectErrorBody(got, 400);
      return;
    }
    const rows = expectOnlyA(resource, got);
    if (attack.expected) expect(rows).toHaveLength(attack.expected(c));
    // Aliased organisation columns are A's too.
    for (const row of rows) if ('org' in row) expect(row.org).toBe(A.id);
  });

  it('without filters: exactly A rows, and B and C each see only theirs', async () => {
    const c = cases[resource];
    const mine = expectOnlyA(resource, await get(`/${resource}`));
    expect(mine).toHaveLength(c.a.length);
    const theirs = await get(`/${resource}?select=organisation_id`, {}, B.token);
    expect(theirs.status).toBe(200);
    expect((theirs.body as Row[]).length).toBe(resource === 'appointment_custom_field' ? 4 : NAMES_B.length);
    for (const row of theirs.body as Row[]) expect(row.organisation_id).toBe(B.id);
    const others = await get(`/${resource}?select=organisation_id`, {}, C.token);
    expect((others.body as Row[]).length).toBe(NAMES_C.length);
    for (const row of others.body as Row[]) expect(row.organisation_id).toBe(C.id);
  });

  it('a B-only id looks exactly like an id that does not exist', async () => {
    const c = cases[resource];
    const foreign = await get(`/${resource}?${c.key}=eq.${c.foreignOnly[0]}`, { Prefer: 'count=exact' });
    const missing = await get(`/${resource}?${c.key}=eq.${randomUUID()}`, { Prefer: 'count=exact' });
    expect(foreign.status).toBe(200);
    expect(missing.status).toBe(200);
    expect(foreign.text).toBe('[]');
    expect(missing.text).toBe('[]');
    expect(foreign.res.headers.get('content-range')).toBe('*/0');
    expect(missing.res.headers.get('content-range')).toBe('*/0');
  });
});

// ---------------------------------------------------------------------------------------------
// Counts, ranges, HEAD, singular

describe.each(READABLE)('%s: counts and pages are A-only', (resource) => {
  const n = 3; // A's rows in every resource; B has 4, C 2.

  it('Prefer: count=exact counts only A', async () => {
    const got = await get(`/${resource}`, { Prefer: 'count=exact' });
    expectOnlyA(resource, got);
    expect(got.status).toBe(200);
    expect(got.res.headers.get('content-range')).toBe(`0-${n - 1}/${n}`);
  });

  it('count with a filter naming B is */0', async () => {
    const got = await get(`/${resource}?or=(organisation_id.eq.${B.id},organisation_id.neq.${A.id})`, {
      Prefer: 'count=exact',
    });
    expect(got.status).toBe(200);
    expect(got.text).toBe('[]');
    expect(got.res.headers.get('content-range')).toBe('*/0');
  });

  it("count=planned and count=estimated answer A's rows with a well-formed Content-Range", async () => {
    for (const count of ['planned', 'estimated']) {
      const got = await get(`/${resource}?limit=1`, { Prefer: `count=${count}` });
      expectOnlyA(resource, got);
      expect((got.body as Row[]).length).toBe(1);
      const range = got.res.headers.get('content-range');
      expect(range).toMatch(/^0-0\/(\d+|\*)$/);
    }
  });

  it("limit=1 is a 206 of A's total", async () => {
    const got = await get(`/${resource}?limit=1`, { Prefer: 'count=exact' });
    expectOnlyA(resource, got);
    expect(got.status).toBe(206);
    expect(got.res.headers.get('content-range')).toBe(`0-0/${n}`);
  });

  it("416 is decided on A's count: offset 4 (< B's 4 and the 9 of all organisations) is past A's end", async () => {
    const past = await get(`/${resource}?offset=4`, { Prefer: 'count=exact' });
    expectErrorBody(past, 416, 'RANGE_NOT_SATISFIABLE');
    expect(past.res.headers.get('content-range')).toBe(`*/${n}`);
    const end = await get(`/${resource}?offset=3`, { Prefer: 'count=exact' });
    expect(end.status).toBe(206);
    expect(end.text).toBe('[]');
    expect(end.res.headers.get('content-range')).toBe(`*/${n}`);
    const ranged = await get(`/${resource}`, { Prefer: 'count=exact', Range: '4-8', 'Range-Unit': 'items' });
    expectErrorBody(ranged, 416, 'RANGE_NOT_SATISFIABLE');
    expect(ranged.res.headers.get('content-range')).toBe(`*/${n}`);
  });

  it("Range header pages over A's rows only", async () => {
    const got = await get(`/${resource}`, { Range: '1-8', 'Range-Unit': 'items', Prefer: 'count=exact' });
    const rows = expectOnlyA(resource, got);
    expect(rows).toHaveLength(n - 1);
    expect(got.status).toBe(206);
    expect(got.res.headers.get('content-range')).toBe(`1-${n - 1}/${n}`);
    const noCount = await get(`/${resource}?offset=2`, { Range: '0-100' });
    expect(expectOnlyA(resource, noCount)).toHaveLength(1);
    expect(noCount.res.headers.get('content-range')).toBe('2-2/*');
    const beyond = await get(`/${resource}?offset=5`);
    expect(beyond.status).toBe(200);
    expect(beyond.text).toBe('[]');
    expect(beyond.res.headers.get('content-range')).toBe('*/*');
  });

  it("HEAD with count=exact reports A's total and no body", async () => {
    const got = await get(`/${resource}?organisation_id=neq.${B.id}`, { Prefer: 'count=exact' }, A.token, 'HEAD');
    expect(got.status).toBe(200);
    expect(got.text).toBe('');
    expect(got.res.headers.get('content-range')).toBe(`0-${n - 1}/${n}`);
    const foreign = await get(`/${resource}?organisation_id=eq.${B.id}`, { Prefer: 'count=exact' }, A.token, 'HEAD');
    expect(foreign.status).toBe(200);
    expect(foreign.res.headers.get('content-range')).toBe('*/0');
    const past = await get(`/${resource}?offset=4`, { Prefer: 'count=exact' }, A.token, 'HEAD');
    expect(past.status).toBe(416);
  });

  it('singular object on a B-only id is 406, like a missing id', async () => {
    const c = cases[resource];
    const accept = { Accept: 'application/vnd.pgrst.object+json' };
    const foreign = await get(`/${resource}?${c.key}=eq.${c.foreignOnly[0]}`, accept);
    expectErrorBody(foreign, 406, 'NOT_ACCEPTABLE');
    expect(foreign.text.toLowerCase()).not.toContain('secret');
    const missing = await get(`/${resource}?${c.key}=eq.${randomUUID()}`, accept);
    expectErrorBody(missing, 406, 'NOT_ACCEPTABLE');
    expect((foreign.body as Row).message).toBe((missing.body as Row).message);
    expect((foreign.body as Row).context).toEqual((missing.body as Row).context);
    const orB = await get(`/${resource}?organisation_id=eq.${B.id}`, accept);
    expectErrorBody(orB, 406, 'NOT_ACCEPTABLE');
  });

  it("singular object on a name every organisation has is A's single row", async () => {
    const c = cases[resource];
    const got = await get(`/${resource}?${c.text}=eq.Shared`, { Accept: 'application/vnd.pgrst.object+json' });
    expect(got.status, got.text).toBe(200);
    const row = got.body as Row;
    expect(Array.isArray(row)).toBe(false);
    expect(row.organisation_id).toBe(A.id);
    expect(row[c.text]).toBe('Shared');
    for (const marker of foreignMarkers) expect(got.text).not.toContain(marker);
  });

  it("singular object on an id shared with B is A's row (not 406 for two rows)", async () => {
    const c = cases[resource];
    if (c.key !== 'id') return;
    const got = await get(`/${resource}?id=eq.${c.shared}`, { Accept: 'application/vnd.pgrst.object+json' });
    expect(got.status, got.text).toBe(200);
    expect(got.body).toMatchObject({ id: c.shared, organisation_id: A.id, [c.text]: 'Shared' });
  });
});

describe('external_id shared across organisations', () => {
  it.each(['appointment', 'calendar', 'deal', 'contact'] as const)(
    "%s?external_id=eq.ext-a1 is A's row only",
    async (resource) => {
      const got = await get(`/${resource}?external_id=eq.ext-a1`, { Prefer: 'count=exact' });
      const rows = expectOnlyA(resource, got);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.id).toBe(cases[resource].a[1]!.key);
      expect(got.res.headers.get('content-range')).toBe('0-0/1');
      const b2 = await get(`/${resource}?external_id=eq.ext-b2`);
      expect(b2.text).toBe('[]');
      const c1 = await get(`/${resource}?external_id=in.(ext-c1,ext-b2)`);
      expect(c1.text).toBe('[]');
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Custom-field values

describe("appointment_details never carries another organisation's custom-field values", () => {
  it("A's appointment whose id B reuses shows A's values only", async () => {
    const id = cases.appointment.shared;
    const got = await get(`/appointment_details?id=eq.${id}`);
    const rows = expectOnlyA('appointment_details', got);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, organisation_id: A.id, name: 'Shared', room: 'Shared', size: 12 });
    expect(rows[0]).not.toHaveProperty('b_secret_key');
    expect(got.text).not.toContain('B secret zero');
  });

  it("no row of A has a key only B defined, and every value is one of A's", async () => {
    const got = await get('/appointment_details?order=start_time');
    const rows = expectOnlyA('appointment_details', got);
    expect(rows.map((r) => [r.name, r.room ?? null, r.size ?? null])).toEqual([
      ['Shared', 'Shared', 12],
      ['A-one', 'A-two', null],
      ['A-two', null, null],
    ]);
    for (const row of rows) expect(Object.keys(row)).not.toContain('b_secret_key');
  });

  it("B sees its own values on the same appointment id, and not A's size", async () => {
    const got = await get(`/appointment_details?id=eq.${cases.appointment.shared}`, {}, B.token);
    expect(got.status).toBe(200);
    const rows = got.body as Row[];
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ organisation_id: B.id, room: 'B secret zero', b_secret_key: 'Shared' });
    expect(rows[0]).not.toHaveProperty('size');
  });

  it("appointment_custom_field filtered on B's field or B's appointment is empty", async () => {
    const secret = await get('/appointment_custom_field?key=eq.b_secret_key');
    expect(secret.text).toBe('[]');
    const byValue = await get(
      '/appointment_custom_field?string_value=eq.Shared&select=appointment_id,key,organisation_id',
    );
    expect(byValue.body).toEqual([{ appointment_id: cases.appointment.shared, key: 'room', organisation_id: A.id }]);
    const custom = await get(`/appointment_custom_field?custom_field_id=in.(${foreignMarkers.join(',')})`);
    expect(custom.text).toBe('[]');
  });
});

// ---------------------------------------------------------------------------------------------
// Injection-looking input

interface Injection {
  name: string;
  path: () => string;
  headers?: Record<string, string>;
  /**
   * A number: 200 with that many of A's rows is required. 'either': a contract 400 or 200 with
   * only A's rows. Absent: a contract error with one of `statuses` (default 400) is required.
   */
  rows?: number | 'either';
  statuses?: number[];
}

const q = encodeURIComponent;
const INJECTIONS: Injection[] = [
  { name: "name=eq.x' or '1'='1", path: () => `/contact?display_name=eq.${q("x' or '1'='1")}`, rows: 0 },
  { name: 'raw quote, unencoded', path: () => "/contact?display_name=eq.x'%20or%20'1'='1", rows: 0 },
  {
    name: 'value ending the statement',
    path: () => `/contact?display_name=eq.${q("'; DROP TABLE contact; --")}`,
    rows: 0,
  },
  {
    name: 'value with a dollar quote',
    path: () => `/contact?display_name=eq.${q('$$; DROP TABLE contact; $$')}`,
    rows: 0,
  },
  {
    name: 'in list with an escaped quote',
    path: () => `/contact?display_name=in.(${q('"x\\") or 1=1 --"')})`,
    rows: 0,
  },
  { name: 'in list with a raw paren', path: () => `/contact?display_name=in.(${q("x') or ('1'='1")})`, rows: 'either' },
  {
    name: 'or tree with a quoted injection',
    path: () => `/contact?or=(display_name.eq.${q('"x\') or true --"')},display_name.eq.nobody)`,
    rows: 0,
  },
  {
    name: 'or tree smuggling a second tree',
    path: () => `/contact?or=(display_name.eq.x),or(organisation_id.eq.${B.id})`,
    rows: 'either',
  },
  { name: 'tautology written as a field', path: () => '/contact?or=(1.eq.1)' },
  { name: 'tautology: true as a field', path: () => '/contact?or=(true.is.true)' },
  { name: 'select closing the list', path: () => `/contact?select=${q('id,display_name);drop table contact;--')}` },
  { name: 'select with a subquery', path: () => `/contact?select=${q('(select organisation_id from organisation)')}` },
  { name: 'select with a function call', path: () => `/contact?select=${q('pg_sleep(1)')}` },
  { name: 'select cast to a type outside the list', path: () => '/contact?select=id::regclass' },
  { name: 'select cast with injection', path: () => `/contact?select=${q('id::text) from contact;--')}` },
  { name: 'select cast smuggling a second cast', path: () => `/contact?select=${q('id::text::regclass')}` },
  {
    name: 'select alias with a quote',
    path: () => `/contact?select=${q('"x\\" from organisation --":id')}`,
    rows: 'either',
  },
  { name: 'select quoted field name', path: () => `/contact?select=${q('"id\\" or 1=1--"')}` },
  { name: 'select json path on a text field', path: () => `/contact?select=${q("display_name->>'x'")}` },
  { name: 'order=name;delete', path: () => `/contact?order=${q('display_name;delete from contact')}` },
  { name: 'order with a subquery', path: () => `/contact?order=${q('(select 1)')}` },
  {
    name: 'order with a direction injection',
    path: () => `/contact?order=${q('display_name.desc;drop table contact')}`,
  },
  { name: 'order on a non-order field', path: () => '/contact?order=organisation_id' },
  { name: 'quoted key "id\\" or 1=1--"', path: () => `/contact?${q('"id\\" or 1=1--"')}=eq.1` },
  { name: 'key with a space and a comment', path: () => `/contact?${q('id or 1=1 --')}=eq.1` },
  { name: 'key naming the organisation table', path: () => `/contact?${q('organisation.id')}=eq.${A.id}` },
  { name: 'json path on a text field in a filter', path: () => `/contact?${q("display_name->>'a' or 1=1--")}=eq.1` },
  { name: 'json path key injection', path: () => `/contact?${q("display_name->>x')--")}=eq.1` },
  { name: 'uuid filter with SQL', path: () => `/contact?id=eq.${q('1 or 1=1')}` },
  { name: 'uuid in list with SQL', path: () => `/contact?id=in.(${q('1) or (1=1')})` },
  { name: 'organisation_id with SQL', path: () => `/contact?organisation_id=eq.${q(`${B.id}' or '1'='1`)}` },
  { name: 'is with SQL', path: () => `/contact?display_name=is.${q('null or 1=1')}` },
  { name: 'boolean filter with SQL', path: () => `/contact?is_blocked=eq.${q('true or 1=1')}` },
  { name: 'integer filter with SQL', path: () => `/contact?number_of_marketing_opt_in_requests=eq.${q('0 or 1=1')}` },
  { name: 'date filter with SQL', path: () => `/contact?birthday=eq.${q("2000-01-01' or '1'='1")}` },
  { name: 'timestamp filter with SQL', path: () => `/contact?created_at=gt.${q("2000-01-01' or 1=1--")}` },
  {
    name: 'array literal with SQL',
    path: () => `/appointment_custom_field?string_list_value=cs.${q('{x}"} or 1=1 --')}`,
  },
  { name: 'any array with SQL', path: () => `/contact?display_name=eq(any).${q("{x}') or ('1'='1")}` },
  { name: 'regex with SQL', path: () => `/contact?display_name=match.${q("x' or '1'='1")}`, rows: 0 },
  { name: 'invalid regex', path: () => `/contact?display_name=match.${q('(')}` },
  { name: 'fts query with SQL', path: () => `/contact?display_name=fts.${q("x' | '1")}`, rows: 'either' },
  {
    name: 'fts language with SQL',
    path: () => `/contact?display_name=fts(${q("english'); drop table contact; --")}).x`,
  },
  { name: 'fts unknown language', path: () => '/contact?display_name=fts(klingon).x' },
  { name: 'NUL byte in a value', path: () => '/contact?display_name=eq.a%00b', rows: 'either' },
  { name: 'NUL byte in a key', path: () => '/contact?display%00_name=eq.a' },
  { name: 'malformed percent-encoding', path: () => '/contact?display_name=eq.%ZZ' },
  { name: 'limit with SQL', path: () => `/contact?limit=${q('1; drop table contact')}` },
  { name: 'offset with SQL', path: () => `/contact?offset=${q('0 or 1=1')}` },
  { name: 'negative limit', path: () => '/contact?limit=-1', statuses: [400, 416] },
  { name: 'huge limit', path: () => '/contact?limit=999999999999999999999', rows: 'either' },
  {
    name: 'Prefer with SQL (ignored)',
    path: () => '/contact',
    headers: { Prefer: "count=exact'; drop table contact; --" },
    rows: 'either',
  },
  { name: 'Range with SQL', path: () => '/contact', headers: { Range: '0-1; drop table contact' } },
  { name: 'Range-Unit with SQL', path: () => '/contact', headers: { 'Range-Unit': "items'; drop table contact" } },
  {
    name: 'Accept with SQL',
    path: () => '/contact',
    headers: { Accept: "application/json'; drop table contact" },
    statuses: [406],
  },
  {
    name: 'engage-version with SQL',
    path: () => '/contact',
    headers: { 'engage-version': "2026-11-01'; drop table contact" },
  },
  { name: 'resource name with SQL', path: () => `/${q('contact; drop table contact')}`, statuses: [404] },
  { name: 'resource name quoting out', path: () => `/${q('contact" , "organisation')}`, statuses: [404] },
  { name: 'resource that is not exposed', path: () => '/api_token', statuses: [404] },
  { name: 'resource that is not exposed (organisation)', path: () => '/organisation', statuses: [404] },
];

describe('injection-looking input is a contract 4xx or A-only rows, and changes nothing', () => {
  it.each(INJECTIONS)('$name', async (inj) => {
    const path = inj.path();
    const got = await get(path, inj.headers ?? {});
    expect(got.status, `${path} -> ${got.text}`).toBeLessThan(500);
    if (typeof inj.rows === 'number') {
      const resource = (path.slice(1).split('?')[0] ?? '') as Readable;
      expect(expectOnlyA(resource, got)).toHaveLength(inj.rows);
    } else if (inj.rows === 'either' && got.status === 200) {
      const resource = (path.slice(1).split('?')[0] ?? '') as Readable;
      expectOnlyA(resource, got);
    } else {
      const statuses = inj.statuses ?? [400];
      expect(statuses, `${path} -> ${got.status} ${got.text}`).toContain(got.status);
      expectErrorBody(got, got.status);
    }
  });

  it('a Request-Id that is not a sane token is replaced, never echoed', async () => {
    const evil = "x'; drop table contact; --";
    const res = await t.call('/contact?limit=1', A.token, { headers: { 'Request-Id': evil } });
    expect(res.status).toBe(200);
    const id = res.headers.get('request-id');
    expect(id).not.toBe(evil);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('every table is intact afterwards', async () => {
    expect(await tableCounts()).toEqual(countsBefore);
    const own = await get('/contact', { Prefer: 'count=exact' });
    expect(own.res.headers.get('content-range')).toBe('0-2/3');
    const theirs = await get('/contact', { Prefer: 'count=exact' }, B.token);
    expect(theirs.res.headers.get('content-range')).toBe('0-3/4');
  });
});

// ---------------------------------------------------------------------------------------------
// Writes aimed at another organisation

describe('writes aimed at B leave B untouched', () => {
  // `empty`: answered 200 with no rows (the filters matched nothing of A's); `forbidden`: 403.
  const attempts: Array<{
    name: string;
    method: string;
    path: () => string;
    body?: () => unknown;
    outcome: 'empty' | 'forbidden' | 'own';
  }> = [
    {
      name: 'DELETE deal?organisation_id=eq.<B>',
      method: 'DELETE',
      path: () => `/deal?organisation_id=eq.${B.id}`,
      outcome: 'empty',
    },
    {
      name: 'DELETE deal?id=eq.<B-only>',
      method: 'DELETE',
      path: () => `/deal?id=eq.${cases.deal.foreignOnly[0]}`,
      outcome: 'empty',
    },
    {
      name: 'DELETE calendar?or=(tautology)',
      method: 'DELETE',
      path: () => `/calendar?or=(organisation_id.eq.${B.id},organisation_id.neq.${B.id})`,
      outcome: 'own',
    },
    {
      name: 'PATCH deal?id=eq.<B-only>',
      method: 'PATCH',
      path: () => `/deal?id=eq.${cases.deal.foreignOnly[0]}`,
      body: () => ({ name: 'hijacked' }),
      outcome: 'empty',
    },
    {
      name: "PATCH deal moving A's row to B",
      method: 'PATCH',
      path: () => `/deal?id=eq.${cases.deal.aOnly}`,
      body: () => ({ organisation_id: B.id }),
      outcome: 'forbidden',
    },
    {
      name: 'POST calendar for B',
      method: 'POST',
      path: () => '/calendar',
      body: () => ({ organisation_id: B.id, name: 'B secret planted', type: 'virtual' }),
      outcome: 'forbidden',
    },
  ];
  it.each(attempts)('$name', async (attempt) => {
    const before = await t.db.query(
      'SELECT id, name, organisation_id FROM deal WHERE organisation_id = $1::uuid ORDER BY id',
      [B.id],
    );
    const beforeCal = await t.db.query('SELECT id, name FROM calendar WHERE organisation_id = $1::uuid ORDER BY id', [
      B.id,
    ]);
    const body = attempt.body?.();
    const res = await t.call(attempt.path(), A.token, {
      method: attempt.method,
      headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    for (const marker of foreignMarkers.filter((m) => m !== B.id)) expect(text).not.toContain(marker);
    if (attempt.outcome === 'forbidden') {
      expect(res.status, text).toBe(403);
      expect(JSON.parse(text).code).toBe('FORBIDDEN');
    } else {
      expect(res.status, text).toBe(200);
      const rows = JSON.parse(text) as Array<{ organisation_id: string }>;
      if (attempt.outcome === 'empty') expect(rows).toEqual([]);
      for (const row of rows) expect(row.organisation_id).toBe(A.id);
    }
    expect(
      await t.db.query('SELECT id, name, organisation_id FROM deal WHERE organisation_id = $1::uuid ORDER BY id', [
        B.id,
      ]),
    ).toEqual(before);
    expect(
      await t.db.query('SELECT id, name FROM calendar WHERE organisation_id = $1::uuid ORDER BY id', [B.id]),
    ).toEqual(beforeCal);
    const [aDeal] = await t.db.query<{ organisation_id: string }>(
      'SELECT organisation_id FROM deal WHERE organisation_id = $1::uuid AND id = $2::uuid',
      [A.id, cases.deal.aOnly],
    );
    expect(aDeal?.organisation_id).toBe(A.id);
  });
});
