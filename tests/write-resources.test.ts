/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): /deal with typed values,
 * /appointment_type, /contact_note, DELETE /custom_entity, and the verbs the spec does not offer.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, fieldsOf, ISO, itemFieldsOf, type Json, REP, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation. */
let a: Organisation;
let contactA: string;

const { send, post, patch, del, query, rowsWhere, countWhere, stamps } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  [contactA] = (await insertRows(t.db, 'contact', a.id, [{ display_name: 'Ada' }])) as [string];
});
afterAll(() => t?.drop());

describe('POST / PATCH / DELETE /deal', () => {
  it('creates a deal with typed values: numeric as a number, timestamps with offset', async () => {
    const name = uniq('deal');
    const res = await post(
      '/deal',
      {
        name,
        contact_id: contactA,
        value: 1234.5,
        currency: 'CHF',
        won_at: '2026-12-01T09:00:00+01:00',
        assignee_id: randomUUID(),
        type_key: 'k',
        status_key: 's',
      },
      REP,
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body[0]).toMatchObject({
      name,
      contact_id: contactA,
      value: 1234.5,
      currency: 'CHF',
      lost_at: null,
      organisation_id: a.id,
    });
    expect(Date.parse(res.body[0].won_at)).toBe(Date.parse('2026-12-01T08:00:00Z'));
    const [stored] = await query<{ value: string; won: number }>(
      'SELECT value::text AS value, extract(epoch FROM won_at)::float8 AS won FROM deal WHERE name = $1',
      [name],
    );
    expect(stored).toEqual({ value: '1234.5', won: Date.parse('2026-12-01T08:00:00Z') / 1000 });
  });

  it('accepts a numeric value given as a string holding a number', async () => {
    const name = uniq('deal');
    const res = await post('/deal?select=value', { name, value: '99.99' }, REP);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toEqual([{ value: 99.99 }]);
  });

  it('keeps a numeric value given as a string exactly, beyond what a double carries', async () => {
    const name = uniq('deal');
    const res = await post('/deal', { name, value: '12345678901234567890.123456789' });
    expect(res.status, res.text).toBe(201);
    const [row] = await query<{ value: string }>('SELECT value::text AS value FROM deal WHERE name = $1', [name]);
    expect(row!.value).toBe('12345678901234567890.123456789');
  });

  it('reports every invalid field of one object together', async () => {
    const name = uniq('deal');
    const res = await post('/deal', {
      name,
      currency: 'GBP',
      value: 'lots',
      contact_id: 'not-a-uuid',
      won_at: 'yesterday',
      lost_at: '2026-12-01',
      assignee_id: 12,
    });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(res)).toEqual(['assignee_id', 'contact_id', 'currency', 'lost_at', 'value', 'won_at']);
    expect(res.body.context.every((p: Json) => p.item === undefined)).toBe(true);
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it('refuses timestamps without an offset, impossible dates and impossible times', async () => {
    const name = uniq('deal');
    for (const won_at of [
      '2026-12-01T09:00:00',
      '2026-12-01',
      '2026-02-30T09:00:00Z',
      '2026-13-01T09:00:00Z',
      'now()',
      1764579600,
    ]) {
      const res = await post('/deal', { name, won_at });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(res), String(won_at)).toEqual(['won_at']);
    }
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it('refuses impossible times of day as VALIDATION_FAILED naming the field', async () => {
    const name = uniq('deal');
    for (const won_at of ['2026-12-01T25:00:00Z', '2026-12-01T09:61:00Z']) {
      const res = await post('/deal', { name, won_at });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(fieldsOf(res), won_at).toEqual(['won_at']);
    }
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it('accepts ISO 8601 variants: Z, fractions, offsets', async () => {
    const p = uniq('deal');
    const res = await post(
      '/deal?select=name,won_at',
      [
        { name: `${p}-1`, won_at: '2026-12-01T09:00:00Z' },
        { name: `${p}-2`, won_at: '2026-12-01T09:00:00.123456Z' },
        { name: `${p}-3`, won_at: '2026-12-01T10:00:00+01:00' },
        { name: `${p}-4`, won_at: '2026-12-01T09:00Z' },
      ],
      REP,
    );
    expect(res.status, res.text).toBe(201);
    const won = Object.fromEntries(res.body.map((r: Json) => [r.name, Date.parse(r.won_at)]));
    expect(won[`${p}-1`]).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect(won[`${p}-2`]).toBe(Date.parse('2026-12-01T09:00:00.123Z'));
    expect(won[`${p}-3`]).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect(won[`${p}-4`]).toBe(Date.parse('2026-12-01T09:00:00Z'));
  });

  it('reports problems of an array by item index and field', async () => {
    const name = uniq('deal');
    const res = await post('/deal', [
      { name, currency: 'EUR' },
      { name, currency: 'YEN' },
      { name },
      { name, value: true, won_at: 'soon' },
    ]);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(itemFieldsOf(res)).toEqual(['1:currency', '3:value', '3:won_at']);
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it('accepts every currency of the enum and null', async () => {
    const name = uniq('deal');
    const res = await post(
      '/deal?select=currency',
      ['EUR', 'CHF', 'USD', null].map((currency) => ({ name, currency })),
      REP,
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.map((r: Json) => r.currency).sort()).toEqual(['CHF', 'EUR', 'USD', null].sort());
  });

  it('PATCH changes fields and updated_at; won_at can be cleared with null', async () => {
    const name = uniq('deal');
    const [id] = await insertRows(t.db, 'deal', a.id, [
      { name, value: 1, currency: 'EUR', won_at: '2026-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
    ]);
    const res = await patch(
      `/deal?id=eq.${id}&select=value,currency,won_at,lost_at`,
      { value: 2.25, currency: 'USD', won_at: null, lost_at: '2026-02-01T00:00:00Z' },
      REP,
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([{ value: 2.25, currency: 'USD', won_at: null, lost_at: expect.stringMatching(ISO) }]);
    expect((await stamps('deal', id!)).updated).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z') / 1000);
  });

  it('PATCH with an invalid currency is 400 and changes nothing', async () => {
    const name = uniq('deal');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name, currency: 'EUR' }]);
    const res = await patch(`/deal?id=eq.${id}`, { currency: 'eur' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect((await rowsWhere('deal', 'id', id!))[0].currency).toBe('EUR');
  });

  it('DELETE removes the deal and its custom-field values', async () => {
    const name = uniq('deal');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const [field] = await insertRows(t.db, 'custom_field', a.id, [{ name, key: name, type: 'string', entity: 'deal' }]);
    await insertRows(t.db, 'deal_custom_field', a.id, [
      { deal_id: id, custom_field_id: field, key: name, string_value: 'v', value: 'v' },
    ]);
    const res = await del(`/deal?id=eq.${id}&select=name`, REP);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([{ name }]);
    expect(await countWhere('deal', 'id', id!)).toBe(0);
    expect(await countWhere('deal_custom_field', 'deal_id', id!)).toBe(0);
  });
});

describe('POST / PATCH /appointment_type', () => {
  it('creates one with representation and updates it by key', async () => {
    const key = uniq('type');
    const created = await post(
      '/appointment_type',
      { name: 'Consultation', key, emoji: '💬', description: 'first talk', external_id: key },
      REP,
    );
    expect(created.status, created.text).toBe(201);
    expect(created.body[0]).toMatchObject({
      name: 'Consultation',
      key,
      emoji: '💬',
      description: 'first talk',
      organisation_id: a.id,
    });
    const updated = await patch(
      `/appointment_type?key=eq.${key}&select=name,emoji`,
      { name: 'Follow-up', emoji: '🔁' },
      REP,
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toEqual([{ name: 'Follow-up', emoji: '🔁' }]);
    expect((await rowsWhere('appointment_type', 'key', key))[0]).toMatchObject({
      name: 'Follow-up',
      emoji: '🔁',
      description: 'first talk',
    });
  });

  it('a duplicate key is 409 CONFLICT naming key', async () => {
    const key = uniq('type');
    expect((await post('/appointment_type', { name: 'one', key })).status).toBe(201);
    const res = await post('/appointment_type', { name: 'two', key });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['key']);
    expect(await countWhere('appointment_type', 'key', key)).toBe(1);
  });

  it('PATCH without a filter is refused; unknown fields are refused', async () => {
    expectError(await patch('/appointment_type', { name: 'x' }), 400, 'FILTER_REQUIRED');
    expectError(await post('/appointment_type', { name: 'x', colour: 'red' }), 400, 'UNKNOWN_FIELD');
  });
});

describe('POST / DELETE /contact_note', () => {
  it("creates a note on the caller's contact; created_by_id must be a uuid", async () => {
    const text = uniq('note');
    const creator = randomUUID();
    const res = await post('/contact_note', { contact_id: contactA, text, created_by_id: creator }, REP);
    expect(res.status, res.text).toBe(201);
    expect(res.body[0]).toMatchObject({ contact_id: contactA, text, created_by_id: creator, organisation_id: a.id });
    const bad = await post('/contact_note', { contact_id: contactA, text, created_by_id: 'me' });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(bad.body.context).toEqual([expect.objectContaining({ field: 'created_by_id' })]);
    expect(await countWhere('contact_note', 'text', text)).toBe(1);
  });

  it('creates several notes in one request', async () => {
    const text = uniq('note');
    const res = await post('/contact_note', [
      { contact_id: contactA, text },
      { contact_id: contactA, text },
    ]);
    expect(res.status).toBe(201);
    expect(await countWhere('contact_note', 'text', text)).toBe(2);
  });

  it('deletes notes by filter: 204, 200 with representation; refuses no filter', async () => {
    const text = uniq('note');
    const [n1, n2] = await insertRows(t.db, 'contact_note', a.id, [
      { contact_id: contactA, text },
      { contact_id: contactA, text },
    ]);
    const one = await del(`/contact_note?id=eq.${n1}`);
    expect(one.status).toBe(204);
    const two = await del(`/contact_note?id=eq.${n2}&select=id,text`, REP);
    expect(two.status).toBe(200);
    expect(two.body).toEqual([{ id: n2, text }]);
    expect(await countWhere('contact_note', 'text', text)).toBe(0);
    expectError(await del('/contact_note'), 400, 'FILTER_REQUIRED');
  });
});

describe('DELETE /custom_entity', () => {
  it('deletes by filter, 204 or 200 with the object; refuses no filter', async () => {
    const p = uniq('ce');
    const [definition] = await insertRows(t.db, 'custom_entity_definition', a.id, [{ name: p, key: p }]);
    const [e1, e2] = await insertRows(t.db, 'custom_entity', a.id, [
      { custom_entity_definition_id: definition, contact_id: contactA, external_id: `${p}-1`, data: { size: 1 } },
      { custom_entity_definition_id: definition, contact_id: contactA, external_id: `${p}-2`, data: { size: 2 } },
    ]);
    expectError(await del('/custom_entity'), 400, 'FILTER_REQUIRED');
    const one = await del(`/custom_entity?external_id=eq.${p}-1`);
    expect(one.status).toBe(204);
    expect(await countWhere('custom_entity', 'id', e1!)).toBe(0);
    const two = await del(`/custom_entity?id=eq.${e2}&select=external_id,data`, {
      ...REP,
      Accept: 'application/vnd.pgrst.object+json',
    });
    expect(two.status).toBe(200);
    expect(two.body).toEqual({ external_id: `${p}-2`, data: { size: 2 } });
    expect(await countWhere('custom_entity', 'id', e2!)).toBe(0);
  });
});

describe('verbs the spec does not offer', () => {
  it.each([
    ['POST', '/deal_details', 'PATCH'],
    ['DELETE', '/deal_details?id=eq.x', 'PATCH'],
    ['PATCH', '/contact_note?id=eq.x', 'POST'],
    ['DELETE', '/appointment_type?id=eq.x', 'PATCH'],
    ['POST', '/custom_field', 'DELETE'],
    ['PATCH', '/custom_entity?id=eq.x', 'DELETE'],
    ['POST', '/contact', 'GET'],
    ['PATCH', '/appointment?id=eq.x', 'GET'],
    ['DELETE', '/segment?id=eq.x', 'GET'],
    ['POST', '/campaign', 'GET'],
    ['PATCH', '/custom_field?id=eq.x', 'DELETE'],
    ['GET', '/appointment_type', 'PATCH'],
  ])('%s %s is 405 with Allow', async (method, path, offered) => {
    const res = await send(method, path, method === 'DELETE' || method === 'GET' ? {} : { body: { name: 'x' } });
    expectError(res, 405, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toContain(offered);
    expect(res.headers.get('allow')).not.toContain(method);
  });

  it('POST on an unknown resource is 404', async () => {
    expectError(await post('/nothing', { name: 'x' }), 404, 'NOT_FOUND');
  });
});
