/**
 * Idempotency keys' table and statements (handle/idempotency.ts). A key is taken under a
 * transaction-level advisory lock, so a second request with it while the first runs is told so at
 * once instead of waiting behind it; the key's row, holding what the first request's write gave,
 * commits with that write or not at all, so a first request that never commits (a crash, a cut
 * connection) leaves no trace and its retry runs afresh.
 *
 * An engine write does all of it in its own statement (`idempotentWrite`): the write runs only when
 * the lock is taken and nothing is stored, and the statement's own result row is stored with the
 * key. A host's write takes the key in a transaction of its own (`compileClaim`), runs, and stores
 * its response there (`compileSave`).
 */
import type { Tenancy } from '../registry/index.ts';
import { ownerType, type Scope, type Scoping, scopeCte } from './scope.ts';
import { BOUND, type CompiledStatement, Params } from './sql.ts';

/** `result`: what the first request stored, JSON text (the write statement's row, or a host's response). */
export const idempotencyTable = (tenancy: Tenancy | null) =>
  `CREATE TABLE IF NOT EXISTS "engage_idempotency" ("tenant" ${ownerType(tenancy)} NOT NULL, "key" text NOT NULL,` +
  ' "fingerprint" text NOT NULL, "expires_at" timestamptz NOT NULL, "result" text, PRIMARY KEY ("tenant", "key"))';

/** The sweep's index: expired keys are found without reading live ones. */
export const IDEMPOTENCY_INDEX =
  'CREATE INDEX IF NOT EXISTS "engage_idempotency_expires_idx" ON "engage_idempotency" ("expires_at")';

/** A request's key, what makes its retries the same request, and how long the key is kept. */
export interface IdempotencyKey {
  readonly key: string;
  readonly fingerprint: string;
  readonly hours: number;
}

/** What taking a key found: whether another request holds it, and what an earlier one stored. */
export interface KeyState {
  /** False when another transaction holds the key's lock: its request is still running. */
  __locked: boolean | null;
  __fingerprint: string | null;
  __stored: string | null;
}

/** Whether this request may write: it holds the key's lock, and no earlier request stored a result. */
const GO = '(SELECT "locked" FROM lock) AND NOT EXISTS (SELECT FROM stored)';

/**
 * The CTEs after `scope` every use of a key starts with: its owner (`column` of the scope, the
 * tenant; '' without tenancy), its lock, and what it stored.
 */
function keyCtes(column: string | null, k: string): string {
  return (
    `owner AS (SELECT ${column ?? "''"} AS "tenant" FROM scope),` +
    ' lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended(' +
    `'engage.idempotency ' || o."tenant"::text || ' ' || ${k}, 0)) AS "locked" FROM owner o),` +
    ' stored AS (SELECT s."fingerprint", s."result" FROM "engage_idempotency" s' +
    ` WHERE s."tenant" = (SELECT "tenant" FROM owner) AND s."key" = ${k} AND s."expires_at" > now())`
  );
}

/** Keeps `result` (an SQL expression) with the key, taking over an expired one; `when` gates it. */
function keep(params: Params, key: IdempotencyKey, k: string, result: string, when: string): string {
  const f = params.add(key.fingerprint, 'text', BOUND.fingerprint);
  const h = params.add(String(key.hours), 'int4');
  return (
    'INSERT INTO "engage_idempotency" AS i ("tenant", "key", "fingerprint", "expires_at", "result")' +
    ` SELECT o."tenant", ${k}, ${f}, now() + make_interval(hours => ${h}), ${result} FROM owner o WHERE ${when}` +
    ' ON CONFLICT ("tenant", "key") DO UPDATE SET "fingerprint" = EXCLUDED."fingerprint",' +
    ' "expires_at" = EXCLUDED."expires_at", "result" = EXCLUDED."result" WHERE i."expires_at" <= now()'
  );
}

/** What the columns of KeyState are, over the CTEs of keyCtes. */
const STATE =
  '(SELECT "locked" FROM lock) AS "__locked", (SELECT "fingerprint" FROM stored) AS "__fingerprint",' +
  ' (SELECT "result" FROM stored) AS "__stored"';

/**
 * A write statement made idempotent: `ctes` follow `scope`, the write goes ahead only where `go`
 * holds, and `finish` wraps the statement's final SELECT so that its row is stored with the key
 * (read back as KeyState's columns beside it). A key another request took meanwhile aborts the
 * statement (IDEMPOTENCY_KEY_IN_PROGRESS), its write with it.
 */
export function idempotentWrite(params: Params, column: string | null, key: IdempotencyKey) {
  const k = params.add(key.key, 'text', BOUND.key);
  return {
    ctes: `${keyCtes(column, k)},`,
    go: GO,
    finish: (select: string) =>
      `, result AS (${select}),` +
      ` kept AS (${keep(params, key, k, '(SELECT row_to_json(r)::text FROM result r)', GO)} RETURNING 1)` +
      ` SELECT r.*, ${STATE},` +
      ` CASE WHEN ${GO} AND NOT EXISTS (SELECT FROM kept) THEN engage_fail('IDEMPOTENCY_KEY_IN_PROGRESS', '') END` +
      ' AS "__kept" FROM result r',
  };
}

/** What a host's claim finds: KeyState, whether the scope is valid, and whether this request took the key. */
export interface ClaimRow extends KeyState {
  authorized: number;
  /** The scope's tenant as text ('' without tenancy): the key's owner. */
  tenant: string | null;
  claimed: number;
}

/**
 * Takes `key` for a host's write in the scope's tenant: inserts it (or takes over an expired one)
 * when its lock is free and nothing is stored, else reads what it holds. One statement; the scope
 * checks the token as every statement does.
 */
export function compileClaim(scope: Scope | undefined, scoping: Scoping, key: IdempotencyKey): CompiledStatement {
  const params = new Params();
  const { cte, column } = scopeCte(scope, params, scoping);
  const k = params.add(key.key, 'text');
  const text =
    `${cte}, ${keyCtes(column, k)}, claim AS (${keep(params, key, k, 'NULL', GO)} RETURNING 1)` +
    ' SELECT (SELECT count(*) FROM owner)::int AS "authorized", (SELECT "tenant"::text FROM owner) AS "tenant",' +
    ` (SELECT count(*) FROM claim)::int AS "claimed", ${STATE}`;
  return { text, params: params.values };
}

/** Stores a host write's response with the key its transaction claimed. */
export function compileSave(
  tenancy: Tenancy | null,
  tenant: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: string | null },
): CompiledStatement {
  const params = new Params();
  const text =
    `UPDATE "engage_idempotency" SET "result" = ${params.add(JSON.stringify(response), 'text')}` +
    ` WHERE "tenant" = ${params.add(tenant, ownerType(tenancy))} AND "key" = ${params.add(key, 'text')}`;
  return { text, params: params.values };
}

/**
 * Forgets up to `batch` expired keys. A key whose request is running again (taken over after it
 * expired) is locked and skipped, so the sweep never waits for a request nor a request for it.
 */
export function compileSweep(batch: number): CompiledStatement {
  const params = new Params();
  const text =
    'DELETE FROM "engage_idempotency" WHERE ("tenant", "key") IN (SELECT "tenant", "key" FROM "engage_idempotency"' +
    ` WHERE "expires_at" <= now() LIMIT ${params.add(String(batch), 'int4')} FOR UPDATE SKIP LOCKED)`;
  return { text, params: params.values };
}
