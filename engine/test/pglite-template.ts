/**
 * vitest's global setup for a run on PGlite: one data directory, initialised once, that each test
 * file copies instead of running initdb again (a few seconds each in WebAssembly, against under one
 * for the copy).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** An initialised PGlite data directory to copy; unset on PostgreSQL. */
    pgliteTemplate: string | undefined;
  }
}

export default async function setup(project: TestProject): Promise<(() => void) | undefined> {
  if (process.env.DATABASE_URL) {
    project.provide('pgliteTemplate', undefined);
    return undefined;
  }
  const root = mkdtempSync(join(tmpdir(), 'engine-pglite-template-'));
  await (await PGlite.create(join(root, 'data'))).close();
  project.provide('pgliteTemplate', join(root, 'data'));
  return () => rmSync(root, { recursive: true, force: true });
}
