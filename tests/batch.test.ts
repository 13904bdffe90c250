/**
 * `POST /api/v1/$batch` over HTTP, as an integrator calls it: a deal, a note for its contact and a
 * change of the deal in one transaction, later operations using what earlier ones wrote; the first
 * failure answers with the contract's error body plus `operation`, and leaves nothing written, no
 * event either; tenancy, limits, idempotency and dry runs as for single requests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createOrganisation,
  createTestApp,
  ERROR_KEYS,
  insertRows,
  type Organisation,
  type TestApp,
} from './helpers/app.ts';

let t: TestApp;
let org: Organisation;
let other: Organisation;
let contactId: string;
let theirContact: string;

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  other = await createOrganisation(t);
  contactId = (await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada Lovelace' }]))[0]!;
  theirContact = (await insertRows(t.db, 'contact', other.id, [{ display_name: 'Not yours' }]))[0]!;
});
afterAll(() => t?.drop());

const batch = (operations: unknown, who = org, headers: Record<string, string> = {}) =>
  t.call('/$batch', who.token, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ operations }),
  });
const count = async (sql: string, params: string[]) =>
  Number((await t.db.query<{ n: string }>(`SELECT count(*)::text AS n FROM ${sql}`, params))[0]!.n);

describe('POST /api/v1/$batch', () => {
  it("runs the spec's example: a deal, a note about it, a change, a read, each answered as alone", async () => {
    const res = await batch([
      {
        ref: 'd',
        method: 'POST',
        path: '/deal',
        body: { name: 'Pilot', contact_id: contactId, value: 1200, currency: 'CHF' },
      },
      {
        ref: 'n',
        method: 'POST',
        path: '/contact_note',
        body: { contact_id: '@{d.contact_id}', text: 'About @{d.name}' },
      },
      { method: 'PATCH', path: '/deal?id=eq.@{d.id}', body: { value: 1500 } },
      { method: 'GET', path: '/deal?select=name,value,contact(display_name)&id=eq.@{d.id}' },
    ]);
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toBeTruthy();
    const { results } = (await res.json()) as { results: Array<{ status: number; body: unknown }> };
    expect(results.map((r) => r.status)).toEqual([201, 201, 204, 200]);
    expect(results[3]!.body).toEqual([{ name: 'Pilot', value: 1500, contact: { display_name: 'Ada Lovelace' } }]);
    expect(await count('contact_note WHERE organisation_id = $1 AND text = $2', [org.id, 'About Pilot'])).toBe(1);
  });

  it('all or nothing: a failure in the last operation leaves no row and no event of the first', async () => {
    const name = `Half ${randomUUID()}`;
    const events = await count('engage_outbox', []);
    const res = await batch([
      { method: 'POST', path: '/deal', body: { name, contact_id: contactId } },
      { method: 'POST', path: '/deal', body: { name, currency: 'XXX' } },
    ]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...ERROR_KEYS, 'context', 'operation'].sort());
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', operation: 1, status_code: 400 });
    expect(await count('deal WHERE name = $1', [name])).toBe(0);
    expect(await count('engage_outbox', [])).toBe(events);
  });

  it("a reference inside a filter to another organisation's row finds nothing, and fails the batch", async () => {
    const res = await batch([
      { ref: 'c', method: 'GET', path: `/contact?id=eq.${theirContact}` },
      { method: 'POST', path: '/deal', body: { name: 'Theirs', contact_id: '@{c.id}' } },
    ]);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { operation: number; message: string };
    expect(body.operation).toBe(1);
    expect(body.message).toContain('@{c.id} refers to operation 0, which gave no row');
    const direct = await batch([{ method: 'POST', path: '/deal', body: { name: 'Theirs', contact_id: theirContact } }]);
    expect(direct.status).toBe(409);
    expect(await direct.json()).toMatchObject({ code: 'REFERENCE_NOT_FOUND', operation: 0 });
  });

  it('an operation on a verb its resource lacks fails as alone: contacts are GET-only here', async () => {
    const res = await batch([{ method: 'POST', path: '/contact', body: { display_name: 'New' } }]);
    expect(res.status).toBe(405);
    expect(await res.json()).toMatchObject({ code: 'METHOD_NOT_ALLOWED', operation: 0 });
  });

  it('more than BATCH_MAX_OPERATIONS operations is a 400; GET is 405; no token is 401', async () => {
    const many = Array.from({ length: 101 }, () => ({ method: 'GET', path: '/deal?limit=1' }));
    const res = await batch(many);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain('1 to 100 operations');
    expect((await t.call('/$batch', org.token)).status).toBe(405);
    const anonymous = await t.call('/$batch', null, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ operations: [{ method: 'GET', path: '/deal' }] }),
    });
    expect(anonymous.status).toBe(401);
  });

  it('Idempotency-Key replays the whole batch; Prefer: tx=rollback keeps nothing', async () => {
    const name = `Once ${randomUUID()}`;
    const operations = [{ method: 'POST', path: '/deal', body: { name } }];
    const key = randomUUID();
    const first = await batch(operations, org, { 'Idempotency-Key': key });
    const again = await batch(operations, org, { 'Idempotency-Key': key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.json()).toEqual(await first.json());
    expect(await count('deal WHERE name = $1', [name])).toBe(1);

    const dry = await batch([{ method: 'POST', path: '/deal', body: { name: `Dry ${name}` } }], org, {
      Prefer: 'tx=rollback',
    });
    expect(dry.status).toBe(200);
    expect(dry.headers.get('preference-applied')).toBe('tx=rollback');
    expect(await count('deal WHERE name = $1', [`Dry ${name}`])).toBe(0);
  });

  it('is in the OpenAPI document', async () => {
    const doc = (await (await t.call('/', org.token)).json()) as { paths: Record<string, { post?: unknown }> };
    expect(doc.paths['/$batch']?.post).toBeDefined();
  });
});
