/**
 * Relations beyond a plain foreign key (issue 11): many to many through a junction table whose
 * key holds both references (team <- membership -> member), and one to one where the reference
 * is unique (passport.member_id). Tables and registry entries here stand for ones an operator
 * adds to schema/; each answer is compared with what the fixture says it must be.
 */
import { createRegistry, defineResource } from '@engage/engine';
import { foreignKey, pgTable, primaryKey, text, unique, uuid } from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryOptions, resources } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';
import { tenantColumns } from './helpers/relations.ts';

const team = pgTable('team', { ...tenantColumns(), name: text() }, (t) => [
  primaryKey({ name: 'team_pkey', columns: [t.organisation_id, t.id] }),
]);
const member = pgTable('member', { ...tenantColumns(), name: text() }, (t) => [
  primaryKey({ name: 'member_pkey', columns: [t.organisation_id, t.id] }),
]);
const membership = pgTable(
  'membership',
  {
    organisation_id: uuid().notNull(),
    team_id: uuid().notNull(),
    member_id: uuid().notNull(),
    role: text(),
  },
  (t) => [
    primaryKey({ name: 'membership_pkey', columns: [t.organisation_id, t.team_id, t.member_id] }),
    foreignKey({
      name: 'membership_team_fkey',
      columns: [t.organisation_id, t.team_id],
      foreignColumns: [team.organisation_id, team.id],
    }),
    foreignKey({
      name: 'membership_member_fkey',
      columns: [t.organisation_id, t.member_id],
      foreignColumns: [member.organisation_id, member.id],
    }),
  ],
);
const passport = pgTable('passport', { ...tenantColumns(), member_id: uuid(), number: text() }, (t) => [
  primaryKey({ name: 'passport_pkey', columns: [t.organisation_id, t.id] }),
  unique('passport_member_key').on(t.organisation_id, t.member_id),
  foreignKey({
    name: 'passport_member_fkey',
    columns: [t.organisation_id, t.member_id],
    foreignColumns: [member.organisation_id, member.id],
  }),
]);

const custom = [
  defineResource({ name: 'team', table: team, verbs: ['GET'], orderable: ['name'] }),
  defineResource({ name: 'member', table: member, verbs: ['GET'], orderable: ['name'] }),
  defineResource({ name: 'membership', table: membership, verbs: ['GET'] }),
  defineResource({ name: 'passport', table: passport, verbs: ['GET'], orderable: ['number'] }),
];

const DDL = `
  CREATE TABLE team (id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL, name text,
    PRIMARY KEY (organisation_id, id));
  CREATE TABLE member (id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL, name text,
    PRIMARY KEY (organisation_id, id));
  CREATE TABLE membership (organisation_id uuid NOT NULL, team_id uuid NOT NULL, member_id uuid NOT NULL, role text,
    PRIMARY KEY (organisation_id, team_id, member_id),
    CONSTRAINT membership_team_fkey FOREIGN KEY (organisation_id, team_id) REFERENCES team (organisation_id, id),
    CONSTRAINT membership_member_fkey FOREIGN KEY (organisation_id, member_id)
      REFERENCES member (organisation_id, id));
  CREATE TABLE passport (id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL, member_id uuid, number text,
    PRIMARY KEY (organisation_id, id), CONSTRAINT passport_member_key UNIQUE (organisation_id, member_id),
    CONSTRAINT passport_member_fkey FOREIGN KEY (organisation_id, member_id) REFERENCES member (organisation_id, id));`;

/** Who is in which team, in organisation A (B has its own look-alikes). */
const TEAMS = { Red: ['Ann', 'Ben'], Blue: ['Ben'], Green: [] as string[] } as const;

let t: TestApp;
let a: Organisation;
let b: Organisation;

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, ...custom] });
  await t.db.exec(DDL);
  a = await createOrganisation(t);
  b = await createOrganisation(t);
  const teamIds = await insertRows(
    t.db,
    'team',
    a.id,
    Object.keys(TEAMS).map((name) => ({ name })),
  );
  const [ann, ben, cat] = await insertRows(t.db, 'member', a.id, [{ name: 'Ann' }, { name: 'Ben' }, { name: 'Cat' }]);
  const byName: Record<string, string> = { Ann: ann!, Ben: ben!, Cat: cat! };
  const rows = Object.values(TEAMS).flatMap((names, i) =>
    names.map((name) => ({ team_id: teamIds[i], member_id: byName[name], role: 'player' })),
  );
  await insertRows(t.db, 'membership', a.id, rows);
  await insertRows(t.db, 'passport', a.id, [{ member_id: ann, number: 'P-ANN' }]);
  // Organisation B: a member of its own, joined (past the foreign keys) to A's Green team and
  // given A's Cat's passport number; none of it may show in A's answers, nor A's rows in B's.
  const [bob] = await insertRows(t.db, 'member', b.id, [{ name: 'Bob' }]);
  const green = teamIds[2]!;
  await t.db.transaction(async (tx) => {
    await tx.query('SET LOCAL session_replication_role = replica');
    await tx.query('INSERT INTO membership (organisation_id, team_id, member_id) VALUES ($1, $2, $3), ($1, $2, $4)', [
      b.id,
      green,
      bob!,
      cat!,
    ]);
    await tx.query('INSERT INTO passport (organisation_id, member_id, number) VALUES ($1, $2, $3)', [
      b.id,
      cat!,
      'P-B',
    ]);
  });
});
afterAll(() => t?.drop());

async function get(path: string, token = a.token) {
  const res = await t.call(path, token);
  const body = await res.json();
  return { status: res.status, body, range: res.headers.get('content-range') };
}

describe('relations the registry derives', () => {
  const registry = createRegistry([...resources, ...custom], registryOptions);
  const shapes = (name: string) =>
    registry
      .get(name)!
      .relations.map((r) => `${r.name}:${r.cardinality}:${r.foreignKey}`)
      .sort();

  it('many to many through a table whose key holds both references, both ways', () => {
    expect(shapes('team')).toEqual(['member:many:membership', 'membership:many:membership_team_fkey']);
    expect(shapes('member')).toEqual([
      'membership:many:membership_member_fkey',
      'passport:one:passport_member_fkey',
      'team:many:membership',
    ]);
  });

  it('one to one both ways when the reference is unique', () => {
    expect(shapes('passport')).toEqual(['member:one:passport_member_fkey']);
  });
});

describe('many to many', () => {
  it('embeds each team with its members through the junction, [] when none', async () => {
    const { status, body } = await get('/team?select=name,member(name)&order=name&member.order=name');
    expect(status).toBe(200);
    const expected = Object.entries(TEAMS)
      .map(([name, names]) => ({ name, member: [...names].sort().map((n) => ({ name: n })) }))
      .sort((x, y) => x.name.localeCompare(y.name));
    expect(body).toEqual(expected);
  });

  it('runs the other way, names the junction as a hint, and honours !inner and embed filters', async () => {
    const teamsOf = (who: string) =>
      Object.entries(TEAMS)
        .filter(([, names]) => (names as readonly string[]).includes(who))
        .map(([name]) => ({ name }))
        .sort((x, y) => x.name.localeCompare(y.name));
    const { body } = await get('/member?select=name,team!membership(name)&order=name&team.order=name');
    expect(body).toEqual(['Ann', 'Ben', 'Cat'].map((name) => ({ name, team: teamsOf(name) })));
    const red = await get('/member?select=name,team!inner(name)&team.name=eq.Red&order=name');
    expect(red.body).toEqual(TEAMS.Red.map((name) => ({ name, team: [{ name: 'Red' }] })));
  });

  it("never follows another organisation's junction rows, even to this organisation's own rows", async () => {
    const green = await get('/team?select=name,member(name)&name=eq.Green');
    expect(green.body).toEqual([{ name: 'Green', member: [] }]);
    const cat = await get('/member?select=name,team(name)&name=eq.Cat');
    expect(cat.body).toEqual([{ name: 'Cat', team: [] }]);
    const theirs = await get('/member?select=name,team(name)', b.token);
    expect(theirs.body).toEqual([{ name: 'Bob', team: [] }]);
  });

  it('counts members per team with an aggregate through the junction', async () => {
    const { body } = await get('/team?select=name,member(count)&order=name');
    expect(body).toEqual(
      Object.entries(TEAMS)
        .map(([name, names]) => ({ name, member: [{ count: names.length }] }))
        .sort((x, y) => x.name.localeCompare(y.name)),
    );
  });
});

describe('one to one', () => {
  it('embeds the unique referencing row as an object or null, never as an array', async () => {
    const { body } = await get('/member?select=name,passport(number)&order=name');
    expect(body).toEqual([
      { name: 'Ann', passport: { number: 'P-ANN' } },
      { name: 'Ben', passport: null },
      // B's passport row names A's Cat: it is B's, so Cat has none here.
      { name: 'Cat', passport: null },
    ]);
  });

  it('can be ordered by, as a to-one relation can', async () => {
    const { status, body } = await get('/member?select=name,passport()&order=passport(number).nullslast,name');
    expect(status).toBe(200);
    expect(body.map((m: { name: string }) => m.name)).toEqual(['Ann', 'Ben', 'Cat']);
  });
});
