/**
 * MAX_ROWS bounds every level of a read, as PostgREST's db-max-rows does ("applies to embedded
 * tables", PostgREST issue 2776; ../shared/reference/postgrest-semantics.md section 4.1): an embed
 * never lists more rows than the cap, whatever its own limit says. Here the cap is 2 and Ada has
 * three deals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.ts';
import { call, ok, type RelationsFixture, rowsOf, seedRelations } from './helpers/relations.ts';

const MAX_ROWS = 2;
let t: TestApp;
let f: RelationsFixture;

beforeAll(async () => {
  t = await createTestApp({ maxRows: MAX_ROWS });
  f = await seedRelations(t);
});
afterAll(() => t?.drop());

/** Ada's deals' names by id, the first `limit`. */
const adasDeals = async (limit: number) =>
  (
    await rowsOf(
      t,
      'SELECT d.name FROM deal d JOIN contact c ON c.organisation_id = d.organisation_id AND c.id = d.contact_id' +
        ` WHERE d.organisation_id = $1::uuid AND c.display_name = 'Ada' ORDER BY d.id LIMIT ${limit}`,
      [f.org.id],
    )
  ).map((r) => r.name);

describe('MAX_ROWS', () => {
  it('the fixture gives Ada more deals than the cap', async () => {
    expect((await adasDeals(100)).length).toBeGreaterThan(MAX_ROWS);
  });

  it('caps the top level (206 with the count)', async () => {
    const answer = await call(t, f.org.token, '/deal?select=name,contact(display_name)', { Prefer: 'count=exact' });
    expect(answer.status).toBe(206);
    expect(answer.body).toHaveLength(MAX_ROWS);
  });

  it('caps a to-many embed', async () => {
    const body = await ok(t, f.org.token, '/contact?select=display_name,deal(name)&deal.order=id&display_name=eq.Ada');
    expect(body).toEqual([{ display_name: 'Ada', deal: (await adasDeals(MAX_ROWS)).map((name) => ({ name })) }]);
  });

  it('caps a to-many embed whose own limit is larger', async () => {
    const body = await ok(
      t,
      f.org.token,
      '/contact?select=display_name,deal(name)&deal.order=id&deal.limit=10&display_name=eq.Ada',
    );
    expect(body).toEqual([{ display_name: 'Ada', deal: (await adasDeals(MAX_ROWS)).map((name) => ({ name })) }]);
  });

  it('caps a to-many spread', async () => {
    const body = await ok(
      t,
      f.org.token,
      '/contact?select=display_name,...deal(name)&deal.order=id&display_name=eq.Ada',
    );
    expect(body).toEqual([{ display_name: 'Ada', name: await adasDeals(MAX_ROWS) }]);
  });

  it('an embed limit under the cap still applies', async () => {
    const body = await ok(
      t,
      f.org.token,
      '/contact?select=display_name,deal(name)&deal.order=id&deal.limit=1&display_name=eq.Ada',
    );
    expect(body).toEqual([{ display_name: 'Ada', deal: (await adasDeals(1)).map((name) => ({ name })) }]);
  });
});
