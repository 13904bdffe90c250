/**
 * What every CLI command (scripts/) does around its own work: reads the configuration, refuses an
 * embedded database a running server holds (PGlite serves one process; the token and organisation
 * commands go through the server's admin channel instead: withAdmin), opens the database, applies
 * pending migrations (logging each, as the server does at its start), runs the command and closes
 * the database.
 */
import { randomUUID } from 'node:crypto';
import { adminChannel } from './admin-socket.ts';
import { type Config, loadConfig } from './config.ts';
import { type OpenDatabase, openDatabase } from './database.ts';
import { embeddedHolder, inUseMessage } from './embedded-lock.ts';
import { type Admin, adminOperations } from './engine.ts';
import { createLogger, type Logger } from './logger.ts';

/** Applies pending migrations, logging each one applied (info): drizzle's migrator does not say. */
export async function migrate(db: OpenDatabase, log: Logger): Promise<void> {
  for (const migration of await db.migrate()) log.info({ migration }, `applied migration ${migration}`);
}

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
    await migrate(db, createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT }));
    await run(db, config);
  } finally {
    await db.close();
  }
}

/**
 * Runs the token and organisation commands' work: through the admin channel of the server holding
 * the embedded database, or on the database itself.
 */
export async function withAdmin(run: (admin: Admin) => Promise<void>): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
    try {
      await run(adminChannel(config.PGLITE_DIR));
    } catch (error) {
      console.error(`The server holding ${config.PGLITE_DIR} did not do it: ${(error as Error).message}`);
      process.exitCode = 1;
    }
    return;
  }
  await withDatabase((db) => run(adminOperations(db)));
}

/** What `npm start` on PostgreSQL prints: the command that gives an organisation its first token. */
export const tokenHint = (): string =>
  'Get an API token (with the same DATABASE_URL): ' +
  `npm run token -- create --organisation ${randomUUID()} --name admin   (or: npx engage token create …)`;
