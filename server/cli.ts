/**
 * What every CLI command (scripts/) does around its own work: reads the configuration, refuses an
 * embedded database a running server holds (PGlite serves one process; the token commands go
 * through the server's admin channel instead), opens the database, applies pending migrations,
 * runs the command and closes the database.
 */
import { randomUUID } from 'node:crypto';
import { type Config, loadConfig } from './config.ts';
import { type OpenDatabase, openDatabase } from './database.ts';
import { embeddedHolder, inUseMessage } from './embedded-lock.ts';

export async function withDatabase(run: (db: OpenDatabase, config: Config) => Promise<void>): Promise<void> {
  const config = loadConfig();
  const holder = config.DATABASE_URL ? null : embeddedHolder(config.PGLITE_DIR);
  if (holder !== null) {
    console.error(
      inUseMessage(config.PGLITE_DIR, holder, 'stop it first (PGlite serves one process), or use DATABASE_URL.'),
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

/** What `npm start` on PostgreSQL prints: the command that gives an organisation its first token. */
export const tokenHint = (): string =>
  'Get an API token (with the same DATABASE_URL): ' +
  `npm run token -- create --organisation ${randomUUID()} --name admin   (or: npx engage token create …)`;
