/**
 * A built-in token's tenant, known after its first statement: later statements compare every
 * tenant table with the tenant's parameter and run in the tenant's lane, and the token is still
 * checked in each statement (revocation and expiry at once; a scope naming another tenant fails).
 */
import { type Database, type Engine, type RawRequest, type Scope, tokenScope } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

interface Seen {
  readonly text: string;
  readonly params: readonly (string | null)[];
  readonly lane: string | undefined;
}

/** The database, recording each statement with its parameters and lane (reads too: no replicas). */
function watched(db: Database, seen: Seen[]): Database {
  return {
    kind: db.kind,
    query: (text, params = [], lane) => {
      seen.push({ text, params, lane });
      return db.query(text, params, lane);
    },
    transaction: (fn, lane) => db.transaction(fn, lane),
    exec: (text) => db.exec(text),
    ping: () => db.ping(),
    close: async () => {},
  };
}

const get = (query: string): RawRequest => ({
  method: 'GET',
  resource: 'contact',
  query,
  header: () => null,
  body: null,
});

describe('a token whose tenant the engine knows', () => {
  let database: TestDatabase;
  let org: Organisation;
  let other: Organisation;
  let engine: Engine;
  const seen: Seen[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    org = await createOrganisation(database);
    other = await createOrganisation(database);
    await insertRows(database.db, 'contact', org.id, [{ display_name: 'Ada' }]);
    await insertRows(database.db, 'contact', other.id, [{ display_name: 'Bea' }]);
    await insertRows(database.db, 'calendar', other.id, [{ name: 'Desk' }]);
    engine = engageEngine(watched(database.db, seen));
  });

  afterAll(async () => {
    await database?.drop();
  });

  const names = async (scope: Scope, query = 'select=display_name') => {
    const response = await engine.handle(get(query), scope);
    return JSON.parse(response.body as string) as Array<{ display_name: string }>;
  };

  it('reads the token table for its first statement, then passes the tenant as $1 in its lane', async () => {
    const scope = tokenScope(org.token)!;
    seen.length = 0;
    expect(await names(scope)).toEqual([{ display_name: 'Ada' }]);
    expect(seen[0]!.text).toMatch(/^WITH scope AS \(SELECT "organisation_id" FROM "api_token"/);
    expect(seen[0]!.lane).toBe(scope.tokenHash);

    seen.length = 0;
    expect(await names(scope, 'select=display_name,id')).toHaveLength(1);
    const [second] = seen;
    expect(second!.params.slice(0, 2)).toEqual([org.id, scope.tokenHash]);
    expect(second!.text).toMatch(/^WITH scope AS \(SELECT \$1::text::uuid AS "organisation_id" FROM "api_token"/);
    expect(second!.text).toContain('t."organisation_id" = $1::text::uuid');
    expect(second!.lane).toBe(org.id);
  });

  it('learns the tenant from a write too, and writes in it', async () => {
    const fresh = await createOrganisation(database);
    const scope = tokenScope(fresh.token)!;
    const created = await engine.handle(
      {
        method: 'POST',
        resource: 'calendar',
        query: '',
        header: (name) => (name === 'content-type' ? 'application/json' : null),
        body: JSON.stringify({ name: 'Front desk' }),
      },
      scope,
    );
    expect(created.status).toBe(201);
    seen.length = 0;
    const calendars = await engine.handle({ ...get('select=name'), resource: 'calendar' }, scope);
    expect(JSON.parse(calendars.body as string)).toEqual([{ name: 'Front desk' }]);
    expect(seen[0]!.params[0]).toBe(fresh.id);
  });

  it('stops working at once when revoked, though its tenant is known', async () => {
    const scope = tokenScope(other.token)!;
    expect(await names(scope)).toEqual([{ display_name: 'Bea' }]);
    expect(await names(scope)).toEqual([{ display_name: 'Bea' }]);
    const [info] = await engine.tokens!.list(other.id);
    expect(await engine.tokens!.revoke(info!.id)).toBe(true);
    await expect(engine.handle(get('select=display_name'), scope)).rejects.toMatchObject({ status: 401 });
    await expect(
      engine.handle(
        {
          method: 'DELETE',
          resource: 'calendar',
          query: '',
          header: () => null,
          body: null,
        },
        scope,
      ),
    ).rejects.toMatchObject({ status: 401 });
    const rows = await database.db.query('SELECT name FROM calendar WHERE organisation_id = $1', [other.id]);
    expect(rows).toEqual([{ name: 'Desk' }]);
  });

  it('refuses a scope that pairs a token with another tenant', async () => {
    const { tokenHash } = tokenScope(org.token)!;
    const third = await createOrganisation(database);
    await insertRows(database.db, 'contact', third.id, [{ display_name: 'Dee' }]);
    await expect(engine.handle(get('select=display_name'), { tokenHash, tenant: third.id })).rejects.toMatchObject({
      status: 401,
    });
    expect(await engine.authorize({ tokenHash, tenant: third.id })).toBeNull();
    expect(await engine.authorize({ tokenHash, tenant: org.id })).toBe(org.id);
  });
});
