/**
 * Server-Timing (SERVER_TIMING=1) and statement plans (PLAN_ENABLED=1): postgrest-js's
 * `.explain()` gets the plan of the very statement the request would run, in the caller's scope;
 * writes are only planned, or analyzed in a transaction that is rolled back.
 */
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../server/build.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

const BASE = 'http://engage.test/api/v1';
let t: TestDatabase;
let org: Organisation;
let plans: ReturnType<typeof buildApi>['app'];
let plain: ReturnType<typeof buildApi>['app'];

function client(app: typeof plans, token: string) {
  return new PostgrestClient(BASE, {
    headers: { Authorization: `Bearer ${token}` },
    fetch: (input, init) => Promise.resolve(app.request(input instanceof Request ? input.url : String(input), init)),
  });
}

beforeAll(async () => {
  t = await createTestDatabase();
  org = await createOrganisation(t);
  await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada' }, { display_name: 'Bob' }]);
  plans = buildApi({ db: t.db, planEnabled: true, serverTiming: true }).app;
  plain = buildApi({ db: t.db }).app;
});
afterAll(() => t?.drop());

const call = (app: typeof plans, path: string, init: RequestInit = {}) => {
  const headers = new Headers(init.headers);
  headers.set('Authorization', `Bearer ${org.token}`);
  return app.request(`/api/v1${path}`, { ...init, headers });
};

describe('Server-Timing', () => {
  it('names each stage with its duration when SERVER_TIMING is on', async () => {
    for (const path of ['/contact?select=id', '/contact?select=id']) {
      const res = await call(plans, path);
      expect(res.status).toBe(200);
      const header = res.headers.get('server-timing')!;
      expect(header).toMatch(
        /^parse;dur=\d+\.\d, plan;dur=\d+\.\d, compile;dur=\d+\.\d, db;dur=\d+\.\d, respond;dur=\d+\.\d$/,
      );
    }
    const write = await call(plans, '/calendar', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'Timed' }),
    });
    expect(write.status).toBe(201);
    expect(write.headers.get('server-timing')).toMatch(/^parse;dur=.*respond;dur=/);
  });

  it('is absent when off', async () => {
    expect((await call(plain, '/contact?select=id')).headers.get('server-timing')).toBeNull();
  });
});

describe('plans', () => {
  it('postgrest-js explain() gets the text plan of the read, scoped to the organisation', async () => {
    const { data, error, status } = await client(plans, org.token).from('contact').select('id,display_name').explain();
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(typeof data).toBe('string');
    expect(data as unknown as string).toMatch(/cost=/);
    expect(data as unknown as string).toMatch(/contact/);
  });

  it('explain({ format: json, analyze }) gets the JSON plan with actual rows of this organisation only', async () => {
    const other = await createOrganisation(t);
    await insertRows(t.db, 'contact', other.id, [{ display_name: 'X' }, { display_name: 'Y' }, { display_name: 'Z' }]);
    const { data, error } = await client(plans, other.token)
      .from('contact')
      .select('id')
      .explain({ format: 'json', analyze: true });
    expect(error).toBeNull();
    const plan = (data as unknown as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan;
    expect(plan['Node Type']).toBeDefined();
    expect(plan['Actual Rows']).toBe(1); // one row: the JSON of this organisation's page
    expect(JSON.stringify(data)).toMatch(/"Actual Rows":3\b/);
  });

  it('answers the plan media type with its own Content-Type', async () => {
    const res = await call(plans, '/contact?select=id', {
      headers: { Accept: 'application/vnd.pgrst.plan+json; for="application/json"' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(
      'application/vnd.pgrst.plan+json; for="application/json"; charset=utf-8',
    );
    expect(Array.isArray(await res.json())).toBe(true);
    const prefer = await call(plans, '/contact?select=id', { headers: { Prefer: 'explain' } });
    expect(prefer.headers.get('content-type')).toContain('application/vnd.pgrst.plan+json');
  });

  it('plans a write without running it; analyze runs it in a rolled-back transaction', async () => {
    const count = async () =>
      (
        await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM calendar WHERE organisation_id = $1', [org.id])
      )[0]!.n;
    const before = await count();
    const db = client(plans, org.token);
    const planned = await db.from('calendar').insert({ name: 'Never' }).explain({ format: 'json' });
    expect(planned.error).toBeNull();
    expect(JSON.stringify(planned.data)).toMatch(/Insert|ModifyTable/);
    const analyzed = await db.from('calendar').insert({ name: 'Never' }).explain({ analyze: true });
    expect(analyzed.error).toBeNull();
    expect(analyzed.data as unknown as string).toMatch(/actual time=/);
    const deleted = await db.from('calendar').delete().eq('name', 'Timed').explain({ analyze: true });
    expect(deleted.error).toBeNull();
    expect(await count()).toBe(before);
  });

  it('needs a valid token', async () => {
    const res = await plans.request('/api/v1/contact?select=id', {
      headers: { Authorization: `Bearer engage_${'Q'.repeat(43)}`, Accept: 'application/vnd.pgrst.plan+text' },
    });
    expect(res.status).toBe(401);
  });

  it('is 406 when PLAN_ENABLED is off, as PostgREST without db-plan-enabled', async () => {
    const { error, status } = await client(plain, org.token).from('contact').select('id').explain();
    expect(status).toBe(406);
    expect(error?.code).toBe('NOT_ACCEPTABLE');
  });
});
