/**
 * A fresh, migrated database per test file: a new PostgreSQL database when DATABASE_URL is set
 * (dropped afterwards), otherwise a PGlite in a copy of the run's migrated data directory
 * (tests/helpers/pglite-template.ts). Runs never collide.
 */

import { randomBytes } from 'node:crypto';
import type { Engine } from '@engage/engine';
import postgres from 'postgres';
import { copyPgliteTemplate } from '../../engine/test/database.ts';
import { loadConfig } from '../../server/config.ts';
import { type OpenDatabase, openDatabase } from '../../server/database.ts';
import { engageEngine } from '../../server/engine.ts';

export interface TestDatabase {
  readonly db: OpenDatabase;
  /** The API's engine over it (server/engine.ts), for its tokens. */
  readonly engine: Engine;
  /** The URL of the test database, when on PostgreSQL (for spawning the CLI or a server). */
  readonly url: string | undefined;
  drop(): Promise<void>;
}

/**
 * The suite behind a transaction pooler or with read replicas (tests/scale/run.sh): DATABASE_PREPARE
 * as the server reads it, and TEST_READ_DATABASE_URL as READ_DATABASE_URL, the replicas' URLs then
 * naming each test's database (servers the tests spawn inherit the environment, but not that).
 */
const { DATABASE_PREPARE, READ_DATABASE_URL, READ_MAX_LAG_MS } = loadConfig({
  DATABASE_PREPARE: process.env.DATABASE_PREPARE,
  READ_DATABASE_URL: process.env.TEST_READ_DATABASE_URL,
  READ_MAX_LAG_MS: process.env.READ_MAX_LAG_MS,
  DATABASE_URL: process.env.DATABASE_URL,
});
const onDatabase = (urls: string, name: string) =>
  urls
    .split(',')
    .map((u) => Object.assign(new URL(u.trim()), { pathname: `/${name}` }).toString())
    .join(',');

/** A PostgreSQL server tests of the postgres.js port use even when the suite runs on PGlite (CI has one). */
export const LOCAL_POSTGRES = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** `postgres`: on PostgreSQL whatever DATABASE_URL says (LOCAL_POSTGRES). */
export async function createTestDatabase(options: { postgres?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = options.postgres ? LOCAL_POSTGRES : process.env.DATABASE_URL;
  if (!adminUrl) {
    const copy = copyPgliteTemplate();
    const db = await openDatabase({ PGLITE_DIR: copy.dir });
    await db.migrate();
    return {
      db,
      engine: engageEngine(db),
      url: undefined,
      async drop() {
        await db.close();
        copy.remove();
      },
    };
  }
  const name = `engage_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const db = await openDatabase({
    DATABASE_URL: url.toString(),
    DB_POOL_SIZE: 4,
    DATABASE_PREPARE,
    READ_DATABASE_URL: READ_DATABASE_URL && onDatabase(READ_DATABASE_URL, name),
    READ_MAX_LAG_MS,
  });
  await db.migrate();
  return {
    db,
    engine: engageEngine(db),
    url: url.toString(),
    async drop() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}
