/** Reads through HTTP: every GET resource of the spec, the page headers and the singular form. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/app.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let org: Organisation;
let contacts: string[];
let appointments: string[];

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  contacts = await insertRows(t.db, 'contact', org.id, [
    {
      display_name: 'Ada',
      email: 'ada@example.com',
      city: 'Zürich',
      birthday: '1815-12-10',
      number_of_marketing_opt_in_requests: 2,
    },
    { display_name: 'Bob', email: 'bob@example.com', city: 'Bern', is_blocked: true },
    { display_name: 'Cy', email: null, city: 'Zürich' },
  ]);
  appointments = await insertRows(t.db, 'appointment', org.id, [
    { name: 'First', contact_id: contacts[0], start_time: '2026-12-01T09:00:00Z' },
    { name: 'Second', contact_id: contacts[1], start_time: '2026-12-02T09:00:00Z' },
  ]);
  const [room, size, tags] = await insertRows(t.db, 'custom_field', org.id, [
    { name: 'Room', key: 'room', type: 'string', entity: 'appointment' },
    { name: 'Size', key: 'size', type: 'number', entity: 'appointment' },
    { name: 'Tags', key: 'tags', type: 'string_list', entity: 'appointment' },
  ]);
  await insertRows(t.db, 'appointment_custom_field', org.id, [
    { appointment_id: appointments[0], custom_field_id: room, key: 'room', string_value: 'A1', value: 'A1' },
    { appointment_id: appointments[0], custom_field_id: size, key: 'size', number_value: 12.5, value: '12.5' },
    { appointment_id: appointments[0], custom_field_id: tags, key: 'tags', string_list_value: ['x', 'y'] },
  ]);
  await insertRows(t.db, 'deal', org.id, [
    { name: 'Big', value: 1000.5, currency: 'CHF', won_at: '2026-10-01T00:00:00Z' },
    { name: 'Small', value: 10, currency: 'EUR', lost_at: '2026-10-02T00:00:00Z' },
  ]);
  await insertRows(t.db, 'segment', org.id, [{ name: 'All', is_default: true }]);
  await insertRows(t.db, 'calendar', org.id, [{ name: 'Desk', type: 'virtual' }]);
  await insertRows(t.db, 'campaign', org.id, [{ name: 'Winter' }]);
});
afterAll(() => t?.drop());

const get = async (path: string, headers: Record<string, string> = {}) => {
  const res = await t.call(path, org.token, { headers });
  const text = await res.text();
  return { res, status: res.status, body: text ? JSON.parse(text) : null };
};

describe('GET on every readable resource', () => {
  it.each([
    'segment',
    'appointment',
    'appointment_details',
    'appointment_custom_field',
    'calendar',
    'deal',
    'contact',
    'campaign',
  ])("%s answers 200 with a JSON array of the organisation's rows", async (resource) => {
    const { status, body, res } = await get(`/${resource}`);
    expect(status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Array.isArray(body)).toBe(true);
    expect(body.length).toBeGreaterThan(0);
    for (const row of body) if ('organisation_id' in row) expect(row.organisation_id).toBe(org.id);
  });
});

describe('values leave the API typed', () => {
  it('timestamps as ISO 8601 with offset, dates as YYYY-MM-DD, numeric as numbers, booleans, integers', async () => {
    const { body } = await get(
      '/contact?display_name=eq.Ada&select=birthday,created_at,is_blocked,number_of_marketing_opt_in_requests',
    );
    expect(body).toHaveLength(1);
    expect(body[0].birthday).toBe('1815-12-10');
    expect(body[0].created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00$/);
    expect(body[0].is_blocked).toBe(false);
    expect(body[0].number_of_marketing_opt_in_requests).toBe(2);
    const deals = await get('/deal?name=eq.Big&select=value,currency');
    expect(deals.body).toEqual([{ value: 1000.5, currency: 'CHF' }]);
  });
});

describe('appointment_details', () => {
  it('carries custom-field values as extra properties typed by custom_field.type', async () => {
    const { body } = await get(`/appointment_details?id=eq.${appointments[0]}`);
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ id: appointments[0], name: 'First', room: 'A1', size: 12.5, tags: ['x', 'y'] });
    expect(Object.keys(body[0]).slice(0, 4)).toEqual(['id', 'created_at', 'updated_at', 'organisation_id']);
  });
  it('has no extra properties for an appointment without values, and none when select names fields', async () => {
    const second = await get(`/appointment_details?id=eq.${appointments[1]}`);
    expect(second.body[0]).not.toHaveProperty('room');
    const narrow = await get(`/appointment_details?id=eq.${appointments[0]}&select=name`);
    expect(narrow.body).toEqual([{ name: 'First' }]);
  });
  it('orders by start_time', async () => {
    const { body } = await get('/appointment_details?select=name&order=start_time.desc');
    expect(body.map((r: { name: string }) => r.name)).toEqual(['Second', 'First']);
  });
});

describe('pages and counts', () => {
  it('Content-Range without a count, 206 with a partial exact count, 416 past the end', async () => {
    const plain = await get('/contact?order=display_name&limit=2');
    expect(plain.res.headers.get('content-range')).toBe('0-1/*');
    const counted = await get('/contact?order=display_name&limit=2&offset=1', { Prefer: 'count=exact' });
    expect(counted.status).toBe(206);
    expect(counted.res.headers.get('content-range')).toBe('1-2/3');
    expect(counted.res.headers.get('preference-applied')).toBe('count=exact');
    expect(counted.body.map((c: { display_name: string }) => c.display_name)).toEqual(['Bob', 'Cy']);
    const whole = await get('/contact', { Prefer: 'count=exact' });
    expect(whole.status).toBe(200);
    expect(whole.res.headers.get('content-range')).toBe('0-2/3');
    const past = await get('/contact?offset=10', { Prefer: 'count=exact' });
    expect(past.status).toBe(416);
    expect(past.body.code).toBe('RANGE_NOT_SATISFIABLE');
    expect(past.res.headers.get('content-range')).toBe('*/3');
  });
  it('honours the Range header intersected with limit/offset', async () => {
    const { body, res } = await get('/contact?order=display_name', { Range: '1-5', 'Range-Unit': 'items' });
    expect(res.headers.get('content-range')).toBe('1-2/*');
    expect(body).toHaveLength(2);
    const both = await get('/contact?order=display_name&limit=1', { Range: '0-5' });
    expect(both.body).toHaveLength(1);
  });
  it('an empty page is */* (or */0 with a count)', async () => {
    const none = await get('/contact?display_name=eq.Nobody');
    expect(none.body).toEqual([]);
    expect(none.res.headers.get('content-range')).toBe('*/*');
    const zero = await get('/contact?display_name=eq.Nobody', { Prefer: 'count=exact' });
    expect(zero.res.headers.get('content-range')).toBe('*/0');
  });
  it('HEAD answers the headers of GET without a body', async () => {
    const res = await t.call('/contact?limit=1', org.token, { method: 'HEAD', headers: { Prefer: 'count=exact' } });
    expect(res.status).toBe(206);
    expect(res.headers.get('content-range')).toBe('0-0/3');
    expect(await res.text()).toBe('');
  });
});

describe('singular responses', () => {
  it('returns one object for vnd.pgrst.object+json and 406 otherwise', async () => {
    const one = await get('/contact?display_name=eq.Ada&select=display_name', {
      Accept: 'application/vnd.pgrst.object+json',
    });
    expect(one.status).toBe(200);
    expect(one.body).toEqual({ display_name: 'Ada' });
    expect(one.res.headers.get('content-type')).toBe('application/vnd.pgrst.object+json; charset=utf-8');
    const many = await get('/contact', { Accept: 'application/vnd.pgrst.object+json' });
    expect(many.status).toBe(406);
    expect(many.body.code).toBe('NOT_ACCEPTABLE');
  });
});

describe('MAX_ROWS', () => {
  it('caps every page, and Content-Range tells the client', async () => {
    const engine = engageEngine(t.db, { maxRows: 2 });
    const app = createApp({ engine, ping: async () => {} });
    const call = (path: string, headers: Record<string, string> = {}) =>
      app.request(`/api/v1${path}`, { headers: { Authorization: `Bearer ${org.token}`, ...headers } });
    const capped = await call('/contact?order=display_name');
    expect(await capped.json()).toHaveLength(2);
    expect(capped.headers.get('content-range')).toBe('0-1/*');
    const counted = await call('/contact?order=display_name&limit=50', { Prefer: 'count=exact' });
    expect(counted.status).toBe(206);
    expect(counted.headers.get('content-range')).toBe('0-1/3');
    const next = await call('/contact?order=display_name&offset=2');
    expect((await next.json()).map((c: { display_name: string }) => c.display_name)).toEqual(['Cy']);
  });
});

describe('GET /api/v1/', () => {
  it("serves the OpenAPI document as JSON, with PostgREST's media type when asked for it", async () => {
    for (const path of ['/', '']) {
      const plain = await t.call(path, org.token);
      expect(plain.status).toBe(200);
      expect(plain.headers.get('content-type')).toBe('application/json; charset=utf-8');
      expect((await plain.json()).info).toEqual(expect.objectContaining({ title: 'API', version: '1.0.0' }));
    }
    const asked = await t.call('/', org.token, { headers: { Accept: 'application/openapi+json' } });
    expect(asked.headers.get('content-type')).toBe('application/openapi+json; charset=utf-8');
  });
});

describe('counts that stay cheap on large results', () => {
  const counted = (maxRows: number) => {
    const engine = engageEngine(t.db, { maxRows });
    const app = createApp({ engine, ping: async () => {} });
    return (prefer: string) =>
      app.request('/api/v1/contact?order=display_name&limit=1', {
        headers: { Authorization: `Bearer ${org.token}`, Prefer: prefer },
      });
  };

  it('count=estimated is exact up to MAX_ROWS', async () => {
    const res = await counted(1000)('count=estimated');
    expect(res.headers.get('content-range')).toBe('0-0/3');
    expect(res.headers.get('preference-applied')).toBe('count=estimated');
  });

  it(
    "count=estimated past MAX_ROWS, and count=planned, take the planner's estimate," +
      ' never below what the page shows',
    async () => {
      for (const prefer of ['count=estimated', 'count=planned']) {
        const res = await counted(1)(prefer);
        const total = Number(res.headers.get('content-range')!.split('/')[1]);
        expect(Number.isInteger(total)).toBe(true);
        // estimated counted two rows (MAX_ROWS + 1) before asking the planner; planned shows one.
        expect(total).toBeGreaterThanOrEqual(prefer === 'count=estimated' ? 2 : 1);
        expect(res.status).toBe(total > 1 ? 206 : 200);
      }
    },
  );
});
