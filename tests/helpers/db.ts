/**
 * A fresh, migrated database per test file: a new PostgreSQL database when DATABASE_URL is set
 * (dropped afterwards), an in-memory PGlite otherwise. Runs never collide.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { type OpenDatabase, openDatabase } from '../../server/database.ts';

export interface TestDatabase {
  readonly db: OpenDatabase;
  /** The URL of the test database, when on PostgreSQL (for spawning the CLI or a server). */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

/** A PostgreSQL server tests of the postgres.js port use even when the suite runs on PGlite (CI has one). */
const LOCAL_POSTGRES = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `postgres`: on PostgreSQL whatever DATABASE_URL says (LOCAL_POSTGRES). */
export async function createTestDatabase(options: { postgres?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = options.postgres ? LOCAL_POSTGRES : process.env.DATABASE_URL;
  if (!adminUrl) {
    const db = await openDatabase({ PGLITE_DIR: undefined });
    await db.migrate();
    return { db, url: undefined, drop: () => db.close() };
  }
  const name = `engage_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({ DATABASE_URL: url.toString(), DB_POOL_SIZE: 4 });
  await db.migrate();
  return {
    db,
    url: url.toString(),
    async drop() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}
