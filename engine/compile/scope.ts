/**
 * Tenant scope. Every statement starts with a `scope` CTE holding exactly the caller's tenant (or
 * nothing), and every tenanted table it touches is filtered by its tenant column: compared with the
 * tenant's parameter when the host knows the tenant, or with the scope's row when a built-in token
 * names it. A token is resolved inside the same statement, so authentication costs no extra round
 * trip and a revoked token stops working at once. A single-tenant registry's scope is one empty
 * row: every statement is authorized, and nothing is filtered by tenant.
 */
import { sqlType } from '../field-kinds.ts';
import type { Resource, Tenancy } from '../registry/index.ts';
import { ident, type Params } from './sql.ts';

export type Scope =
  /** The host knows the tenant (its own sessions, JWTs, an API gateway): the tenant column's value. */
  | { readonly tenant: string }
  /** SHA-256 (hex) of a bearer token of the engine's own, checked against its token table in the statement. */
  | { readonly tokenHash: string };

/** What the compiler needs to know of an engine to scope its statements. */
export interface Scoping {
  readonly tenancy: Tenancy | null;
  /** The table of built-in tokens, when the engine has them. */
  readonly tokens: string | null;
}

/** The scope's one parameter, when it has one. A read's statement starts with the scope, so there it is `$1`. */
export const scopeValue = (scope: Scope | undefined): string | undefined =>
  scope === undefined ? undefined : 'tenant' in scope ? scope.tenant : scope.tokenHash;

export interface ScopeSql {
  /** `WITH scope AS (...)`: the statement's first words. */
  readonly cte: string;
  /**
   * What every tenanted table's tenant column is compared with. A known tenant is its own
   * parameter: Citus routes a statement whose every table is compared with one to a single shard
   * (docs/scaling.md). A token's tenant is the scope's row.
   */
  readonly scoped: string;
  /** The scope's tenant column, `"organisation_id"`, or null in a single-tenant registry. */
  readonly column: string | null;
}

/** The statement's scope, its parameter added first. */
export function scopeCte(scope: Scope | undefined, params: Params, scoping: Scoping): ScopeSql {
  const { tenancy } = scoping;
  if (tenancy === null || scope === undefined) {
    // No tenant: one row with no columns, so `authorized` counts one.
    return { cte: 'WITH scope AS (SELECT)', scoped: 'NULL', column: null };
  }
  const column = ident(tenancy.column);
  if ('tenant' in scope) {
    const tenant = params.add(scope.tenant, sqlType(tenancy.kind));
    return { cte: `WITH scope AS (SELECT ${tenant} AS ${column})`, scoped: tenant, column };
  }
  if (scoping.tokens === null) throw new Error('a { tokenHash } scope needs an engine with built-in tokens');
  const cte =
    `WITH scope AS (SELECT ${column} FROM ${ident(scoping.tokens)} WHERE "token_hash" = ${params.add(scope.tokenHash, 'text')}` +
    ' AND "revoked_at" IS NULL AND ("expires_at" IS NULL OR "expires_at" > now()))';
  return { cte, scoped: `(SELECT ${column} FROM scope)`, column };
}

/** `t."organisation_id" = <scoped>` for a tenanted resource's rows aliased `table`; nothing for a shared one. */
export const tenantFilter = (resource: Resource, table: string, scoped: string): string[] =>
  resource.tenant ? [`${table}.${ident(resource.tenant.name)} = ${scoped}`] : [];
