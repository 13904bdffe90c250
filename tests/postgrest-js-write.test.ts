/**
 * Writes driven by @supabase/postgrest-js, as a Supabase user calls them: insert (one object or
 * an array, with `columns=` built by the client), upsert with onConflict and ignoreDuplicates,
 * update and delete with filters, `.select()`, `.single()`, counts, `.rollback()` and
 * `.maxAffected()`. Errors come back with the engine's codes. Every request goes through the real
 * Hono app, and the database is checked afterwards.
 */
import { randomUUID } from 'node:crypto';
import { PostgrestClient } from '@supabase/postgrest-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const BASE = 'http://engage.test/api/v1';

let t: TestApp;
let org: Organisation;
let other: Organisation;
let contact: string;
let otherContact: string;

interface SentRequest {
  method: string;
  url: URL;
  headers: Headers;
  body: string | null;
}
/** Every request the client sent, newest last. */
const sent: SentRequest[] = [];
const last = () => sent[sent.length - 1]!;

function client(token: string) {
  return new PostgrestClient(BASE, {
    headers: { Authorization: `Bearer ${token}` },
    fetch: (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.toString() : input.url;
      sent.push({
        method: init?.method ?? 'GET',
        url: new URL(url),
        headers: new Headers(init?.headers),
        body: typeof init?.body === 'string' ? init.body : null,
      });
      return Promise.resolve(t.app.request(url, init));
    },
  });
}
const db = () => client(org.token);

type Row = Record<string, unknown>;
let counter = 0;
const uniq = (prefix: string) => `${prefix}-${++counter}-${randomUUID().slice(0, 8)}`;

async function rowsWhere(table: string, column: string, value: string): Promise<Row[]> {
  const found = await t.db.query<{ r: string }>(
    `SELECT row_to_json(x)::text AS r FROM "${table}" x WHERE "${column}"::text = $1 ORDER BY created_at, id`,
    [value],
  );
  return found.map((f) => JSON.parse(f.r));
}
async function countWhere(table: string, column: string, value: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text = $1`,
    [value],
  );
  return row!.n;
}
async function countLike(table: string, column: string, prefix: string): Promise<number> {
  const [row] = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" LIKE $1`, [
    `${prefix}%`,
  ]);
  return row!.n;
}
const byName = (rows: Row[] | null) => [...(rows ?? [])].sort((x, y) => String(x.name).localeCompare(String(y.name)));

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  other = await createOrganisation(t);
  [contact] = (await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada' }])) as [string];
  [otherContact] = (await insertRows(t.db, 'contact', other.id, [{ display_name: 'Bea' }])) as [string];
});
afterAll(() => t?.drop());

describe('insert', () => {
  it('.insert(obj): 201, no data; the body is the object and no columns= is sent', async () => {
    const name = uniq('cal');
    const { data, error, status } = await db().from('calendar').insert({ name, external_id: name });
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toBeNull();
    expect(last().method).toBe('POST');
    expect(last().url.searchParams.has('columns')).toBe(false);
    expect(JSON.parse(last().body!)).toEqual({ name, external_id: name });
    const rows = await rowsWhere('calendar', 'name', name);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name, external_id: name, type: 'virtual', organisation_id: org.id });
  });

  it('.insert(arr): the client sends columns= with the union of the keys, every row is written', async () => {
    const p = uniq('cal');
    const { error, status } = await db()
      .from('calendar')
      .insert([{ name: `${p}-a` }, { name: `${p}-b`, external_id: `${p}-b` }]);
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(last().url.searchParams.get('columns')).toBe('"name","external_id"');
    const rows = byName(
      await rowsWhere('calendar', 'name', `${p}-a`).then(async (r) => [
        ...r,
        ...(await rowsWhere('calendar', 'name', `${p}-b`)),
      ]),
    );
    expect(rows.map((r) => [r.name, r.external_id])).toEqual([
      [`${p}-a`, null],
      [`${p}-b`, `${p}-b`],
    ]);
  });

  it('.insert(obj).select(): the created row, shaped by the select', async () => {
    const name = uniq('cal');
    const all = await db().from('calendar').insert({ name }).select();
    expect(all.error).toBeNull();
    expect(all.status).toBe(201);
    expect(last().headers.get('prefer')).toContain('return=representation');
    expect(all.data).toHaveLength(1);
    expect(all.data![0]).toMatchObject({ name, type: 'virtual', external_id: null, organisation_id: org.id });
    expect(all.data![0]!.id).toEqual(expect.any(String));
    const narrow = await db()
      .from('calendar')
      .insert([{ name: `${name}-2` }])
      .select('id, name');
    expect(narrow.error).toBeNull();
    expect(last().url.searchParams.get('select')).toBe('id,name');
    expect(narrow.data).toEqual([{ id: expect.any(String), name: `${name}-2` }]);
  });

  it('.insert(obj).select().single(): one object', async () => {
    const name = uniq('cal');
    const { data, error, status } = await db().from('calendar').insert({ name }).select('name, type').single();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(last().headers.get('accept')).toBe('application/vnd.pgrst.object+json');
    expect(data).toEqual({ name, type: 'virtual' });
  });

  it('.insert(arr).select().single() with two rows: 406 NOT_ACCEPTABLE and nothing written', async () => {
    const p = uniq('cal');
    const { data, error, status } = await db()
      .from('calendar')
      .insert([{ name: `${p}-a` }, { name: `${p}-b` }])
      .select()
      .single();
    expect(status).toBe(406);
    expect(data).toBeNull();
    expect(error).toMatchObject({ code: 'NOT_ACCEPTABLE' });
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('{ count: "exact" } reads the number of created rows from Content-Range', async () => {
    const p = uniq('cal');
    const { count, error, status } = await db()
      .from('calendar')
      .insert([{ name: `${p}-a` }, { name: `${p}-b` }, { name: `${p}-c` }], { count: 'exact' });
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(count).toBe(3);
  });

  it('{ defaultToNull: false } (missing=default) gives an item without a key the column default', async () => {
    const p = uniq('cal');
    const nulled = await db()
      .from('calendar')
      .insert([{ name: `${p}-a`, type: 'virtual' }, { name: `${p}-b` }]);
    // Without it, the missing type is NULL and type is NOT NULL: refused, as PostgREST does.
    expect(nulled.status).toBe(400);
    expect(nulled.error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(await countLike('calendar', 'name', p)).toBe(0);
    const { data, error, status } = await db()
      .from('calendar')
      .insert([{ name: `${p}-a`, type: 'virtual' }, { name: `${p}-b` }], { defaultToNull: false })
      .select('name, type');
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(last().headers.get('prefer')).toContain('missing=default');
    expect(byName(data)).toEqual([
      { name: `${p}-a`, type: 'virtual' },
      { name: `${p}-b`, type: 'virtual' },
    ]);
  });

  it('.rollback(): the representation comes back and nothing is written', async () => {
    const name = uniq('cal');
    const { data, error, status } = await db().from('calendar').insert({ name }).select('name').rollback();
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual([{ name }]);
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('inserts deals, appointment types and contact notes', async () => {
    const name = uniq('misc');
    const deal = await db()
      .from('deal')
      .insert({ name, contact_id: contact, value: 12.5, currency: 'EUR', won_at: '2026-12-01T09:00:00Z' })
      .select('name, value, currency')
      .single();
    expect(deal.error).toBeNull();
    expect(deal.data).toEqual({ name, value: 12.5, currency: 'EUR' });
    const type = await db()
      .from('appointment_type')
      .insert({ name, key: name, emoji: '💬' })
      .select('key, emoji')
      .single();
    expect(type.error).toBeNull();
    expect(type.data).toEqual({ key: name, emoji: '💬' });
    const note = await db()
      .from('contact_note')
      .insert({ contact_id: contact, text: name })
      .select('contact_id, text')
      .single();
    expect(note.error).toBeNull();
    expect(note.data).toEqual({ contact_id: contact, text: name });
    expect(await countWhere('deal', 'name', name)).toBe(1);
    expect(await countWhere('appointment_type', 'key', name)).toBe(1);
    expect(await countWhere('contact_note', 'text', name)).toBe(1);
  });
});

describe('upsert', () => {
  it('.upsert(obj, { onConflict: "external_id" }) updates the existing row: 200', async () => {
    const ext = uniq('up');
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name: 'old', external_id: ext }]);
    const { data, error, status } = await db()
      .from('calendar')
      .upsert({ name: 'new', external_id: ext }, { onConflict: 'external_id' })
      .select('id, name');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(last().url.searchParams.get('on_conflict')).toBe('external_id');
    expect(last().headers.get('prefer')).toContain('resolution=merge-duplicates');
    expect(data).toEqual([{ id, name: 'new' }]);
    const rows = await rowsWhere('calendar', 'external_id', ext);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ id, name: 'new' });
  });

  it('.upsert(arr, { onConflict }) with a new row and an existing one: 201, both written', async () => {
    const p = uniq('up');
    await insertRows(t.db, 'calendar', org.id, [{ name: 'old', external_id: `${p}-1` }]);
    const { data, error, status } = await db()
      .from('calendar')
      .upsert(
        [
          { name: 'one', external_id: `${p}-1` },
          { name: 'two', external_id: `${p}-2` },
        ],
        { onConflict: 'external_id' },
      )
      .select('name, external_id');
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(byName(data)).toEqual([
      { name: 'one', external_id: `${p}-1` },
      { name: 'two', external_id: `${p}-2` },
    ]);
    expect(await countLike('calendar', 'external_id', p)).toBe(2);
  });

  it('.upsert(arr, { onConflict }) keeps the id of an existing row when another item carries an id', async () => {
    const p = uniq('up');
    const [existing] = await insertRows(t.db, 'calendar', org.id, [{ name: 'old', external_id: `${p}-1` }]);
    const { error, status } = await db()
      .from('calendar')
      .upsert(
        [
          { id: randomUUID(), name: 'fresh', external_id: `${p}-2` },
          { name: 'updated', external_id: `${p}-1` },
        ],
        { onConflict: 'external_id' },
      );
    expect(error).toBeNull();
    expect(status).toBe(201);
    const [row] = await rowsWhere('calendar', 'external_id', `${p}-1`);
    expect(row).toMatchObject({ name: 'updated', id: existing });
  });

  it('.upsert(..., { ignoreDuplicates: true }) leaves existing rows and returns only new ones', async () => {
    const p = uniq('up');
    await insertRows(t.db, 'calendar', org.id, [{ name: 'kept', external_id: `${p}-1` }]);
    const { data, error, status } = await db()
      .from('calendar')
      .upsert(
        [
          { name: 'ignored', external_id: `${p}-1` },
          { name: 'added', external_id: `${p}-2` },
        ],
        { onConflict: 'external_id', ignoreDuplicates: true },
      )
      .select('name, external_id');
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(last().headers.get('prefer')).toContain('resolution=ignore-duplicates');
    expect(data).toEqual([{ name: 'added', external_id: `${p}-2` }]);
    expect((await rowsWhere('calendar', 'external_id', `${p}-1`))[0]!.name).toBe('kept');
  });

  it('.upsert(obj) without onConflict uses the id', async () => {
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name: uniq('up') }]);
    const { error, status } = await db().from('calendar').upsert({ id, name: 'by id' });
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect((await rowsWhere('calendar', 'id', id!))[0]!.name).toBe('by id');
  });

  it('an onConflict naming fields without a unique constraint is a 400 INVALID_QUERY', async () => {
    const name = uniq('up');
    const { error, status } = await db().from('calendar').upsert({ name }, { onConflict: 'name' });
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'INVALID_QUERY' });
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});

describe('update', () => {
  it('.update(v).eq(...): 204 and no data; the row changes', async () => {
    const name = uniq('upd');
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name }]);
    const { data, error, status } = await db()
      .from('calendar')
      .update({ name: `${name}-2` })
      .eq('id', id!);
    expect(error).toBeNull();
    expect(status).toBe(204);
    expect(data).toBeNull();
    expect(last().method).toBe('PATCH');
    expect(last().url.searchParams.get('id')).toBe(`eq.${id}`);
    expect((await rowsWhere('calendar', 'id', id!))[0]!.name).toBe(`${name}-2`);
  });

  it('.update(v).eq(...).select(): 200 and the updated rows', async () => {
    const name = uniq('upd');
    const [id] = await insertRows(t.db, 'deal', org.id, [{ name, value: 1, currency: 'EUR' }]);
    const { data, error, status } = await db()
      .from('deal')
      .update({ value: 2.5, currency: 'USD' })
      .eq('id', id!)
      .select('id, value, currency');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([{ id, value: 2.5, currency: 'USD' }]);
  });

  it('.update(v).in(...).select().single() on two rows: 406, both rows unchanged', async () => {
    const p = uniq('upd');
    const ids = await insertRows(t.db, 'calendar', org.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const { error, status } = await db()
      .from('calendar')
      .update({ name: `${p}-same` })
      .in('id', ids)
      .select()
      .single();
    expect(status).toBe(406);
    expect(error).toMatchObject({ code: 'NOT_ACCEPTABLE' });
    expect(await countWhere('calendar', 'name', `${p}-same`)).toBe(0);
  });

  it('{ count: "exact" } counts the updated rows', async () => {
    const p = uniq('upd');
    await insertRows(t.db, 'calendar', org.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    const { count, error, status } = await db()
      .from('calendar')
      .update({ external_id: null }, { count: 'exact' })
      .like('name', `${p}*`);
    expect(error).toBeNull();
    expect(status).toBe(204);
    expect(count).toBe(2);
  });

  it('.maxAffected(1) on two rows: 400 MAX_AFFECTED_EXCEEDED, nothing changed', async () => {
    const p = uniq('upd');
    await insertRows(t.db, 'calendar', org.id, [{ name: `${p}-a` }, { name: `${p}-b` }]);
    // The client types maxAffected() for PostgREST 13+ only; the wire is what matters here.
    const builder = db()
      .from('calendar')
      .update({ name: `${p}-same` })
      .like('name', `${p}*`) as unknown as {
      maxAffected(rows: number): PromiseLike<{ error: unknown; status: number }>;
    };
    const { error, status } = await builder.maxAffected(1);
    expect(last().headers.get('prefer')).toContain('max-affected=1');
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'MAX_AFFECTED_EXCEEDED' });
    expect(await countWhere('calendar', 'name', `${p}-same`)).toBe(0);
  });

  it('.update(v).eq().select().rollback(): the new values come back, nothing changes', async () => {
    const name = uniq('upd');
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name }]);
    const { data, error } = await db().from('calendar').update({ name: 'dry' }).eq('id', id!).select('name').rollback();
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'dry' }]);
    expect((await rowsWhere('calendar', 'id', id!))[0]!.name).toBe(name);
  });

  it('.update(v) without a filter: 400 FILTER_REQUIRED', async () => {
    const name = uniq('upd');
    const { error, status } = await db().from('calendar').update({ name });
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'FILTER_REQUIRED' });
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('.update() of appointment_type by key', async () => {
    const key = uniq('type');
    await insertRows(t.db, 'appointment_type', org.id, [{ name: 'Consultation', key }]);
    const { data, error, status } = await db()
      .from('appointment_type')
      .update({ name: 'Follow-up' })
      .eq('key', key)
      .select('key, name');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([{ key, name: 'Follow-up' }]);
  });
});

describe('deal_details', () => {
  let fieldKey: string;
  beforeAll(async () => {
    fieldKey = `src_${randomUUID().slice(0, 6)}`;
    await insertRows(t.db, 'custom_field', org.id, [{ name: 'Source', key: fieldKey, type: 'string', entity: 'deal' }]);
  });

  it('.update({ field, customKey }).eq().select() writes both and shows the custom value', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', org.id, [{ name }]);
    const { data, error, status } = await db()
      .from('deal_details')
      .update({ name: `${name}-2`, [fieldKey]: 'web' })
      .eq('id', id!)
      .select();
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([expect.objectContaining({ id, name: `${name}-2`, [fieldKey]: 'web' })]);
    const [value] = await t.db.query<{ string_value: string }>(
      'SELECT string_value FROM deal_custom_field WHERE deal_id = $1::uuid',
      [id!],
    );
    expect(value!.string_value).toBe('web');
  });

  it('.update({ customKey }).eq() without select: 204', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', org.id, [{ name }]);
    const { error, status } = await db()
      .from('deal_details')
      .update({ [fieldKey]: 'mail' })
      .eq('id', id!);
    expect(error).toBeNull();
    expect(status).toBe(204);
    const [value] = await t.db.query<{ string_value: string }>(
      'SELECT string_value FROM deal_custom_field WHERE deal_id = $1::uuid',
      [id!],
    );
    expect(value?.string_value).toBe('mail');
  });

  it('an unknown key: 400 UNKNOWN_FIELD, nothing written', async () => {
    const name = uniq('dd');
    const [id] = await insertRows(t.db, 'deal', org.id, [{ name }]);
    const { error, status } = await db()
      .from('deal_details')
      .update({ name: 'changed', nope: 1 })
      .eq('id', id!)
      .select();
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'UNKNOWN_FIELD' });
    expect((await rowsWhere('deal', 'id', id!))[0]!.name).toBe(name);
  });
});

describe('delete', () => {
  it('.delete().eq(...): 204; the client sends a JSON content type and no body', async () => {
    const name = uniq('del');
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name }]);
    const { data, error, status } = await db().from('calendar').delete().eq('id', id!);
    expect(error).toBeNull();
    expect(status).toBe(204);
    expect(data).toBeNull();
    expect(last().method).toBe('DELETE');
    expect(last().body).toBeNull();
    expect(await countWhere('calendar', 'id', id!)).toBe(0);
  });

  it('.delete().in(...).select(): the deleted rows; { count: "exact" } counts them', async () => {
    const p = uniq('del');
    const ids = await insertRows(t.db, 'deal', org.id, [{ name: `${p}-a` }, { name: `${p}-b` }, { name: `${p}-keep` }]);
    const { data, error, status } = await db().from('deal').delete().in('id', [ids[0]!, ids[1]!]).select('name');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(byName(data)).toEqual([{ name: `${p}-a` }, { name: `${p}-b` }]);
    const counted = await db().from('deal').delete({ count: 'exact' }).eq('id', ids[2]!);
    expect(counted.error).toBeNull();
    expect(counted.count).toBe(1);
    expect(await countLike('deal', 'name', p)).toBe(0);
  });

  it('.delete() without a filter: 400 FILTER_REQUIRED', async () => {
    const { error, status } = await db().from('contact_note').delete();
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'FILTER_REQUIRED' });
  });

  it('deletes contact notes, custom fields (with their values) and custom entities', async () => {
    const p = uniq('del');
    const [note] = await insertRows(t.db, 'contact_note', org.id, [{ contact_id: contact, text: p }]);
    const [deal] = await insertRows(t.db, 'deal', org.id, [{ name: p }]);
    const [field] = await insertRows(t.db, 'custom_field', org.id, [
      { name: p, key: p, type: 'string', entity: 'deal' },
    ]);
    await insertRows(t.db, 'deal_custom_field', org.id, [
      { deal_id: deal, custom_field_id: field, key: p, string_value: 'v' },
    ]);
    const [definition] = await insertRows(t.db, 'custom_entity_definition', org.id, [{ name: p, key: p }]);
    await insertRows(t.db, 'custom_entity', org.id, [
      { custom_entity_definition_id: definition, external_id: p, data: { a: 1 } },
    ]);

    const n = await db().from('contact_note').delete().eq('id', note!).select('text').single();
    expect(n.error).toBeNull();
    expect(n.data).toEqual({ text: p });
    const f = await db().from('custom_field').delete().eq('key', p).select('key, entity').single();
    expect(f.error).toBeNull();
    expect(f.data).toEqual({ key: p, entity: 'deal' });
    expect(await countWhere('deal_custom_field', 'custom_field_id', field!)).toBe(0);
    const e = await db().from('custom_entity').delete().eq('external_id', p).select('external_id, data');
    expect(e.error).toBeNull();
    expect(e.data).toEqual([{ external_id: p, data: { a: 1 } }]);
    expect(await countWhere('contact_note', 'id', note!)).toBe(0);
    expect(await countWhere('custom_entity', 'external_id', p)).toBe(0);
  });
});

describe("errors carry the engine's codes", () => {
  it('a provider calendar: 400 VALIDATION_FAILED with context', async () => {
    const name = uniq('err');
    const { error, status } = await db().from('calendar').insert({ name, type: 'provider' });
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED', context: [expect.objectContaining({ field: 'type' })] });
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });

  it('problems of an array come back by item index', async () => {
    const name = uniq('err');
    const { error, status } = await db()
      .from('deal')
      .insert([
        { name, currency: 'EUR' },
        { name, currency: 'GBP' },
      ]);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((error as unknown as { context: Array<{ item: number; field: string }> }).context).toEqual([
      expect.objectContaining({ item: 1, field: 'currency' }),
    ]);
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it('an unknown field: 400 UNKNOWN_FIELD', async () => {
    const { error, status } = await db()
      .from('calendar')
      .insert({ name: uniq('err'), colour: 'red' });
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'UNKNOWN_FIELD' });
  });

  it('a duplicate: 409 CONFLICT naming the field', async () => {
    const key = uniq('err');
    await insertRows(t.db, 'appointment_type', org.id, [{ name: 'x', key }]);
    const { error, status } = await db().from('appointment_type').insert({ name: 'y', key });
    expect(status).toBe(409);
    expect(error).toMatchObject({ code: 'CONFLICT', context: expect.objectContaining({ fields: ['key'] }) });
  });

  it('a bulk insert whose third item is a duplicate writes nothing', async () => {
    const p = uniq('err');
    const { error, status } = await db()
      .from('calendar')
      .insert([
        { name: `${p}-a`, external_id: `${p}-x` },
        { name: `${p}-b`, external_id: `${p}-y` },
        { name: `${p}-c`, external_id: `${p}-x` },
      ]);
    expect(status).toBe(409);
    expect(error).toMatchObject({ code: 'CONFLICT' });
    expect(await countLike('calendar', 'name', p)).toBe(0);
  });

  it('PATCH with id in the body: 400 VALIDATION_FAILED', async () => {
    const name = uniq('err');
    const [id] = await insertRows(t.db, 'calendar', org.id, [{ name }]);
    const { error, status } = await db().from('calendar').update({ id: randomUUID(), name: 'moved' }).eq('id', id!);
    expect(status).toBe(400);
    expect(error).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await rowsWhere('calendar', 'id', id!))[0]!.name).toBe(name);
  });

  it('a verb the resource does not offer: 405 METHOD_NOT_ALLOWED', async () => {
    const { error, status } = await db().from('contact').insert({ display_name: 'x' });
    expect(status).toBe(405);
    expect(error).toMatchObject({ code: 'METHOD_NOT_ALLOWED' });
  });

  it('a bad token: 401 UNAUTHORIZED and nothing written', async () => {
    const name = uniq('err');
    const { error, status } = await client('nope').from('calendar').insert({ name });
    expect(status).toBe(401);
    expect(error).toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await countWhere('calendar', 'name', name)).toBe(0);
  });
});

describe('another organisation stays out of reach', () => {
  it("update and delete filtered on B's ids touch nothing", async () => {
    const name = uniq('ten');
    const [theirs] = await insertRows(t.db, 'calendar', other.id, [{ name }]);
    const updated = await db().from('calendar').update({ name: 'hijacked' }).eq('id', theirs!).select();
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual([]);
    const deleted = await db().from('calendar').delete().eq('id', theirs!).select();
    expect(deleted.error).toBeNull();
    expect(deleted.data).toEqual([]);
    expect(await rowsWhere('calendar', 'id', theirs!)).toEqual([
      expect.objectContaining({ name, organisation_id: other.id }),
    ]);
  });

  it("insert referencing B's contact: 409 REFERENCE_NOT_FOUND", async () => {
    const text = uniq('ten');
    const { error, status } = await db().from('contact_note').insert({ contact_id: otherContact, text });
    expect(status).toBe(409);
    expect(error).toMatchObject({
      code: 'REFERENCE_NOT_FOUND',
      context: expect.objectContaining({ fields: ['contact_id'] }),
    });
    expect(await countWhere('contact_note', 'text', text)).toBe(0);
  });

  it("insert naming B's organisation: 403 FORBIDDEN and nothing written", async () => {
    const name = uniq('ten');
    const { error, status } = await db()
      .from('deal')
      .insert([{ name }, { name, organisation_id: other.id }]);
    expect(status).toBe(403);
    expect(error).toMatchObject({ code: 'FORBIDDEN' });
    expect(await countWhere('deal', 'name', name)).toBe(0);
  });

  it("an upsert on B's external_id creates A's own row", async () => {
    const ext = uniq('ten');
    const [theirs] = await insertRows(t.db, 'calendar', other.id, [{ name: 'theirs', external_id: ext }]);
    const { data, error, status } = await db()
      .from('calendar')
      .upsert({ name: 'mine', external_id: ext }, { onConflict: 'external_id' })
      .select('name, organisation_id');
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual([{ name: 'mine', organisation_id: org.id }]);
    expect((await rowsWhere('calendar', 'id', theirs!))[0]).toMatchObject({
      name: 'theirs',
      organisation_id: other.id,
    });
  });
});
