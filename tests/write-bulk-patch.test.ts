/**
 * PATCH with an array body: each item changes the record its key names, with only the fields it
 * gives, in one statement that changes every item's record or none (an item naming no record of
 * the caller's, or one the filters leave out, is 404 with nothing written). If-Match works as on
 * any PATCH; duplicate or missing keys, and custom-field resources, are refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

describe('PATCH by key (an array body)', () => {
  let t: TestApp;
  let org: Organisation;
  let other: Organisation;
  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganisation(t);
    other = await createOrganisation(t);
  });
  afterAll(() => t?.drop());

  const deals = (names: string[], who = org) =>
    insertRows(
      t.db,
      'deal',
      who.id,
      names.map((name) => ({ name, value: 1 })),
    );
  const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    t.call(path, org.token, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json', Prefer: 'return=representation', ...headers },
      body: JSON.stringify(body),
    });
  const read = async (ids: string[]) =>
    (
      (await (await t.call(`/deal?id=in.(${ids.join(',')})&select=id,name,value`, org.token)).json()) as Array<{
        id: string;
        name: string;
        value: number;
      }>
    ).sort((x, y) => (x.name < y.name ? -1 : 1));
  const error = async (res: Response) => (await res.json()) as { code: string; message: string; context: unknown };

  it('sets each record’s own fields and leaves the fields an item omits', async () => {
    const [a, b, c] = await deals(['A', 'B', 'C']);
    const res = await patch('/deal?select=id,name,value', [
      { id: a, name: 'A2' },
      { id: b, value: 20 },
    ]);
    expect(res.status).toBe(200);
    const written = (await res.json()) as Array<{ id: string }>;
    expect(written.map((r) => r.id).sort()).toEqual([a, b].sort());
    expect(await read([a!, b!, c!])).toEqual([
      { id: a, name: 'A2', value: 1 },
      { id: b, name: 'B', value: 20 },
      { id: c, name: 'C', value: 1 },
    ]);
  });

  it('is atomic: an item naming another organisation’s record, or none, writes nothing', async () => {
    const [mine] = await deals(['Mine']);
    const [theirs] = await deals(['Theirs'], other);
    for (const id of [theirs, crypto.randomUUID()]) {
      const res = await patch('/deal', [
        { id: mine, name: 'Changed' },
        { id, name: 'Changed' },
      ]);
      expect(res.status).toBe(404);
      expect(await error(res)).toMatchObject({ code: 'NOT_FOUND', context: { unmatched: 1 } });
    }
    expect((await read([mine!]))[0]!.name).toBe('Mine');
    const [row] = (await (await t.call(`/deal?id=eq.${theirs}`, other.token)).json()) as Array<{ name: string }>;
    expect(row!.name).toBe('Theirs');
  });

  it('filters narrow the records items may change', async () => {
    const [open, won] = await deals(['Open one', 'Won one']);
    await patch(`/deal?id=eq.${won}`, { status_key: 'won' });
    const res = await patch('/deal?status_key=is.null', [
      { id: open, value: 5 },
      { id: won, value: 5 },
    ]);
    expect(res.status).toBe(404);
    expect((await patch('/deal?status_key=is.null', [{ id: open, value: 5 }])).status).toBe(200);
  });

  it('If-Match: every item’s record must be at a version listed', async () => {
    const [x, y] = await deals(['X', 'Y']);
    const etag = async (id: string) =>
      (
        await t.call(`/deal?id=eq.${id}`, org.token, { headers: { Accept: 'application/vnd.pgrst.object+json' } })
      ).headers.get('etag')!;
    const both = `${await etag(x!)}, ${await etag(y!)}`;
    await patch(`/deal?id=eq.${y}`, { name: 'Y moved' });
    const stale = await patch(
      '/deal',
      [
        { id: x, value: 9 },
        { id: y, value: 9 },
      ],
      { 'If-Match': both },
    );
    expect(stale.status).toBe(412);
    expect((await read([x!]))[0]!.value).toBe(1);
    const fresh = `${await etag(x!)}, ${await etag(y!)}`;
    expect(
      (
        await patch(
          '/deal',
          [
            { id: x, value: 9 },
            { id: y, value: 9 },
          ],
          { 'If-Match': fresh },
        )
      ).status,
    ).toBe(200);
  });

  it('refuses items without a key, with a malformed or repeated key, or with bad fields, saying which', async () => {
    const [d] = await deals(['Checked']);
    const res = await patch('/deal', [
      { name: 'no key' },
      { id: 'nope', name: 'x' },
      { id: d, value: 'many' },
      { id: d },
    ]);
    expect(res.status).toBe(400);
    const body = await error(res);
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.context).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ item: 0, field: 'id' }),
        expect.objectContaining({ item: 1, field: 'id' }),
        expect.objectContaining({ item: 2, field: 'value' }),
        expect.objectContaining({ item: 3, field: 'id', message: "names item 2's record too" }),
      ]),
    );
    expect((await patch('/deal', [])).status).toBe(400);
    expect((await patch('/deal_details', [{ id: d, name: 'x' }])).status).toBe(400);
    expect((await read([d!]))[0]!.name).toBe('Checked');
  });
});
