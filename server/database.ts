/**
 * Opens the configured database (postgres.js or PGlite). `migrate()` applies the committed
 * drizzle-kit migrations of the application's tables, on their own connection (drizzle changes a
 * client's type parsers), then installs what the engine itself needs (its functions, the token table),
 * and says which migrations it applied.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Database } from '@engage/engine';
import { openPglite } from '@engage/engine/pglite';
import { connectPostgres, missingRoleSettings, setRoleSettings, withReplicas } from '@engage/engine/postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { embeddedDirectory } from './embedded-lock.ts';
import { engageEngine } from './engine.ts';

export const MIGRATIONS = fileURLToPath(new URL('../drizzle', import.meta.url));

export interface DatabaseConfig {
  readonly DATABASE_URL?: string | undefined;
  /** undefined: in memory (tests). */
  readonly PGLITE_DIR?: string | undefined;
  readonly DB_POOL_SIZE?: number;
  readonly STATEMENT_TIMEOUT_MS?: number;
  readonly LOCK_TIMEOUT_MS?: number;
  readonly DB_QUEUE_TIMEOUT_MS?: number;
  readonly DB_QUEUE_MAX?: number;
  readonly DB_ORGANISATION_CONNECTIONS?: number | undefined;
  /** false behind a transaction pooler: no prepared statements and no session state. */
  readonly DATABASE_PREPARE?: boolean;
  /** Replicas for reads, comma-separated. */
  readonly READ_DATABASE_URL?: string | undefined;
  readonly READ_MAX_LAG_MS?: number;
}

/** Migrations applied to the database, and those the code ships. */
export interface MigrationState {
  readonly applied: number;
  readonly latest: number;
}

export type OpenDatabase = Database & {
  /** Applies pending migrations; returns the tags of those it applied (drizzle-kit's names, e.g. 0000_init). */
  migrate(): Promise<string[]>;
  migrations(): Promise<MigrationState>;
  /** Behind a pooler, the settings the role lacks in this database, as sentences; none otherwise. */
  missingSettings(): Promise<string[]>;
};

/** A migration the code ships: its tag, and its time, which drizzle records as applied. */
interface Shipped {
  readonly tag: string;
  readonly when: number;
}

/** The migrations the code ships (drizzle-kit's journal), read once. */
let shipped: readonly Shipped[] | undefined;
const shippedMigrations = () => {
  shipped ??= (JSON.parse(readFileSync(`${MIGRATIONS}/meta/_journal.json`, 'utf8')) as { entries: Shipped[] }).entries;
  return shipped;
};

/** How many migrations drizzle recorded as applied (none before the first). */
async function migrationState(db: Database): Promise<MigrationState> {
  const rows = await db
    .query<{ n: number }>('SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations')
    .catch(() => [{ n: 0 }]);
  return { applied: Number(rows[0]?.n ?? 0), latest: shippedMigrations().length };
}

/** The times of the migrations drizzle recorded as applied (none before the first). */
const APPLIED = 'SELECT created_at::text AS at FROM drizzle.__drizzle_migrations';
const appliedTimes = (rows: Promise<ReadonlyArray<{ at: string }>>) =>
  rows.then(
    (found) => new Set(found.map((r) => r.at)),
    () => new Set<string>(),
  );

/**
 * Migrates with `run`, reading drizzle's table through `read` before and after, as its migrator does
 * not say what it applied: the tags of those it did, in order.
 */
async function tracked(read: () => Promise<ReadonlyArray<{ at: string }>>, run: () => Promise<unknown>) {
  const before = await appliedTimes(read());
  await run();
  const after = await appliedTimes(read());
  return shippedMigrations()
    .filter((m) => after.has(String(m.when)) && !before.has(String(m.when)))
    .map((m) => m.tag);
}

/**
 * Applies the migrations, one migrator at a time across processes (a server and the token CLI may
 * start together). The lock is a transaction's, held on a connection of its own while the migrator
 * runs on another: a session's lock taken through a transaction pooler would stay on whichever
 * backend took it, and never be released.
 */
async function migrateOn(url: string): Promise<string[]> {
  const open = () => postgres(url, { max: 1, prepare: false, fetch_types: false, onnotice: () => {} });
  const [lock, client] = [open(), open()];
  try {
    return await lock.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtext('engage.migrate'))`;
      // Read under the lock: what another process applied meanwhile is not this one's.
      return tracked(
        () => client.unsafe<Array<{ at: string }>>(APPLIED),
        () => migratePostgres(drizzlePostgres(client), { migrationsFolder: MIGRATIONS }),
      );
    });
  } finally {
    await Promise.all([lock.end({ timeout: 5 }), client.end({ timeout: 5 })]);
  }
}

/** Swallows PostgreSQL's insufficient_privilege; rethrows anything else. */
const notPermitted = (error: unknown) => {
  if ((error as { code?: unknown } | null)?.code !== '42501') throw error;
};

export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  const options = { poolSize: config.DB_POOL_SIZE, statementTimeoutMs: config.STATEMENT_TIMEOUT_MS };
  const url = config.DATABASE_URL;
  if (url) {
    const connect = (to: string) =>
      connectPostgres(to, {
        ...options,
        lockTimeoutMs: config.LOCK_TIMEOUT_MS,
        queueTimeoutMs: config.DB_QUEUE_TIMEOUT_MS,
        queueMax: config.DB_QUEUE_MAX,
        laneLimit: config.DB_ORGANISATION_CONNECTIONS,
        prepare: config.DATABASE_PREPARE ?? true,
      });
    const replicas = (config.READ_DATABASE_URL ?? '')
      .split(',')
      .map((u) => u.trim())
      .filter(Boolean);
    const db = replicas.length
      ? withReplicas(connect(url), replicas.map(connect), { maxLagMs: config.READ_MAX_LAG_MS ?? 1000 })
      : connect(url);
    const pooled = config.DATABASE_PREPARE === false;
    const settings = { statementTimeoutMs: config.STATEMENT_TIMEOUT_MS, lockTimeoutMs: config.LOCK_TIMEOUT_MS };
    return {
      ...db,
      migrations: () => migrationState(db),
      migrate: async () => {
        // First, so that the server connections a pooler opens for the migration start with them.
        // A role that may not alter itself is told at start-up (missingSettings).
        if (pooled) await setRoleSettings(db, settings).catch(notPermitted);
        const applied = await migrateOn(url);
        await engageEngine(db).install();
        return applied;
      },
      missingSettings: async () => (pooled ? missingRoleSettings(db, settings) : []),
    };
  }
  if (config.PGLITE_DIR !== undefined) embeddedDirectory(config.PGLITE_DIR);
  const db = await openPglite(config.PGLITE_DIR, options);
  return {
    ...db,
    migrations: () => migrationState(db),
    missingSettings: async () => [],
    migrate: async () => {
      const applied = await tracked(
        () => db.query<{ at: string }>(APPLIED),
        () => migratePglite(drizzlePglite(db.pg), { migrationsFolder: MIGRATIONS }),
      );
      await engageEngine(db).install();
      return applied;
    },
  };
}
