/**
 * Resource embedding (issue 11) driven by @supabase/postgrest-js, the way a Supabase user writes it:
 * `.select()` with embeds, aliases, `!inner`, spread and aggregates, and the client's
 * `referencedTable` options, which send embed-prefixed parameters (`deal.order`, `deal.limit`,
 * `deal.or`). Every request goes through the real Hono app; every expectation is computed here from
 * the fixture below (or, for `*`, read by hand-written SQL), never taken from the engine.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { recordingClient } from './helpers/postgrest-js.ts';

let t: TestApp;
let org: Organisation;
let other: Organisation;
/** Every URL the client sent, newest last. */
const sent: string[] = [];

type Row = Record<string, unknown>;
type Name = 'ada' | 'bob' | 'cy' | 'dee';

/** Org A's contacts, in created_at order. Dee has no deal. */
const CONTACTS: ReadonlyArray<{
  key: Name;
  display_name: string;
  email: string | null;
  city: string;
  created_at: string;
}> = [
  { key: 'ada', display_name: 'Ada', email: 'ada@x.test', city: 'Zürich', created_at: '2026-01-01T00:00:00Z' },
  { key: 'bob', display_name: 'Bob', email: 'bob@x.test', city: 'Bern', created_at: '2026-01-02T00:00:00Z' },
  { key: 'cy', display_name: 'Cy', email: null, city: 'Bern', created_at: '2026-01-03T00:00:00Z' },
  { key: 'dee', display_name: 'Dee', email: 'dee@x.test', city: 'Basel', created_at: '2026-01-04T00:00:00Z' },
];
/** Org A's deals; Orphan has no contact. */
const DEALS: ReadonlyArray<{
  name: string;
  contact: Name | null;
  value: number;
  currency: 'CHF' | 'EUR';
  won_at: string | null;
}> = [
  { name: 'Alpha', contact: 'ada', value: 100, currency: 'CHF', won_at: '2026-03-01T00:00:00Z' },
  { name: 'Beta', contact: 'ada', value: 250, currency: 'EUR', won_at: '2026-01-01T00:00:00Z' },
  { name: 'Gamma', contact: 'bob', value: 40, currency: 'EUR', won_at: '2026-02-01T00:00:00Z' },
  { name: 'Delta', contact: 'cy', value: 500, currency: 'CHF', won_at: null },
  { name: 'Orphan', contact: null, value: 7, currency: 'CHF', won_at: null },
];
/** Contact ids by key. */
const id = {} as Record<Name, string>;

const contactOf = (key: Name | null) => CONTACTS.find((c) => c.key === key) ?? null;
const dealsOf = (key: Name) => DEALS.filter((d) => d.contact === key);
/** Rows sorted by a key, for requests that ask for no order. */
const by = (key: string) => (rows: unknown) =>
  [...((rows ?? []) as Row[])].sort((a, b) => String(a[key]).localeCompare(String(b[key])));
const byName = by('name');
/** Ascending, nulls last (PostgreSQL's default for ASC); the strings compared here are ASCII. */
const nullsLast = (a: string | null | undefined, b: string | null | undefined) =>
  a == null ? (b == null ? 0 : 1) : b == null ? -1 : a < b ? -1 : a > b ? 1 : 0;
/** Descending, nulls last. */
const descNullsLast = (a: string | null | undefined, b: string | null | undefined) =>
  a == null || b == null ? nullsLast(a, b) : nullsLast(b, a);

const client = (token: string) => recordingClient(t.app, token, sent);

/** The query string of the last request, decoded as the server decodes it. */
const lastQuery = () => new URL(sent[sent.length - 1]!).searchParams;

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  other = await createOrganisation(t);
  const ids = await insertRows(
    t.db,
    'contact',
    org.id,
    CONTACTS.map(({ key: _, ...contact }) => contact),
  );
  CONTACTS.forEach((c, i) => {
    id[c.key] = ids[i]!;
  });
  await insertRows(
    t.db,
    'deal',
    org.id,
    DEALS.map(({ contact, ...deal }) => ({ ...deal, contact_id: contact ? id[contact] : null })),
  );
  // Another organisation with a contact in Bern and a big deal: never counted, embedded or summed for org A.
  const [theirs] = await insertRows(t.db, 'contact', other.id, [
    { display_name: 'Ada', email: 'ada@x.test', city: 'Bern' },
  ]);
  await insertRows(t.db, 'deal', other.id, [{ name: 'Alpha', contact_id: theirs, value: 9999, currency: 'CHF' }]);
});
afterAll(() => t?.drop());

describe('embeds in select()', () => {
  it("a to-one embed: the deal's contact as an object, null without one", async () => {
    const { data, error, status } = await client(org.token).from('deal').select('name, contact(display_name, email)');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(lastQuery().get('select')).toBe('name,contact(display_name,email)');
    const expected = DEALS.map((d) => {
      const c = contactOf(d.contact);
      return { name: d.name, contact: c && { display_name: c.display_name, email: c.email } };
    });
    expect(byName(data)).toEqual(byName(expected));
    // Keys in select order.
    expect(Object.keys((data as Row[]).find((r) => r.name === 'Alpha')!.contact as Row)).toEqual([
      'display_name',
      'email',
    ]);
  });

  it('an alias: buyer:contact(*) is every field of the contact under "buyer"', async () => {
    const { data, error } = await client(org.token).from('deal').select('name, buyer:contact(*)');
    expect(error).toBeNull();
    const [row] = await t.db.query<{ rows: string }>(
      `SELECT json_object_agg(c.id, row_to_json(c))::text AS rows FROM contact c WHERE c.organisation_id = $1::uuid`,
      [org.id],
    );
    const everyField = JSON.parse(row!.rows) as Record<string, Row>;
    const expected = DEALS.map((d) => ({ name: d.name, buyer: d.contact ? everyField[id[d.contact]]! : null }));
    expect(byName(data)).toEqual(byName(expected));
    expect((data as Row[]).every((r) => !('contact' in r))).toBe(true);
  });

  it('!inner with a filter on the embed (contact.city=eq.Bern) keeps only deals whose contact matches', async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact!inner(display_name, city)')
      .eq('contact.city', 'Bern');
    expect(lastQuery().get('contact.city')).toBe('eq.Bern');
    expect(error).toBeNull();
    const expected = DEALS.filter((d) => contactOf(d.contact)?.city === 'Bern').map((d) => ({
      name: d.name,
      contact: { display_name: contactOf(d.contact)!.display_name, city: 'Bern' },
    }));
    expect(expected).toHaveLength(2);
    expect(byName(data)).toEqual(byName(expected));
  });

  it('without !inner, a filter on the embed empties the embed but keeps every deal', async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact(display_name)')
      .eq('contact.city', 'Bern');
    expect(error).toBeNull();
    const expected = DEALS.map((d) => {
      const c = contactOf(d.contact);
      return { name: d.name, contact: c?.city === 'Bern' ? { display_name: c.display_name } : null };
    });
    expect(byName(data)).toEqual(byName(expected));
  });

  it('order and limit with referencedTable: each contact with its latest deal', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal(name, value)')
      .order('won_at', { referencedTable: 'deal', ascending: false, nullsFirst: false })
      .limit(1, { referencedTable: 'deal' })
      .order('created_at');
    expect(lastQuery().get('deal.order')).toBe('won_at.desc.nullslast');
    expect(lastQuery().get('deal.limit')).toBe('1');
    expect(lastQuery().get('order')).toBe('created_at.asc');
    expect(error).toBeNull();
    const latest = (key: Name) => [...dealsOf(key)].sort((a, b) => descNullsLast(a.won_at, b.won_at)).slice(0, 1);
    expect(data).toEqual(
      CONTACTS.map((c) => ({
        display_name: c.display_name,
        deal: latest(c.key).map((d) => ({ name: d.name, value: d.value })),
      })),
    );
  });

  it('order with referencedTable by a field the embedded resource may not be ordered by is UNKNOWN_FIELD', async () => {
    // deal is orderable by lost_at, won_at and id only (schema/registry.ts).
    const { data, error, status } = await client(org.token)
      .from('contact')
      .select('display_name, deal(name, value)')
      .order('value', { referencedTable: 'deal' });
    expect(lastQuery().get('deal.order')).toBe('value.asc');
    expect(status).toBe(400);
    expect(data).toBeNull();
    expect(error?.code).toBe('UNKNOWN_FIELD');
    expect(error?.message).toContain('value');
  });

  it('order and range with referencedTable on the allowed key: the second deal of each contact', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal(name)')
      .order('won_at', { referencedTable: 'deal' })
      .range(1, 1, { referencedTable: 'deal' })
      .order('created_at');
    expect(lastQuery().get('deal.offset')).toBe('1');
    expect(lastQuery().get('deal.limit')).toBe('1');
    expect(error).toBeNull();
    const second = (key: Name) => [...dealsOf(key)].sort((a, b) => nullsLast(a.won_at, b.won_at)).slice(1, 2);
    expect(data).toEqual(
      CONTACTS.map((c) => ({ display_name: c.display_name, deal: second(c.key).map((d) => ({ name: d.name })) })),
    );
  });

  it('or with referencedTable filters the embedded rows only', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal(name)')
      .or('value.gt.100', { referencedTable: 'deal' })
      .order('created_at');
    expect(lastQuery().get('deal.or')).toBe('(value.gt.100)');
    expect(error).toBeNull();
    expect(data).toEqual(
      CONTACTS.map((c) => ({
        display_name: c.display_name,
        deal: dealsOf(c.key)
          .filter((d) => d.value > 100)
          .map((d) => ({ name: d.name })),
      })),
    );
  });

  it('is(embed, null) and not(embed, is, null): deals without and with a contact', async () => {
    const without = await client(org.token).from('deal').select('name, contact()').is('contact', null);
    expect(lastQuery().get('contact')).toBe('is.null');
    expect(without.error).toBeNull();
    // An empty embed filters and is not shown.
    expect(byName(without.data)).toEqual(DEALS.filter((d) => d.contact === null).map((d) => ({ name: d.name })));

    const withOne = await client(org.token).from('deal').select('name, contact(*)').not('contact', 'is', null);
    expect(lastQuery().get('contact')).toBe('not.is.null');
    expect(withOne.error).toBeNull();
    const rows = byName(withOne.data);
    const expected = DEALS.filter((d) => d.contact !== null).map((d) => ({ name: d.name, contact: id[d.contact!] }));
    expect(rows.map((r) => ({ name: r.name, contact: (r.contact as Row).id }))).toEqual(byName(expected));
  });

  it('not(embed, is, null) with an embed filter: contacts that have a deal over 100', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal()')
      .gt('deal.value', 100)
      .not('deal', 'is', null)
      .order('created_at');
    expect(error).toBeNull();
    expect(data).toEqual(
      CONTACTS.filter((c) => dealsOf(c.key).some((d) => d.value > 100)).map((c) => ({ display_name: c.display_name })),
    );
  });

  it("nested: a deal's contact with that contact's deals", async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact(display_name, deal(name))')
      .eq('name', 'Gamma');
    expect(error).toBeNull();
    expect(data).toEqual([
      { name: 'Gamma', contact: { display_name: 'Bob', deal: dealsOf('bob').map((d) => ({ name: d.name })) } },
    ]);
  });

  it("order by a to-one embed's field: order('contact(display_name)'), the embed in select", async () => {
    const unembedded = await client(org.token).from('deal').select('name').order('contact(display_name)');
    expect(unembedded.error?.code).toBe('NOT_EMBEDDED');
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact()')
      .order('contact(display_name)')
      .order('won_at');
    expect(lastQuery().get('order')).toBe('contact(display_name).asc,won_at.asc');
    expect(error).toBeNull();
    // Ascending puts nulls last (PostgreSQL's default), for the contact's name and for won_at.
    const expected = [...DEALS]
      .sort(
        (a, b) =>
          nullsLast(contactOf(a.contact)?.display_name, contactOf(b.contact)?.display_name) ||
          nullsLast(a.won_at, b.won_at),
      )
      .map((d) => ({ name: d.name }));
    expect(data).toEqual(expected);
  });
  it('ordering by an embed sorts by the embed as filtered: a filtered-out contact sorts as null', async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact(display_name)')
      .eq('contact.city', 'Zürich')
      .order('contact(display_name)', { ascending: false, nullsFirst: false })
      .order('won_at');
    expect(error).toBeNull();
    const shown = (d: (typeof DEALS)[number]) => {
      const contact = contactOf(d.contact);
      return contact?.city === 'Zürich' ? contact.display_name : null;
    };
    const expected = [...DEALS]
      .sort((a, b) => descNullsLast(shown(a), shown(b)) || nullsLast(a.won_at, b.won_at))
      .map((d) => ({ name: d.name, contact: shown(d) === null ? null : { display_name: shown(d) } }));
    expect(data).toEqual(expected);
  });
});

describe('spread', () => {
  it('...contact(display_name) lifts the contact’s field into the deal, null without a contact', async () => {
    const { data, error } = await client(org.token).from('deal').select('name, ...contact(display_name)');
    expect(lastQuery().get('select')).toBe('name,...contact(display_name)');
    expect(error).toBeNull();
    const expected = DEALS.map((d) => ({ name: d.name, display_name: contactOf(d.contact)?.display_name ?? null }));
    expect(byName(data)).toEqual(byName(expected));
  });
});

describe('to-many spread', () => {
  it('...deal(name) gives each contact its deals’ names as an array, [] when none', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, ...deal(name)')
      .order('won_at', { referencedTable: 'deal' })
      .order('created_at');
    expect(error).toBeNull();
    expect(data).toEqual(
      CONTACTS.map((c) => ({
        display_name: c.display_name,
        name: [...dealsOf(c.key)].sort((a, b) => nullsLast(a.won_at, b.won_at)).map((d) => d.name),
      })),
    );
  });
});

describe('aggregates', () => {
  it("select('count()') counts the organisation's deals", async () => {
    const { data, error } = await client(org.token).from('deal').select('count()');
    expect(error).toBeNull();
    expect(data).toEqual([{ count: DEALS.length }]);
  });

  it("select('currency, value.sum()') groups by currency", async () => {
    const { data, error } = await client(org.token).from('deal').select('currency, value.sum()');
    expect(error).toBeNull();
    const sums = new Map<string, number>();
    for (const d of DEALS) sums.set(d.currency, (sums.get(d.currency) ?? 0) + d.value);
    const expected = [...sums].map(([currency, sum]) => ({ currency, sum }));
    expect(by('currency')(data)).toEqual(by('currency')(expected));
  });

  it("aliases, casts and several aggregates: select('n:count(), total:value.sum()::int, value.max()')", async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('n:count(), total:value.sum()::int, value.max()')
      .eq('currency', 'EUR');
    expect(error).toBeNull();
    const eur = DEALS.filter((d) => d.currency === 'EUR').map((d) => d.value);
    expect(data).toEqual([{ n: eur.length, total: eur.reduce((a, b) => a + b, 0), max: Math.max(...eur) }]);
  });

  it("select('display_name, deal(count)') counts each contact's deals, 0 when none", async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal(count)')
      .order('created_at');
    expect(error).toBeNull();
    expect(data).toEqual(
      CONTACTS.map((c) => ({ display_name: c.display_name, deal: [{ count: dealsOf(c.key).length }] })),
    );
  });

  it("select('display_name, deal(value.sum())') sums each contact's deals", async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('display_name, deal(value.sum())')
      .order('created_at');
    expect(error).toBeNull();
    expect(data).toEqual(
      CONTACTS.map((c) => {
        const values = dealsOf(c.key).map((d) => d.value);
        return { display_name: c.display_name, deal: [{ sum: values.length ? values.reduce((a, b) => a + b) : null }] };
      }),
    );
  });
});

describe('counts, single and errors', () => {
  it("count: 'exact' with !inner counts only the deals whose contact matches", async () => {
    const { data, error, count, status } = await client(org.token)
      .from('deal')
      .select('name, contact!inner(city)', { count: 'exact' })
      .eq('contact.city', 'Bern');
    expect(error).toBeNull();
    expect(status).toBe(200);
    const bern = DEALS.filter((d) => contactOf(d.contact)?.city === 'Bern');
    expect(count).toBe(bern.length);
    expect(byName(data)).toEqual(byName(bern.map((d) => ({ name: d.name, contact: { city: 'Bern' } }))));

    const page = await client(org.token)
      .from('deal')
      .select('name, contact!inner(city)', { count: 'exact' })
      .eq('contact.city', 'Bern')
      .range(0, 0);
    expect(page.error).toBeNull();
    expect(page.status).toBe(206);
    expect(page.count).toBe(bern.length);
    expect(page.data).toHaveLength(1);

    const head = await client(org.token)
      .from('deal')
      .select('name, contact!inner(city)', { count: 'exact', head: true })
      .eq('contact.city', 'Zürich');
    expect(head.error).toBeNull();
    expect(head.count).toBe(DEALS.filter((d) => contactOf(d.contact)?.city === 'Zürich').length);
  });

  it("count: 'exact' with is(embed, null) counts deals without a contact", async () => {
    const { error, count } = await client(org.token)
      .from('deal')
      .select('name, contact()', { count: 'exact' })
      .is('contact', null);
    expect(error).toBeNull();
    expect(count).toBe(DEALS.filter((d) => d.contact === null).length);
  });

  it('single() with an embed answers the one object', async () => {
    const { data, error, status } = await client(org.token)
      .from('deal')
      .select('name, value, contact(display_name, deal(name))')
      .eq('name', 'Alpha')
      .single();
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual({
      name: 'Alpha',
      value: 100,
      contact: { display_name: 'Ada', deal: expect.arrayContaining(dealsOf('ada').map((d) => ({ name: d.name }))) },
    });
    expect(((data as Row).contact as Row).deal).toHaveLength(dealsOf('ada').length);
  });

  it('maybeSingle() with !inner and no match answers null', async () => {
    const { data, error } = await client(org.token)
      .from('deal')
      .select('name, contact!inner(city)')
      .eq('name', 'Alpha')
      .eq('contact.city', 'Bern')
      .maybeSingle();
    expect(error).toBeNull();
    expect(data).toBeNull();
  });

  it('an unknown relation is UNKNOWN_RELATION, naming it, with a hint listing the relations', async () => {
    const { data, error, status } = await client(org.token).from('deal').select('name, nope(*)');
    expect(status).toBe(400);
    expect(data).toBeNull();
    expect(error?.code).toBe('UNKNOWN_RELATION');
    expect(error?.message).toContain('nope');
    expect(error?.hint).toContain('contact');
  });

  it('a filter on something not embedded is NOT_EMBEDDED; is(embed) without it in select too', async () => {
    const filter = await client(org.token).from('deal').select('name').eq('contact.city', 'Bern');
    expect(filter.status).toBe(400);
    expect(filter.error?.code).toBe('NOT_EMBEDDED');
    const isNull = await client(org.token).from('deal').select('name').is('contact', null);
    expect(isNull.status).toBe(400);
    expect(isNull.error?.code).toBe('NOT_EMBEDDED');
  });

  it('an aggregate beside a non-spread embed, and sum() of text, are INVALID_AGGREGATE', async () => {
    const beside = await client(org.token).from('deal').select('value.sum(), contact(display_name)');
    expect(beside.status).toBe(400);
    expect(beside.error?.code).toBe('INVALID_AGGREGATE');
    const text = await client(org.token).from('deal').select('name.sum()');
    expect(text.status).toBe(400);
    expect(text.error?.code).toBe('INVALID_AGGREGATE');
  });

  it("another organisation's rows are never embedded, counted or summed", async () => {
    const theirs = await client(other.token).from('contact').select('display_name, deal(name, value)');
    expect(theirs.error).toBeNull();
    expect(theirs.data).toEqual([{ display_name: 'Ada', deal: [{ name: 'Alpha', value: 9999 }] }]);
    const leak = await client(org.token)
      .from('contact')
      .select('display_name, deal!inner(name)')
      .eq('deal.value', 9999);
    expect(leak.error).toBeNull();
    expect(leak.data).toEqual([]);
  });
});

describe('writes that return embeds', () => {
  it('insert().select() and delete().select() embed as a read does; the row is gone afterwards', async () => {
    const bob = contactOf('bob')!;
    const inserted = await client(org.token)
      .from('deal')
      .insert({ name: 'Zeta', contact_id: id.bob, currency: 'CHF' })
      .select('name, contact(display_name, email)')
      .single();
    expect(inserted.error).toBeNull();
    expect(inserted.data).toEqual({ name: 'Zeta', contact: { display_name: bob.display_name, email: bob.email } });
    const deleted = await client(org.token).from('deal').delete().eq('name', 'Zeta').select('name, ...contact(city)');
    expect(deleted.error).toBeNull();
    expect(deleted.data).toEqual([{ name: 'Zeta', city: bob.city }]);
    const left = await client(org.token).from('deal').select('name').eq('name', 'Zeta');
    expect(left.data).toEqual([]);
  });
});
