/**
 * Embeds never reach another organisation's rows (issue 11): org A's deal "Cross" and appointment
 * "CrossAppt" name B's contact "Aaron (B)"; B's contact "Impostor (B)" has the id of A's Ada; B's
 * deals Sneaky (through Impostor) and Dangling (past the key) name A's Ada and Bob; B's custom-field
 * value names A's appointment First. Through every form, A sees none of B's rows and B none of A's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.ts';
import { call, ok, type RelationsFixture, rowsOf, seedRelations, unordered } from './helpers/relations.ts';

let t: TestApp;
let f: RelationsFixture;

beforeAll(async () => {
  t = await createTestApp();
  f = await seedRelations(t);
});
afterAll(() => t?.drop());

const asA = (path: string) => ok(t, f.org.token, path);
const asB = (path: string) => ok(t, f.other.token, path);
const names = (rows: Array<{ name: string }>) => rows.map((r) => r.name).sort();

describe('the fixture', () => {
  it('holds the references that cross organisations, past the foreign keys', async () => {
    const rows = await t.db.query<{ org: string; name: string; contact_org: string | null }>(
      `SELECT d.organisation_id::text AS org, d.name,
        (SELECT string_agg(c.organisation_id::text, ',') FROM contact c WHERE c.id = d.contact_id) AS contact_org
       FROM deal d WHERE d.name IN ('Cross', 'Sneaky', 'Dangling', 'Big') ORDER BY d.name`,
    );
    expect(rows).toEqual([
      // Big's contact id is A's Ada's, which B's Impostor shares.
      { org: f.org.id, name: 'Big', contact_org: expect.stringMatching(/,/) },
      { org: f.org.id, name: 'Cross', contact_org: f.other.id },
      { org: f.other.id, name: 'Dangling', contact_org: f.org.id },
      { org: f.other.id, name: 'Sneaky', contact_org: expect.stringMatching(/,/) },
    ]);
    const [fk] = await t.db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM pg_constraint WHERE conname = 'deal_contact_fkey' AND convalidated",
    );
    expect(fk!.n).toBe('1');
  });
});

describe("a to-one embed never shows another organisation's row", () => {
  it("a deal naming B's contact embeds null, by every name of the relation", async () => {
    for (const embed of ['contact', 'contact_id', 'deal_contact_fkey', 'contact!deal_contact_fkey', 'contact!left']) {
      const key = embed.split('!')[0]!;
      expect(await asA(`/deal?select=name,${embed}(*)&name=eq.Cross`), embed).toEqual([{ name: 'Cross', [key]: null }]);
    }
    expect(await asA('/appointment?select=name,contact(display_name)&name=eq.CrossAppt')).toEqual([
      { name: 'CrossAppt', contact: null },
    ]);
  });

  it("a contact id two organisations share embeds the caller's contact only", async () => {
    expect(await asA('/deal?select=name,contact(display_name)&name=eq.Big')).toEqual([
      { name: 'Big', contact: { display_name: 'Ada' } },
    ]);
    expect(await asB('/deal?select=name,contact(display_name)&name=eq.Sneaky')).toEqual([
      { name: 'Sneaky', contact: { display_name: 'Impostor (B)' } },
    ]);
    expect(await asB('/appointment?select=name,contact(display_name,deal(name))')).toEqual([
      { name: 'TheirAppt', contact: { display_name: 'Impostor (B)', deal: [{ name: 'Sneaky' }] } },
    ]);
  });

  it("!inner drops the deal naming B's contact", async () => {
    const rows = await asA('/deal?select=name,contact!inner(display_name)');
    expect(names(rows)).toEqual(['Big', 'Mid', 'Small', 'Tiny', 'Zero']);
    expect(names(await asA('/deal?select=name,contact!inner()&contact.city=eq.Bern'))).toEqual(['Small']);
  });

  it("a to-one spread gives nulls, not B's fields", async () => {
    expect(await asA('/deal?select=name,...contact(display_name,city)&name=eq.Cross')).toEqual([
      { name: 'Cross', display_name: null, city: null },
    ]);
  });

  it("the embed null check finds no match in B's contact", async () => {
    expect(names(await asA('/deal?select=name,contact()&contact=is.null'))).toEqual(['Cross', 'Orphan']);
    expect(names(await asA('/deal?select=name,contact()&contact=not.is.null'))).not.toContain('Cross');
    expect(names(await asA('/deal?select=name,contact()&or=(contact.is.null,name.eq.Big)'))).toEqual([
      'Big',
      'Cross',
      'Orphan',
    ]);
    const counted = await call(t, f.org.token, '/deal?select=name,contact!inner()', { Prefer: 'count=exact' });
    expect(counted.res.headers.get('content-range')).toBe('0-4/5');
  });

  it("ordering by the embed's field sorts the deal naming B's contact as having none", async () => {
    // "Aaron (B)" sorts before every contact of A: were it seen, Cross would come first.
    const rows = await asA('/deal?select=name,contact()&order=contact(display_name).asc,id');
    expect(rows.map((r: { name: string }) => r.name).slice(0, 5)).toEqual(
      (
        await rowsOf(
          t,
          "SELECT name FROM deal WHERE organisation_id = $1::uuid AND name IN ('Big', 'Mid', 'Tiny') ORDER BY id",
          [f.org.id],
        )
      )
        .map((r) => r.name)
        .concat(['Small', 'Zero']),
    );
    expect(names(rows.slice(5))).toEqual(['Cross', 'Orphan']);
  });
});

describe("a to-many embed never shows another organisation's rows", () => {
  it("A's contacts list only A's deals, though B's deals name their ids", async () => {
    const rows = await asA('/contact?select=display_name,deal(name)&display_name=in.(Ada,Bob)&order=display_name');
    expect(unordered(rows)).toEqual(
      unordered([
        { display_name: 'Ada', deal: [{ name: 'Big' }, { name: 'Mid' }, { name: 'Tiny' }] },
        { display_name: 'Bob', deal: [{ name: 'Small' }] },
      ]),
    );
    expect(await asB('/contact?select=display_name,deal(name)&order=display_name')).toEqual([
      { display_name: 'Aaron (B)', deal: [{ name: 'TheirDeal' }] },
      { display_name: 'Impostor (B)', deal: [{ name: 'Sneaky' }] },
    ]);
  });

  it('the same request as A and as B (one cached statement) answers each with its own rows', async () => {
    const path =
      '/contact?select=display_name,deal(name,contact(display_name)),appointment(count())&order=display_name';
    const a = await asA(path);
    const b = await asB(path);
    expect(JSON.stringify(a)).not.toMatch(/\(B\)|Sneaky|Dangling|TheirDeal/);
    expect(b.map((r: { display_name: string }) => r.display_name)).toEqual(['Aaron (B)', 'Impostor (B)']);
    expect(JSON.stringify(b)).not.toMatch(/"Ada"|"Big"|"Small"/);
    expect(await asA(path)).toEqual(a);
  });

  it("!inner and embed filters see only A's rows", async () => {
    expect(await asA('/contact?select=display_name,deal!inner(name)&deal.value=gt.2000')).toEqual([]);
    expect(await asA('/contact?select=display_name,deal()&deal.value=gt.2000&deal=not.is.null')).toEqual([]);
    expect(await asA('/contact?select=display_name,deal(name)&deal.value=gt.2000&display_name=eq.Bob')).toEqual([
      { display_name: 'Bob', deal: [] },
    ]);
  });

  it("a to-many spread lists only A's rows", async () => {
    expect(await asA('/contact?select=display_name,...deal(value)&display_name=eq.Bob')).toEqual([
      { display_name: 'Bob', value: [10] },
    ]);
  });

  it("appointments of a contact: only the caller's", async () => {
    const rows = await asA('/contact?select=display_name,appointment(name)&display_name=eq.Ada');
    expect(unordered(rows)).toEqual(
      unordered([{ display_name: 'Ada', appointment: [{ name: 'First' }, { name: 'Fourth' }] }]),
    );
  });

  it("custom-field properties of an embedded appointment_details are the caller's only", async () => {
    const rows = await asA('/contact?select=display_name,appointment_details(*)&display_name=eq.Ada');
    const first = rows[0].appointment_details.find((a: { name: string }) => a.name === 'First');
    expect(first).toMatchObject({ room: 'A1', size: 12.5 });
    expect(first).not.toHaveProperty('leak');
    expect(JSON.stringify(rows)).not.toContain('LEAK');
  });
});

describe("aggregates never count another organisation's rows", () => {
  it('count and sum in a to-many embed', async () => {
    const rows = await asA(
      '/contact?select=display_name,deal(count(),value.sum())&display_name=in.(Ada,Bob)&order=display_name',
    );
    expect(rows).toEqual([
      { display_name: 'Ada', deal: [{ count: 3, sum: 1502.5 }] },
      { display_name: 'Bob', deal: [{ count: 1, sum: 10 }] },
    ]);
  });

  it("grouped by a to-one spread: the deal naming B's contact falls in the group without a contact", async () => {
    const rows = await asA('/deal?select=...contact(city),count(),value.sum()');
    expect(unordered(rows)).toEqual(
      unordered([
        { city: 'Zürich', count: 4, sum: 1502.5 },
        { city: 'Bern', count: 1, sum: 10 },
        { city: null, count: 2, sum: 8 },
      ]),
    );
  });

  it('top-level aggregates', async () => {
    expect(await asA('/deal?select=count(),value.sum(),value.max()')).toEqual([{ count: 7, sum: 1520.5, max: 1000.5 }]);
    expect(await asB('/deal?select=count(),value.sum()')).toEqual([{ count: 3, sum: 8999 }]);
  });
});
