/**
 * What every CLI command (scripts/) does around its own work: reads the configuration, refuses an
 * embedded database a running server holds (PGlite serves one process), opens the database,
 * applies pending migrations, runs the command and closes the database.
 */
import { type Config, loadConfig } from './config.ts';
import { type OpenDatabase, openDatabase } from './database.ts';
import { embeddedHolder } from './embedded-lock.ts';

export async function withDatabase(run: (db: OpenDatabase, config: Config) => Promise<void>): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
    console.error(
      `The embedded database in ${config.PGLITE_DIR} is in use by a running server; stop it first ` +
        '(PGlite serves one process), or run against PostgreSQL with DATABASE_URL.',
    );
    process.exit(1);
  }
  const db = await openDatabase(config);
  try {
    await db.migrate();
    await run(db, config);
  } finally {
    await db.close();
  }
}
