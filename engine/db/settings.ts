/**
 * The settings every PostgreSQL connection of the pool runs with, and how they reach the server.
 *
 * Connected directly, a connection sends them at its start (startup parameters). Behind a
 * transaction pooler it may not: PgBouncer refuses startup parameters it does not track, and a
 * server connection serves other clients between two transactions. There they are the role's
 * defaults in its database (`ALTER ROLE CURRENT_USER IN DATABASE ... SET`), which every server
 * connection takes at its own start, and so does every other session of that role in that
 * database: Engage should have a role of its own. `setRoleSettings` makes them (`engage migrate`
 * behind a pooler), and `missingRoleSettings` tells which a connection lacks (checked at start-up).
 */
import { PLAN_CACHE_MODE, PLANNER_SETTINGS, type Queryable } from './port.ts';

/** How long a write waits for a row lock before it fails with 503 (lock_timeout), in ms. */
export const LOCK_TIMEOUT_MS = 3000;

export interface SettingsOptions {
  /** statement_timeout in ms; 0 for none. */
  readonly statementTimeoutMs?: number | undefined;
  /** lock_timeout in ms; 0 for none. */
  readonly lockTimeoutMs?: number | undefined;
}

/** Setting name to value, as pg_settings shows it (milliseconds without a unit). */
export function connectionSettings(options: SettingsOptions): Record<string, string> {
  return {
    statement_timeout: String(Math.trunc(options.statementTimeoutMs ?? 0)),
    lock_timeout: String(Math.trunc(options.lockTimeoutMs ?? LOCK_TIMEOUT_MS)),
    plan_cache_mode: PLAN_CACHE_MODE,
    ...PLANNER_SETTINGS,
  };
}

/** A value fit to stand in SQL text: the configuration's whole numbers and the constants of port.ts. */
const SETTING_VALUE = /^\w+$/;

/**
 * Makes the settings the role's defaults in this database and this session's: connections opened
 * after it start with them. A pooler's server connections opened before keep what they had until
 * they are closed (PgBouncer: `RECONNECT` on its console, or `server_lifetime`).
 */
export async function setRoleSettings(db: Pick<Queryable, 'query'>, options: SettingsOptions): Promise<void> {
  const settings = Object.entries(connectionSettings(options));
  for (const [, value] of settings) if (!SETTING_VALUE.test(value)) throw new Error(`bad setting value ${value}`);
  const alter = settings
    .map(
      ([name, value]) => `EXECUTE format('ALTER ROLE CURRENT_USER IN DATABASE %I SET ${name} = %L', db, '${value}');`,
    )
    .join(' ');
  // Two processes starting at once would update the role's settings concurrently, which PostgreSQL
  // refuses ("tuple concurrently updated"): the lock, held to the statement's commit, takes them in turn.
  await db.query(
    `DO $$ DECLARE db text := current_database(); BEGIN PERFORM pg_advisory_xact_lock(hashtext('engage.settings')); ${alter} END $$`,
  );
  await db.query(`SELECT ${settings.map(([name, value]) => `set_config('${name}', '${value}', false)`).join(', ')}`);
}

/** The settings the connection `db` answers on lacks, each as `name is X, not Y`; none when all hold. */
export async function missingRoleSettings(db: Pick<Queryable, 'query'>, options: SettingsOptions): Promise<string[]> {
  const expected = connectionSettings(options);
  const rows = await db.query<{ name: string; setting: string }>(
    'SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])',
    [`{${Object.keys(expected).join(',')}}`],
  );
  const actual = new Map(rows.map((row) => [row.name, row.setting]));
  return Object.entries(expected).flatMap(([name, value]) =>
    actual.get(name) === value ? [] : [`${name} is ${actual.get(name) ?? 'unknown'}, not ${value}`],
  );
}
