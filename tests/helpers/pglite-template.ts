/**
 * vitest's global setup for a run on PGlite: the engine's template data directory
 * (engine/test/pglite-template.ts) with the application's migrations applied, copied by each test
 * file (tests/helpers/db.ts).
 */
import type { TestProject } from 'vitest/node';
import { providePgliteTemplate } from '../../engine/test/pglite-template.ts';
import { openDatabase } from '../../server/database.ts';

export default (project: TestProject) =>
  providePgliteTemplate(project, async (dir) => {
    const db = await openDatabase({ PGLITE_DIR: dir });
    await db.migrate();
    await db.close();
  });
