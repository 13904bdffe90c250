/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): tenancy. Filters, bodies,
 * references and upserts never reach another organisation; without a valid token nothing is written.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, REP, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation and another one, whose rows must stay out of reach. */
let a: Organisation;
let b: Organisation;
let contactA: string;
let contactB: string;

const { send, post, patch, del, rowsWhere, countWhere } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  b = await createOrganisation(t);
  [contactA] = (await insertRows(t.db, 'contact', a.id, [{ display_name: 'Ada' }])) as [string];
  [contactB] = (await insertRows(t.db, 'contact', b.id, [{ display_name: 'Bea' }])) as [string];
});
afterAll(() => t?.drop());

describe('tenancy: writes never reach another organisation', () => {
  it("PATCH with filters naming B's ids touches nothing", async () => {
    const name = uniq('ten');
    const [theirs] = await insertRows(t.db, 'calendar', b.id, [{ name }]);
    const [dealB] = await insertRows(t.db, 'deal', b.id, [{ name, value: 1 }]);
    const cal = await patch(`/calendar?id=eq.${theirs}`, { name: 'hijacked' }, REP);
    expect(cal.status).toBe(200);
    expect(cal.body).toEqual([]);
    const deal = await patch(`/deal?id=eq.${dealB}`, { name: 'hijacked' });
    expect(deal.status).toBe(204);
    expect(deal.headers.get('content-range')).toBe('*/*');
    const byOrg = await patch(`/calendar?organisation_id=eq.${b.id}`, { name: 'hijacked' });
    expect(byOrg.status).toBe(204);
    expect(await countWhere('calendar', 'name', 'hijacked')).toBe(0);
    expect(await countWhere('deal', 'name', 'hijacked')).toBe(0);
    expect((await rowsWhere('calendar', 'id', theirs!))[0].name).toBe(name);
  });

  it("PATCH with or=(A's id, B's id) changes only A's row", async () => {
    const name = uniq('ten');
    const [mine] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const [theirs] = await insertRows(t.db, 'calendar', b.id, [{ name }]);
    const res = await patch(
      `/calendar?or=(id.eq.${mine},id.eq.${theirs})&select=id`,
      { external_id: `${name}-x` },
      REP,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ id: mine }]);
    expect((await rowsWhere('calendar', 'id', theirs!))[0].external_id).toBeNull();
  });

  it("DELETE with filters naming B's ids deletes nothing", async () => {
    const name = uniq('ten');
    const [cal] = await insertRows(t.db, 'calendar', b.id, [{ name }]);
    const [deal] = await insertRows(t.db, 'deal', b.id, [{ name }]);
    const [note] = await insertRows(t.db, 'contact_note', b.id, [{ contact_id: contactB, text: name }]);
    const [field] = await insertRows(t.db, 'custom_field', b.id, [{ name, key: name, type: 'string', entity: 'deal' }]);
    const [definition] = await insertRows(t.db, 'custom_entity_definition', b.id, [{ name, key: name }]);
    const [entity] = await insertRows(t.db, 'custom_entity', b.id, [
      { custom_entity_definition_id: definition, external_id: name },
    ]);
    const checks: Array<[string, string]> = [
      ['calendar', cal!],
      ['deal', deal!],
      ['contact_note', note!],
      ['custom_field', field!],
      ['custom_entity', entity!],
    ];
    for (const [resource, id] of checks) {
      const res = await del(`/${resource}?id=eq.${id}`, REP);
      expect(res.status, resource).toBe(200);
      expect(res.body, resource).toEqual([]);
      expect(await countWhere(resource, 'id', id), resource).toBe(1);
    }
    const byOrg = await del(`/calendar?organisation_id=eq.${b.id}`);
    expect(byOrg.status).toBe(204);
    expect(await countWhere('calendar', 'id', cal!)).toBe(1);
  });

  it('POST with organisation_id of B is 403 FORBIDDEN and writes nothing anywhere', async () => {
    const name = uniq('ten');
    for (const [resource, body] of [
      ['calendar', { name, organisation_id: b.id }],
      ['deal', { name, organisation_id: b.id }],
      ['appointment_type', { name, organisation_id: b.id }],
      ['contact_note', { text: name, organisation_id: b.id }],
    ] as const) {
      const res = await post(`/${resource}`, body, REP);
      expectError(res, 403, 'FORBIDDEN');
    }
    for (const table of ['calendar', 'deal', 'appointment_type'])
      expect(await countWhere(table, 'name', name), table).toBe(0);
    expect(await countWhere('contact_note', 'text', name)).toBe(0);
  });

  it('POST with organisation_id of B and a singular Accept is still 403, not 406', async () => {
    const name = uniq('ten');
    const res = await post(
      '/calendar',
      { name, organisation_id: b.id },
      { Accept: 'application/vnd.pgrst.object+json' },
    );
    expectError(res, 403, 'FORBIDDEN');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('PATCH with organisation_id of B in the body is 403 and changes nothing; a bad one is 400', async () => {
    const name = uniq('ten');
    const [mine] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await patch(`/calendar?id=eq.${mine}`, { name: 'moved', organisation_id: b.id });
    expectError(res, 403, 'FORBIDDEN');
    expect((await rowsWhere('calendar', 'id', mine!))[0]).toMatchObject({ name, organisation_id: a.id });
    const bad = await patch(`/calendar?id=eq.${mine}`, { organisation_id: 'nope' });
    expectError(bad, 400, 'VALIDATION_FAILED');
    const own = await patch(`/calendar?id=eq.${mine}`, { name: 'same org', organisation_id: a.id });
    expect(own.status).toBe(204);
    expect((await rowsWhere('calendar', 'id', mine!))[0]).toMatchObject({ name: 'same org', organisation_id: a.id });
  });

  it("POST referencing B's contact is 409 REFERENCE_NOT_FOUND, told as for a contact that does not exist", async () => {
    const name = uniq('ten');
    const theirs = await post('/deal', { name, contact_id: contactB });
    expectError(theirs, 409, 'REFERENCE_NOT_FOUND');
    expect(theirs.body.context.fields).toEqual(['contact_id']);
    expect(theirs.text).not.toContain(b.id);
    // In our words: none of PostgreSQL's own text (its table names, its "Key (...)=(...)").
    expect(theirs.body.details).toBe(`contact_id = ${contactB} names no record in your organisation`);
    expect(theirs.text).not.toMatch(/Key \(|present in table/);
    const missing = await post('/deal', { name, contact_id: randomUUID() });
    expectError(missing, 409, 'REFERENCE_NOT_FOUND');
    expect(missing.body.message).toBe(theirs.body.message);
    const note = await post('/contact_note', { text: name, contact_id: contactB });
    expectError(note, 409, 'REFERENCE_NOT_FOUND');
    expect(note.body.context.fields).toEqual(['contact_id']);
    expect(await countWhere('deal', 'name', name)).toBe(0);
    expect(await countWhere('contact_note', 'text', name)).toBe(0);
  });

  it("PATCH pointing a deal at B's contact is 409 and changes nothing", async () => {
    const name = uniq('ten');
    const [deal] = await insertRows(t.db, 'deal', a.id, [{ name, contact_id: contactA }]);
    const res = await patch(`/deal?id=eq.${deal}`, { contact_id: contactB });
    expectError(res, 409, 'REFERENCE_NOT_FOUND');
    expect((await rowsWhere('deal', 'id', deal!))[0].contact_id).toBe(contactA);
  });

  it("a bulk insert with one item referencing B's contact writes nothing", async () => {
    const name = uniq('ten');
    const res = await post('/deal', [
      { name, contact_id: contactA },
      { name, contact_id: contactA },
      { name, contact_id: contactB },
    ]);
    expectError(res, 409, 'REFERENCE_NOT_FOUND');
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it("an upsert on B's id creates A's own row and leaves B's alone", async () => {
    const name = uniq('ten');
    const [theirs] = await insertRows(t.db, 'calendar', b.id, [{ name }]);
    const res = await post(
      '/calendar',
      { id: theirs, name: 'mine' },
      { Prefer: 'resolution=merge-duplicates, return=representation' },
    );
    expect(res.status).toBe(201);
    expect(res.body[0]).toMatchObject({ id: theirs, organisation_id: a.id, name: 'mine' });
    const rows = await rowsWhere('calendar', 'id', theirs!);
    expect(rows.map((r) => [r.organisation_id, r.name]).sort()).toEqual(
      [
        [a.id, 'mine'],
        [b.id, name],
      ].sort(),
    );
  });

  it('a write without a valid token is 401 and writes nothing', async () => {
    const name = uniq('ten');
    const none = await send('POST', '/calendar', { body: { name }, token: null });
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('UNAUTHORIZED');
    const bad = await send('POST', '/calendar', { body: { name, colour: 'x' }, token: 'not-a-token' });
    expect(bad.status).toBe(401);
    const del401 = await send('DELETE', '/calendar?name=like.*', { token: 'not-a-token' });
    expect(del401.status).toBe(401);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});
