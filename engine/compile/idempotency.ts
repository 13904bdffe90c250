/**
 * Idempotency keys' table and statements (handle/idempotency.ts). A write sent with a key claims the
 * key in its own transaction, runs, and saves its response there; the claim takes a transaction-level
 * advisory lock on the key, so a second request with the key while the first runs is told so at
 * once instead of waiting behind it, and a first request that never commits (a crash, a cut
 * connection) leaves no trace: its retry runs afresh.
 */
import { sqlType } from '../field-kinds.ts';
import type { Tenancy } from '../registry/index.ts';
import { type Scope, type Scoping, scopeCte } from './scope.ts';
import type { CompiledStatement } from './sql.ts';
import { Params } from './sql.ts';

/** The keys' owner: a tenant, of the tenant column's type (so Citus can co-locate the keys with its rows), or ''. */
const ownerType = (tenancy: Tenancy | null) => (tenancy ? sqlType(tenancy.kind) : 'text');

export const idempotencyTable = (tenancy: Tenancy | null) =>
  `CREATE TABLE IF NOT EXISTS "engage_idempotency" ("tenant" ${ownerType(tenancy)} NOT NULL, "key" text NOT NULL,` +
  ' "fingerprint" text NOT NULL, "expires_at" timestamptz NOT NULL, "status" int4, "headers" text, "body" text,' +
  ' PRIMARY KEY ("tenant", "key"))';

/** The sweep's index: expired keys are found without reading live ones. */
export const IDEMPOTENCY_INDEX =
  'CREATE INDEX IF NOT EXISTS "engage_idempotency_expires_idx" ON "engage_idempotency" ("expires_at")';

/** What a claim finds: whether the scope is valid, whether this request holds the key, or what it stored. */
export interface ClaimRow {
  authorized: number;
  /** The scope's tenant as text ('' without tenancy): the key's owner. */
  tenant: string | null;
  /** False when another transaction holds the key's lock: its request is still running. */
  locked: boolean | null;
  claimed: number;
  fingerprint: string | null;
  status: number | null;
  headers: string | null;
  body: string | null;
}

/**
 * Claims `key` for the scope's tenant for `hours`: inserts it (or takes over an expired one) when its
 * lock is free, else reads what it holds. One statement; the scope checks the token as every
 * statement does.
 */
export function compileClaim(
  scope: Scope | undefined,
  scoping: Scoping,
  key: string,
  fingerprint: string,
  hours: number,
): CompiledStatement {
  const params = new Params();
  const { cte, column } = scopeCte(scope, params, scoping);
  const tenant = column === null ? "''" : column;
  const k = params.add(key, 'text');
  const f = params.add(fingerprint, 'text');
  const h = params.add(String(hours), 'int4');
  const text =
    `${cte}, owner AS (SELECT ${tenant} AS "tenant" FROM scope),` +
    ' lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended(' +
    `'engage.idempotency ' || o."tenant"::text || ' ' || ${k}, 0)) AS "locked" FROM owner o),` +
    ' claim AS (INSERT INTO "engage_idempotency" AS i ("tenant", "key", "fingerprint", "expires_at")' +
    ` SELECT o."tenant", ${k}, ${f}, now() + make_interval(hours => ${h}) FROM owner o, lock WHERE lock."locked"` +
    ' ON CONFLICT ("tenant", "key") DO UPDATE SET "fingerprint" = EXCLUDED."fingerprint",' +
    ' "expires_at" = EXCLUDED."expires_at", "status" = NULL, "headers" = NULL, "body" = NULL' +
    ' WHERE i."expires_at" <= now() RETURNING 1)' +
    ' SELECT (SELECT count(*) FROM owner)::int AS "authorized", (SELECT "tenant"::text FROM owner) AS "tenant",' +
    ' (SELECT "locked" FROM lock) AS "locked", (SELECT count(*) FROM claim)::int AS "claimed",' +
    ' s."fingerprint", s."status", s."headers", s."body"' +
    ' FROM (SELECT) one LEFT JOIN "engage_idempotency" s' +
    ` ON s."tenant" = (SELECT "tenant" FROM owner) AND s."key" = ${k} AND s."expires_at" > now()`;
  return { text, params: params.values };
}

/** Keeps the response of the request that claimed `key`, in its transaction. */
export function compileSave(
  tenancy: Tenancy | null,
  tenant: string,
  key: string,
  response: { status: number; headers: Record<string, string>; body: string | null },
): CompiledStatement {
  const params = new Params();
  const text =
    `UPDATE "engage_idempotency" SET "status" = ${params.add(String(response.status), 'int4')},` +
    ` "headers" = ${params.add(JSON.stringify(response.headers), 'text')}, "body" = ${params.add(response.body, 'text')}` +
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
