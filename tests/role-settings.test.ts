/**
 * Behind a transaction pooler (`prepare: false`) a connection sends no settings at its start and
 * wraps no statement in a transaction: the settings are the role's in its database
 * (engine/db/settings.ts), made by `engage migrate` and checked at start-up. Run on the local
 * PostgreSQL, connected directly as a pooled connection would be.
 */

import { randomBytes } from 'node:crypto';
import { connectPostgres, missingRoleSettings, setRoleSettings } from '@engage/engine/postgres';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ADMIN = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `engage_roles_${randomBytes(4).toString('hex')}`;
const admin = postgres(ADMIN, { max: 1, onnotice: () => {} });
const url = Object.assign(new URL(ADMIN), { pathname: `/${name}` }).toString();
const options = { statementTimeoutMs: 400, lockTimeoutMs: 250 };

beforeAll(async () => {
  await admin.unsafe(`CREATE DATABASE ${name}`);
});
afterAll(async () => {
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
});

describe('settings behind a transaction pooler', () => {
  it('are missing on a new database, named one by one', async () => {
    const db = connectPostgres(url, { prepare: false, ...options });
    try {
      expect(await missingRoleSettings(db, options)).toEqual(
        expect.arrayContaining(['statement_timeout is 0, not 400', 'lock_timeout is 0, not 250']),
      );
    } finally {
      await db.close();
    }
  });

  it('are the role defaults after setRoleSettings, on every connection opened later', async () => {
    const setter = connectPostgres(url, { prepare: false, poolSize: 1, ...options });
    await setRoleSettings(setter, options);
    // The session that made them has them too.
    expect(await missingRoleSettings(setter, options)).toEqual([]);
    await setter.close();

    const db = connectPostgres(url, { prepare: false, poolSize: 2, ...options });
    try {
      expect(await missingRoleSettings(db, options)).toEqual([]);
      // No transaction wraps a statement: the role's statement_timeout cancels it.
      await expect(db.query('SELECT pg_sleep(2)')).rejects.toMatchObject({ code: '57014' });
      // A statement of its own: the transaction began with it (after a BEGIN sent first, it would not).
      const [row] = await db.query<{ in_transaction: boolean }>(
        'SELECT now() <> statement_timestamp() AS in_transaction',
      );
      expect(row!.in_transaction).toBe(false);
    } finally {
      await db.close();
    }
  });

  it('are made by processes starting at once, each in turn', async () => {
    const setters = Array.from({ length: 6 }, () => connectPostgres(url, { prepare: false, poolSize: 1, ...options }));
    try {
      // Without the lock, concurrent updates of the role's settings fail: "tuple concurrently updated".
      for (let round = 0; round < 5; round++) {
        await Promise.all(setters.map((setter) => setRoleSettings(setter, options)));
      }
      expect(await missingRoleSettings(setters[0]!, options)).toEqual([]);
    } finally {
      await Promise.all(setters.map((setter) => setter.close()));
    }
  });

  it('leave other databases alone', async () => {
    const other = connectPostgres(ADMIN, { prepare: false, poolSize: 1, ...options });
    try {
      expect(await missingRoleSettings(other, options)).toContain('lock_timeout is 0, not 250');
    } finally {
      await other.close();
    }
  });
});
