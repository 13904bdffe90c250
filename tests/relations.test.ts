/**
 * Resource embedding through HTTP (issue 11), every form held to hand-written SQL: each request's
 * expected JSON is built by PostgreSQL from a query written here, scoped to the organisation by
 * hand, and compared whole (ignoring order where the request asks for none). Fixture:
 * tests/helpers/relations.ts. Aggregates: relations-aggregates.test.ts; tenant isolation:
 * relations-tenancy.test.ts; errors and custom registries: relations-errors.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.ts';
import { call, ok, type RelationsFixture, rowsOf, seedRelations, unordered } from './helpers/relations.ts';

let t: TestApp;
let f: RelationsFixture;

beforeAll(async () => {
  t = await createTestApp();
  f = await seedRelations(t);
});
afterAll(() => t?.drop());

type Order = 'none' | 'rows' | 'all';

/**
 * GET `path` as org A and compare with `sql` ($1 = org A). `order`: 'none' compares as sets at
 * every level, 'rows' keeps the order of the top rows only, 'all' compares exactly.
 */
async function same(path: string, sql: string, order: Order = 'none') {
  const body = await ok(t, f.org.token, path);
  const expected = await rowsOf(t, sql, [f.org.id]);
  expect(expected.length, `the expectation of ${path} is empty`).toBeGreaterThan(0);
  if (order === 'all') expect(body).toEqual(expected);
  else if (order === 'rows') expect(body.map(unordered)).toEqual(expected.map(unordered));
  else expect(unordered(body)).toEqual(unordered(expected));
  return body;
}

/** The contact of deal/appointment `alias` in org $1 as a json object of `columns`, or null. */
const contactOf = (alias: string, columns: string) =>
  `(SELECT json_build_object(${columns}) FROM contact c` +
  ` WHERE c.organisation_id = $1::uuid AND c.id = ${alias}.contact_id)`;
/** The deals of contact `alias` in org $1 as a json array of objects of `columns`, [] when none. */
const dealsOf = (alias: string, columns: string, tail = '') =>
  `coalesce((SELECT json_agg(json_build_object(${columns})) FROM (SELECT * FROM deal d` +
  ` WHERE d.organisation_id = $1::uuid AND d.contact_id = ${alias}.id ${tail}) d), '[]'::json)`;
const DEALS = `FROM deal d WHERE d.organisation_id = $1::uuid`;
const CONTACTS = `FROM contact c0 WHERE c0.organisation_id = $1::uuid`;
const APPOINTMENTS = `FROM appointment a WHERE a.organisation_id = $1::uuid`;
/** Deal d's contact in org $1 and its display name; whether it has one. */
const CONTACT_C = 'FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = d.contact_id';
const CONTACT_NAME = `(SELECT c.display_name ${CONTACT_C})`;
const HAS_CONTACT = `EXISTS (SELECT 1 ${CONTACT_C})`;
/** Deal d's contact as {display_name}, or null. */
const CONTACT_OBJECT = contactOf('d', "'display_name', c.display_name");
/** The deals of contact c0 in org $1. */
const DEALS_OF_C0 = 'FROM deal d WHERE d.organisation_id = $1::uuid AND d.contact_id = c0.id';
/** Deal d joined to its contact c in org $1. */
const DEALS_LEFT_JOIN_CONTACT = `FROM deal d LEFT JOIN contact c ON c.organisation_id = $1::uuid AND c.id = d.contact_id
  WHERE d.organisation_id = $1::uuid`;
/** Whether contact c0 has a deal in org $1 (that meets `extra`). */
const hasDeal = (extra = '') =>
  `EXISTS (SELECT 1 FROM deal d WHERE d.organisation_id = $1::uuid AND d.contact_id = c0.id ${extra})`;

describe('to-one and to-many embeds', () => {
  it('a to-one embed is an object, or null when the deal has no contact', async () => {
    const body = await same(
      '/deal?select=name,contact(display_name,email)',
      `SELECT d.name, ${contactOf('d', "'display_name', c.display_name, 'email', c.email")} AS contact ${DEALS}`,
    );
    expect(body.find((r: { name: string }) => r.name === 'Orphan').contact).toBeNull();
  });

  it('a to-many embed is an array, [] when the contact has no deals', async () => {
    const body = await same(
      '/contact?select=display_name,deal(name,value)',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name, 'value', d.value")} AS deal ${CONTACTS}`,
    );
    expect(body.find((r: { display_name: string }) => r.display_name === 'Dee').deal).toEqual([]);
  });

  it('* at both levels gives every field', async () => {
    await same(
      '/deal?select=*,contact(*)',
      `SELECT d.*, (SELECT row_to_json(c) FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = d.contact_id)` +
        ` AS contact ${DEALS}`,
    );
    await same(
      '/contact?select=*,deal(*)',
      `SELECT c0.*, coalesce((SELECT json_agg(d) FROM deal d WHERE d.organisation_id = $1::uuid` +
        ` AND d.contact_id = c0.id), '[]'::json) AS deal ${CONTACTS}`,
    );
  });

  it('an embed with no select (select=contact(*) alone) gives only the embed', async () => {
    await same('/deal?select=contact(display_name)', `SELECT ${CONTACT_OBJECT} AS contact ${DEALS}`);
  });

  it('aliases rename the embed and its fields', async () => {
    await same(
      '/deal?select=title:name,buyer:contact(who:display_name,mail:email)',
      `SELECT d.name AS title, ${contactOf('d', "'who', c.display_name, 'mail', c.email")} AS buyer ${DEALS}`,
    );
    await same(
      '/contact?select=display_name,sales:deal(label:name)',
      `SELECT c0.display_name, ${dealsOf('c0', "'label', d.name")} AS sales ${CONTACTS}`,
    );
  });

  it('casts apply inside embeds', async () => {
    await same(
      '/contact?select=display_name,deal(name,value::int,text_value:value::text)',
      'SELECT c0.display_name,' +
        ` ${dealsOf('c0', "'name', d.name, 'value', d.value::int4, 'text_value', d.value::text")}` +
        ` AS deal ${CONTACTS}`,
    );
    await same(
      '/deal?select=name,contact(requests:number_of_marketing_opt_in_requests::text)',
      `SELECT d.name, ${contactOf('d', "'requests', c.number_of_marketing_opt_in_requests::text")} AS contact ${DEALS}`,
    );
  });

  it('keys come in select order, at every level', async () => {
    const body = await ok(t, f.org.token, '/deal?select=name,contact(email,display_name,id),id&name=eq.Big');
    expect(Object.keys(body[0])).toEqual(['name', 'contact', 'id']);
    expect(Object.keys(body[0].contact)).toEqual(['email', 'display_name', 'id']);
  });

  it('nests two levels: appointment -> contact -> deal', async () => {
    await same(
      '/appointment?select=name,contact(full_name,deal(name,value))',
      "SELECT a.name, (SELECT json_build_object('full_name', c.full_name," +
        ` 'deal', ${dealsOf('c', "'name', d.name, 'value', d.value")})` +
        ` FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = a.contact_id) AS contact ${APPOINTMENTS}`,
    );
  });

  it('nests three levels: appointment -> contact -> deal -> contact', async () => {
    await same(
      '/appointment?select=name,contact(display_name,deal(name,contact(email)))',
      `SELECT a.name, (SELECT json_build_object('display_name', c1.display_name, 'deal',` +
        " coalesce((SELECT json_agg(json_build_object('name', d.name," +
        ` 'contact', ${contactOf('d', "'email', c.email")}))` +
        ` FROM deal d WHERE d.organisation_id = $1::uuid AND d.contact_id = c1.id), '[]'::json))` +
        ` FROM contact c1 WHERE c1.organisation_id = $1::uuid AND c1.id = a.contact_id) AS contact ${APPOINTMENTS}`,
    );
  });

  it('an empty embed contact() is not shown', async () => {
    await same('/deal?select=name,contact()', `SELECT d.name ${DEALS}`);
    await same('/contact?select=display_name,deal(),appointment()', `SELECT c0.display_name ${CONTACTS}`);
  });

  it('embeds the same relation twice under two aliases', async () => {
    await same(
      '/contact?select=display_name,won:deal(name),lost:deal(name)&won.won_at=not.is.null&lost.lost_at=not.is.null',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", 'AND d.won_at IS NOT NULL')} AS won,` +
        ` ${dealsOf('c0', "'name', d.name", 'AND d.lost_at IS NOT NULL')} AS lost ${CONTACTS}`,
    );
  });
});

describe('!inner, !left and embed null checks', () => {
  it('!inner drops the parent rows without a match', async () => {
    await same(
      '/deal?select=name,contact!inner(display_name)',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS} AND ${HAS_CONTACT}`,
    );
    await same(
      '/contact?select=display_name,deal!inner(name)',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name")} AS deal ${CONTACTS} AND ${hasDeal()}`,
    );
  });

  it("!inner with the embed's filters filters the parent too", async () => {
    await same(
      '/contact?select=display_name,deal!inner(name,value)&deal.value=gt.100',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name, 'value', d.value", 'AND d.value > 100')} AS deal` +
        ` ${CONTACTS} AND ${hasDeal('AND d.value > 100')}`,
    );
    await same(
      '/deal?select=name,contact!inner(city)&contact.city=eq.Bern',
      `SELECT d.name, ${contactOf('d', "'city', c.city")} AS contact ${DEALS}` +
        ` AND EXISTS (SELECT 1 ${CONTACT_C} AND c.city = 'Bern')`,
    );
  });

  it('an empty !inner embed only filters', async () => {
    await same('/deal?select=name,contact!inner()', `SELECT d.name ${DEALS} AND ${HAS_CONTACT}`);
  });

  it('!left is the default join', async () => {
    await same('/deal?select=name,contact!left(display_name)', `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS}`);
  });

  it("without !inner the embed's filters leave the parent rows alone", async () => {
    await same(
      '/deal?select=name,contact(display_name)&contact.city=eq.Bern',
      `SELECT d.name, (SELECT json_build_object('display_name', c.display_name) FROM contact c` +
        ` WHERE c.organisation_id = $1::uuid AND c.id = d.contact_id AND c.city = 'Bern') AS contact ${DEALS}`,
    );
  });

  it('contact=is.null and contact=not.is.null test for a match', async () => {
    await same('/deal?select=name,contact()&contact=is.null', `SELECT d.name ${DEALS} AND NOT ${HAS_CONTACT}`);
    await same(
      '/deal?select=name,contact(display_name)&contact=not.is.null',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS} AND ${HAS_CONTACT}`,
    );
    await same(
      '/contact?select=display_name,deal()&deal=is.null',
      `SELECT c0.display_name ${CONTACTS} AND NOT ${hasDeal()}`,
    );
  });

  it("the null check sees the embed after its filters (PostgREST's inner join by null filter)", async () => {
    await same(
      '/contact?select=display_name,deal(name)&deal.currency=eq.EUR&deal=not.is.null',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", "AND d.currency = 'EUR'")} AS deal ${CONTACTS}` +
        ` AND ${hasDeal("AND d.currency = 'EUR'")}`,
    );
    await same(
      '/contact?select=display_name,deal()&deal.currency=eq.EUR&deal=is.null',
      `SELECT c0.display_name ${CONTACTS} AND NOT ${hasDeal("AND d.currency = 'EUR'")}`,
    );
  });

  it('an alias names the embed in null checks', async () => {
    await same('/deal?select=name,buyer:contact()&buyer=is.null', `SELECT d.name ${DEALS} AND NOT ${HAS_CONTACT}`);
    await same(
      '/deal?select=name,buyer:contact()&or=(buyer.not.is.null,name.eq.Orphan)',
      `SELECT d.name ${DEALS} AND (${HAS_CONTACT} OR d.name = 'Orphan')`,
    );
  });

  it('!inner with contact=is.null matches nothing', async () => {
    expect(await ok(t, f.org.token, '/deal?select=name,contact!inner(display_name)&contact=is.null')).toEqual([]);
  });

  it('!inner sees the embed after its limit and offset', async () => {
    await same(
      '/contact?select=display_name,deal!inner(name)&deal.order=id&deal.offset=2',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", 'ORDER BY d.id OFFSET 2')} AS deal ${CONTACTS}` +
        ` AND (SELECT count(*) FROM deal d WHERE d.organisation_id = $1::uuid AND d.contact_id = c0.id) > 2`,
    );
    // An embed limited to no rows has none: every parent row is left out, whatever its deals.
    expect(await ok(t, f.org.token, '/contact?select=display_name,deal!inner(name)&deal.limit=0')).toEqual([]);
    expect(await ok(t, f.org.token, '/contact?select=display_name,deal!inner(name)&deal.limit=1')).not.toEqual([]);
  });

  it('a nested !inner filters every level above it', async () => {
    await same(
      '/appointment?select=name,contact!inner(display_name,deal!inner(name))&contact.deal.value=gt.600',
      `SELECT a.name, (SELECT json_build_object('display_name', c.display_name, 'deal',` +
        ` ${dealsOf('c', "'name', d.name", 'AND d.value > 600')}) FROM contact c WHERE c.organisation_id = $1::uuid` +
        ` AND c.id = a.contact_id) AS contact ${APPOINTMENTS} AND EXISTS (SELECT 1 FROM contact c` +
        ' WHERE c.organisation_id = $1::uuid AND c.id = a.contact_id AND EXISTS (SELECT 1 FROM deal d' +
        ' WHERE d.organisation_id = $1::uuid AND d.contact_id = c.id AND d.value > 600))',
    );
  });

  it('null checks on a nested embed (contact.deal=is.null, contact.deal=not.is.null)', async () => {
    const contactWith = (check: string) =>
      `(SELECT json_build_object('display_name', c.display_name) FROM contact c WHERE c.organisation_id = $1::uuid` +
      ` AND c.id = a.contact_id AND ${check} EXISTS (SELECT 1 FROM deal d WHERE d.organisation_id = $1::uuid` +
      ' AND d.contact_id = c.id))';
    await same(
      '/appointment?select=name,contact(display_name,deal())&contact.deal=is.null',
      `SELECT a.name, ${contactWith('NOT')} AS contact ${APPOINTMENTS}`,
    );
    await same(
      '/appointment?select=name,contact(display_name,deal())&contact.deal=not.is.null&contact=not.is.null',
      `SELECT a.name, ${contactWith('')} AS contact ${APPOINTMENTS} AND ${contactWith('')} IS NOT NULL`,
    );
  });

  it('null checks inside or=(...) and not.or=(...)', async () => {
    await same(
      '/deal?select=name,contact()&or=(contact.is.null,name.eq.Small)',
      `SELECT d.name ${DEALS} AND (NOT ${HAS_CONTACT} OR d.name = 'Small')`,
    );
    await same(
      '/contact?select=display_name,deal()&or=(deal.not.is.null,display_name.eq.Dee)',
      `SELECT c0.display_name ${CONTACTS} AND (${hasDeal()} OR c0.display_name = 'Dee')`,
    );
    await same(
      '/deal?select=name,contact()&not.or=(contact.is.null,currency.eq.EUR)',
      `SELECT d.name ${DEALS} AND NOT (NOT ${HAS_CONTACT} OR d.currency = 'EUR')`,
    );
  });
});

describe('filters, logic trees, order, limit and offset inside an embed', () => {
  it('a filter on the embed', async () => {
    await same(
      '/contact?select=display_name,deal(name)&deal.value=gt.100',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", 'AND d.value > 100')} AS deal ${CONTACTS}`,
    );
  });

  it('or=(...) and not.and=(...) on the embed', async () => {
    await same(
      '/contact?select=display_name,deal(name)&deal.or=(value.gt.600,currency.eq.EUR)',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", "AND (d.value > 600 OR d.currency = 'EUR')")}` +
        ` AS deal ${CONTACTS}`,
    );
    await same(
      '/contact?select=display_name,deal(name)&deal.not.and=(value.gt.5,currency.eq.EUR)',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", "AND NOT (d.value > 5 AND d.currency = 'EUR')")}` +
        ` AS deal ${CONTACTS}`,
    );
  });

  it('order, limit and offset on the embed', async () => {
    const PAGE = 'LIMIT 1 OFFSET 1';
    await same(
      '/contact?select=display_name,deal(name,won_at)&deal.order=won_at.desc.nullslast,id&deal.limit=1&deal.offset=1',
      'SELECT c0.display_name,' +
        ` ${dealsOf('c0', "'name', d.name, 'won_at', d.won_at", `ORDER BY d.won_at DESC NULLS LAST, d.id ${PAGE}`)}` +
        ` AS deal ${CONTACTS}`,
    );
    await same(
      '/contact?select=display_name,deal(name)&deal.order=won_at.asc,id&order=display_name',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", 'ORDER BY d.won_at ASC, d.id')} AS deal ${CONTACTS}` +
        ' ORDER BY c0.display_name',
      'all',
    );
  });

  it('an aliased embed takes its parameters by its alias', async () => {
    await same(
      '/contact?select=display_name,big:deal(name)&big.value=gt.100&big.limit=5',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name", 'AND d.value > 100 LIMIT 5')} AS big ${CONTACTS}`,
    );
  });

  it('nested embed parameters: contact.deal.order, contact.deal.limit, contact.deal.value', async () => {
    await same(
      '/appointment?select=name,contact(display_name,deal(name))' +
        '&contact.deal.order=won_at.asc.nullslast,id&contact.deal.limit=1',
      `SELECT a.name, (SELECT json_build_object('display_name', c.display_name, 'deal',` +
        ` ${dealsOf('c', "'name', d.name", 'ORDER BY d.won_at ASC NULLS LAST, d.id LIMIT 1')})` +
        ` FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = a.contact_id) AS contact ${APPOINTMENTS}`,
    );
    await same(
      '/appointment?select=name,contact(display_name,deal(name))&contact.deal.value=lt.600&contact.display_name=eq.Ada',
      `SELECT a.name, (SELECT json_build_object('display_name', c.display_name, 'deal',` +
        ` ${dealsOf('c', "'name', d.name", 'AND d.value < 600')}) FROM contact c WHERE c.organisation_id = $1::uuid` +
        ` AND c.id = a.contact_id AND c.display_name = 'Ada') AS contact ${APPOINTMENTS}`,
    );
  });

  it('the parent page is taken before embedding', async () => {
    await same(
      '/contact?select=display_name,deal(name)&order=display_name.desc&limit=2&offset=1',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name")} AS deal ${CONTACTS}` +
        ' ORDER BY c0.display_name DESC LIMIT 2 OFFSET 1',
      'rows',
    );
  });
});

describe('ordering the parent by a to-one embed', () => {
  it('order=contact(display_name).desc, then by id', async () => {
    await same(
      '/deal?select=name,contact(display_name)&order=contact(display_name).desc,id',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS} ORDER BY ${CONTACT_NAME} DESC, d.id`,
      'all',
    );
  });

  it('ascending puts the deals without a contact last; nullsfirst puts them first', async () => {
    await same(
      '/deal?select=name,contact()&order=contact(display_name),id',
      `SELECT d.name ${DEALS} ORDER BY ${CONTACT_NAME} ASC, d.id`,
      'all',
    );
    await same(
      '/deal?select=name,contact(display_name)&order=contact(display_name).asc.nullsfirst,id',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS}` + ` ORDER BY ${CONTACT_NAME} ASC NULLS FIRST, d.id`,
      'all',
    );
  });

  it('order by the alias of a to-one embed', async () => {
    await same(
      '/deal?select=name,buyer:contact(display_name)&order=buyer(display_name).desc,id',
      `SELECT d.name, ${CONTACT_OBJECT} AS buyer ${DEALS} ORDER BY ${CONTACT_NAME} DESC, d.id`,
      'all',
    );
  });

  it("order by a to-one embed's timestamp, then by a field of the parent", async () => {
    await same(
      '/appointment?select=name,contact(display_name)&order=contact(created_at).desc,start_time',
      `SELECT a.name, ${contactOf('a', "'display_name', c.display_name")} AS contact ${APPOINTMENTS}` +
        ' ORDER BY (SELECT c.created_at FROM contact c' +
        ' WHERE c.organisation_id = $1::uuid AND c.id = a.contact_id) DESC,' +
        ' a.start_time',
      'all',
    );
  });
});

describe('spread', () => {
  it('a to-one spread lifts its fields into the parent (null when there is no match)', async () => {
    const body = await same(
      '/deal?select=name,...contact(display_name,email)',
      `SELECT d.name, c.display_name, c.email ${DEALS_LEFT_JOIN_CONTACT}`,
    );
    expect(Object.keys(body[0])).toEqual(['name', 'display_name', 'email']);
  });

  it('a to-one spread with aliases, and with !inner', async () => {
    await same(
      '/deal?select=name,...contact!inner(who:display_name)',
      'SELECT d.name, c.display_name AS who FROM deal d' +
        ' JOIN contact c ON c.organisation_id = $1::uuid AND c.id = d.contact_id' +
        ' WHERE d.organisation_id = $1::uuid',
    );
  });

  it('a to-many spread gives each field as an array, [] when none', async () => {
    const body = await same(
      '/contact?select=display_name,...deal(name,won_at)&deal.order=id',
      'SELECT c0.display_name,' +
        ` coalesce((SELECT json_agg(d.name ORDER BY d.id) ${DEALS_OF_C0}), '[]'::json) AS name,` +
        ` coalesce((SELECT json_agg(d.won_at ORDER BY d.id) ${DEALS_OF_C0}), '[]'::json) AS won_at` +
        ` ${CONTACTS} ORDER BY c0.display_name`,
      'none',
    );
    // Unordered above sorts each array alone; the arrays must also keep the deals' order together.
    const expected = await rowsOf(
      t,
      `SELECT c0.display_name, coalesce((SELECT json_agg(d.name ORDER BY d.id) ${DEALS_OF_C0}), '[]'::json) AS name` +
        ` ${CONTACTS}`,
      [f.org.id],
    );
    for (const row of expected) {
      const got = body.find((r: { display_name: string }) => r.display_name === row.display_name);
      expect(got.name, row.display_name).toEqual(row.name);
    }
    expect(body.find((r: { display_name: string }) => r.display_name === 'Dee')).toEqual({
      display_name: 'Dee',
      name: [],
      won_at: [],
    });
  });

  it('a spread nested in an embed', async () => {
    await same(
      '/appointment?select=name,contact(display_name,...deal(name))&contact.deal.order=id',
      `SELECT a.name, (SELECT json_build_object('display_name', c.display_name, 'name',` +
        ` coalesce((SELECT json_agg(d.name ORDER BY d.id) ${DEALS_OF_C0.replace('c0', 'c')}), '[]'::json))` +
        ` FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = a.contact_id) AS contact ${APPOINTMENTS}`,
      'rows',
    );
  });
});

describe('appointment_details embedded', () => {
  /** An appointment's row with its custom-field values typed by custom_field.type, all in org $1. */
  const details = (a: string) =>
    `to_jsonb(${a}) || coalesce((SELECT jsonb_object_agg(f.key,` +
    " CASE f.type WHEN 'number' THEN to_jsonb(v.number_value) ELSE to_jsonb(v.string_value) END)" +
    ' FROM appointment_custom_field v JOIN custom_field f ON f.organisation_id = v.organisation_id' +
    ` AND f.id = v.custom_field_id WHERE v.organisation_id = $1::uuid AND v.appointment_id = ${a}.id), '{}'::jsonb)`;

  it('brings its custom-field properties with *', async () => {
    const body = await same(
      '/contact?select=display_name,appointment_details(*)',
      `SELECT c0.display_name, coalesce((SELECT json_agg(${details('a')})` +
        ' FROM appointment a WHERE a.organisation_id = $1::uuid' +
        ` AND a.contact_id = c0.id), '[]'::json) AS appointment_details ${CONTACTS}`,
    );
    const ada = body.find((r: { display_name: string }) => r.display_name === 'Ada');
    const first = ada.appointment_details.find((a: { name: string }) => a.name === 'First');
    expect(first).toMatchObject({ id: f.appointment.First, room: 'A1', size: 12.5 });
    expect(first).not.toHaveProperty('leak');
  });

  it('gives only the named fields without *', async () => {
    await same(
      '/contact?select=display_name,appointment_details(name)',
      `SELECT c0.display_name, coalesce((SELECT json_agg(json_build_object('name', a.name)) FROM appointment a` +
        ` WHERE a.organisation_id = $1::uuid AND a.contact_id = c0.id), '[]'::json) AS appointment_details ${CONTACTS}`,
    );
  });

  it('to one, from a custom-field value', async () => {
    await same(
      '/appointment_custom_field?select=key,appointment_details(*)',
      `SELECT v0.key, (SELECT ${details('a')}` +
        ' FROM appointment a WHERE a.organisation_id = $1::uuid AND a.id = v0.appointment_id)' +
        ' AS appointment_details FROM appointment_custom_field v0 WHERE v0.organisation_id = $1::uuid',
    );
  });
});

describe('naming a relation', () => {
  it('by the foreign key name, or by the foreign key field; the key is the name as written', async () => {
    await same(
      '/deal?select=name,deal_contact_fkey(display_name)',
      `SELECT d.name, ${CONTACT_OBJECT} AS deal_contact_fkey ${DEALS}`,
    );
    await same('/deal?select=name,contact_id(display_name)', `SELECT d.name, ${CONTACT_OBJECT} AS contact_id ${DEALS}`);
  });

  it('a filter on the field that names the embed filters the field, not the embed', async () => {
    await same(
      '/deal?select=name,contact_id,buyer:contact_id(display_name)&contact_id=is.null',
      `SELECT d.name, d.contact_id, ${CONTACT_OBJECT} AS buyer ${DEALS} AND d.contact_id IS NULL`,
    );
    await same(
      `/deal?select=name,contact_id(display_name)&contact_id=eq.${f.contact.Ada}`,
      `SELECT d.name, ${CONTACT_OBJECT} AS contact_id ${DEALS} AND d.contact_id = (SELECT id FROM contact` +
        " WHERE organisation_id = $1::uuid AND display_name = 'Ada')",
    );
  });

  it('with a !hint naming the foreign key or its field', async () => {
    await same(
      '/deal?select=name,contact!deal_contact_fkey(display_name)',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS}`,
    );
    await same(
      '/deal?select=name,contact!contact_id(display_name)',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS}`,
    );
    await same(
      '/deal?select=name,contact!deal_contact_fkey!inner(display_name)',
      `SELECT d.name, ${CONTACT_OBJECT} AS contact ${DEALS}` +
        ' AND EXISTS (SELECT 1 FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = d.contact_id)',
    );
    await same(
      '/contact?select=display_name,deal!deal_contact_fkey(name)',
      `SELECT c0.display_name, ${dealsOf('c0', "'name', d.name")} AS deal ${CONTACTS}`,
    );
  });
});

describe('counts, HEAD and a single object', () => {
  const count = async (path: string) => {
    const answer = await call(t, f.org.token, path, { Prefer: 'count=exact' });
    expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
    return { answer, range: answer.res.headers.get('content-range') };
  };
  const total = async (sql: string) => Number((await t.db.query<{ n: string }>(sql, [f.org.id]))[0]!.n);

  it('counts parent rows, honouring !inner', async () => {
    const n = await total(`SELECT count(*) AS n ${DEALS} AND ${HAS_CONTACT}`);
    const { answer, range } = await count('/deal?select=name,contact!inner(display_name)');
    expect(range).toBe(`0-${n - 1}/${n}`);
    expect(answer.body).toHaveLength(n);
  });

  it('counts parent rows, honouring embed null checks, not the rows of to-many embeds', async () => {
    const none = await total(`SELECT count(*) AS n ${DEALS} AND NOT ${HAS_CONTACT}`);
    expect((await count('/deal?select=name,contact()&contact=is.null')).range).toBe(`0-${none - 1}/${none}`);
    const withDeals = await total(`SELECT count(*) AS n ${CONTACTS} AND ${hasDeal()}`);
    const { answer, range } = await count('/contact?select=display_name,deal(name)&deal=not.is.null&limit=1');
    expect(range).toBe(`0-0/${withDeals}`);
    expect(answer.status).toBe(206);
    const all = await total(`SELECT count(*) AS n ${CONTACTS}`);
    expect((await count('/contact?select=display_name,deal(name)')).range).toBe(`0-${all - 1}/${all}`);
  });

  it('count=estimated and count=planned honour embed null checks and !inner (small results are exact)', async () => {
    const none = await total(`SELECT count(*) AS n ${DEALS} AND NOT ${HAS_CONTACT}`);
    for (const prefer of ['count=estimated', 'count=planned']) {
      const answer = await call(t, f.org.token, '/deal?select=name,contact()&contact=is.null', { Prefer: prefer });
      expect(answer.res.headers.get('content-range'), prefer).toBe(`0-${none - 1}/${none}`);
      const inner = await call(t, f.org.token, '/deal?select=name,contact!inner()', { Prefer: prefer });
      expect(inner.res.headers.get('content-range'), prefer).toBe(`0-${inner.body.length - 1}/${inner.body.length}`);
    }
  });

  it('HEAD answers the headers of the GET with an embed, without a body', async () => {
    const n = await total(
      `SELECT count(*) AS n ${CONTACTS} AND EXISTS (SELECT 1 FROM deal d WHERE d.organisation_id = $1::uuid` +
        ' AND d.contact_id = c0.id AND d.value > 5)',
    );
    const res = await t.call('/contact?select=display_name,deal!inner(name)&deal.value=gt.5', f.org.token, {
      method: 'HEAD',
      headers: { Prefer: 'count=exact' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBe(`0-${n - 1}/${n}`);
    expect(await res.text()).toBe('');
  });

  it('Accept: application/vnd.pgrst.object+json gives the one row with its embeds', async () => {
    const object = { Accept: 'application/vnd.pgrst.object+json' };
    const answer = await call(t, f.org.token, '/deal?select=name,contact(display_name,deal(name))&name=eq.Big', object);
    expect(answer.status).toBe(200);
    expect(answer.res.headers.get('content-type')).toMatch(/^application\/vnd\.pgrst\.object\+json/);
    const [expected] = await rowsOf(
      t,
      "SELECT d0.name, (SELECT json_build_object('display_name', c.display_name," +
        ` 'deal', ${dealsOf('c', "'name', d.name")})` +
        ' FROM contact c WHERE c.organisation_id = $1::uuid AND c.id = d0.contact_id) AS contact FROM deal d0' +
        " WHERE d0.organisation_id = $1::uuid AND d0.name = 'Big'",
      [f.org.id],
    );
    expect(unordered(answer.body)).toEqual(unordered(expected));
    const many = await call(t, f.org.token, '/deal?select=name,contact!inner(display_name)', object);
    expect(many.status).toBe(406);
    expect(many.body.code).toBe('NOT_ACCEPTABLE');
  });
});
