/**
 * What every CLI command (scripts/) does around its own work: reads the configuration, refuses an
 * embedded database a running server holds (PGlite serves one process; the token and organisation
 * commands go through the server's admin channel instead: withAdmin), opens the database, applies
 * pending migrations (logging each, as the server does at its start), runs the command and closes
 * the database.
 */
import { InvalidArgumentError } from 'commander';
import { adminChannel } from './admin-socket.ts';
import { type Config, loadConfig } from './config.ts';
import { type OpenDatabase, openDatabase } from './database.ts';
import { embeddedHolder, inUseMessage } from './embedded-lock.ts';
import { type Admin, adminOperations } from './engine.ts';
import { createLogger, type Logger } from './logger.ts';
import type { Whereabouts } from './problems.ts';

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
    await migrate(db, createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT, sync: true }));
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

/** What start-up prints on a database with no organisation, where it seeds no demo (PostgreSQL). */
export const firstOrganisationHint = (): string =>
  [
    'This database has no organisation yet. With the same DATABASE_URL, create one and a token for it:',
    '  npx engage organisation create --name "Acme"                  # prints its id last',
    '  npx engage token create --organisation <its id> --name admin   # prints the token last',
    'or the demo organisation, with sample data and a token: npx engage seed',
  ].join('\n');

/** The settings a failure is told against (problems.ts), or none when they are what failed. */
export function whereabouts(): Whereabouts {
  try {
    return loadConfig();
  } catch {
    return {};
  }
}

/** The server's own URL, from HOST and PORT, as it names itself (an IPv6 address in brackets). */
export function localBase(config: Pick<Config, 'HOST' | 'PORT'> = loadConfig()): string {
  const host = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  return `http://${host}:${config.PORT}`;
}

/** A URL option's value (commander's parser): an absolute http(s) URL, without a trailing slash. */
export function serverUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new InvalidArgumentError(`must be an absolute http:// or https:// URL, not "${value}".`);
  return value.replace(/\/+$/, '');
}
