/**
 * vitest's global setup for a run on PGlite: one data directory, created and migrated once, that each
 * test file copies instead of running initdb again (a few seconds each in WebAssembly, against under
 * one for the copy). The copies open through the same path as a server's PGLITE_DIR.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../../server/database.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated PGlite data directory to copy; unset on PostgreSQL. */
    pgliteTemplate: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', undefined);
    return undefined;
  }
  const root = mkdtempSync(join(tmpdir(), 'engage-pglite-template-'));
  const dir = join(root, 'data');
  // initdb here rather than in the child process openPglite spawns: vite's module runner, which runs
  // this file, has no import.meta.resolve.
  await (await PGlite.create(dir)).close();
  const db = await openDatabase({ PGLITE_DIR: dir });
  await db.migrate();
  await db.close();
  project.provide('pgliteTemplate', dir);
  return () => rmSync(root, { recursive: true, force: true });
}
