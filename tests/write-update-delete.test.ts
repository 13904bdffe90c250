/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): PATCH and DELETE of /calendar:
 * filters, return= and count=, FILTER_REQUIRED, the body rules of PATCH, server-managed fields, conflicts.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, fieldsOf, JSON_TYPE, type Json, REP, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation. */
let a: Organisation;

const { patch, del, query, rowsWhere, countWhere, countLike, stamps } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('PATCH /calendar', () => {
  it('updates the filtered row: 204, Content-Range 0-0/*, updated_at moves, created_at does not', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [
      { name, created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
    ]);
    const res = await patch(`/calendar?id=eq.${id}`, { name: `${name}-2`, external_id: `${name}-ext` });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('content-range')).toBe('0-0/*');
    const [row] = await rowsWhere('calendar', 'id', id!);
    expect(row).toMatchObject({ name: `${name}-2`, external_id: `${name}-ext`, type: 'virtual' });
    const s = await stamps('calendar', id!);
    expect(s.created).toBe(Date.parse('2020-01-01T00:00:00Z') / 1000);
    expect(s.updated).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z') / 1000);
  });

  it('updated_at moves again on a second update', async () => {
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name: uniq('pat') }]);
    await patch(`/calendar?id=eq.${id}`, { name: 'one' });
    const first = await stamps('calendar', id!);
    await new Promise((r) => setTimeout(r, 5));
    await patch(`/calendar?id=eq.${id}`, { name: 'two' });
    const second = await stamps('calendar', id!);
    expect(second.updated).toBeGreaterThan(first.updated);
    expect(second.created).toBe(first.created);
  });

  it('return=representation: 200 with the updated rows; Content-Range counts them', async () => {
    const p = uniq('pat');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }, { name: `${p}-c` }]);
    const res = await patch(`/calendar?name=in.(${p}-a,${p}-b)&select=name,external_id`, { external_id: null }, REP);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(res.headers.get('content-range')).toBe('0-1/*');
    expect(res.body.map((r: Json) => r.name).sort()).toEqual([`${p}-a`, `${p}-b`]);
    const counted = await patch(
      `/calendar?name=like.${p}*`,
      { external_id: null },
      { Prefer: 'return=representation, count=exact' },
    );
    expect(counted.headers.get('content-range')).toBe('0-2/3');
    expect(counted.headers.get('preference-applied')).toBe('return=representation, count=exact');
  });

  it('no row matched: 204 with */*, or 200 and []', async () => {
    const res = await patch(`/calendar?id=eq.${randomUUID()}`, { name: 'x' });
    expect(res.status).toBe(204);
    expect(res.headers.get('content-range')).toBe('*/*');
    const rep = await patch(`/calendar?id=eq.${randomUUID()}`, { name: 'x' }, REP);
    expect(rep.status).toBe(200);
    expect(rep.body).toEqual([]);
  });

  it('filters with the grammar of GET: or=(), not., is.null', async () => {
    const p = uniq('pat');
    await insertRows(t.db, 'calendar', a.id, [
      { name: `${p}-a`, external_id: null },
      { name: `${p}-b`, external_id: `${p}-b` },
      { name: `${p}-c`, external_id: `${p}-c` },
    ]);
    const res = await patch(
      `/calendar?name=like.${p}*&or=(external_id.is.null,external_id.eq.${p}-c)&select=name`,
      { type: 'virtual' },
      REP,
    );
    expect(res.status).toBe(200);
    expect(res.body.map((r: Json) => r.name).sort()).toEqual([`${p}-a`, `${p}-c`]);
    const negated = await patch(
      `/calendar?name=like.${p}*&external_id=not.is.null&select=name`,
      { type: 'virtual' },
      REP,
    );
    expect(negated.body.map((r: Json) => r.name).sort()).toEqual([`${p}-b`, `${p}-c`]);
  });

  it('refuses a PATCH without a filter: 400 FILTER_REQUIRED, nothing changed', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    for (const path of ['/calendar', '/calendar?select=id', '/calendar?select=id&limit=1']) {
      const res = await patch(path, { name: 'everything' });
      expectError(res, 400, 'FILTER_REQUIRED');
    }
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(name);
    expect(await countWhere('calendar', 'name', 'everything')).toBe(0);
  });

  it('refuses id in the body (even the same id): 400 VALIDATION_FAILED naming id, nothing changed', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    for (const newId of [randomUUID(), id]) {
      const res = await patch(`/calendar?id=eq.${id}`, { id: newId, name: 'moved' });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.context).toEqual([expect.objectContaining({ field: 'id' })]);
    }
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(name);
  });

  it('refuses type provider on PATCH; virtual is fine', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await patch(`/calendar?id=eq.${id}`, { type: 'provider' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context).toEqual([expect.objectContaining({ field: 'type' })]);
    expect((await rowsWhere('calendar', 'id', id!))[0].type).toBe('virtual');
    const ok = await patch(`/calendar?id=eq.${id}`, { type: 'virtual' });
    expect(ok.status).toBe(204);
  });

  it('ignores created_at and updated_at values in the body', async () => {
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name: uniq('pat'), created_at: '2020-01-01T00:00:00Z' }]);
    const res = await patch(`/calendar?id=eq.${id}`, {
      name: 'x',
      created_at: '1999-01-01T00:00:00Z',
      updated_at: 'now()',
    });
    expect(res.status, res.text).toBe(204);
    const s = await stamps('calendar', id!);
    expect(s.created).toBe(Date.parse('2020-01-01T00:00:00Z') / 1000);
    expect(s.updated).toBeGreaterThan(Date.parse('2025-01-01T00:00:00Z') / 1000);
  });

  it('{} updates nothing: 204 */*, updated_at unchanged', async () => {
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name: uniq('pat'), updated_at: '2020-01-01T00:00:00Z' }]);
    const res = await patch(`/calendar?id=eq.${id}`, {});
    expect(res.status).toBe(204);
    expect(res.headers.get('content-range')).toBe('*/*');
    expect((await stamps('calendar', id!)).updated).toBe(Date.parse('2020-01-01T00:00:00Z') / 1000);
  });

  it('refuses unknown fields and invalid values', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const unknown = await patch(`/calendar?id=eq.${id}`, { name: 'x', colour: 'red' });
    expectError(unknown, 400, 'UNKNOWN_FIELD');
    expect(unknown.body.context).toEqual([expect.objectContaining({ field: 'colour' })]);
    const invalid = await patch(`/calendar?id=eq.${id}`, { name: ['x'], type: 'other' });
    expectError(invalid, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(invalid)).toEqual(['name', 'type']);
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(name);
  });

  it('an array body is refused', async () => {
    const name = uniq('pat');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await patch(`/calendar?id=eq.${id}`, [{ name: 'x' }]);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(name);
  });

  it('a unique violation is 409 CONFLICT and changes nothing', async () => {
    const p = uniq('pat');
    const [, second] = await insertRows(t.db, 'calendar', a.id, [
      { name: `${p}-a`, external_id: `${p}-a` },
      { name: `${p}-b`, external_id: `${p}-b` },
    ]);
    const res = await patch(`/calendar?id=eq.${second}`, { external_id: `${p}-a`, name: 'changed' });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['external_id']);
    expect((await rowsWhere('calendar', 'id', second!))[0]).toMatchObject({ external_id: `${p}-b`, name: `${p}-b` });
  });

  it('an unknown filter field is 400 UNKNOWN_FIELD, a malformed one 400 INVALID_QUERY, a bad uuid 400', async () => {
    const name = uniq('pat');
    const unknown = await patch('/calendar?colour=eq.red', { name });
    expectError(unknown, 400, 'UNKNOWN_FIELD');
    const malformed = await patch('/calendar?name=bogus.x', { name });
    expectError(malformed, 400, 'INVALID_QUERY');
    const badUuid = await patch('/calendar?id=eq.not-a-uuid', { name });
    expect(badUuid.status).toBe(400);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});

describe('DELETE /calendar', () => {
  it('deletes the filtered rows: 204, Content-Range */*', async () => {
    const p = uniq('del');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }, { name: `${p}-keep` }]);
    const res = await del(`/calendar?name=in.(${p}-a,${p}-b)`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(res.headers.get('content-range')).toBe('*/*');
    expect(await countLike('calendar', 'name', p)).toBe(1);
  });

  it('return=representation: 200 with the deleted rows; count=exact gives */N', async () => {
    const p = uniq('del');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }]);
    const res = await del(`/calendar?id=eq.${id}&select=id,name`, { Prefer: 'return=representation, count=exact' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(res.headers.get('content-range')).toBe('*/1');
    expect(res.body).toEqual([{ id, name: `${p}-a` }]);
    expect(await countWhere('calendar', 'id', id!)).toBe(0);
  });

  it('nothing matched: 204, or 200 and []', async () => {
    expect((await del(`/calendar?id=eq.${randomUUID()}`)).status).toBe(204);
    const rep = await del(`/calendar?id=eq.${randomUUID()}`, REP);
    expect(rep.status).toBe(200);
    expect(rep.body).toEqual([]);
  });

  it('refuses a DELETE without a filter: 400 FILTER_REQUIRED, nothing deleted', async () => {
    const [before] = await query<{ n: number }>('SELECT count(*)::int AS n FROM calendar');
    for (const path of ['/calendar', '/calendar?select=id', '/calendar?order=name']) {
      const res = await del(path);
      expectError(res, 400, 'FILTER_REQUIRED');
    }
    const [after] = await query<{ n: number }>('SELECT count(*)::int AS n FROM calendar');
    expect(after!.n).toBe(before!.n);
  });
});
