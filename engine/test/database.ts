/**
 * A database of a test file's own: PGlite in a copy of the run's initialised data directory
 * (test/pglite-template.ts) by default, or with DATABASE_URL a new PostgreSQL database on that server (dropped afterwards), so runs never collide. `tables` is the
 * SQL that makes the test's schema, run once.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { inject } from 'vitest';
import type { Database } from '../db/port.ts';
import { createEngine, type Engine, type EngineOptions } from '../engine.ts';
import { openPglite } from '../pglite.ts';
import { connectPostgres } from '../postgres.ts';

export interface TestDatabase {
  readonly db: Database;
  drop(): Promise<void>;
}

export async function testDatabase(tables = ''): Promise<TestDatabase> {
  const server = process.env.DATABASE_URL;
  if (!server) {
    const template = inject('pgliteTemplate');
    if (!template) throw new Error('no PGlite template: vitest.config.ts names test/pglite-template.ts');
    const root = mkdtempSync(join(tmpdir(), 'engine-test-'));
    cpSync(template, join(root, 'data'), { recursive: true });
    const db = await openPglite(join(root, 'data'));
    if (tables) await db.exec(tables);
    return {
      db,
      async drop() {
        await db.close();
        rmSync(root, { recursive: true, force: true });
      },
    };
  }
  const name = `engine_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const db = connectPostgres(Object.assign(new URL(server), { pathname: `/${name}` }).toString(), { poolSize: 4 });
  if (tables) await db.exec(tables);
  return {
    db,
    async drop() {
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    },
  };
}

/** A database of the test file's own with `tables`, and an engine over it, `install()` run. */
export async function installedEngine(
  tables: string,
  options: Omit<EngineOptions, 'db'>,
): Promise<{ t: TestDatabase; engine: Engine }> {
  const t = await testDatabase(tables);
  const engine = createEngine({ ...options, db: t.db });
  await engine.install();
  return { t, engine };
}
