/**
 * The API driven by react-admin's PostgREST data provider (@raphiniert/ra-data-postgrest, unchanged),
 * the way a react-admin user wires it: `fetchUtils.fetchJson` with a bearer token, `defaultListOp: 'eq'`,
 * the default primary keys (`id`) and no schema header. The provider talks HTTP to the real app
 * listening on a port, so every request is built and read exactly as in a browser:
 *
 * - getList / getManyReference: `order=<field>.asc|desc` (react-admin's default sort is `id`),
 *   `offset`/`limit` from the page, `Prefer: count=exact`, the total read from `Content-Range`;
 *   filters `field@op` become `field=op.value` (`like`/`ilike` wrap the value in `*`).
 * - getOne: `id=eq.X` with `Accept: application/vnd.pgrst.object+json`.
 * - getMany: `id=in.(a,b)` (`id=eq.a` for one id).
 * - create: POST one object, `Prefer: return=representation`, object Accept.
 * - update: PATCH `id=eq.X` with only the changed fields, return=representation, object Accept.
 * - updateMany / deleteMany: PATCH / DELETE `id=in.(...)`, return=representation; the ids come back.
 * - delete: DELETE `id=eq.X`, return=representation, object Accept.
 *
 * Errors reach react-admin as an HttpError carrying the status and the parsed JSON body.
 */
import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import * as raDataPostgrest from '@raphiniert/ra-data-postgrest';
import { defaultPrimaryKeys, defaultSchema, type IDataProviderConfig } from '@raphiniert/ra-data-postgrest';
import { type DataProvider, fetchUtils, HttpError, type Identifier, type RaRecord } from 'ra-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

/**
 * The package's default export, `postgrestRestProvider`. The package is CommonJS (`exports.default`):
 * vitest hands the function over as the default import, while TypeScript (NodeNext) and Node's own
 * loader see the whole `module.exports` there; take whichever this loader gave.
 */
const loaded = raDataPostgrest.default as typeof raDataPostgrest.default | typeof raDataPostgrest.default.default;
const postgrestRestProvider: (config: IDataProviderConfig) => DataProvider =
  typeof loaded === 'function' ? loaded : loaded.default;

let t: TestApp;
let server: ServerType;
let apiUrl: string;
let org: Organisation;
let other: Organisation;

interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
}
/** Every request the provider sent, newest last. */
const sent: SentRequest[] = [];
const last = () => sent[sent.length - 1]!;

/** The data provider as a react-admin app creates it, authenticated with `token`. */
function provider(token: string): DataProvider {
  return postgrestRestProvider({
    apiUrl,
    httpClient: (url: string, options: fetchUtils.Options = {}) => {
      sent.push({ method: options.method ?? 'GET', url: new URL(url), headers: new Headers(options.headers) });
      return fetchUtils.fetchJson(url, { ...options, user: { authenticated: true, token: `Bearer ${token}` } });
    },
    defaultListOp: 'eq',
    primaryKeys: defaultPrimaryKeys,
    schema: defaultSchema,
  });
}
let dp: DataProvider;
let otherDp: DataProvider;

/** The rejection of `promise`, which must be an HttpError. */
async function httpError(promise: Promise<unknown>): Promise<HttpError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HttpError);
  return error as HttpError;
}

/** A PostgREST-shaped error body: `code`, `message`, `details` and `hint` (null when empty). */
function expectErrorBody(error: HttpError, status: number, code: string) {
  expect(error.status).toBe(status);
  const body = error.body as Record<string, unknown>;
  expect(body).toBeTypeOf('object');
  expect(body.code).toBe(code);
  expect(body.message).toBeTypeOf('string');
  expect(error.message).toBe(body.message);
  expect(body).toHaveProperty('details');
  expect(body).toHaveProperty('hint');
  expect(body.details === null || typeof body.details === 'string').toBe(true);
  expect(body.hint === null || typeof body.hint === 'string').toBe(true);
}

const page = (p: number, perPage: number) => ({ page: p, perPage });
const asc = (values: string[]) => [...values].sort();
const desc = (values: string[]) => [...values].sort().reverse();
const ids = (rows: readonly RaRecord[]) => rows.map((r) => String(r.id));
/** The ids updateMany/deleteMany answered with, sorted. */
const idList = (data: readonly Identifier[] | undefined) => asc((data ?? []).map(String));
const field = (rows: readonly RaRecord[], key: string) => rows.map((r) => r[key]);

/** Rows of `table` with these ids, straight from the database. */
async function rowsById(table: string, wanted: string[]): Promise<Array<Record<string, unknown>>> {
  const found = await t.db.query<{ r: string }>(
    `SELECT row_to_json(x)::text AS r FROM "${table}" x
      WHERE id::text IN (SELECT json_array_elements_text($1::text::json)) ORDER BY id`,
    [JSON.stringify(wanted)],
  );
  return found.map((f) => JSON.parse(f.r));
}

// Fixtures: ids by a short name.
const cal = {} as Record<'front' | 'back' | 'roomA' | 'roomB' | 'meier', string>;
const con = {} as Record<'ada' | 'grace' | 'alan', string>;
const deal = {} as Record<'d1' | 'd2' | 'd3' | 'g1', string>;
let otherCalendar: string;
let otherContact: string;
let otherDeal: string;
let calendarIds: string[];
let contactIds: string[];
let dealIds: string[];

beforeAll(async () => {
  t = await createTestApp();
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`;
  org = await createOrganisation(t);
  other = await createOrganisation(t);
  dp = provider(org.token);
  otherDp = provider(other.token);

  [cal.front, cal.back, cal.roomA, cal.roomB, cal.meier] = (await insertRows(t.db, 'calendar', org.id, [
    { name: 'Front desk', type: 'virtual', external_id: 'cal-front' },
    { name: 'Back office', type: 'virtual' },
    { name: 'Room A', type: 'virtual' },
    { name: 'Room B', type: 'virtual' },
    { name: 'Dr. Meier', type: 'provider', external_id: 'cal-meier' },
  ])) as [string, string, string, string, string];
  calendarIds = Object.values(cal);

  [con.ada, con.grace, con.alan] = (await insertRows(t.db, 'contact', org.id, [
    { display_name: 'Ada Lovelace', email: 'ada@example.com', city: 'London', created_at: '2026-01-01T00:00:00Z' },
    { display_name: 'Grace Hopper', email: 'grace@example.com', city: 'New York', created_at: '2026-01-02T00:00:00Z' },
    { display_name: 'Alan Turing', email: null, city: 'London', created_at: '2026-01-03T00:00:00Z' },
  ])) as [string, string, string];
  contactIds = Object.values(con);

  [deal.d1, deal.d2, deal.d3, deal.g1] = (await insertRows(t.db, 'deal', org.id, [
    { name: 'Analytical engine', contact_id: con.ada, value: 100, currency: 'CHF' },
    { name: 'Notes on the engine', contact_id: con.ada, value: 2500, currency: 'EUR', won_at: '2026-03-01T00:00:00Z' },
    { name: 'Bernoulli numbers', contact_id: con.ada, value: 9000, currency: 'USD', lost_at: '2026-04-01T00:00:00Z' },
    { name: 'COBOL', contact_id: con.grace, value: 500, currency: 'USD', won_at: '2026-02-01T00:00:00Z' },
  ])) as [string, string, string, string];
  dealIds = Object.values(deal);

  // Another organisation with look-alike rows: never visible to `org`.
  [otherCalendar] = (await insertRows(t.db, 'calendar', other.id, [
    { name: 'Front desk', type: 'virtual', external_id: 'cal-front' },
  ])) as [string];
  [otherContact] = (await insertRows(t.db, 'contact', other.id, [
    { display_name: 'Ada Lovelace', email: 'ada@example.com', city: 'London' },
  ])) as [string];
  [otherDeal] = (await insertRows(t.db, 'deal', other.id, [
    { name: 'Analytical engine', contact_id: otherContact, value: 100, currency: 'CHF' },
  ])) as [string];
});

afterAll(async () => {
  if (server) {
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      if ('closeAllConnections' in server) server.closeAllConnections();
    });
  }
  await t?.drop();
});

describe('getList', () => {
  it('sorts by id ascending by default (order=id.asc) everywhere, with the total from Content-Range', async () => {
    for (const [resource, expected] of [
      ['calendar', calendarIds],
      ['contact', contactIds],
      ['deal', dealIds],
    ] as const) {
      const { data, total } = await dp.getList(resource, {
        pagination: page(1, 25),
        sort: { field: 'id', order: 'ASC' },
        filter: {},
      });
      expect(last().url.searchParams.get('order')).toBe('id.asc');
      expect(last().url.searchParams.get('offset')).toBe('0');
      expect(last().url.searchParams.get('limit')).toBe('25');
      expect(last().headers.get('Prefer')).toBe('count=exact');
      expect(ids(data)).toEqual(asc(expected));
      expect(total).toBe(expected.length);
    }
  });

  it('sorts by id descending (order=id.desc) on every resource', async () => {
    for (const [resource, expected] of [
      ['calendar', calendarIds],
      ['contact', contactIds],
      ['deal', dealIds],
    ] as const) {
      const { data, total } = await dp.getList(resource, {
        pagination: page(1, 25),
        sort: { field: 'id', order: 'DESC' },
        filter: {},
      });
      expect(last().url.searchParams.get('order')).toBe('id.desc');
      expect(ids(data)).toEqual(desc(expected));
      expect(total).toBe(expected.length);
    }
  });

  it('returns whole records', async () => {
    const { data } = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'ASC' },
      filter: { name: 'Front desk' },
    });
    expect(data).toEqual([
      expect.objectContaining({
        id: cal.front,
        organisation_id: org.id,
        name: 'Front desk',
        type: 'virtual',
        external_id: 'cal-front',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      }),
    ]);
  });

  it('sorts by an allowed field, both ways', async () => {
    const byName = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'ASC' },
      filter: {},
    });
    expect(last().url.searchParams.get('order')).toBe('name.asc');
    expect(field(byName.data, 'name')).toEqual(['Back office', 'Dr. Meier', 'Front desk', 'Room A', 'Room B']);
    expect(byName.total).toBe(5);

    const byNameDesc = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'DESC' },
      filter: {},
    });
    expect(last().url.searchParams.get('order')).toBe('name.desc');
    expect(field(byNameDesc.data, 'name')).toEqual(['Room B', 'Room A', 'Front desk', 'Dr. Meier', 'Back office']);

    const contacts = await dp.getList('contact', {
      pagination: page(1, 25),
      sort: { field: 'display_name', order: 'DESC' },
      filter: {},
    });
    expect(field(contacts.data, 'display_name')).toEqual(['Grace Hopper', 'Alan Turing', 'Ada Lovelace']);
    expect(contacts.total).toBe(3);

    const won = await dp.getList('deal', {
      pagination: page(1, 25),
      sort: { field: 'won_at', order: 'ASC' },
      filter: { 'won_at@not.is': 'null' },
    });
    expect(field(won.data, 'name')).toEqual(['COBOL', 'Notes on the engine']);
    expect(won.total).toBe(2);
  });

  it('filters with the default operator (eq) and with the provider operators', async () => {
    const virtual = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'ASC' },
      filter: { type: 'virtual' },
    });
    expect(last().url.searchParams.get('type')).toBe('eq.virtual');
    expect(field(virtual.data, 'name')).toEqual(['Back office', 'Front desk', 'Room A', 'Room B']);
    expect(virtual.total).toBe(4);

    const rooms = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'ASC' },
      filter: { 'name@ilike': 'rOOm' },
    });
    expect(last().url.searchParams.get('name')).toBe('ilike.*rOOm*');
    expect(field(rooms.data, 'name')).toEqual(['Room A', 'Room B']);
    expect(rooms.total).toBe(2);

    const like = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'name', order: 'ASC' },
      filter: { 'name@like': 'o' },
    });
    expect(field(like.data, 'name')).toEqual(['Back office', 'Front desk', 'Room A', 'Room B']);

    const ada = await dp.getList('contact', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: { 'display_name@ilike': 'lovelace' },
    });
    expect(ids(ada.data)).toEqual([con.ada]);
    expect(ada.total).toBe(1);

    const london = await dp.getList('contact', {
      pagination: page(1, 25),
      sort: { field: 'display_name', order: 'ASC' },
      filter: { city: 'London', 'email@is': 'null' },
    });
    expect(field(london.data, 'display_name')).toEqual(['Alan Turing']);

    const big = await dp.getList('deal', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: { 'value@gte': 500, 'currency@neq': 'EUR' },
    });
    expect(last().url.searchParams.get('value')).toBe('gte.500');
    expect(ids(big.data)).toEqual(asc([deal.d3, deal.g1]));
    expect(big.total).toBe(2);

    const currencies = await dp.getList('deal', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'DESC' },
      filter: { 'currency@in': '(CHF,EUR)' },
    });
    expect(last().url.searchParams.get('currency')).toBe('in.(CHF,EUR)');
    expect(ids(currencies.data)).toEqual(desc([deal.d1, deal.d2]));

    const either = await dp.getList('deal', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: { '@or': { 'value@lt': 200, 'lost_at@not.is': 'null' } },
    });
    expect(last().url.searchParams.get('or')).toBe('(value.lt.200,lost_at.not.is.null)');
    expect(ids(either.data)).toEqual(asc([deal.d1, deal.d3]));

    const none = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: { 'name@ilike': 'nothing' },
    });
    expect(none).toEqual({ data: [], total: 0, meta: undefined });
  });

  it('pages with offset and limit, page 2 carrying the total', async () => {
    const second = await dp.getList('calendar', {
      pagination: page(2, 2),
      sort: { field: 'name', order: 'ASC' },
      filter: {},
    });
    expect(last().url.searchParams.get('offset')).toBe('2');
    expect(last().url.searchParams.get('limit')).toBe('2');
    expect(field(second.data, 'name')).toEqual(['Front desk', 'Room A']);
    expect(second.total).toBe(5);

    const third = await dp.getList('calendar', {
      pagination: page(3, 2),
      sort: { field: 'name', order: 'ASC' },
      filter: {},
    });
    expect(field(third.data, 'name')).toEqual(['Room B']);
    expect(third.total).toBe(5);

    const byId = await dp.getList('deal', {
      pagination: page(2, 3),
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(ids(byId.data)).toEqual(desc(dealIds).slice(3));
    expect(byId.total).toBe(4);

    const filtered = await dp.getList('calendar', {
      pagination: page(2, 1),
      sort: { field: 'name', order: 'DESC' },
      filter: { 'name@ilike': 'room' },
    });
    expect(field(filtered.data, 'name')).toEqual(['Room A']);
    expect(filtered.total).toBe(2);
  });

  it("never shows another organisation's rows", async () => {
    const fronts = await dp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: { external_id: 'cal-front' },
    });
    expect(ids(fronts.data)).toEqual([cal.front]);
    expect(fronts.total).toBe(1);

    const theirs = await otherDp.getList('calendar', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'ASC' },
      filter: {},
    });
    expect(ids(theirs.data)).toEqual([otherCalendar]);
    expect(theirs.total).toBe(1);

    const theirContacts = await otherDp.getList('contact', {
      pagination: page(1, 25),
      sort: { field: 'display_name', order: 'ASC' },
      filter: {},
    });
    expect(ids(theirContacts.data)).toEqual([otherContact]);

    const theirDeals = await otherDp.getList('deal', {
      pagination: page(1, 25),
      sort: { field: 'id', order: 'DESC' },
      filter: { name: 'Analytical engine' },
    });
    expect(ids(theirDeals.data)).toEqual([otherDeal]);
    expect(theirDeals.total).toBe(1);
  });
});

describe('getOne', () => {
  it('reads one record of each resource as an object', async () => {
    const { data } = await dp.getOne('calendar', { id: cal.meier });
    expect(last().url.searchParams.get('id')).toBe(`eq.${cal.meier}`);
    expect(last().headers.get('Accept')).toBe('application/vnd.pgrst.object+json');
    expect(data).toEqual(
      expect.objectContaining({ id: cal.meier, name: 'Dr. Meier', type: 'provider', external_id: 'cal-meier' }),
    );

    const contact = await dp.getOne('contact', { id: con.grace });
    expect(contact.data).toEqual(
      expect.objectContaining({ id: con.grace, display_name: 'Grace Hopper', email: 'grace@example.com' }),
    );

    const d = await dp.getOne('deal', { id: deal.d2 });
    expect(d.data).toEqual(
      expect.objectContaining({
        id: deal.d2,
        contact_id: con.ada,
        name: 'Notes on the engine',
        currency: 'EUR',
        won_at: expect.stringMatching(/^2026-03-01T00:00:00/),
        lost_at: null,
      }),
    );
    expect(Number(d.data.value)).toBe(2500);
  });

  it("answers 406 for another organisation's record", async () => {
    const error = await httpError(dp.getOne('calendar', { id: otherCalendar }));
    expectErrorBody(error, 406, 'NOT_ACCEPTABLE');
    expectErrorBody(await httpError(dp.getOne('contact', { id: otherContact })), 406, 'NOT_ACCEPTABLE');
    expectErrorBody(await httpError(otherDp.getOne('deal', { id: deal.d1 })), 406, 'NOT_ACCEPTABLE');
  });
});

describe('getMany', () => {
  it('reads records by id=in.(...), leaving out those of another organisation', async () => {
    const { data } = await dp.getMany('contact', { ids: [con.ada, con.alan, otherContact] });
    expect(last().url.searchParams.get('id')).toBe(`in.(${con.ada},${con.alan},${otherContact})`);
    expect(ids(data).sort()).toEqual(asc([con.ada, con.alan]));
    expect(data.find((r) => r.id === con.alan)).toEqual(
      expect.objectContaining({ display_name: 'Alan Turing', city: 'London' }),
    );

    const calendars = await dp.getMany('calendar', { ids: [cal.roomA, cal.roomB] });
    expect(field(calendars.data, 'name').sort()).toEqual(['Room A', 'Room B']);

    const deals = await dp.getMany('deal', { ids: [deal.g1, otherDeal] });
    expect(ids(deals.data)).toEqual([deal.g1]);
  });

  it('reads a single id with id=eq.', async () => {
    const { data } = await dp.getMany('calendar', { ids: [cal.back] });
    expect(last().url.searchParams.get('id')).toBe(`eq.${cal.back}`);
    expect(field(data, 'name')).toEqual(['Back office']);
    expect((await dp.getMany('calendar', { ids: [otherCalendar] })).data).toEqual([]);
  });
});

describe('getManyReference', () => {
  it("reads a contact's deals by contact_id, sorted by id descending, with the total", async () => {
    const { data, total } = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: con.ada,
      pagination: page(1, 25),
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(last().url.searchParams.get('contact_id')).toBe(`eq.${con.ada}`);
    expect(last().url.searchParams.get('order')).toBe('id.desc');
    expect(last().headers.get('Prefer')).toBe('count=exact');
    expect(ids(data)).toEqual(desc([deal.d1, deal.d2, deal.d3]));
    expect(total).toBe(3);
  });

  it('pages, filters and sorts by an allowed field', async () => {
    const second = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: con.ada,
      pagination: page(2, 2),
      sort: { field: 'id', order: 'ASC' },
      filter: {},
    });
    expect(ids(second.data)).toEqual(asc([deal.d1, deal.d2, deal.d3]).slice(2));
    expect(second.total).toBe(3);

    const filtered = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: con.ada,
      pagination: page(1, 25),
      sort: { field: 'lost_at', order: 'ASC' },
      filter: { 'name@ilike': 'engine' },
    });
    expect(field(filtered.data, 'name').sort()).toEqual(['Analytical engine', 'Notes on the engine']);
    expect(filtered.total).toBe(2);

    const grace = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: con.grace,
      pagination: page(1, 25),
      sort: { field: 'won_at', order: 'DESC' },
      filter: {},
    });
    expect(ids(grace.data)).toEqual([deal.g1]);
    expect(grace.total).toBe(1);
  });

  it("finds nothing through another organisation's contact", async () => {
    const { data, total } = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: otherContact,
      pagination: page(1, 25),
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(data).toEqual([]);
    expect(total).toBe(0);
  });
});

describe('create', () => {
  it('creates a calendar and returns the stored record', async () => {
    const { data } = await dp.create('calendar', { data: { name: 'Created', external_id: 'cal-created' } });
    expect(last().method).toBe('POST');
    expect(last().url.search).toBe('');
    expect(last().headers.get('Prefer')).toBe('return=representation');
    expect(last().headers.get('Accept')).toBe('application/vnd.pgrst.object+json');
    expect(data).toEqual(
      expect.objectContaining({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        organisation_id: org.id,
        name: 'Created',
        type: 'virtual',
        external_id: 'cal-created',
        created_at: expect.any(String),
      }),
    );
    const [row] = await rowsById('calendar', [String(data.id)]);
    expect(row).toEqual(expect.objectContaining({ organisation_id: org.id, name: 'Created', type: 'virtual' }));
    expect((await dp.getOne('calendar', { id: data.id })).data).toEqual(data);
    // Not visible to the other organisation.
    expectErrorBody(await httpError(otherDp.getOne('calendar', { id: data.id })), 406, 'NOT_ACCEPTABLE');
  });

  it('creates a deal referencing a contact, readable through getManyReference', async () => {
    const { data } = await dp.create('deal', {
      data: { name: 'Compiler', contact_id: con.grace, value: 1200, currency: 'USD' },
    });
    expect(data).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        organisation_id: org.id,
        name: 'Compiler',
        contact_id: con.grace,
        currency: 'USD',
        won_at: null,
      }),
    );
    expect(Number(data.value)).toBe(1200);
    const refs = await dp.getManyReference('deal', {
      target: 'contact_id',
      id: con.grace,
      pagination: page(1, 25),
      sort: { field: 'id', order: 'DESC' },
      filter: {},
    });
    expect(ids(refs.data)).toEqual(desc([deal.g1, String(data.id)]));
    expect(refs.total).toBe(2);
  });

  it('refuses invalid records with PostgREST-shaped errors', async () => {
    // Only virtual calendars can be created.
    expectErrorBody(
      await httpError(dp.create('calendar', { data: { name: 'Nope', type: 'provider' } })),
      400,
      'VALIDATION_FAILED',
    );
    // A field the resource does not have.
    expectErrorBody(
      await httpError(dp.create('calendar', { data: { name: 'Nope', colour: 'red' } })),
      400,
      'UNKNOWN_FIELD',
    );
    // A reference to another organisation's contact.
    expectErrorBody(
      await httpError(dp.create('deal', { data: { name: 'Nope', contact_id: otherContact } })),
      409,
      'REFERENCE_NOT_FOUND',
    );
    // A duplicate external_id.
    expectErrorBody(await httpError(dp.create('calendar', { data: { external_id: 'cal-front' } })), 409, 'CONFLICT');
    const [{ n }] = (await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM calendar WHERE name = 'Nope' OR (external_id = 'cal-front' AND name IS NULL)",
    )) as [{ n: number }];
    expect(n).toBe(0);
  });
});

describe('update', () => {
  it('patches only the changed fields of a calendar and returns the record', async () => {
    const { data: previousData } = await dp.getOne('calendar', { id: cal.roomB });
    const { data } = await dp.update('calendar', {
      id: cal.roomB,
      data: { ...previousData, name: 'Room B (renovated)' },
      previousData,
    });
    expect(last().method).toBe('PATCH');
    expect(last().url.searchParams.get('id')).toBe(`eq.${cal.roomB}`);
    expect(last().headers.get('Prefer')).toBe('return=representation');
    expect(last().headers.get('Accept')).toBe('application/vnd.pgrst.object+json');
    expect(data).toEqual({ ...previousData, name: 'Room B (renovated)', updated_at: expect.any(String) });
    const [row] = await rowsById('calendar', [cal.roomB]);
    expect(row!.name).toBe('Room B (renovated)');
  });

  it('updates a deal', async () => {
    const { data: previousData } = await dp.getOne('deal', { id: deal.d1 });
    const { data } = await dp.update('deal', {
      id: deal.d1,
      data: { ...previousData, status_key: 'won', won_at: '2026-05-01T12:00:00Z' },
      previousData,
    });
    expect(data).toEqual(
      expect.objectContaining({
        id: deal.d1,
        name: 'Analytical engine',
        contact_id: con.ada,
        status_key: 'won',
        won_at: expect.stringMatching(/^2026-05-01T12:00:00/),
      }),
    );
  });

  it("cannot touch another organisation's record", async () => {
    const previousData = { id: otherCalendar, name: 'Front desk' };
    const error = await httpError(
      dp.update('calendar', { id: otherCalendar, data: { ...previousData, name: 'Hijacked' }, previousData }),
    );
    expectErrorBody(error, 406, 'NOT_ACCEPTABLE');
    const [row] = await rowsById('calendar', [otherCalendar]);
    expect(row!.name).toBe('Front desk');
  });

  it('refuses invalid changes', async () => {
    const { data: previousData } = await dp.getOne('deal', { id: deal.d2 });
    expectErrorBody(
      await httpError(dp.update('deal', { id: deal.d2, data: { ...previousData, currency: 'XXX' }, previousData })),
      400,
      'VALIDATION_FAILED',
    );
    expect((await dp.getOne('deal', { id: deal.d2 })).data).toEqual(previousData);
  });
});

describe('updateMany', () => {
  it('patches several calendars by id=in.(...) and returns their ids', async () => {
    const { data } = await dp.updateMany('calendar', { ids: [cal.roomA, cal.back], data: { external_id: null } });
    expect(last().method).toBe('PATCH');
    expect(last().url.searchParams.get('id')).toBe(`in.(${cal.roomA},${cal.back})`);
    expect(last().headers.get('Prefer')).toBe('return=representation');
    expect(idList(data)).toEqual(asc([cal.roomA, cal.back]));

    const renamed = await dp.updateMany('calendar', { ids: [cal.roomA, cal.back], data: { name: 'Shared room' } });
    expect(idList(renamed.data)).toEqual(asc([cal.roomA, cal.back]));
    const rows = await rowsById('calendar', [cal.roomA, cal.back]);
    expect(rows.map((r) => r.name)).toEqual(['Shared room', 'Shared room']);
  });

  it('patches deals, leaving those of another organisation alone', async () => {
    const { data } = await dp.updateMany('deal', { ids: [deal.d3, deal.g1, otherDeal], data: { type_key: 'b2b' } });
    expect(idList(data)).toEqual(asc([deal.d3, deal.g1]));
    const rows = await rowsById('deal', [deal.d3, deal.g1, otherDeal]);
    expect(Object.fromEntries(rows.map((r) => [r.id, r.type_key]))).toEqual({
      [deal.d3]: 'b2b',
      [deal.g1]: 'b2b',
      [otherDeal]: null,
    });
  });
});

describe('delete', () => {
  it('deletes a calendar and returns the deleted record', async () => {
    const { data: created } = await dp.create('calendar', { data: { name: 'Doomed' } });
    const { data } = await dp.delete('calendar', { id: created.id, previousData: created });
    expect(last().method).toBe('DELETE');
    expect(last().url.searchParams.get('id')).toBe(`eq.${created.id}`);
    expect(last().headers.get('Prefer')).toBe('return=representation');
    expect(last().headers.get('Accept')).toBe('application/vnd.pgrst.object+json');
    expect(data).toEqual(created);
    expect(await rowsById('calendar', [String(created.id)])).toEqual([]);
    expectErrorBody(await httpError(dp.getOne('calendar', { id: created.id })), 406, 'NOT_ACCEPTABLE');
  });

  it('deletes a deal', async () => {
    const { data: created } = await dp.create('deal', { data: { name: 'Short-lived', contact_id: con.alan } });
    const { data } = await dp.delete('deal', { id: created.id });
    expect(data).toEqual(expect.objectContaining({ id: created.id, name: 'Short-lived', contact_id: con.alan }));
    expect(await rowsById('deal', [String(created.id)])).toEqual([]);
  });

  it("cannot delete another organisation's record", async () => {
    expectErrorBody(await httpError(dp.delete('calendar', { id: otherCalendar })), 406, 'NOT_ACCEPTABLE');
    expectErrorBody(await httpError(dp.delete('deal', { id: otherDeal })), 406, 'NOT_ACCEPTABLE');
    expect(await rowsById('calendar', [otherCalendar])).toHaveLength(1);
    expect(await rowsById('deal', [otherDeal])).toHaveLength(1);
  });
});

describe('deleteMany', () => {
  it('deletes several calendars by id=in.(...) and returns their ids', async () => {
    const made = await Promise.all(
      ['Temp 1', 'Temp 2', 'Temp 3'].map((name) => dp.create('calendar', { data: { name } })),
    );
    const doomed = made.map((m) => String(m.data.id));
    const { data } = await dp.deleteMany('calendar', { ids: doomed.slice(0, 2) });
    expect(last().method).toBe('DELETE');
    expect(last().url.searchParams.get('id')).toBe(`in.(${doomed[0]},${doomed[1]})`);
    expect(last().headers.get('Prefer')).toBe('return=representation');
    expect(idList(data)).toEqual(asc(doomed.slice(0, 2)));
    expect((await rowsById('calendar', doomed)).map((r) => r.id)).toEqual([doomed[2]]);
  });

  it('deletes deals, leaving those of another organisation alone', async () => {
    const made = await Promise.all(
      ['Temp deal 1', 'Temp deal 2'].map((name) => dp.create('deal', { data: { name, contact_id: con.alan } })),
    );
    const doomed = made.map((m) => String(m.data.id));
    const { data } = await dp.deleteMany('deal', { ids: [...doomed, otherDeal] });
    expect(idList(data)).toEqual(asc(doomed));
    expect(await rowsById('deal', doomed)).toEqual([]);
    expect(await rowsById('deal', [otherDeal])).toHaveLength(1);
  });
});

describe('contact is read-only', () => {
  it('refuses create, update and delete with 405', async () => {
    const { data: previousData } = await dp.getOne('contact', { id: con.alan });
    expectErrorBody(
      await httpError(dp.create('contact', { data: { display_name: 'New person' } })),
      405,
      'METHOD_NOT_ALLOWED',
    );
    expectErrorBody(
      await httpError(dp.update('contact', { id: con.alan, data: { ...previousData, city: 'Paris' }, previousData })),
      405,
      'METHOD_NOT_ALLOWED',
    );
    expectErrorBody(
      await httpError(dp.updateMany('contact', { ids: contactIds, data: { city: 'Paris' } })),
      405,
      'METHOD_NOT_ALLOWED',
    );
    expectErrorBody(await httpError(dp.delete('contact', { id: con.alan })), 405, 'METHOD_NOT_ALLOWED');
    expectErrorBody(await httpError(dp.deleteMany('contact', { ids: contactIds })), 405, 'METHOD_NOT_ALLOWED');
    expect((await dp.getOne('contact', { id: con.alan })).data).toEqual(previousData);
  });
});

describe('errors', () => {
  it('rejects a filter on a field that does not exist with a 400 HttpError and a PostgREST-shaped body', async () => {
    const error = await httpError(
      dp.getList('calendar', {
        pagination: page(1, 25),
        sort: { field: 'id', order: 'ASC' },
        filter: { colour: 'red' },
      }),
    );
    expect(last().url.searchParams.get('colour')).toBe('eq.red');
    expectErrorBody(error, 400, 'UNKNOWN_FIELD');
    expect(error.body).toMatchObject({
      code: 'UNKNOWN_FIELD',
      message: expect.stringContaining('"colour"'),
      details: null,
      hint: expect.stringContaining('Fields of calendar'),
    });
  });

  it('rejects a sort on a field that may not be ordered on', async () => {
    const error = await httpError(
      dp.getList('deal', { pagination: page(1, 25), sort: { field: 'name', order: 'ASC' }, filter: {} }),
    );
    expectErrorBody(error, 400, 'UNKNOWN_FIELD');
    const reference = await httpError(
      dp.getManyReference('deal', {
        target: 'contact_id',
        id: con.ada,
        pagination: page(1, 25),
        sort: { field: 'value', order: 'DESC' },
        filter: {},
      }),
    );
    expectErrorBody(reference, 400, 'UNKNOWN_FIELD');
  });

  it('rejects a filter value that does not fit its field', async () => {
    const error = await httpError(dp.getOne('calendar', { id: 'not-a-uuid' }));
    expect(error.status).toBe(400);
    expect(['INVALID_QUERY', 'UNKNOWN_FIELD']).toContain((error.body as { code: string }).code);
    expectErrorBody(error, 400, (error.body as { code: string }).code);
  });

  it('rejects an unknown token with 401', async () => {
    const error = await httpError(
      provider('engage_not-a-token').getList('calendar', {
        pagination: page(1, 25),
        sort: { field: 'name', order: 'ASC' },
        filter: {},
      }),
    );
    expectErrorBody(error, 401, 'UNAUTHORIZED');
  });
});
