/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): custom fields. PATCH
 * /deal_details writes deal fields and custom values together; DELETE /custom_field removes a field and
 * its values.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, fieldsOf, JSON_TYPE, type Json, OBJECT_TYPE, REP, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation and another one, whose rows must stay out of reach. */
let a: Organisation;
let b: Organisation;

const { send, patch, del, query, rowsWhere, countWhere, stamps } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  b = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('custom fields: PATCH /deal_details and DELETE /custom_field', () => {
  /** Custom fields of deals in A, by key: one per type. */
  const keys = { text: '', score: '', vip: '', due: '', met: '', tags: '' };
  const fieldIds: Record<string, string> = {};
  let roomField: string;

  beforeAll(async () => {
    const p = `cf${randomUUID().slice(0, 6)}`;
    Object.assign(keys, {
      text: `${p}_text`,
      score: `${p}_score`,
      vip: `${p}_vip`,
      due: `${p}_due`,
      met: `${p}_met`,
      tags: `${p}_tags`,
    });
    const types: Record<keyof typeof keys, string> = {
      text: 'string',
      score: 'number',
      vip: 'boolean',
      due: 'date',
      met: 'datetime',
      tags: 'string_list',
    };
    for (const [k, type] of Object.entries(types)) {
      const key = keys[k as keyof typeof keys];
      const [id] = await insertRows(t.db, 'custom_field', a.id, [{ name: key, key, type, entity: 'deal' }]);
      fieldIds[key] = id!;
    }
    [roomField] = (await insertRows(t.db, 'custom_field', a.id, [
      { name: 'Room', key: `${p}_room`, type: 'string', entity: 'appointment' },
    ])) as [string];
    await insertRows(t.db, 'custom_field', b.id, [
      { name: 'Secret', key: `${p}_secret`, type: 'string', entity: 'deal' },
    ]);
    fieldIds.room = roomField!;
    fieldIds.secretKey = `${p}_secret`;
    fieldIds.roomKey = `${p}_room`;
  });

  const values = async (dealId: string) =>
    query<{
      key: string;
      value: string | null;
      string_value: string | null;
      number_value: string | null;
      boolean_value: boolean | null;
      date_value: string | null;
      datetime: number | null;
      list: string | null;
    }>(
      `SELECT key, value, string_value, number_value::text AS number_value, boolean_value,` +
        ` date_value::text AS date_value,
              extract(epoch FROM datetime_value)::float8 AS datetime, array_to_json(string_list_value)::text AS list
         FROM deal_custom_field WHERE deal_id = $1::uuid ORDER BY key`,
      [dealId],
    );

  it('writes deal fields and every type of custom value in one PATCH; the representation shows them', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name, value: 1 }]);
    const body = {
      name: `${name}-2`,
      value: 5,
      [keys.text]: 'web',
      [keys.score]: 4.5,
      [keys.vip]: true,
      [keys.due]: '2026-12-24',
      [keys.met]: '2026-12-01T09:00:00Z',
      [keys.tags]: ['a', 'b,c'],
    };
    const res = await patch(`/deal_details?id=eq.${id}`, body, REP);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({
      id,
      name: `${name}-2`,
      value: 5,
      [keys.text]: 'web',
      [keys.score]: 4.5,
      [keys.vip]: true,
      [keys.due]: '2026-12-24',
      [keys.tags]: ['a', 'b,c'],
    });
    expect(Date.parse(res.body[0][keys.met])).toBe(Date.parse('2026-12-01T09:00:00Z'));
    expect((await rowsWhere('deal', 'id', id!))[0]).toMatchObject({ name: `${name}-2`, value: 5 });
    const stored = Object.fromEntries((await values(id!)).map((v) => [v.key, v]));
    expect(Object.keys(stored).sort()).toEqual(Object.values(keys).sort());
    expect(stored[keys.text]).toMatchObject({ string_value: 'web' });
    expect(stored[keys.score]).toMatchObject({ number_value: '4.5' });
    expect(stored[keys.vip]).toMatchObject({ boolean_value: true });
    expect(stored[keys.due]).toMatchObject({ date_value: '2026-12-24' });
    expect(stored[keys.met]!.datetime).toBe(Date.parse('2026-12-01T09:00:00Z') / 1000);
    expect(JSON.parse(stored[keys.tags]!.list!)).toEqual(['a', 'b,c']);
    // A GET-style read of the same deal through deal_details is not offered; deal shows no custom keys.
    const plain = await send('GET', `/deal?id=eq.${id}`);
    expect(plain.body[0]).not.toHaveProperty(keys.text);
  });

  it('a second PATCH replaces values (one row per deal and field), null clears one', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    expect((await patch(`/deal_details?id=eq.${id}`, { [keys.text]: 'one', [keys.score]: 1 }, REP)).status).toBe(200);
    const res = await patch(`/deal_details?id=eq.${id}`, { [keys.text]: 'two', [keys.score]: null }, REP);
    expect(res.status, res.text).toBe(200);
    expect(res.body[0][keys.text]).toBe('two');
    expect(res.body[0][keys.score]).toBeNull();
    const stored = await values(id!);
    expect(stored.map((v) => v.key).sort()).toEqual([keys.score, keys.text].sort());
    expect(stored.find((v) => v.key === keys.text)!.string_value).toBe('two');
    expect(stored.find((v) => v.key === keys.score)!.number_value).toBeNull();
  });

  it('with the default return=minimal, a PATCH of deal fields alone is 204', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { name: `${name}-2` });
    expect(res.status, res.text).toBe(204);
    expect((await rowsWhere('deal', 'id', id!))[0].name).toBe(`${name}-2`);
  });

  it('custom keys alone with the default return=minimal: 204, and updated_at of the deal moves', async () => {
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name: uniq('dd'), updated_at: '2020-01-01T00:00:00Z' }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { [keys.vip]: false });
    expect(res.status, res.text).toBe(204);
    expect(res.headers.get('content-range')).toBe('0-0/*');
    expect((await values(id!)).map((v) => [v.key, v.boolean_value])).toEqual([[keys.vip, false]]);
    expect((await stamps('deal', id!)).updated).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z') / 1000);
  });

  it('the representation shows values stored before alongside those written now', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    await insertRows(t.db, 'deal_custom_field', a.id, [
      { deal_id: id, custom_field_id: fieldIds[keys.text], key: keys.text, string_value: 'stored', value: 'stored' },
    ]);
    const res = await patch(`/deal_details?id=eq.${id}`, { [keys.score]: 7 }, REP);
    expect(res.status).toBe(200);
    expect(res.body[0]).toMatchObject({ [keys.text]: 'stored', [keys.score]: 7 });
    const narrow = await patch(`/deal_details?id=eq.${id}&select=id,name`, { [keys.score]: 8 }, REP);
    expect(narrow.body).toEqual([{ id, name }]);
  });

  it('one PATCH writes the values of every matched deal', async () => {
    const name = uniq('dd');
    const ids = await insertRows(t.db, 'deal', a.id, [{ name }, { name }]);
    const res = await patch(`/deal_details?name=eq.${name}&select=id`, { [keys.text]: 'both' }, REP);
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-range')).toBe('0-1/*');
    expect(res.body.map((r: Json) => r.id).sort()).toEqual([...ids].sort());
    for (const id of ids) expect((await values(id)).map((v) => v.string_value)).toEqual(['both']);
  });

  it('values of the wrong type are 400 VALIDATION_FAILED by key, and nothing is written', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(
      `/deal_details?id=eq.${id}`,
      {
        name: 'changed',
        [keys.text]: 5,
        [keys.score]: 'high',
        [keys.vip]: 'yes',
        [keys.due]: 'tomorrow',
        [keys.tags]: [1, 2],
      },
      REP,
    );
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(res)).toEqual([keys.due, keys.score, keys.tags, keys.text, keys.vip].sort());
    expect((await rowsWhere('deal', 'id', id!))[0].name).toBe(name);
    expect(await values(id!)).toEqual([]);
  });

  it('a datetime value that is not a timestamp is 400 VALIDATION_FAILED naming its key', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { name: 'changed', [keys.met]: 'not a time' }, REP);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context).toEqual([expect.objectContaining({ field: keys.met })]);
    expect((await rowsWhere('deal', 'id', id!))[0].name).toBe(name);
    expect(await values(id!)).toEqual([]);
  });

  it('a date value that is not a real date is 400 VALIDATION_FAILED naming its key', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { [keys.due]: '2026-02-30' }, REP);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context).toEqual([expect.objectContaining({ field: keys.due })]);
    expect(await values(id!)).toEqual([]);
  });

  it('a number value JSON cannot carry as a finite number is refused, not stored as null', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    await insertRows(t.db, 'deal_custom_field', a.id, [
      { deal_id: id, custom_field_id: fieldIds[keys.score], key: keys.score, number_value: 3, value: '3' },
    ]);
    const res = await send('PATCH', `/deal_details?id=eq.${id}`, { raw: `{"${keys.score}": 1e400}`, headers: REP });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect((await values(id!)).map((v) => v.number_value)).toEqual(['3']);
  });

  it('unknown keys are 400 UNKNOWN_FIELD and nothing is written, deal fields included', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    for (const key of ['no_such_key', fieldIds.roomKey!, fieldIds.secretKey!]) {
      const res = await patch(`/deal_details?id=eq.${id}`, { name: 'changed', [keys.text]: 'x', [key]: 'v' }, REP);
      expectError(res, 400, 'UNKNOWN_FIELD');
      expect(res.body.context, key).toEqual([expect.objectContaining({ field: key })]);
    }
    expect((await rowsWhere('deal', 'id', id!))[0].name).toBe(name);
    expect(await values(id!)).toEqual([]);
  });

  it('deal fields are validated as on /deal; id is refused', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { currency: 'GBP', [keys.text]: 'x' }, REP);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context.map((p: Json) => p.field)).toContain('currency');
    const withId = await patch(`/deal_details?id=eq.${id}`, { id: randomUUID(), [keys.text]: 'x' }, REP);
    expectError(withId, 400, 'VALIDATION_FAILED');
    expect(await values(id!)).toEqual([]);
  });

  it('refuses a PATCH without a filter', async () => {
    expectError(await patch('/deal_details', { [keys.text]: 'all' }), 400, 'FILTER_REQUIRED');
    expectError(await patch('/deal_details', { [keys.text]: 'all' }, REP), 400, 'FILTER_REQUIRED');
    const [row] = await query<{ n: number }>(
      'SELECT count(*)::int AS n FROM deal_custom_field WHERE string_value = $1',
      ['all'],
    );
    expect(row!.n).toBe(0);
  });

  it("filters naming B's deal write nothing to B", async () => {
    const name = uniq('dd');
    const [theirs] = await insertRows(t.db, 'deal', b.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${theirs}`, { name: 'hijacked', [keys.text]: 'x' }, REP);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual([]);
    expect((await rowsWhere('deal', 'id', theirs!))[0].name).toBe(name);
    expect(await values(theirs!)).toEqual([]);
  });

  it("a body naming B's organisation is 403 even with custom keys", async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(`/deal_details?id=eq.${id}`, { organisation_id: b.id, [keys.text]: 'x' }, REP);
    expectError(res, 403, 'FORBIDDEN');
    expect(await values(id!)).toEqual([]);
  });

  it('singular Accept with two matched deals is 406 and writes no values', async () => {
    const name = uniq('dd');
    const ids = await insertRows(t.db, 'deal', a.id, [{ name }, { name }]);
    const res = await patch(
      `/deal_details?name=eq.${name}`,
      { [keys.text]: 'x' },
      { ...REP, Accept: 'application/vnd.pgrst.object+json' },
    );
    expectError(res, 406, 'NOT_ACCEPTABLE');
    for (const id of ids) expect(await values(id)).toEqual([]);
  });

  it('tx=rollback answers the values and writes none', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', a.id, [{ name }]);
    const res = await patch(
      `/deal_details?id=eq.${id}`,
      { [keys.text]: 'dry' },
      { Prefer: 'return=representation, tx=rollback' },
    );
    expect(res.status).toBe(200);
    expect(res.body[0][keys.text]).toBe('dry');
    expect(await values(id!)).toEqual([]);
  });

  it('DELETE /custom_field removes its values on deals and on appointments', async () => {
    const p = uniq('cfdel');
    const [deal] = await insertRows(t.db, 'deal', a.id, [{ name: p }]);
    const [appointment] = await insertRows(t.db, 'appointment', a.id, [{ name: p }]);
    const [dealField, apptField, keptField] = await insertRows(t.db, 'custom_field', a.id, [
      { name: p, key: `${p}_d`, type: 'string', entity: 'deal' },
      { name: p, key: `${p}_a`, type: 'number', entity: 'appointment' },
      { name: p, key: `${p}_k`, type: 'string', entity: 'deal' },
    ]);
    await insertRows(t.db, 'deal_custom_field', a.id, [
      { deal_id: deal, custom_field_id: dealField, key: `${p}_d`, string_value: 'x' },
      { deal_id: deal, custom_field_id: keptField, key: `${p}_k`, string_value: 'kept' },
    ]);
    await insertRows(t.db, 'appointment_custom_field', a.id, [
      { appointment_id: appointment, custom_field_id: apptField, key: `${p}_a`, number_value: 3 },
    ]);

    const res = await del(`/custom_field?id=eq.${dealField}&select=key,type,entity`, {
      ...REP,
      Accept: 'application/vnd.pgrst.object+json',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(OBJECT_TYPE);
    expect(res.body).toEqual({ key: `${p}_d`, type: 'string', entity: 'deal' });
    expect(await countWhere('custom_field', 'id', dealField!)).toBe(0);
    expect(await countWhere('deal_custom_field', 'custom_field_id', dealField!)).toBe(0);
    expect(await countWhere('deal_custom_field', 'custom_field_id', keptField!)).toBe(1);

    const appt = await del(`/custom_field?key=eq.${p}_a`);
    expect(appt.status).toBe(204);
    expect(await countWhere('appointment_custom_field', 'custom_field_id', apptField!)).toBe(0);
    // The deal still exists, and PATCH /deal_details no longer knows the deleted key.
    expect(await countWhere('deal', 'id', deal!)).toBe(1);
    const stale = await patch(`/deal_details?id=eq.${deal}`, { [`${p}_d`]: 'again' }, REP);
    expectError(stale, 400, 'UNKNOWN_FIELD');
  });

  it("DELETE /custom_field refuses no filter and leaves B's field with the same key alone", async () => {
    expectError(await del('/custom_field'), 400, 'FILTER_REQUIRED');
    const res = await del(`/custom_field?key=eq.${fieldIds.secretKey}`, REP);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([]);
    expect(await countWhere('custom_field', 'key', fieldIds.secretKey!)).toBe(1);
  });
});
