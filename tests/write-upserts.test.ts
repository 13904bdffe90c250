/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): upserts, POST with on_conflict
 * and resolution=merge-duplicates or ignore-duplicates.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { expectError, type Json, uniq, writeClient } from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation and another one, whose rows must stay out of reach. */
let a: Organisation;
let b: Organisation;

const { post, rowsWhere, countWhere, countLike, stamps } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  b = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('upserts: on_conflict with resolution', () => {
  it('merge-duplicates updates an existing row: 200, id and created_at kept, updated_at moved', async () => {
    const ext = uniq('up');
    const [id] = await insertRows(t.db, 'calendar', a.id, [
      { name: 'old', external_id: ext, created_at: '2020-01-01T00:00:00Z', updated_at: '2020-01-01T00:00:00Z' },
    ]);
    const res = await post(
      '/calendar?on_conflict=external_id',
      { name: 'new', external_id: ext },
      { Prefer: 'resolution=merge-duplicates, return=representation' },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('preference-applied')).toBe('resolution=merge-duplicates, return=representation');
    expect(res.body).toHaveLength(1);
    expect(res.body[0]).toMatchObject({ id, name: 'new', external_id: ext });
    const rows = await rowsWhere('calendar', 'external_id', ext);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, name: 'new' });
    const s = await stamps('calendar', id!);
    expect(s.created).toBe(Date.parse('2020-01-01T00:00:00Z') / 1000);
    expect(s.updated).toBeGreaterThan(s.created);
  });

  it('merge-duplicates with one new and one existing row: 201, both in the representation', async () => {
    const p = uniq('up');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'old', external_id: `${p}-1` }]);
    const res = await post(
      '/calendar?on_conflict=external_id&select=name,external_id',
      [
        { name: 'one', external_id: `${p}-1` },
        { name: 'two', external_id: `${p}-2` },
      ],
      { Prefer: 'resolution=merge-duplicates, return=representation' },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.map((r: Json) => `${r.external_id}:${r.name}`).sort()).toEqual([`${p}-1:one`, `${p}-2:two`]);
    expect(await countLike('calendar', 'external_id', p)).toBe(2);
  });

  it('merge-duplicates without on_conflict uses the id', async () => {
    const [id] = await insertRows(t.db, 'calendar', a.id, [{ name: uniq('up') }]);
    const res = await post('/calendar', { id, name: 'by id' }, { Prefer: 'resolution=merge-duplicates' });
    expect(res.status, res.text).toBe(200);
    expect(res.text).toBe('');
    expect(res.headers.get('preference-applied')).toBe('resolution=merge-duplicates');
    expect((await rowsWhere('calendar', 'id', id!))[0].name).toBe('by id');
  });

  it('ignore-duplicates keeps the existing row: 201, the representation holds only inserted rows', async () => {
    const p = uniq('up');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'kept', external_id: `${p}-1` }]);
    const res = await post(
      '/calendar?on_conflict=external_id&select=name,external_id',
      [
        { name: 'ignored', external_id: `${p}-1` },
        { name: 'added', external_id: `${p}-2` },
      ],
      { Prefer: 'resolution=ignore-duplicates, return=representation' },
    );
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('preference-applied')).toBe('resolution=ignore-duplicates, return=representation');
    expect(res.body).toEqual([{ name: 'added', external_id: `${p}-2` }]);
    expect((await rowsWhere('calendar', 'external_id', `${p}-1`))[0].name).toBe('kept');
  });

  it('ignore-duplicates where every row exists: 201 and []', async () => {
    const ext = uniq('up');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'kept', external_id: ext }]);
    const res = await post('/calendar?on_conflict=external_id', [{ name: 'ignored', external_id: ext }], {
      Prefer: 'resolution=ignore-duplicates, return=representation',
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual([]);
  });

  it('never touches a row of another organisation with the same external_id', async () => {
    const ext = uniq('up');
    const [theirs] = await insertRows(t.db, 'calendar', b.id, [{ name: 'theirs', external_id: ext }]);
    const res = await post(
      '/calendar?on_conflict=external_id',
      { name: 'mine', external_id: ext },
      { Prefer: 'resolution=merge-duplicates' },
    );
    expect(res.status).toBe(201);
    expect((await rowsWhere('calendar', 'id', theirs!))[0]).toMatchObject({ name: 'theirs', organisation_id: b.id });
  });

  it('does not change the id of an existing row, even when another item of the batch carries an id', async () => {
    // postgrest-js sends columns= with the union of the keys: the existing row's item has no id.
    const p = uniq('up');
    const [existing] = await insertRows(t.db, 'calendar', a.id, [{ name: 'old', external_id: `${p}-1` }]);
    const res = await post(
      '/calendar?on_conflict=external_id&columns="id","name","external_id"',
      [
        { id: randomUUID(), name: 'new row', external_id: `${p}-2` },
        { name: 'updated', external_id: `${p}-1` },
      ],
      { Prefer: 'resolution=merge-duplicates' },
    );
    expect(res.status, res.text).toBe(201);
    const [row] = await rowsWhere('calendar', 'external_id', `${p}-1`);
    expect(row.name).toBe('updated');
    expect(row.id).toBe(existing);
  });

  it('the same key twice in one upsert is a client error, not a 500', async () => {
    const ext = uniq('up');
    const res = await post(
      '/calendar?on_conflict=external_id',
      [
        { name: 'one', external_id: ext },
        { name: 'two', external_id: ext },
      ],
      { Prefer: 'resolution=merge-duplicates' },
    );
    expect(res.status, res.text).toBeLessThan(500);
    expect([400, 409]).toContain(res.status);
    expect(await countWhere('calendar', 'external_id', ext)).toBe(0);
  });

  it(
    'on_conflict on fields without a unique constraint is 400 INVALID_QUERY;' +
      ' on an unknown field 400 UNKNOWN_FIELD',
    async () => {
      const name = uniq('up');
      const notUnique = await post('/calendar?on_conflict=name', { name }, { Prefer: 'resolution=merge-duplicates' });
      expectError(notUnique, 400, 'INVALID_QUERY');
      const unknown = await post('/calendar?on_conflict=colour', { name }, { Prefer: 'resolution=merge-duplicates' });
      expectError(unknown, 400, 'UNKNOWN_FIELD');
      expect(await countWhere('calendar', 'name', name)).toBe(0);
    },
  );

  it('on_conflict without a resolution is a plain insert (409 on a duplicate)', async () => {
    const ext = uniq('up');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'old', external_id: ext }]);
    const res = await post('/calendar?on_conflict=external_id', { name: 'new', external_id: ext });
    expectError(res, 409, 'CONFLICT');
    expect((await rowsWhere('calendar', 'external_id', ext))[0].name).toBe('old');
  });

  it('a merge-duplicates upsert that would make a provider calendar is refused', async () => {
    const ext = uniq('up');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'old', external_id: ext }]);
    const res = await post(
      '/calendar?on_conflict=external_id',
      { name: 'p', external_id: ext, type: 'provider' },
      { Prefer: 'resolution=merge-duplicates' },
    );
    expectError(res, 400, 'VALIDATION_FAILED');
    expect((await rowsWhere('calendar', 'external_id', ext))[0]).toMatchObject({ name: 'old', type: 'virtual' });
  });
});
