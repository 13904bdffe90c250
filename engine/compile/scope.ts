/**
 * Tenant scope. Every statement starts with a `scope` CTE holding exactly the caller's tenant (or
 * nothing), and every tenanted table it touches is filtered by its tenant column, compared with the
 * tenant's parameter whenever the tenant is known before the statement: the host's own, or a
 * built-in token's once the engine has seen it (a token's tenant never changes). A token is still
 * checked inside the same statement, so authentication costs no extra round trip and a revoked
 * token stops working at once; only a token's first statement, its tenant not yet known, compares
 * with the scope's row instead. A single-tenant registry's scope is one empty row: every statement
 * is authorized, and nothing is filtered by tenant.
 */
import type { Resource, Tenancy } from '../registry/index.ts';
import { ident, type Params } from './sql.ts';

export type Scope =
  /** The host knows the tenant (its own sessions, JWTs, an API gateway): the tenant column's value. */
  | { readonly tenant: string }
  /** SHA-256 (hex) of a bearer token of the engine's own, checked against its token table in the statement. */
  | { readonly tokenHash: string }
  /**
   * A built-in token with the tenant it belongs to, as the engine resolves `{ tokenHash }` once it
   * knows the token: the statement checks both, so a wrong tenant is an invalid token.
   */
  | { readonly tokenHash: string; readonly tenant: string };

/** A token row that authorizes: neither revoked nor expired. */
export const TOKEN_ACTIVE = '"revoked_at" IS NULL AND ("expires_at" IS NULL OR "expires_at" > now())';

/**
 * The SQL type of the engine's own tables' owner column (the idempotency keys', the outbox's): the
 * tenant column's type, so Citus can co-locate their rows with the tenant's, or text (always '')
 * without tenancy.
 */
export const ownerType = (tenancy: Tenancy | null): string => (tenancy ? tenancy.type.sql : 'text');

/** A scope's tenant when it is known before the statement; undefined for a token seen for the first time. */
export const knownTenant = (scope: Scope): string | undefined => ('tenant' in scope ? scope.tenant : undefined);

/** What the compiler needs to know of an engine to scope its statements. */
export interface Scoping {
  readonly tenancy: Tenancy | null;
  /** The table of built-in tokens, when the engine has them. */
  readonly tokens: string | null;
}

/**
 * The scope's parameters, in the order scopeCte adds them: a statement starts with its scope, so
 * they are `$1` (and `$2`) of every statement.
 */
export function scopeValues(scope: Scope | undefined): string[] {
  if (scope === undefined) return [];
  if (!('tokenHash' in scope)) return [scope.tenant];
  return 'tenant' in scope ? [scope.tenant, scope.tokenHash] : [scope.tokenHash];
}

/** Who a statement is for, when the pool is shared out: the tenant, or a token whose tenant is not known yet. */
export const laneOf = (scope: Scope | undefined): string | undefined =>
  scope === undefined ? undefined : (knownTenant(scope) ?? (scope as { tokenHash: string }).tokenHash);

export interface ScopeSql {
  /** `WITH scope AS (...)`: the statement's first words. */
  readonly cte: string;
  /**
   * What every tenanted table's tenant column is compared with. A known tenant is its own
   * parameter: Citus routes a statement whose every table is compared with one to a single shard
   * (docs/scaling.md). A token's tenant, on its first statement, is the scope's row.
   */
  readonly scoped: string;
  /** The scope's tenant column, `"organisation_id"`, or null in a single-tenant registry. */
  readonly column: string | null;
}

/** The statement's scope, its parameters added first (scopeValues). */
export function scopeCte(scope: Scope | undefined, params: Params, scoping: Scoping): ScopeSql {
  const { tenancy } = scoping;
  if (tenancy === null || scope === undefined) {
    // No tenant: one row with no columns, so `authorized` counts one.
    return { cte: 'WITH scope AS (SELECT)', scoped: 'NULL', column: null };
  }
  const column = ident(tenancy.column);
  if (!('tokenHash' in scope)) {
    const tenant = params.add(scope.tenant, tenancy.type.sql);
    return { cte: `WITH scope AS (SELECT ${tenant} AS ${column})`, scoped: tenant, column };
  }
  if (scoping.tokens === null) throw new Error('a { tokenHash } scope needs an engine with built-in tokens');
  const known = knownTenant(scope);
  const tenant = known === undefined ? null : params.add(known, tenancy.type.sql);
  const valid =
    `"token_hash" = ${params.add(scope.tokenHash, 'text')}${tenant ? ` AND ${column} = ${tenant}` : ''}` +
    ` AND ${TOKEN_ACTIVE}`;
  const cte = `WITH scope AS (SELECT ${tenant ? `${tenant} AS ${column}` : column} FROM ${ident(scoping.tokens)} WHERE ${valid})`;
  return { cte, scoped: tenant ?? `(SELECT ${column} FROM scope)`, column };
}

/** `t."organisation_id" = <scoped>` for a tenanted resource's rows aliased `table`; nothing for a shared one. */
export const tenantFilter = (resource: Resource, table: string, scoped: string): string[] =>
  resource.tenant ? [`${table}.${ident(resource.tenant.name)} = ${scoped}`] : [];
