/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): tx=rollback dry runs, singular
 * responses (Accept: application/vnd.pgrst.object+json) and max-affected with handling=strict.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, type Json, OBJECT_TYPE, REP, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation. */
let a: Organisation;

const { post, patch, del, rowsWhere, countWhere, countLike } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('Prefer: tx=rollback (dry runs)', () => {
  it('POST answers with the representation and leaves the table unchanged', async () => {
    const p = uniq('dry');
    const res = await post('/calendar', [{ name: `${p}-a` }, { name: `${p}-b` }], {
      Prefer: 'return=representation, tx=rollback',
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('preference-applied')).toBe('return=representation, tx=rollback');
    expect(res.body.map((r: Json) => r.name).sort()).toEqual([`${p}-a`, `${p}-b`]);
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('PATCH answers with the updated rows and changes nothing', async () => {
    const name = uniq('dry');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await patch(
      `/calendar?id=eq.${id}`,
      { name: 'renamed' },
      { Prefer: 'return=representation, tx=rollback' },
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ id, name: 'renamed' })]);
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(name);
  });

  it('DELETE answers with the deleted rows and deletes nothing', async () => {
    const name = uniq('dry');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await del(`/calendar?id=eq.${id}`, { Prefer: 'return=representation, tx=rollback' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([expect.objectContaining({ id, name })]);
    expect(await countWhere('calendar', 'id', id!)).toBe(1);
  });

  it('a failing dry run reports the error as usual', async () => {
    const ext = uniq('dry');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'x', external_id: ext }]);
    const res = await post('/calendar', { external_id: ext }, { Prefer: 'tx=rollback' });
    expectError(res, 409, 'CONFLICT');
  });

  it('tx=commit is applied and commits', async () => {
    const name = uniq('dry');
    const res = await post('/calendar', { name }, { Prefer: 'tx=commit' });
    expect(res.status).toBe(201);
    expect(res.headers.get('preference-applied')).toBe('tx=commit');
    expect(await countWhere('calendar', 'name', name)).toBe(1);
  });
});

describe('Accept: application/vnd.pgrst.object+json on writes', () => {
  const SINGLE = { Accept: 'application/vnd.pgrst.object+json' };

  it('POST of one object answers the object itself', async () => {
    const name = uniq('one');
    const res = await post('/calendar?select=name,type', { name }, { ...SINGLE, ...REP });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe(OBJECT_TYPE);
    expect(res.body).toEqual({ name, type: 'virtual' });
  });

  it('POST of two rows is 406 and rolls back, even with return=minimal', async () => {
    const p = uniq('one');
    const res = await post('/calendar', [{ name: `${p}-a` }, { name: `${p}-b` }], SINGLE);
    expectError(res, 406, 'NOT_ACCEPTABLE');
    expect(await countLike('calendar', 'name', p)).toBe(0);
    const rep = await post('/calendar', [{ name: `${p}-a` }, { name: `${p}-b` }], { ...SINGLE, ...REP });
    expectError(rep, 406, 'NOT_ACCEPTABLE');
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('POST of [] is 406', async () => {
    const res = await post('/calendar', [], SINGLE);
    expectError(res, 406, 'NOT_ACCEPTABLE');
  });

  it('PATCH of two rows is 406 and both rows stay unchanged', async () => {
    const p = uniq('one');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const res = await patch(`/calendar?name=like.${p}*`, { name: `${p}-changed` }, { ...SINGLE, ...REP });
    expectError(res, 406, 'NOT_ACCEPTABLE');
    expect(await countWhere('calendar', 'name', `${p}-changed`)).toBe(0);
    expect(await countLike('calendar', 'name', p)).toBe(2);
  });

  it('PATCH of no row is 406', async () => {
    const res = await patch(`/calendar?id=eq.${randomUUID()}`, { name: 'x' }, SINGLE);
    expectError(res, 406, 'NOT_ACCEPTABLE');
  });

  it('PATCH of exactly one row: 200 and the object with representation, 204 without', async () => {
    const name = uniq('one');
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name }]);
    const res = await patch(`/calendar?id=eq.${id}&select=id,name`, { name: `${name}-2` }, { ...SINGLE, ...REP });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(OBJECT_TYPE);
    expect(res.body).toEqual({ id, name: `${name}-2` });
    const quiet = await patch(`/calendar?id=eq.${id}`, { name: `${name}-3` }, SINGLE);
    expect(quiet.status).toBe(204);
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe(`${name}-3`);
  });

  it('DELETE of two rows is 406 and deletes nothing; of one row answers the object', async () => {
    const p = uniq('one');
    const [first] = await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const two = await del(`/calendar?name=like.${p}*`, SINGLE);
    expectError(two, 406, 'NOT_ACCEPTABLE');
    expect(await countLike('calendar', 'name', p)).toBe(2);
    const one = await del(`/calendar?id=eq.${first}&select=name`, { ...SINGLE, ...REP });
    expect(one.status).toBe(200);
    expect(one.headers.get('content-type')).toBe(OBJECT_TYPE);
    expect(one.body).toEqual({ name: `${p}-a` });
    expect(await countLike('calendar', 'name', p)).toBe(1);
  });

  it('an Accept the API cannot produce is 406 before anything is written', async () => {
    const name = uniq('one');
    const res = await post('/calendar', { name }, { Accept: 'application/xml' });
    expectError(res, 406, 'NOT_ACCEPTABLE');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});

describe('Prefer: max-affected with handling=strict', () => {
  it('PATCH over the limit is 400 and rolls back', async () => {
    const p = uniq('max');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }, { name: `${p}-c` }]);
    const res = await patch(
      `/calendar?name=like.${p}*`,
      { external_id: null, name: `${p}-same` },
      { Prefer: 'handling=strict, max-affected=2' },
    );
    expectError(res, 400, 'MAX_AFFECTED_EXCEEDED');
    expect(await countWhere('calendar', 'name', `${p}-same`)).toBe(0);
    expect(await countLike('calendar', 'name', p)).toBe(3);
  });

  it('PATCH within the limit succeeds and echoes the preferences', async () => {
    const p = uniq('max');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const res = await patch(
      `/calendar?name=like.${p}*`,
      { external_id: null },
      { Prefer: 'handling=strict, max-affected=2' },
    );
    expect(res.status).toBe(204);
    expect(res.headers.get('preference-applied')).toBe('handling=strict, max-affected=2');
  });

  it('without handling=strict max-affected is ignored and not echoed', async () => {
    const p = uniq('max');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const res = await patch(`/calendar?name=like.${p}*`, { name: `${p}-x` }, { Prefer: 'max-affected=1' });
    expect(res.status).toBe(204);
    expect(res.headers.get('preference-applied')).toBeNull();
    expect(await countWhere('calendar', 'name', `${p}-x`)).toBe(2);
  });

  it('DELETE over the limit is 400 and deletes nothing', async () => {
    const p = uniq('max');
    await insertRows(t.db, 'calendar', a.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const res = await del(`/calendar?name=like.${p}*`, { Prefer: 'handling=strict, max-affected=1' });
    expectError(res, 400, 'MAX_AFFECTED_EXCEEDED');
    expect(await countLike('calendar', 'name', p)).toBe(2);
    const ok = await del(`/calendar?name=like.${p}*`, {
      Prefer: 'return=representation, handling=strict, max-affected=2',
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('preference-applied')).toBe('return=representation, handling=strict, max-affected=2');
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('handling=strict refuses unknown preferences with 400 and writes nothing', async () => {
    const name = uniq('max');
    const res = await post('/calendar', { name }, { Prefer: 'handling=strict, return=everything' });
    expect(res.status).toBe(400);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});
