/**
 * A database of a test file's own: PGlite in a copy of the run's initialised data directory
 * (test/pglite-template.ts) by default, or with DATABASE_URL a new PostgreSQL database on that
 * server (dropped afterwards), so runs never collide. `tables` is the SQL that makes the test's
 * schema, run once.
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

/** A test file's copy of the data directory its run's global setup provides, and its removal. */
export function copyPgliteTemplate(): { readonly dir: string; remove(): void } {
  const template = inject('pgliteTemplate');
  if (!template) throw new Error('no PGlite template: the vitest config names no pglite-template global setup');
  const root = mkdtempSync(join(tmpdir(), 'pglite-test-'));
  cpSync(template, join(root, 'data'), { recursive: true });
  return { dir: join(root, 'data'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

export async function testDatabase(tables = ''): Promise<TestDatabase> {
  const server = process.env.DATABASE_URL;
  if (!server) {
    const copy = copyPgliteTemplate();
    const db = await openPglite(copy.dir);
    if (tables) await db.exec(tables);
    return {
      db,
      async drop() {
        await db.close();
        copy.remove();
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
