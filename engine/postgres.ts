/**
 * `@engage/engine/postgres`: the database port on PostgreSQL through postgres.js, behind PgBouncer
 * (`prepare: false`, its settings the role's: setRoleSettings) or not, and read replicas beside a primary.
 * @example
 * import { connectPostgres, withReplicas } from '@engage/engine/postgres';
 * const primary = connectPostgres(process.env.DATABASE_URL);
 * const db = withReplicas(primary, [connectPostgres(process.env.REPLICA_URL)], { maxLagMs: 1000 });
 */
export { connectPostgres, type PostgresOptions } from './db/postgres.ts';
export { type ReplicaOptions, withReplicas } from './db/replicas.ts';
export { missingRoleSettings, type SettingsOptions, setRoleSettings } from './db/settings.ts';
