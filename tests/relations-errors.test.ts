/**
 * What embeds refuse, and how (issue 11): every 400 has the contract's body, a stable code and a
 * hint that names what would have worked, and following the hint works. A registry with two
 * foreign keys to the same table (transfer.sender_id and receiver_id -> person) covers ambiguous
 * relations, and resource definitions that rename or hide relations or turn aggregates off.
 */
import { defineResource } from '@engage/engine';
import { foreignKey, numeric, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resources } from '../schema/registry.ts';
import * as tables from '../schema/tables.ts';
import { createTestApp, insertRows, type TestApp } from './helpers/app.ts';
import {
  type Answer,
  call,
  expectError,
  ok,
  type RelationsFixture,
  rowsOf,
  seedRelations,
  tenantColumns,
  unordered,
} from './helpers/relations.ts';

const person = pgTable('person', { ...tenantColumns(), name: text() }, (t) => [
  primaryKey({ name: 'person_pkey', columns: [t.organisation_id, t.id] }),
]);
const transfer = pgTable(
  'transfer',
  { ...tenantColumns(), sender_id: uuid(), receiver_id: uuid(), amount: numeric(), note: text() },
  (t) => [
    primaryKey({ name: 'transfer_pkey', columns: [t.organisation_id, t.id] }),
    foreignKey({
      name: 'transfer_sender_fkey',
      columns: [t.organisation_id, t.sender_id],
      foreignColumns: [person.organisation_id, person.id],
    }),
    foreignKey({
      name: 'transfer_receiver_fkey',
      columns: [t.organisation_id, t.receiver_id],
      foreignColumns: [person.organisation_id, person.id],
    }),
  ],
);

const custom = [
  defineResource({ name: 'person', table: person, verbs: ['GET'], orderable: ['name'], aggregates: false }),
  defineResource({ name: 'transfer', table: transfer, verbs: ['GET'] }),
  // Write-only: nothing can embed it.
  defineResource({ name: 'transfer_log', table: transfer, verbs: ['POST'] }),
  defineResource({
    name: 'transfer_named',
    table: transfer,
    verbs: ['GET'],
    relations: { transfer_sender_fkey: 'sender', transfer_receiver_fkey: 'receiver' },
  }),
  defineResource({
    name: 'transfer_hidden',
    table: transfer,
    verbs: ['GET'],
    relations: { transfer_receiver_fkey: false },
  }),
  // The brief's example, over the standard deal table.
  defineResource({
    name: 'deal_view',
    table: tables.deal,
    verbs: ['GET'],
    relations: { deal_contact_fkey: 'buyer' },
  }),
];

let t: TestApp;
let f: RelationsFixture;
let people: Record<'Alice' | 'Bert' | 'Carl', string>;

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, ...custom] });
  await t.db.exec(`CREATE TABLE person (
      id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
      name text, PRIMARY KEY (organisation_id, id));
    CREATE TABLE transfer (
      id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
      sender_id uuid, receiver_id uuid, amount numeric, note text, PRIMARY KEY (organisation_id, id),
      CONSTRAINT transfer_sender_fkey FOREIGN KEY (organisation_id, sender_id) REFERENCES person (organisation_id, id),
      CONSTRAINT transfer_receiver_fkey FOREIGN KEY (organisation_id, receiver_id)
        REFERENCES person (organisation_id, id));`);
  f = await seedRelations(t);
  const [alice, bert, carl] = await insertRows(t.db, 'person', f.org.id, [
    { name: 'Alice' },
    { name: 'Bert' },
    { name: 'Carl' },
  ]);
  people = { Alice: alice!, Bert: bert!, Carl: carl! };
  await insertRows(t.db, 'transfer', f.org.id, [
    { sender_id: alice, receiver_id: bert, amount: 10, note: 'rent' },
    { sender_id: bert, receiver_id: carl, amount: 20, note: 'lunch' },
    { sender_id: alice, receiver_id: carl, amount: 30, note: 'gift' },
    { sender_id: carl, amount: 40, note: 'cash' },
  ]);
});
afterAll(() => t?.drop());

const get = (path: string, init: { headers?: Record<string, string>; method?: string } = {}): Promise<Answer> =>
  call(t, f.org.token, path, init.headers, init.method);

async function same(path: string, sql: string) {
  const body = await ok(t, f.org.token, path);
  const expected = await rowsOf(t, sql, [f.org.id]);
  expect(expected.length).toBeGreaterThan(0);
  expect(unordered(body)).toEqual(unordered(expected));
}

const personOf = (field: string, alias = 't0') =>
  "(SELECT json_build_object('name', p.name) FROM person p" +
  ` WHERE p.organisation_id = $1::uuid AND p.id = ${alias}.${field})`;
const TRANSFERS = 'FROM transfer t0 WHERE t0.organisation_id = $1::uuid';

describe('UNKNOWN_RELATION', () => {
  it("lists the resource's relations in the hint, and the listed forms work", async () => {
    const body = expectError(await get('/deal?select=name,nothing(*)'), 400, 'UNKNOWN_RELATION');
    expect(body.message).toContain('nothing');
    expect(body.hint).toContain('Relations of deal:');
    expect(body.hint).toContain('contact (to one, deal_contact_fkey)');
    expect((await get('/deal?select=name,contact(*)')).status).toBe(200);
    expect((await get('/deal?select=name,contact!deal_contact_fkey(*)')).status).toBe(200);
  });

  it("lists a contact's to-many relations", async () => {
    const body = expectError(await get('/contact?select=id,segment(*)'), 400, 'UNKNOWN_RELATION');
    for (const relation of [
      'deal (to many, deal_contact_fkey)',
      'appointment (to many, appointment_contact_fkey)',
      'appointment_details (to many, appointment_contact_fkey)',
      'deal_view (to many, deal_contact_fkey)',
    ]) {
      expect(body.hint).toContain(relation);
    }
  });

  it('a hint naming no foreign key of the relation', async () => {
    const body = expectError(await get('/deal?select=name,contact!nope_fkey(*)'), 400, 'UNKNOWN_RELATION');
    expect(body.hint).toContain('deal_contact_fkey');
  });

  it('a resource that does not offer GET cannot be embedded (transfer_log)', async () => {
    const body = expectError(await get('/person?select=name,transfer_log(*)'), 400, 'UNKNOWN_RELATION');
    expect(body.hint).toContain('transfer (to many');
    expect(body.hint).not.toContain('transfer_log');
  });

  it('in a nested embed', async () => {
    const nested = expectError(
      await get('/appointment?select=name,contact(deal(segment(*)))'),
      400,
      'UNKNOWN_RELATION',
    );
    expect(nested.hint).toContain('Relations of deal:');
  });
});

describe('AMBIGUOUS_RELATION', () => {
  it('two foreign keys to the same table: the hint lists the relation!fkey forms, and each works', async () => {
    const body = expectError(await get('/transfer?select=note,person(name)'), 300, 'AMBIGUOUS_RELATION');
    expect(body.hint).toContain('person!transfer_sender_fkey');
    expect(body.hint).toContain('person!transfer_receiver_fkey');
    await same(
      '/transfer?select=note,person!transfer_sender_fkey(name)',
      `SELECT t0.note, ${personOf('sender_id')} AS person ${TRANSFERS}`,
    );
    await same(
      '/transfer?select=note,from:person!sender_id(name),to:person!transfer_receiver_fkey(name)',
      `SELECT t0.note, ${personOf('sender_id')} AS "from", ${personOf('receiver_id')} AS "to" ${TRANSFERS}`,
    );
    await same(
      '/transfer?select=note,receiver_id(name)',
      `SELECT t0.note, ${personOf('receiver_id')} AS receiver_id ${TRANSFERS}`,
    );
  });

  it('to many as well', async () => {
    const body = expectError(await get('/person?select=name,transfer(note)'), 300, 'AMBIGUOUS_RELATION');
    expect(body.hint).toContain('transfer!transfer_sender_fkey');
    expect(body.hint).toContain('transfer!transfer_receiver_fkey');
    await same(
      '/person?select=name,sent:transfer!transfer_sender_fkey(note),received:transfer!transfer_receiver_fkey(note)',
      `SELECT p0.name,
        coalesce((SELECT json_agg(json_build_object('note', x.note)) FROM transfer x
          WHERE x.organisation_id = $1::uuid AND x.sender_id = p0.id), '[]'::json) AS sent,
        coalesce((SELECT json_agg(json_build_object('note', x.note)) FROM transfer x
          WHERE x.organisation_id = $1::uuid AND x.receiver_id = p0.id), '[]'::json) AS received
       FROM person p0 WHERE p0.organisation_id = $1::uuid`,
    );
  });

  it.each([
    ['transfer', 'person'],
    ['person', 'transfer'],
    // appointment and appointment_details are two resources over one table, so one foreign key
    // leads to both: the hint must still name forms that tell them apart.
    ['contact', 'appointment_contact_fkey'],
  ])('%s?select=%s(id): every form the hint lists is distinct and works', async (resource, relation) => {
    const body = expectError(await get(`/${resource}?select=${relation}(id)`), 300, 'AMBIGUOUS_RELATION');
    // The forms follow the hint's last colon: "Say which ...: a, b."
    const forms: string[] = (/:\s*([^:]*?)\.?$/.exec(body.hint)?.[1] ?? '').split(/,\s*/).filter(Boolean);
    expect(forms.length, body.hint).toBeGreaterThanOrEqual(2);
    expect(new Set(forms).size, body.hint).toBe(forms.length);
    for (const form of forms) {
      const answer = await get(`/${resource}?select=${form}(id)`);
      expect(answer.status, `${form}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
  });

  it('an order term names the embed as selected, so it is never ambiguous', async () => {
    const body = await ok(
      t,
      f.org.token,
      '/transfer?select=note,person!transfer_receiver_fkey(name)&order=person(name).desc,id',
    );
    const expected = await rowsOf(
      t,
      `SELECT t0.note, ${personOf('receiver_id')} AS person ${TRANSFERS} ORDER BY` +
        ' (SELECT p.name FROM person p WHERE p.organisation_id = $1::uuid AND p.id = t0.receiver_id) DESC, t0.id',
      [f.org.id],
    );
    expect(body).toEqual(expected);
  });
});

describe('renaming and hiding relations in the resource definition', () => {
  it('renamed relations are embedded by their new names', async () => {
    await same(
      '/transfer_named?select=note,sender(name),receiver(name)',
      `SELECT t0.note, ${personOf('sender_id')} AS sender, ${personOf('receiver_id')} AS receiver ${TRANSFERS}`,
    );
    const body = expectError(await get('/transfer_named?select=note,person(name)'), 400, 'UNKNOWN_RELATION');
    expect(body.hint).toContain('sender (to one, transfer_sender_fkey)');
    expect(body.hint).toContain('receiver (to one, transfer_receiver_fkey)');
  });

  it("deal_contact_fkey renamed 'buyer'", async () => {
    await same(
      '/deal_view?select=name,buyer(display_name)&order=buyer(display_name),id',
      `SELECT d.name, (SELECT json_build_object('display_name', c.display_name) FROM contact c
        WHERE c.organisation_id = $1::uuid AND c.id = d.contact_id) AS buyer
       FROM deal d WHERE d.organisation_id = $1::uuid`,
    );
    expectError(await get('/deal_view?select=name,contact(display_name)'), 400, 'UNKNOWN_RELATION');
  });

  it('a hidden relation is gone; the other is no longer ambiguous', async () => {
    await same(
      '/transfer_hidden?select=note,person(name)',
      `SELECT t0.note, ${personOf('sender_id')} AS person ${TRANSFERS}`,
    );
    const body = expectError(
      await get('/transfer_hidden?select=note,person!transfer_receiver_fkey(name)'),
      400,
      'UNKNOWN_RELATION',
    );
    expect(body.hint).toContain('person (to one, transfer_sender_fkey)');
    expect(body.hint).not.toContain('transfer_receiver_fkey');
  });
});

describe('NOT_EMBEDDED', () => {
  it.each([
    ['/deal?select=name&contact.limit=1', 'contact'],
    ['/deal?select=name&contact.order=display_name', 'contact'],
    ['/deal?select=name&contact.display_name=eq.Ada', 'contact'],
    ['/deal?select=name&contact.or=(city.eq.Bern)', 'contact'],
    ['/contact?select=display_name,big:deal(name)&deal.value=gt.1', 'deal'],
    ['/appointment?select=name,contact(display_name)&contact.deal.limit=1', 'contact.deal'],
  ])('%s', async (path, embed) => {
    const body = expectError(await get(path), 400, 'NOT_EMBEDDED');
    expect(body.message).toContain(embed);
    expect(body.hint).toContain(`${embed.split('.').join('(')}(`);
  });

  it('an order term on a relation that is not embedded (PostgREST: PGRST108)', async () => {
    const body = expectError(await get('/deal?select=name&order=contact(display_name)'), 400, 'NOT_EMBEDDED');
    expect(body.hint).toContain('contact(');
    expectError(await get('/deal?select=name,contact(display_name)&order=nothing(name)'), 400, 'NOT_EMBEDDED');
    // With an alias, the order names the alias.
    expectError(
      await get('/deal?select=name,buyer:contact(display_name)&order=contact(display_name)'),
      400,
      'NOT_EMBEDDED',
    );
  });

  it('contact=is.null without the embed in select', async () => {
    const body = expectError(await get('/deal?select=name&contact=is.null'), 400, 'NOT_EMBEDDED');
    expect(body.hint).toContain('contact(');
    expect((await get('/deal?select=name,contact()&contact=is.null')).status).toBe(200);
  });
});

describe('INVALID_AGGREGATE', () => {
  it('sum() of text names the kinds it takes', async () => {
    const body = expectError(await get('/deal?select=name.sum()'), 400, 'INVALID_AGGREGATE');
    expect(body.hint).toContain('numeric');
    expectError(await get('/contact?select=display_name,deal(name.avg())'), 400, 'INVALID_AGGREGATE');
  });

  it('an embed beside an aggregate; the hint names a spread or an aggregate inside the embed', async () => {
    const body = expectError(await get('/contact?select=count(),deal(name)'), 400, 'INVALID_AGGREGATE');
    expect(body.hint).toMatch(/\.\.\.deal\(|deal\(count\(\)\)/);
    expectError(await get('/deal?select=value.sum(),contact(display_name)'), 400, 'INVALID_AGGREGATE');
    expectError(await get('/contact?select=count(),...deal(name)'), 400, 'INVALID_AGGREGATE');
    expect((await get('/contact?select=display_name,deal(count())')).status).toBe(200);
  });

  it('a resource with aggregates turned off, at the top and embedded', async () => {
    expectError(await get('/person?select=count()'), 400, 'INVALID_AGGREGATE');
    expectError(await get('/transfer?select=note,sender_id(count())'), 400, 'INVALID_AGGREGATE');
    expect((await get('/transfer?select=count(),amount.sum()')).body).toEqual([{ count: 4, sum: 100 }]);
  });

  it('ordering by a field that is not grouped', async () => {
    const body = expectError(await get('/deal?select=currency,count()&order=won_at'), 400, 'INVALID_AGGREGATE');
    expect(body.hint).toBeTruthy();
  });

  it('aggregating a *_details resource selected with *', async () => {
    expectError(await get('/appointment_details?select=*,count()'), 400, 'INVALID_AGGREGATE');
  });
});

describe('INVALID_QUERY and UNKNOWN_FIELD in embeds', () => {
  it('ordering by a to-many relation', async () => {
    const body = expectError(
      await get('/contact?select=display_name,deal(name)&order=deal(won_at)'),
      400,
      'INVALID_QUERY',
    );
    expect(body.hint).toContain('deal.order=');
  });

  it('ordering by a field of a to-one relation that is not orderable there', async () => {
    const body = expectError(await get('/deal?select=name,contact(email)&order=contact(email)'), 400, 'UNKNOWN_FIELD');
    expect(body.hint).toContain('display_name');
  });

  it("an embed's own order and filter fields apply", async () => {
    const order = expectError(
      await get('/contact?select=display_name,deal(name)&deal.order=name'),
      400,
      'UNKNOWN_FIELD',
    );
    expect(order.hint).toContain('won_at');
    const field = expectError(
      await get('/contact?select=display_name,deal(name)&deal.nope=eq.1'),
      400,
      'UNKNOWN_FIELD',
    );
    expect(field.hint).toContain('value');
    expectError(await get('/deal?select=name,contact(nope)'), 400, 'UNKNOWN_FIELD');
  });

  it('an invalid value in an embed filter is a 400, whether the embed is shown, empty or !inner', async () => {
    const embeds = [
      'contact(display_name)',
      'contact()',
      'contact!inner()',
      '...contact(display_name)',
      'contact(count())',
    ];
    const answers = await Promise.all(embeds.map((e) => get(`/deal?select=name,${e}&contact.birthday=eq.2020-13-45`)));
    expect(Object.fromEntries(answers.map((a, i) => [embeds[i], a.status]))).toEqual(
      Object.fromEntries(embeds.map((e) => [e, 400])),
    );
    for (const answer of answers) expectError(answer, 400, 'INVALID_QUERY');
    expectError(
      await get('/deal?select=name,contact()&contact.birthday=eq.2020-13-45&contact=is.null'),
      400,
      'INVALID_QUERY',
    );
    expectError(await get('/contact?select=deal(name)&deal.value=gt.abc'), 400, 'INVALID_QUERY');
  });

  it('an operator other than is.null on an embed', async () => {
    const body = expectError(await get('/deal?select=name,contact()&contact=eq.Ada'), 400, 'INVALID_QUERY');
    expect(body.hint).toContain('contact=is.null');
    expectError(await get('/deal?select=name,contact()&contact=not.eq.x'), 400, 'INVALID_QUERY');
  });

  it('the same embed name twice at one level', async () => {
    const body = expectError(await get('/contact?select=deal(name),deal(value)'), 400, 'INVALID_QUERY');
    expect(body.hint).toContain(':deal(');
  });

  it("spreading a *_details resource's custom fields", async () => {
    expectError(await get('/appointment_custom_field?select=key,...appointment_details(*)'), 400, 'INVALID_QUERY');
    expect((await get('/appointment_custom_field?select=key,...appointment_details(name)')).status).toBe(200);
  });

  it('parse errors in an embedded select', async () => {
    expectError(await get('/deal?select=name,contact(display_name'), 400, 'INVALID_QUERY');
    expectError(await get('/deal?select=name,contact!inner!left(*)'), 400, 'INVALID_QUERY');
    expectError(await get('/deal?select=value.median()'), 400, 'INVALID_QUERY');
  });

  it('writes embed in what they return, as reads do, but do not aggregate', async () => {
    const write = async (method: string, path: string, body: unknown) => {
      const res = await t.call(path, f.org.token, {
        method,
        headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
        body: JSON.stringify(body),
      });
      return { res, status: res.status, body: await res.json() };
    };
    const post = await write('POST', '/deal?select=name,contact(display_name),contact_id(email)', {
      name: 'New',
      contact_id: f.contact.Bob,
    });
    expect(post.status).toBe(201);
    const [bob] = await rowsOf(
      t,
      'SELECT display_name, email FROM contact WHERE organisation_id = $1::uuid AND id = $2::uuid',
      [f.org.id, f.contact.Bob],
    );
    expect(post.body).toEqual([
      { name: 'New', contact: { display_name: bob!.display_name }, contact_id: { email: bob!.email } },
    ]);
    // Parameters of the embed apply, and a filtered-out contact embeds null.
    const patch = await write(
      'PATCH',
      '/deal?name=eq.New&select=name,contact(display_name)&contact.display_name=eq.x',
      {
        value: 5,
      },
    );
    expect(patch.status).toBe(200);
    expect(patch.body).toEqual([{ name: 'New', contact: null }]);
    expectError(await write('POST', '/deal?select=name,nope(*)', { name: 'Never' }), 400, 'UNKNOWN_RELATION');
    expectError(await write('PATCH', '/deal?name=eq.Big&select=count()', { name: 'Bigger' }), 400, 'INVALID_AGGREGATE');
    expectError(await write('DELETE', '/deal?name=eq.New&select=name&x.limit=1', undefined), 400, 'NOT_EMBEDDED');
    const [{ n }] = (await t.db.query<{ n: string }>(
      "SELECT count(*)::text AS n FROM deal WHERE organisation_id = $1::uuid AND name IN ('Never', 'Bigger')",
      [f.org.id],
    )) as [{ n: string }];
    expect(n).toBe('0');
    const deleted = await write('DELETE', '/deal?name=eq.New&select=name,...contact(display_name)', undefined);
    expect(deleted.body).toEqual([{ name: 'New', display_name: bob!.display_name }]);
  });
});

describe('the custom registry reads as hand-written SQL', () => {
  it("an embed's own order by its to-one embed: sent.order=receiver_id(name).desc", async () => {
    const path =
      '/person?select=name,sent:transfer!transfer_sender_fkey(note,receiver_id(name))' +
      '&sent.order=receiver_id(name).desc.nullslast,id&order=name';
    const body = await ok(t, f.org.token, path);
    const expected = await rowsOf(
      t,
      `SELECT p0.name, coalesce((SELECT json_agg(
           json_build_object('note', x.note, 'receiver_id', ${personOf('receiver_id', 'x')})
         ORDER BY (SELECT p.name FROM person p WHERE p.organisation_id = $1::uuid AND p.id = x.receiver_id)
           DESC NULLS LAST, x.id)
         FROM transfer x WHERE x.organisation_id = $1::uuid AND x.sender_id = p0.id), '[]'::json) AS sent
       FROM person p0 WHERE p0.organisation_id = $1::uuid ORDER BY p0.name`,
      [f.org.id],
    );
    expect(body).toEqual(expected);
    expect(body[0].sent.map((s: { note: string }) => s.note)).toEqual(['gift', 'rent']);
  });

  it('people with what they sent and received, aggregated', async () => {
    await same(
      '/person?select=name,sent:transfer!transfer_sender_fkey(amount.sum(),count())',
      `SELECT p0.name, (SELECT json_agg(x) FROM (SELECT sum(x.amount) AS sum, count(*) AS count FROM transfer x
        WHERE x.organisation_id = $1::uuid AND x.sender_id = p0.id) x) AS sent
       FROM person p0 WHERE p0.organisation_id = $1::uuid`,
    );
    expect(people.Alice).toBeTruthy();
  });
});
