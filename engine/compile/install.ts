/**
 * The database objects the engine's own statements need, created idempotently by
 * `engine.install()`: `engage_fail`, which a write's checks call to abort the statement; with custom
 * fields, `engage_parses`, which checks custom values inside a statement; with built-in tokens, their
 * table; with idempotency keys (on by default), theirs; with events, the outbox; with resources that
 * have changes, the change log and the triggers on their tables that fill it (compile/changes.ts).
 */
import type { Resource, Tenancy } from '../registry/index.ts';
import { CHANGE_LOG_TABLES, captureTriggers } from './changes.ts';
import { OUTBOX_INDEX, outboxTable } from './events.ts';
import { IDEMPOTENCY_INDEX, idempotencyTable } from './idempotency.ts';
import { ident } from './sql.ts';

/** What to install besides `engage_fail`. */
export interface InstallOptions {
  readonly tenancy: Tenancy | null;
  readonly customFields: boolean;
  /** Whether writes may send an Idempotency-Key: its table. */
  readonly idempotency: boolean;
  /** Whether writes record events: the outbox. */
  readonly events: boolean;
  /** The token table's name, when the engine has built-in tokens, and the table of tenants they belong to. */
  readonly tokens: { readonly table: string; readonly tenants: { table: string; key: string } | null } | null;
  /** The resources whose changes are streamed: their tables get capture triggers. */
  readonly changes: readonly Resource[];
}

/** Serialises installs (several processes may start at once), for the transaction it is taken in. */
export const INSTALL_LOCK = "SELECT pg_advisory_xact_lock(hashtext('engage.install'))";

/**
 * Aborts the current statement with SQLSTATE EN001 and a contract error code as its message. A write
 * statement calls it from its final SELECT when a check fails (a singular response that is not one
 * row, Prefer: max-affected, an unknown custom field), so the whole statement, data-modifying CTEs
 * included, rolls back in the same round trip (db/errors.ts turns it into the error).
 */
const FAIL = `CREATE OR REPLACE FUNCTION engage_fail(code text, detail text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'EN001', MESSAGE = code, DETAIL = coalesce(detail, '');
END
$$`;

/**
 * Whether text parses as a value of a type, without raising: custom-field values written by PATCH
 * on `*_details` are checked with it after a pattern the statement is given as a parameter (the one
 * bodies and imports are checked with, formats.ts), so a bad value is a validation problem of its
 * key instead of an aborted statement.
 */
const PARSES = `CREATE OR REPLACE FUNCTION engage_parses(value text, type regtype) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
BEGIN
  EXECUTE format('SELECT %L::%s', value, type);
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END
$$`;

/** The statements of an install, in order, to run in one transaction after INSTALL_LOCK. */
export function installStatements(options: InstallOptions): string[] {
  const statements = [FAIL];
  if (options.customFields) statements.push(PARSES);
  if (options.idempotency) statements.push(idempotencyTable(options.tenancy), IDEMPOTENCY_INDEX);
  if (options.events) statements.push(outboxTable(options.tenancy), OUTBOX_INDEX);
  if (options.changes.length > 0) {
    const tables = new Map(options.changes.map((r) => [r.table, r]));
    statements.push(...CHANGE_LOG_TABLES, ...[...tables.values()].flatMap(captureTriggers));
  }
  const { tenancy, tokens } = options;
  if (tokens !== null && tenancy !== null) {
    const table = ident(tokens.table);
    const tenant = ident(tenancy.column);
    // A tenant's deletion takes its tokens with it.
    const references = tokens.tenants
      ? ` REFERENCES ${ident(tokens.tenants.table)} (${ident(tokens.tenants.key)}) ON DELETE CASCADE`
      : '';
    // Tokens are shown once and stored only as their SHA-256 (tokens.ts).
    statements.push(
      `CREATE TABLE IF NOT EXISTS ${table} (` +
        `"id" uuid PRIMARY KEY DEFAULT gen_random_uuid(), ${tenant} ${tenancy.type.sql} NOT NULL${references},` +
        ' "name" text, "token_hash" text NOT NULL UNIQUE, "created_at" timestamptz NOT NULL DEFAULT now(),' +
        ' "expires_at" timestamptz, "revoked_at" timestamptz)',
      `CREATE INDEX IF NOT EXISTS ${ident(`${tokens.table}_${tenancy.noun}_idx`)} ON ${table} (${tenant})`,
    );
  }
  return statements;
}
