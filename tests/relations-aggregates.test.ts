/**
 * Aggregates in `select` (issue 11, PostgREST's "Aggregate Functions"): count(), sum/avg/min/max with
 * aliases and casts, grouped by the other selected fields and by to-one spreads' fields, at the top
 * level and inside embeds; each answer compared with a hand-written GROUP BY in org A.
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

async function same(path: string, sql: string, ordered = false) {
  const body = await ok(t, f.org.token, path);
  const expected = await rowsOf(t, sql, [f.org.id]);
  expect(expected.length, `the expectation of ${path} is empty`).toBeGreaterThan(0);
  if (ordered) expect(body).toEqual(expected);
  else expect(unordered(body)).toEqual(unordered(expected));
  return body;
}

const DEALS = 'FROM deal d WHERE d.organisation_id = $1::uuid';
const CONTACTS = 'FROM contact c0 WHERE c0.organisation_id = $1::uuid';
/** A json array of the rows of `select` over the deals of contact c0 (org $1), [] when it has none. */
const overDeals = (select: string, tail = '') =>
  `coalesce((SELECT json_agg(x) FROM (SELECT ${select} FROM deal d WHERE d.organisation_id = $1::uuid` +
  ` AND d.contact_id = c0.id ${tail}) x), '[]'::json)`;

describe('top-level aggregates', () => {
  it('count() over the rows', async () => {
    const body = await same('/deal?select=count()', `SELECT count(*) AS count ${DEALS}`);
    expect(Object.keys(body[0])).toEqual(['count']);
  });

  it('sum, avg, min and max, each with an alias', async () => {
    await same(
      '/deal?select=total:value.sum(),mean:value.avg(),low:value.min(),high:value.max(),n:count()',
      'SELECT sum(d.value) AS total, avg(d.value) AS mean, min(d.value) AS low, max(d.value) AS high,' +
        ` count(*) AS n ${DEALS}`,
    );
  });

  it('without an alias the key is the function name', async () => {
    await same('/deal?select=value.sum(),won_at.max()', `SELECT sum(d.value) AS sum, max(d.won_at) AS max ${DEALS}`);
  });

  it('casts: of the result and of the field', async () => {
    await same(
      '/deal?select=total:value.sum()::int,mean:value.avg()::int,rounded:value::int.sum(),value.count()',
      `SELECT sum(d.value)::int4 AS total, avg(d.value)::int4 AS mean, sum(d.value::int4) AS rounded,` +
        ` count(d.value) AS count ${DEALS}`,
    );
    await same('/deal?select=n:count()::text', `SELECT count(*)::text AS n ${DEALS}`);
  });

  it('min and max of text and timestamps', async () => {
    await same(
      '/deal?select=first:name.min(),last:name.max(),won_at.min()',
      `SELECT min(d.name) AS first, max(d.name) AS last, min(d.won_at) AS min ${DEALS}`,
    );
  });

  it('filters apply before aggregating', async () => {
    await same(
      '/deal?select=count(),value.sum()&currency=eq.EUR',
      `SELECT count(*) AS count, sum(d.value) AS sum ${DEALS} AND d.currency = 'EUR'`,
    );
  });

  it('the other selected fields are the grouping', async () => {
    await same(
      '/deal?select=currency,count(),total:value.sum()',
      `SELECT d.currency, count(*) AS count, sum(d.value) AS total ${DEALS} GROUP BY d.currency`,
    );
    await same('/contact?select=city,count()', `SELECT c0.city, count(*) AS count ${CONTACTS} GROUP BY c0.city`);
  });

  it('grouped and ordered by a grouping field', async () => {
    await same(
      '/contact?select=created_at,count()&order=created_at.desc',
      `SELECT c0.created_at, count(*) AS count ${CONTACTS} GROUP BY c0.created_at ORDER BY c0.created_at DESC`,
      true,
    );
  });

  it("grouped by a to-one spread's fields", async () => {
    await same(
      '/deal?select=...contact(city),count(),value.sum()',
      'SELECT c.city, count(*) AS count, sum(d.value) AS sum FROM deal d' +
        ' LEFT JOIN contact c ON c.organisation_id = $1::uuid AND c.id = d.contact_id' +
        ' WHERE d.organisation_id = $1::uuid GROUP BY c.city',
    );
    await same(
      '/deal?select=currency,...contact(town:city),deals:count()',
      'SELECT d.currency, c.city AS town, count(*) AS deals FROM deal d' +
        ' LEFT JOIN contact c ON c.organisation_id = $1::uuid AND c.id = d.contact_id' +
        ' WHERE d.organisation_id = $1::uuid GROUP BY d.currency, c.city',
    );
  });

  it('an empty !inner embed beside an aggregate filters the rows counted', async () => {
    await same(
      '/contact?select=count(),deal!inner()&deal.value=gt.100',
      `SELECT count(*) AS count ${CONTACTS} AND EXISTS (SELECT 1 FROM deal d WHERE d.organisation_id = $1::uuid` +
        ' AND d.contact_id = c0.id AND d.value > 100)',
    );
  });

  it('Prefer: count=exact counts the groups', async () => {
    const [{ n }] = (await t.db.query<{ n: string }>(`SELECT count(DISTINCT coalesce(d.currency, '')) AS n ${DEALS}`, [
      f.org.id,
    ])) as [{ n: string }];
    const answer = await call(t, f.org.token, '/deal?select=currency,count()', { Prefer: 'count=exact' });
    expect(answer.status).toBe(200);
    expect(answer.res.headers.get('content-range')).toBe(`0-${Number(n) - 1}/${n}`);
    const single = await call(t, f.org.token, '/deal?select=count()', { Prefer: 'count=exact' });
    expect(single.res.headers.get('content-range')).toBe('0-0/1');
  });
});

describe('aggregates inside embeds', () => {
  it('a bare count in a to-many embed is count()', async () => {
    const body = await same(
      '/contact?select=display_name,deal(count)',
      `SELECT c0.display_name, ${overDeals('count(*) AS count')} AS deal ${CONTACTS}`,
    );
    expect(body.find((r: { display_name: string }) => r.display_name === 'Dee').deal).toEqual([{ count: 0 }]);
  });

  it('count() and value.sum() with aliases and casts in an embed', async () => {
    await same(
      '/contact?select=display_name,deal(n:count(),total:value.sum()::text,value.avg())',
      `SELECT c0.display_name, ${overDeals('count(*) AS n, sum(d.value)::text AS total, avg(d.value) AS avg')}` +
        ` AS deal ${CONTACTS}`,
    );
  });

  it('grouped inside the embed: [] where there are no rows to group', async () => {
    const body = await same(
      '/contact?select=display_name,deal(currency,count())',
      `SELECT c0.display_name, ${overDeals('d.currency, count(*) AS count', 'GROUP BY d.currency')}` +
        ` AS deal ${CONTACTS}`,
    );
    expect(body.find((r: { display_name: string }) => r.display_name === 'Dee').deal).toEqual([]);
  });

  it("the embed's filters apply before aggregating", async () => {
    await same(
      '/contact?select=display_name,deal(value.sum())&deal.currency=eq.EUR',
      `SELECT c0.display_name, ${overDeals('sum(d.value) AS sum', "AND d.currency = 'EUR'")} AS deal ${CONTACTS}`,
    );
  });

  it('an aggregate in a to-one embed', async () => {
    await same(
      '/deal?select=name,contact(count())',
      "SELECT d.name, (SELECT json_build_object('count', count(*)) FROM contact c WHERE c.organisation_id = $1::uuid" +
        ` AND c.id = d.contact_id) AS contact ${DEALS}`,
    );
  });

  it('an aggregate two levels down', async () => {
    await same(
      '/appointment?select=name,contact(display_name,deal(value.max()))',
      "SELECT a.name, (SELECT json_build_object('display_name', c0.display_name," +
        ` 'deal', ${overDeals('max(d.value) AS max')})` +
        ' FROM contact c0 WHERE c0.organisation_id = $1::uuid AND c0.id = a.contact_id) AS contact' +
        ' FROM appointment a WHERE a.organisation_id = $1::uuid',
    );
  });
});
