/**
 * The API driven by @supabase/postgrest-js, the way a Supabase user calls it: the client builds
 * the URL (spaces as "+", quoted `in` values, appended `order` terms, `offset`/`limit` for ranges)
 * and reads counts from Content-Range. Every request goes through the real Hono app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { recordingClient } from './helpers/postgrest-js.ts';

let t: TestApp;
let org: Organisation;
let other: Organisation;
/** Every URL the client sent, newest last. */
const sent: string[] = [];
/** Contact ids by a short name. */
const c: Record<'ada' | 'grace' | 'alan' | 'edsger' | 'barbara' | 'liskov', string> = {} as never;
let appointments: string[];

const client = (token: string) => recordingClient(t.app, token, sent);

/** The query string of the last request, decoded as the server decodes it (form semantics). */
const lastQuery = () => new URL(sent[sent.length - 1]!).searchParams;
const lastRaw = () => sent[sent.length - 1]!.slice(sent[sent.length - 1]!.indexOf('?') + 1);

type Row = Record<string, unknown>;
const names = (rows: Row[] | null) => (rows ?? []).map((r) => r.display_name);
const sorted = (values: unknown[]) => [...values].map(String).sort();

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  other = await createOrganisation(t);
  const ids = await insertRows(t.db, 'contact', org.id, [
    {
      display_name: 'Ada Lovelace',
      full_name: 'Ada King, Countess of Lovelace',
      email: 'ada@example.com',
      city: 'Zürich',
      number_of_marketing_opt_in_requests: 2,
      is_blocked: false,
      birthday: '1815-12-10',
      created_at: '2026-01-01T00:00:00Z',
    },
    {
      display_name: 'Hopper, Grace',
      full_name: 'Grace Brewster Hopper',
      email: 'grace@example.com',
      city: 'New York',
      number_of_marketing_opt_in_requests: 5,
      is_blocked: true,
      birthday: '1906-12-09',
      created_at: '2026-01-02T00:00:00Z',
    },
    {
      display_name: 'Turing (Alan)',
      full_name: 'Alan Mathison Turing',
      email: null,
      city: 'London',
      number_of_marketing_opt_in_requests: 0,
      is_blocked: false,
      created_at: '2026-01-03T00:00:00Z',
    },
    {
      display_name: null,
      full_name: 'Edsger Wybe Dijkstra',
      email: 'edsger@example.com',
      city: 'Amsterdam',
      number_of_marketing_opt_in_requests: 3,
      is_blocked: false,
      created_at: '2026-01-04T00:00:00Z',
    },
    {
      display_name: 'Barbara Liskov',
      full_name: 'Barbara Liskov',
      email: 'barbara@EXAMPLE.com',
      city: 'Boston',
      number_of_marketing_opt_in_requests: 1,
      is_blocked: false,
      created_at: '2026-01-05T00:00:00Z',
    },
    {
      display_name: 'Barbara Liskov',
      full_name: 'Barbara Jane Liskov',
      email: 'liskov@mit.edu',
      city: 'Cambridge',
      number_of_marketing_opt_in_requests: 4,
      is_blocked: false,
      created_at: '2026-01-06T00:00:00Z',
    },
  ]);
  [c.ada, c.grace, c.alan, c.edsger, c.barbara, c.liskov] = ids as [string, string, string, string, string, string];
  // Another organisation with look-alike rows: never visible to `org`.
  await insertRows(t.db, 'contact', other.id, [
    { display_name: 'Ada Lovelace', email: 'ada@example.com', city: 'Zürich', number_of_marketing_opt_in_requests: 2 },
  ]);

  appointments = await insertRows(t.db, 'appointment', org.id, [
    { name: 'One', contact_id: c.ada, start_time: '2026-12-01T09:00:00Z' },
    { name: 'Two', contact_id: c.grace, start_time: '2026-12-02T09:00:00Z' },
    { name: 'Three', contact_id: c.alan, start_time: '2026-12-03T09:00:00Z' },
  ]);
  const [tags] = await insertRows(t.db, 'custom_field', org.id, [
    { name: 'Tags', key: 'tags', type: 'string_list', entity: 'appointment' },
  ]);
  await insertRows(t.db, 'appointment_custom_field', org.id, [
    { appointment_id: appointments[0], custom_field_id: tags, key: 'tags', string_list_value: ['x', 'y', 'a,b'] },
    { appointment_id: appointments[1], custom_field_id: tags, key: 'tags', string_list_value: ['y'] },
    { appointment_id: appointments[2], custom_field_id: tags, key: 'tags', string_list_value: ['z'] },
  ]);
});
afterAll(() => t?.drop());

describe('select', () => {
  it('returns only the selected fields, whitespace in the list removed by the client', async () => {
    const { data, error, status } = await client(org.token)
      .from('contact')
      .select('id, display_name')
      .eq('city', 'Zürich');
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(lastQuery().get('select')).toBe('id,display_name');
    expect(data).toEqual([{ id: c.ada, display_name: 'Ada Lovelace' }]);
  });

  it('renames with aliases and casts with ::', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('name:display_name, requests:number_of_marketing_opt_in_requests::text')
      .eq('id', c.grace);
    expect(error).toBeNull();
    expect(data).toEqual([{ name: 'Hopper, Grace', requests: '5' }]);
  });

  it("select() without arguments returns every field, only of the caller's organisation", async () => {
    const { data, error } = await client(org.token).from('contact').select();
    expect(error).toBeNull();
    expect(data).toHaveLength(6);
    for (const row of data as Row[]) expect(row.organisation_id).toBe(org.id);
    expect(Object.keys((data as Row[])[0]!)).toEqual(
      expect.arrayContaining(['id', 'display_name', 'email', 'birthday', 'is_blocked']),
    );
  });
});

describe('filters', () => {
  const byCreated = () => client(org.token).from('contact').select('display_name').order('created_at');

  it('eq with a non-ASCII value and a value holding a space (sent as "+")', async () => {
    const zurich = await byCreated().eq('city', 'Zürich');
    expect(zurich.error).toBeNull();
    expect(names(zurich.data)).toEqual(['Ada Lovelace']);
    const barbaras = await byCreated().eq('display_name', 'Barbara Liskov');
    expect(lastRaw()).toContain('display_name=eq.Barbara+Liskov');
    expect(barbaras.error).toBeNull();
    expect(names(barbaras.data)).toEqual(['Barbara Liskov', 'Barbara Liskov']);
  });

  it('eq with a value holding a comma and one holding parentheses (top-level values are verbatim)', async () => {
    const grace = await byCreated().eq('display_name', 'Hopper, Grace');
    expect(grace.error).toBeNull();
    expect(names(grace.data)).toEqual(['Hopper, Grace']);
    const alan = await byCreated().eq('display_name', 'Turing (Alan)');
    expect(alan.error).toBeNull();
    expect(names(alan.data)).toEqual(['Turing (Alan)']);
  });

  it('neq', async () => {
    const { data, error } = await byCreated().neq('city', 'London');
    expect(error).toBeNull();
    expect(names(data)).toEqual(['Ada Lovelace', 'Hopper, Grace', null, 'Barbara Liskov', 'Barbara Liskov']);
  });

  it('gt, gte, lt, lte on an integer field', async () => {
    const n = 'number_of_marketing_opt_in_requests';
    const gt = await client(org.token)
      .from('contact')
      .select('n:number_of_marketing_opt_in_requests')
      .gt(n, 2)
      .order('created_at');
    expect(gt.error).toBeNull();
    expect(gt.data).toEqual([{ n: 5 }, { n: 3 }, { n: 4 }]);
    const gte = await client(org.token)
      .from('contact')
      .select('n:number_of_marketing_opt_in_requests')
      .gte(n, 2)
      .order('created_at');
    expect(gte.data).toEqual([{ n: 2 }, { n: 5 }, { n: 3 }, { n: 4 }]);
    const lt = await client(org.token)
      .from('contact')
      .select('n:number_of_marketing_opt_in_requests')
      .lt(n, 2)
      .order('created_at');
    expect(lt.data).toEqual([{ n: 0 }, { n: 1 }]);
    const lte = await client(org.token)
      .from('contact')
      .select('n:number_of_marketing_opt_in_requests')
      .lte(n, 1)
      .order('created_at');
    expect(lte.data).toEqual([{ n: 0 }, { n: 1 }]);
    const between = await byCreated().gt(n, 0).lt(n, 3);
    expect(names(between.data)).toEqual(['Ada Lovelace', 'Barbara Liskov']);
  });

  it('gte and lt on a date and a timestamp', async () => {
    const born = await byCreated().gte('birthday', '1900-01-01');
    expect(born.error).toBeNull();
    expect(names(born.data)).toEqual(['Hopper, Grace']);
    const early = await byCreated().lt('created_at', '2026-01-03T00:00:00+00:00');
    expect(early.error).toBeNull();
    expect(names(early.data)).toEqual(['Ada Lovelace', 'Hopper, Grace']);
  });

  it('like is case-sensitive, ilike is not; * and % are wildcards', async () => {
    const like = await byCreated().like('email', '*@example.com');
    expect(like.error).toBeNull();
    expect(names(like.data)).toEqual(['Ada Lovelace', 'Hopper, Grace', null]);
    const percent = await byCreated().like('email', '%@example.com');
    expect(percent.error).toBeNull();
    expect(names(percent.data)).toEqual(['Ada Lovelace', 'Hopper, Grace', null]);
    const ilike = await byCreated().ilike('email', '*@EXAMPLE.COM');
    expect(ilike.error).toBeNull();
    expect(names(ilike.data)).toEqual(['Ada Lovelace', 'Hopper, Grace', null, 'Barbara Liskov']);
  });

  it('is null, is true, not is null', async () => {
    const noEmail = await byCreated().is('email', null);
    expect(noEmail.error).toBeNull();
    expect(names(noEmail.data)).toEqual(['Turing (Alan)']);
    const blocked = await byCreated().is('is_blocked', true);
    expect(names(blocked.data)).toEqual(['Hopper, Grace']);
    const withName = await client(org.token)
      .from('contact')
      .select('full_name')
      .not('display_name', 'is', null)
      .order('created_at');
    expect(withName.error).toBeNull();
    expect(withName.data).toHaveLength(5);
    expect(withName.data).not.toContainEqual({ full_name: 'Edsger Wybe Dijkstra' });
  });

  it('in with values holding commas and parentheses (quoted by the client)', async () => {
    const { data, error } = await byCreated().in('display_name', ['Hopper, Grace', 'Turing (Alan)', 'Nobody']);
    expect(lastQuery().get('display_name')).toBe('in.("Hopper, Grace","Turing (Alan)",Nobody)');
    expect(error).toBeNull();
    expect(names(data)).toEqual(['Hopper, Grace', 'Turing (Alan)']);
  });

  it('in on numbers and uuids, and an empty in list', async () => {
    const numbers = await byCreated().in('number_of_marketing_opt_in_requests', [0, 5]);
    expect(numbers.error).toBeNull();
    expect(names(numbers.data)).toEqual(['Hopper, Grace', 'Turing (Alan)']);
    const ids = await byCreated().in('id', [c.ada, c.liskov]);
    expect(names(ids.data)).toEqual(['Ada Lovelace', 'Barbara Liskov']);
    const none = await byCreated().in('city', []);
    expect(none.error).toBeNull();
    expect(none.data).toEqual([]);
  });

  it('not(...) with eq, in and like', async () => {
    const notEq = await byCreated().not('city', 'eq', 'London');
    expect(names(notEq.data)).toEqual(['Ada Lovelace', 'Hopper, Grace', null, 'Barbara Liskov', 'Barbara Liskov']);
    const notIn = await byCreated().not('display_name', 'in', '("Hopper, Grace","Turing (Alan)")');
    expect(notIn.error).toBeNull();
    // NOT (x IN ...) is null for a null display_name, as in SQL.
    expect(names(notIn.data)).toEqual(['Ada Lovelace', 'Barbara Liskov', 'Barbara Liskov']);
    const notLike = await byCreated().not('email', 'like', '*@example.com');
    expect(names(notLike.data)).toEqual(['Barbara Liskov', 'Barbara Liskov']);
  });

  it('or(...) with a nested and(...)', async () => {
    const { data, error } = await byCreated().or(
      'city.eq.London,and(number_of_marketing_opt_in_requests.gte.3,is_blocked.is.true)',
    );
    expect(error).toBeNull();
    expect(names(data)).toEqual(['Hopper, Grace', 'Turing (Alan)']);
  });

  it('or(...) with quoted values holding commas and parentheses, an in list and not.', async () => {
    const quoted = await byCreated().or(
      'display_name.eq."Hopper, Grace",display_name.eq."Turing (Alan)",city.eq.Boston',
    );
    expect(quoted.error).toBeNull();
    expect(names(quoted.data)).toEqual(['Hopper, Grace', 'Turing (Alan)', 'Barbara Liskov']);
    const lists = await byCreated().or('city.in.(London,Amsterdam),and(city.eq.Cambridge,email.not.is.null)');
    expect(lists.error).toBeNull();
    expect(names(lists.data)).toEqual(['Turing (Alan)', null, 'Barbara Liskov']);
    const nested = await byCreated().or(
      'and(city.eq.Boston,number_of_marketing_opt_in_requests.eq.1),or(city.eq.Zürich,city.eq.London)',
    );
    expect(nested.error).toBeNull();
    expect(names(nested.data)).toEqual(['Ada Lovelace', 'Turing (Alan)', 'Barbara Liskov']);
  });

  it('or(...) is ANDed with the other filters', async () => {
    const { data, error } = await byCreated()
      .or('city.eq.Boston,city.eq.Cambridge')
      .gt('number_of_marketing_opt_in_requests', 1);
    expect(error).toBeNull();
    expect(names(data)).toEqual(['Barbara Liskov']);
    const two = await client(org.token)
      .from('contact')
      .select('id')
      .or('city.eq.Boston,city.eq.Cambridge')
      .or('city.eq.Cambridge,city.eq.London');
    expect(two.error).toBeNull();
    expect(two.data).toEqual([{ id: c.liskov }]);
  });

  it('filter(column, operator, value) passes the operator through', async () => {
    const inList = await byCreated().filter('city', 'in', '(Zürich,London)');
    expect(inList.error).toBeNull();
    expect(names(inList.data)).toEqual(['Ada Lovelace', 'Turing (Alan)']);
    const negated = await byCreated().filter('number_of_marketing_opt_in_requests', 'not.gte', 3);
    expect(names(negated.data)).toEqual(['Ada Lovelace', 'Turing (Alan)', 'Barbara Liskov']);
  });

  it('match({...}) is eq on every key', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('id')
      .match({ display_name: 'Barbara Liskov', city: 'Boston' });
    expect(error).toBeNull();
    expect(data).toEqual([{ id: c.barbara }]);
  });

  it('likeAnyOf, likeAllOf and ilikeAnyOf', async () => {
    const any = await byCreated().likeAnyOf('email', ['ada@*', '*@mit.edu']);
    expect(lastQuery().get('email')).toBe('like(any).{ada@*,*@mit.edu}');
    expect(any.error).toBeNull();
    expect(names(any.data)).toEqual(['Ada Lovelace', 'Barbara Liskov']);
    const all = await client(org.token).from('contact').select('id').likeAllOf('email', ['*@example.com', 'g*']);
    expect(all.error).toBeNull();
    expect(all.data).toEqual([{ id: c.grace }]);
    const iany = await client(org.token).from('contact').select('id').ilikeAnyOf('email', ['BARBARA@*']);
    expect(iany.data).toEqual([{ id: c.barbara }]);
  });

  it('textSearch on full_name: to_tsquery, plain, phrase and websearch, with a config', async () => {
    const fts = await client(org.token)
      .from('contact')
      .select('id')
      .textSearch('full_name', "'grace' & 'hopper'", { config: 'english' });
    expect(lastRaw()).toContain('full_name=fts%28english%29.%27grace%27+%26+%27hopper%27');
    expect(fts.error).toBeNull();
    expect(fts.data).toEqual([{ id: c.grace }]);
    const plain = await client(org.token)
      .from('contact')
      .select('id')
      .textSearch('full_name', 'mathison', { type: 'plain' });
    expect(plain.error).toBeNull();
    expect(plain.data).toEqual([{ id: c.alan }]);
    const phrase = await client(org.token)
      .from('contact')
      .select('id')
      .textSearch('full_name', 'barbara jane', { type: 'phrase', config: 'english' });
    expect(phrase.error).toBeNull();
    expect(phrase.data).toEqual([{ id: c.liskov }]);
    const web = await client(org.token)
      .from('contact')
      .select('id')
      .textSearch('full_name', 'liskov -jane', { type: 'websearch', config: 'english' });
    expect(web.error).toBeNull();
    expect(web.data).toEqual([{ id: c.barbara }]);
  });

  it('contains and containedBy on appointment_custom_field.string_list_value', async () => {
    const ids = (rows: Row[] | null) => sorted((rows ?? []).map((r) => r.appointment_id));
    const y = await client(org.token)
      .from('appointment_custom_field')
      .select('appointment_id')
      .contains('string_list_value', ['y']);
    expect(lastQuery().get('string_list_value')).toBe('cs.{y}');
    expect(y.error).toBeNull();
    expect(ids(y.data)).toEqual(sorted([appointments[0], appointments[1]]));
    const xy = await client(org.token)
      .from('appointment_custom_field')
      .select('appointment_id')
      .contains('string_list_value', ['x', 'y']);
    expect(ids(xy.data)).toEqual([appointments[0]]);
    const comma = await client(org.token)
      .from('appointment_custom_field')
      .select('appointment_id')
      .contains('string_list_value', '{"a,b"}');
    expect(comma.error).toBeNull();
    expect(ids(comma.data)).toEqual([appointments[0]]);
    const within = await client(org.token)
      .from('appointment_custom_field')
      .select('appointment_id')
      .containedBy('string_list_value', ['y', 'z']);
    expect(within.error).toBeNull();
    expect(ids(within.data)).toEqual(sorted([appointments[1], appointments[2]]));
    const overlap = await client(org.token)
      .from('appointment_custom_field')
      .select('appointment_id')
      .overlaps('string_list_value', ['z', 'x']);
    expect(overlap.error).toBeNull();
    expect(ids(overlap.data)).toEqual(sorted([appointments[0], appointments[2]]));
  });
});

describe('order, limit, range and counts', () => {
  it('order with several terms, direction and nulls placement', async () => {
    const { data, error } = await client(org.token)
      .from('contact')
      .select('id')
      .order('display_name', { ascending: false, nullsFirst: true })
      .order('created_at', { ascending: false });
    expect(lastQuery().get('order')).toBe('display_name.desc.nullsfirst,created_at.desc');
    expect(error).toBeNull();
    expect((data as Row[]).map((r) => r.id)).toEqual([c.edsger, c.alan, c.grace, c.liskov, c.barbara, c.ada]);

    const ascending = await client(org.token)
      .from('contact')
      .select('id')
      .order('display_name', { ascending: true, nullsFirst: false })
      .order('created_at', { ascending: true });
    expect(ascending.error).toBeNull();
    expect((ascending.data as Row[]).map((r) => r.id)).toEqual([c.ada, c.barbara, c.liskov, c.grace, c.alan, c.edsger]);

    const nullsFirstAsc = await client(org.token)
      .from('contact')
      .select('id')
      .order('display_name', { nullsFirst: true })
      .order('created_at');
    expect((nullsFirstAsc.data as Row[]).map((r) => r.id)).toEqual([
      c.edsger,
      c.ada,
      c.barbara,
      c.liskov,
      c.grace,
      c.alan,
    ]);
  });

  it('limit', async () => {
    const { data, error, status } = await client(org.token).from('contact').select('id').order('created_at').limit(2);
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual([{ id: c.ada }, { id: c.grace }]);
  });

  it('range(from, to) is offset/limit, inclusive', async () => {
    const { data, error } = await client(org.token).from('contact').select('id').order('created_at').range(1, 3);
    expect(lastQuery().get('offset')).toBe('1');
    expect(lastQuery().get('limit')).toBe('3');
    expect(error).toBeNull();
    expect(data).toEqual([{ id: c.grace }, { id: c.alan }, { id: c.edsger }]);
  });

  it('count: exact reads the total from Content-Range, with 206 for a partial page', async () => {
    const page = await client(org.token)
      .from('contact')
      .select('id', { count: 'exact' })
      .order('created_at')
      .range(0, 1);
    expect(page.error).toBeNull();
    expect(page.count).toBe(6);
    expect(page.status).toBe(206);
    expect(page.data).toEqual([{ id: c.ada }, { id: c.grace }]);
    const filtered = await client(org.token)
      .from('contact')
      .select('id', { count: 'exact' })
      .ilike('email', '*@example.com');
    expect(filtered.error).toBeNull();
    expect(filtered.count).toBe(4);
    expect(filtered.status).toBe(200);
    expect(filtered.data).toHaveLength(4);
    const none = await client(org.token).from('contact').select('id', { count: 'exact' }).eq('city', 'Nowhere');
    expect(none.count).toBe(0);
    expect(none.data).toEqual([]);
  });

  it('count: exact with head: true sends HEAD, answers no rows and the count', async () => {
    const all = await client(org.token).from('contact').select('*', { count: 'exact', head: true });
    expect(all.error).toBeNull();
    expect(all.status).toBe(200);
    expect(all.data).toBeNull();
    expect(all.count).toBe(6);
    const some = await client(org.token)
      .from('contact')
      .select('*', { count: 'exact', head: true })
      .eq('display_name', 'Barbara Liskov');
    expect(some.error).toBeNull();
    expect(some.count).toBe(2);
    const otherOrg = await client(other.token).from('contact').select('*', { count: 'exact', head: true });
    expect(otherOrg.count).toBe(1);
  });

  it('a range past the end with a count is RANGE_NOT_SATISFIABLE', async () => {
    const { data, error, status } = await client(org.token)
      .from('contact')
      .select('id', { count: 'exact' })
      .range(10, 19);
    expect(status).toBe(416);
    expect(data).toBeNull();
    expect(error?.code).toBe('RANGE_NOT_SATISFIABLE');
  });
});

describe('single and maybeSingle', () => {
  it('single() with one row returns the object', async () => {
    const { data, error, status } = await client(org.token)
      .from('contact')
      .select('id, display_name')
      .eq('city', 'Zürich')
      .single();
    expect(error).toBeNull();
    expect(status).toBe(200);
    expect(data).toEqual({ id: c.ada, display_name: 'Ada Lovelace' });
  });

  it('single() with zero or two rows is an error with code NOT_ACCEPTABLE', async () => {
    const zero = await client(org.token).from('contact').select('id').eq('city', 'Nowhere').single();
    expect(zero.data).toBeNull();
    expect(zero.status).toBe(406);
    expect(zero.error?.code).toBe('NOT_ACCEPTABLE');
    expect(zero.error?.message).toContain('0 rows');
    const two = await client(org.token).from('contact').select('id').eq('display_name', 'Barbara Liskov').single();
    expect(two.data).toBeNull();
    expect(two.status).toBe(406);
    expect(two.error?.code).toBe('NOT_ACCEPTABLE');
    expect(two.error?.message).toContain('2 rows');
  });

  it('maybeSingle() answers the object, or null for no row, and an error for two rows', async () => {
    const one = await client(org.token).from('contact').select('id').eq('city', 'London').maybeSingle();
    expect(one.error).toBeNull();
    expect(one.data).toEqual({ id: c.alan });
    const none = await client(org.token).from('contact').select('id').eq('city', 'Nowhere').maybeSingle();
    expect(none.error).toBeNull();
    expect(none.data).toBeNull();
    const two = await client(org.token).from('contact').select('id').eq('display_name', 'Barbara Liskov').maybeSingle();
    expect(two.data).toBeNull();
    expect(two.status).toBe(406);
    expect(two.error).not.toBeNull();
  });
});

describe('errors reach the client with our contract codes', () => {
  it('an unknown column in select is UNKNOWN_FIELD, naming it, with a hint listing fields', async () => {
    const { data, error, status } = await client(org.token).from('contact').select('id, nope');
    expect(data).toBeNull();
    expect(status).toBe(400);
    expect(error?.code).toBe('UNKNOWN_FIELD');
    expect(error?.message).toContain('nope');
    expect(error?.hint).toContain('display_name');
  });

  it('an unknown column in a filter, or a field that may not be ordered, is UNKNOWN_FIELD', async () => {
    const filter = await client(org.token).from('contact').select('id').eq('nope', 1);
    expect(filter.status).toBe(400);
    expect(filter.error?.code).toBe('UNKNOWN_FIELD');
    expect(filter.error?.message).toContain('nope');
    const order = await client(org.token).from('contact').select('id').order('email');
    expect(order.status).toBe(400);
    expect(order.error?.code).toBe('UNKNOWN_FIELD');
    expect(order.error?.message).toContain('email');
    expect(order.error?.hint).toContain('display_name');
    const inTree = await client(org.token).from('contact').select('id').or('nope.eq.1,city.eq.London');
    expect(inTree.error?.code).toBe('UNKNOWN_FIELD');
  });

  it('a bad value or operator is INVALID_QUERY', async () => {
    const cases = [
      client(org.token).from('contact').select('id').eq('number_of_marketing_opt_in_requests', 'many'),
      client(org.token).from('contact').select('id').eq('id', 'not-a-uuid'),
      client(org.token).from('contact').select('id').eq('is_blocked', 'maybe'),
      client(org.token).from('contact').select('id').eq('birthday', 'someday'),
      client(org.token).from('contact').select('id').filter('city', 'nope', 'x'),
      client(org.token).from('contact').select('id').or('city.eq.London,'),
      client(org.token).from('contact').select('id').textSearch('number_of_marketing_opt_in_requests', 'x'),
      client(org.token).from('contact').select('id').contains('city', ['x']),
      client(org.token).from('contact').select('id, display_name::regclass'),
    ];
    for (const result of await Promise.all(cases)) {
      expect(result.status).toBe(400);
      expect(result.data).toBeNull();
      expect(result.error?.code).toBe('INVALID_QUERY');
      expect(result.error?.message).toEqual(expect.any(String));
    }
  });

  it("the whole contract body is the client's error object", async () => {
    const { error } = await client(org.token).from('contact').select('id').eq('nope', 1);
    const body = error as unknown as Record<string, unknown>;
    expect(body).toMatchObject({
      name: 'APIError',
      code: 'UNKNOWN_FIELD',
      status_code: 400,
      is_transient: false,
      contact_support: false,
    });
    expect(body.request_id).toEqual(expect.any(String));
    expect(new Date(String(body.timestamp)).toISOString()).toBe(body.timestamp);
  });

  it('an unknown resource is NOT_FOUND, and a bad token UNAUTHORIZED', async () => {
    const missing = await client(org.token).from('nope').select('id');
    expect(missing.status).toBe(404);
    expect(missing.data).toBeNull();
    expect(missing.error?.code).toBe('NOT_FOUND');
    const bad = await client(`engage_${'A'.repeat(43)}`)
      .from('contact')
      .select('id');
    expect(bad.status).toBe(401);
    expect(bad.data).toBeNull();
    expect(bad.error?.code).toBe('UNAUTHORIZED');
  });

  it('a resource without GET answers METHOD_NOT_ALLOWED', async () => {
    const { status, error } = await client(org.token).from('appointment_type').select('id');
    expect(status).toBe(405);
    expect(error?.code).toBe('METHOD_NOT_ALLOWED');
  });
});
