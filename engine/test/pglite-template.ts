/**
 * vitest's global setup for a run on PGlite: one data directory, initialised once, that each test
 * file copies instead of running initdb again (a few seconds each in WebAssembly, against under one
 * for the copy, test/database.ts). A host's tests may add to it once (`prepare`), e.g. their migrations.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PGlite data directory to copy; unset on PostgreSQL. */
    pgliteTemplate: string | undefined;
  }
}

/** Provides the template's directory, made and `prepare`d once; returns the teardown that removes it. */
export async function providePgliteTemplate(
  project: TestProject,
  prepare: (dir: string) => Promise<void> = async () => {},
): Promise<(() => void) | undefined> {
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', undefined);
    return undefined;
  }
  const root = mkdtempSync(join(tmpdir(), 'pglite-template-'));
  const dir = join(root, 'data');
  // initdb here rather than in a child process as openPglite does: vite's module runner, which runs
  // this file, has no import.meta.resolve.
  await (await PGlite.create(dir)).close();
  await prepare(dir);
  project.provide('pgliteTemplate', dir);
  return () => rmSync(root, { recursive: true, force: true });
}

export default (project: TestProject) => providePgliteTemplate(project);
