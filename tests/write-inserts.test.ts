/**
 * Writes through HTTP (docs/contract.md section 3, PostgREST's semantics): POST of one object and of
 * arrays (bulk inserts): every return= preference, select= on the representation, ids and server-managed
 * timestamps, body validation by item, conflicts, missing=default and columns=.
 * Each test checks the response (status, headers, body) and then the database itself.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import {
  expectError,
  fieldsOf,
  ISO,
  itemFieldsOf,
  JSON_TYPE,
  type Json,
  REP,
  UUID,
  uniq,
  writeClient,
} from './helpers/write.ts';

let t: TestApp;
/** The caller's organisation and another one, whose rows must stay out of reach. */
let a: Organisation;
let b: Organisation;

const { send, post, query, rowsWhere, countWhere, countLike, stamps, dbNow } = writeClient(
  () => t,
  () => a,
);

beforeAll(async () => {
  t = await createTestApp();
  a = await createOrganisation(t);
  b = await createOrganisation(t);
});
afterAll(() => t?.drop());

describe('POST /calendar: one object', () => {
  it(
    'return=minimal by default: 201, no body, no Content-Type, Content-Range */*;' +
      " the row is written for the token's organisation",
    async () => {
      const name = uniq('cal');
      const res = await post('/calendar', { name, type: 'virtual', external_id: name });
      expect(res.status).toBe(201);
      expect(res.text).toBe('');
      expect(res.headers.get('content-type')).toBeNull();
      expect(res.headers.get('content-range')).toBe('*/*');
      expect(res.headers.get('preference-applied')).toBeNull();
      expect(res.headers.get('location')).toBeNull();
      expect(res.headers.get('request-id')).toBeTruthy();
      const rows = await rowsWhere('calendar', 'name', name);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ name, type: 'virtual', external_id: name, organisation_id: a.id });
      expect(rows[0].id).toMatch(UUID);
    },
  );

  it('return=minimal spelled out is echoed in Preference-Applied', async () => {
    const name = uniq('cal');
    const res = await post('/calendar', { name }, { Prefer: 'return=minimal' });
    expect(res.status).toBe(201);
    expect(res.text).toBe('');
    expect(res.headers.get('preference-applied')).toBe('return=minimal');
    expect(await countWhere('calendar', 'name', name)).toBe(1);
  });

  it('return=representation: 201 with the created row as an array, type virtual by default', async () => {
    const name = uniq('cal');
    const before = await dbNow();
    const res = await post('/calendar', { name }, REP);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe(JSON_TYPE);
    expect(res.headers.get('preference-applied')).toBe('return=representation');
    expect(res.headers.get('content-range')).toBe('*/*');
    expect(res.body).toHaveLength(1);
    const [row] = res.body;
    expect(row).toMatchObject({ name, type: 'virtual', external_id: null, organisation_id: a.id });
    expect(row.id).toMatch(UUID);
    expect(row.created_at).toMatch(ISO);
    expect(row.updated_at).toMatch(ISO);
    expect(Date.parse(row.created_at) / 1000).toBeGreaterThanOrEqual(Math.floor(before) - 1);
    expect(Object.keys(row).sort()).toEqual([
      'created_at',
      'external_id',
      'id',
      'name',
      'organisation_id',
      'type',
      'updated_at',
    ]);
    const stored = await rowsWhere('calendar', 'id', row.id);
    expect(stored).toHaveLength(1);
    expect(stored[0].name).toBe(name);
  });

  it('return=headers-only: 201, empty body, Location naming the new row by id', async () => {
    const name = uniq('cal');
    const res = await post('/calendar', { name }, { Prefer: 'return=headers-only' });
    expect(res.status).toBe(201);
    expect(res.text).toBe('');
    expect(res.headers.get('preference-applied')).toBe('return=headers-only');
    const [row] = await rowsWhere('calendar', 'name', name);
    // Relative to the request URL, so it resolves under /api/v1 (or any prefix the app is mounted at).
    const location = res.headers.get('location')!;
    expect(location).toBe(`calendar?id=eq.${row.id}`);
    expect(new URL(location, 'http://engage.test/api/v1/calendar').href).toBe(
      `http://engage.test/api/v1/calendar?id=eq.${row.id}`,
    );
  });

  it('select= shapes the representation (and is ignored without one)', async () => {
    const name = uniq('cal');
    const res = await post('/calendar?select=id,label:name', { name }, REP);
    expect(res.status).toBe(201);
    expect(res.body).toEqual([{ id: expect.stringMatching(UUID), label: name }]);
    const quiet = await post('/calendar?select=id', { name: `${name}-2` });
    expect(quiet.status).toBe(201);
    expect(quiet.text).toBe('');
  });

  it('accepts an id given by the client', async () => {
    const id = randomUUID();
    const res = await post('/calendar?select=id,name', { id, name: uniq('cal') }, REP);
    expect(res.status).toBe(201);
    expect(res.body[0].id).toBe(id);
    expect(await countWhere('calendar', 'id', id)).toBe(1);
  });

  it("ignores created_at and updated_at in the body, such as the spec's now() placeholder", async () => {
    const name = uniq('cal');
    const before = await dbNow();
    const res = await post('/calendar', { name, created_at: 'now()', updated_at: 'now()' }, REP);
    expect(res.status, res.text).toBe(201);
    expect(res.body[0].created_at).toMatch(ISO);
    const old = uniq('cal');
    const dated = await post(
      '/calendar',
      { name: old, created_at: '2000-01-01T00:00:00Z', updated_at: '2000-01-01T00:00:00Z' },
      REP,
    );
    expect(dated.status).toBe(201);
    expect(dated.body[0].created_at.startsWith('2000')).toBe(false);
    for (const id of [res.body[0].id, dated.body[0].id]) {
      const s = await stamps('calendar', id);
      expect(s.created).toBeGreaterThanOrEqual(before - 1);
      expect(s.updated).toBeGreaterThanOrEqual(before - 1);
    }
  });

  it("accepts organisation_id when it is the token's own (it changes nothing)", async () => {
    const name = uniq('cal');
    const res = await post('/calendar', { name, organisation_id: a.id }, REP);
    expect(res.status).toBe(201);
    expect(res.body[0].organisation_id).toBe(a.id);
    expect(await countWhere('calendar', 'name', name)).toBe(1);
  });

  it('refuses a provider calendar: 400 VALIDATION_FAILED naming type, nothing written', async () => {
    const name = uniq('cal');
    const res = await post('/calendar', { name, type: 'provider' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context).toEqual([{ field: 'type', message: expect.any(String) }]);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('refuses a type outside the enum and a null type', async () => {
    const name = uniq('cal');
    const bogus = await post('/calendar', { name, type: 'shared' });
    expectError(bogus, 400, 'VALIDATION_FAILED');
    expect(bogus.body.context.map((p: Json) => p.field)).toContain('type');
    const nul = await post('/calendar', { name, type: null });
    expectError(nul, 400, 'VALIDATION_FAILED');
    expect(nul.body.context.map((p: Json) => p.field)).toContain('type');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('refuses unknown fields with 400 UNKNOWN_FIELD naming them', async () => {
    const name = uniq('cal');
    const res = await post('/calendar', { name, colour: 'red', owner: 'x' });
    expectError(res, 400, 'UNKNOWN_FIELD');
    expect(res.body.context).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ field: 'colour' }),
        expect.objectContaining({ field: 'owner' }),
      ]),
    );
    expect(res.body.context.every((p: Json) => p.item === undefined)).toBe(true);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('refuses wrong types, bad uuids, together in context', async () => {
    const res = await post('/calendar', { id: 'not-a-uuid', name: 42, external_id: true });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(res)).toEqual(['external_id', 'id', 'name']);
    for (const p of res.body.context) expect(typeof p.message).toBe('string');
  });

  it('an id that exists already is 409 CONFLICT naming id', async () => {
    const [existing] = await insertRows(t.db, 'calendar', a.id, [{ name: uniq('cal') }]);
    const res = await post('/calendar', { id: existing, name: 'dup' });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['id']);
    expect((await rowsWhere('calendar', 'id', existing!))[0].name).not.toBe('dup');
  });

  it('an external_id that exists already is 409 CONFLICT naming external_id', async () => {
    const ext = uniq('ext');
    await insertRows(t.db, 'calendar', a.id, [{ name: 'first', external_id: ext }]);
    const res = await post('/calendar', { name: 'second', external_id: ext });
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['external_id']);
    expect(await countWhere('calendar', 'external_id', ext)).toBe(1);
  });

  it('the same external_id in another organisation is no conflict', async () => {
    const ext = uniq('ext');
    await insertRows(t.db, 'calendar', b.id, [{ name: 'theirs', external_id: ext }]);
    const res = await post('/calendar', { name: 'mine', external_id: ext });
    expect(res.status).toBe(201);
    const rows = await rowsWhere('calendar', 'external_id', ext);
    expect(rows.map((r) => [r.organisation_id, r.name]).sort()).toEqual(
      [
        [a.id, 'mine'],
        [b.id, 'theirs'],
      ].sort(),
    );
  });
});

describe('POST /calendar: more of the request', () => {
  it('echoes engage-version; an unsupported version is 400 and writes nothing', async () => {
    const name = uniq('ver');
    const ok = await post('/calendar', { name });
    expect(ok.status).toBe(201);
    expect(ok.headers.get('engage-version')).toBe('2026-11-01');
    const bad = await post('/calendar', { name: `${name}-2` }, { 'engage-version': '1999-01-01' });
    expectError(bad, 400, 'INVALID_VERSION_HEADER');
    expect(await countWhere('calendar', 'name', `${name}-2`)).toBe(0);
  });

  it('an unknown field in select is 400 before anything is written', async () => {
    const name = uniq('sel');
    const res = await post('/calendar?select=id,colour', { name }, REP);
    expectError(res, 400, 'UNKNOWN_FIELD');
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('keys such as __proto__ and constructor are unknown fields, not object internals', async () => {
    const name = uniq('proto');
    const res = await send('POST', '/calendar', {
      raw: `{"name": "${name}", "__proto__": {"type": "provider"}, "constructor": 1}`,
    });
    expectError(res, 400, 'UNKNOWN_FIELD');
    expect(fieldsOf(res)).toEqual(['__proto__', 'constructor']);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('Prefer: missing=default gives an item without a listed key the column default, and is echoed', async () => {
    const p = uniq('miss');
    const items = [{ name: `${p}-a`, type: 'virtual' }, { name: `${p}-b` }];
    const nulled = await post('/calendar?columns=name,type', items);
    expectError(nulled, 400, 'VALIDATION_FAILED');
    expect(fieldsOf(nulled)).toEqual(['type']);
    expect(await countLike('calendar', 'name', p)).toBe(0);
    const res = await post('/calendar?columns=name,type&select=name,type', items, {
      Prefer: 'missing=default, return=representation',
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('preference-applied')).toBe('missing=default, return=representation');
    expect(res.body.map((r: Json) => `${r.name}:${r.type}`).sort()).toEqual([`${p}-a:virtual`, `${p}-b:virtual`]);
  });
});

describe('POST /calendar: arrays (bulk)', () => {
  it('inserts every item in one request; representation returns them all', async () => {
    const p = uniq('bulk');
    // Items giving different fields list them with columns=, as PostgREST requires.
    const res = await post(
      '/calendar?columns=name,external_id',
      [{ name: `${p}-a` }, { name: `${p}-b`, external_id: `${p}-b` }, { name: `${p}-c` }],
      REP,
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('content-range')).toBe('*/*');
    expect(res.body).toHaveLength(3);
    expect(res.body.map((r: Json) => r.name).sort()).toEqual([`${p}-a`, `${p}-b`, `${p}-c`]);
    const ids = new Set(res.body.map((r: Json) => r.id));
    expect(ids.size).toBe(3);
    expect(res.body.find((r: Json) => r.name === `${p}-a`).external_id).toBeNull();
    expect(await countLike('calendar', 'name', p)).toBe(3);
  });

  it('count=exact puts the number of created rows in Content-Range', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [{ name: `${p}-a` }, { name: `${p}-b` }], { Prefer: 'count=exact' });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-range')).toBe('*/2');
    expect(res.headers.get('preference-applied')).toBe('count=exact');
  });

  it('gives ids to the items without one when others have one', async () => {
    const p = uniq('bulk');
    const id = randomUUID();
    const res = await post('/calendar?select=id,name', [{ id, name: `${p}-a` }, { name: `${p}-b` }], REP);
    expect(res.status, res.text).toBe(201);
    const byName = Object.fromEntries(res.body.map((r: Json) => [r.name, r.id]));
    expect(byName[`${p}-a`]).toBe(id);
    expect(byName[`${p}-b`]).toMatch(UUID);
  });

  it('headers-only with several rows sends no Location', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [{ name: `${p}-a` }, { name: `${p}-b` }], { Prefer: 'return=headers-only' });
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBeNull();
    expect(await countLike('calendar', 'name', p)).toBe(2);
  });

  it('[] creates nothing: 201, representation []', async () => {
    const res = await post('/calendar', [], REP);
    expect(res.status).toBe(201);
    expect(res.body).toEqual([]);
  });

  it('[{}, {}] creates two rows of defaults', async () => {
    const res = await post('/calendar?select=id,name,type', [{}, {}], REP);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toHaveLength(2);
    for (const row of res.body) expect(row).toEqual({ id: expect.stringMatching(UUID), name: null, type: 'virtual' });
    for (const row of res.body) await query('DELETE FROM calendar WHERE id = $1::uuid', [row.id]);
  });

  it('reports every problem by item index, and writes nothing', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [
      { name: `${p}-0` },
      { name: `${p}-1`, type: 'provider' },
      { name: `${p}-2`, id: 'nope' },
      { name: 7 },
    ]);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(itemFieldsOf(res)).toEqual(['1:type', '2:id', '3:name']);
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('reports unknown fields by item index', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [{ name: `${p}-0` }, { name: `${p}-1`, colour: 'red' }]);
    expectError(res, 400, 'UNKNOWN_FIELD');
    expect(res.body.context).toEqual([expect.objectContaining({ item: 1, field: 'colour' })]);
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('an item that is not an object is reported by index', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [{ name: `${p}-0` }, 'x']);
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.context).toEqual([expect.objectContaining({ item: 1 })]);
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('a unique violation by the third item writes nothing: 409 CONFLICT', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [
      { name: `${p}-0`, external_id: `${p}-x` },
      { name: `${p}-1`, external_id: `${p}-y` },
      { name: `${p}-2`, external_id: `${p}-x` },
    ]);
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['external_id']);
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('a third item colliding with a stored row writes nothing', async () => {
    const p = uniq('bulk');
    await insertRows(t.db, 'appointment_type', a.id, [{ name: 'stored', key: `${p}-k` }]);
    const res = await post('/appointment_type', [
      { name: `${p}-0`, key: `${p}-a` },
      { name: `${p}-1`, key: `${p}-b` },
      { name: `${p}-2`, key: `${p}-k` },
    ]);
    expectError(res, 409, 'CONFLICT');
    expect(res.body.context.fields).toEqual(['key']);
    expect(await countLike('appointment_type', 'name', p)).toBe(0);
  });

  it('an item naming another organisation makes the whole request 403 and writes nothing', async () => {
    const p = uniq('bulk');
    const res = await post('/calendar', [{ name: `${p}-0` }, { name: `${p}-1`, organisation_id: b.id }]);
    expectError(res, 403, 'FORBIDDEN');
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });
});

describe('columns=', () => {
  it('reads only the listed keys; other keys, even unknown ones, are ignored', async () => {
    const p = uniq('cols');
    const res = await post(
      '/calendar?columns=name',
      [{ name: `${p}-a`, external_id: 'skipped', colour: 'red' }, { name: `${p}-b` }],
      REP,
    );
    expect(res.status, res.text).toBe(201);
    expect(res.body.map((r: Json) => r.external_id)).toEqual([null, null]);
    expect(await countLike('calendar', 'name', p)).toBe(2);
  });

  it('accepts quoted names as postgrest-js sends them; a listed key missing in an item is null', async () => {
    const p = uniq('cols');
    const res = await post(
      '/calendar?columns="name","external_id"',
      [{ name: `${p}-a`, external_id: `${p}-a` }, { name: `${p}-b` }],
      REP,
    );
    expect(res.status, res.text).toBe(201);
    const byName = Object.fromEntries(res.body.map((r: Json) => [r.name, r.external_id]));
    expect(byName).toEqual({ [`${p}-a`]: `${p}-a`, [`${p}-b`]: null });
  });

  it('an unknown name in columns is 400 UNKNOWN_FIELD', async () => {
    const p = uniq('cols');
    const res = await post('/calendar?columns=name,colour', [{ name: p }]);
    expectError(res, 400, 'UNKNOWN_FIELD');
    expect(await countWhere('calendar', 'name', p)).toBe(0);
  });
});
