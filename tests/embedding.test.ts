/**
 * The engine is embeddable: the whole Engage app mounted inside another Hono app, and the bare
 * engine served by a host that does its own authentication and passes the organisation.
 */
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let org: Organisation;

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  const other = await createOrganisation(t);
  await insertRows(t.db, 'campaign', org.id, [{ name: 'Mine' }]);
  await insertRows(t.db, 'campaign', other.id, [{ name: 'Theirs' }]);
});
afterAll(() => t?.drop());

describe('embedding', () => {
  it('mounts the Engage app under a prefix of a host Hono app', async () => {
    const host = new Hono();
    host.get('/', (c) => c.text('host home'));
    host.route('/engage', t.app);
    const res = await host.request('/engage/api/v1/campaign?select=name', {
      headers: { Authorization: `Bearer ${org.token}` },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ name: 'Mine' }]);
    expect(res.headers.get('request-id')).toBeTruthy();
    expect(await (await host.request('/')).text()).toBe('host home');
  });

  it("serves the bare engine from a host route with the host's own notion of the organisation", async () => {
    const engine = engageEngine(t.db);
    const host = new Hono<{ Variables: { organisationId: string } }>();
    host.use(async (c, next) => {
      c.set('organisationId', c.req.header('x-tenant') ?? '');
      await next();
    });
    host.get('/crm/:resource', async (c) => {
      const url = new URL(c.req.url);
      const response = await engine.handle(
        { method: 'GET', resource: c.req.param('resource'), query: url.search, header: (name) => c.req.header(name) },
        { tenant: c.get('organisationId') },
      );
      return new Response(response.body, { status: response.status, headers: response.headers });
    });
    const res = await host.request('/crm/campaign?name=like.M*&select=name', { headers: { 'x-tenant': org.id } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBe('0-0/*');
    expect(await res.json()).toEqual([{ name: 'Mine' }]);
  });
});
