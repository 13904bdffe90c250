/**
 * Rate limits, off unless the host sets a policy: each caller (a built-in token, else a tenant) may
 * make `requests` requests per window of `seconds`, counted in PostgreSQL (compile/rate-limit.ts) so
 * that every process of a deployment shares the count. A fixed window: a caller may make up to
 * twice the limit across a window's end.
 */

import type { PgTable } from 'drizzle-orm/pg-core';
import { INSTALL_LOCK } from '../compile/install.ts';
import { compileHit, compileSweep, RATE_LIMIT_TABLE, type TenantLimit } from '../compile/rate-limit.ts';
import type { Scope } from '../compile/scope.ts';
import { readTable } from '../registry/table.ts';
import type { Context } from './context.ts';

export interface RateLimit {
  readonly requests: number;
  readonly seconds: number;
  /**
   * A tenant's own number of requests per window, in a column of the tenants' table (keyed by the
   * tenant): where it is set (not null), it replaces `requests` for every caller of that tenant.
   */
  readonly perTenant?: { readonly table: PgTable; readonly column: string };
}

/** Where a caller stands after a request was counted: what the RateLimit header fields tell. */
export interface RateLimitState {
  readonly policy: RateLimit;
  /** Requests left in the window (0 once past the limit). */
  readonly remaining: number;
  /** Whole seconds until the window ends and the count starts again. */
  readonly reset: number;
  /** Whether this request is past the limit. */
  readonly exceeded: boolean;
}

/** How often a process forgets the counters of ended windows. */
const SWEEP_MS = 60_000;

const wholeFromOne = (n: number) => Number.isInteger(n) && n >= 1;

/** The tenants' table and the column of their own limits, checked. */
function tenantLimit(perTenant: NonNullable<RateLimit['perTenant']>): TenantLimit {
  const shape = readTable(perTenant.table);
  const column = shape.columns.get(perTenant.column);
  if (!column || !/^(int2|int4|int8|smallint|integer|bigint)$/.test(column.sqlType) || shape.primaryKey.length !== 1) {
    throw new Error(
      `engine: a tenant's rate limit is an integer column of a table keyed by one column; ${shape.name}.${perTenant.column} is not`,
    );
  }
  return { table: shape.name, key: shape.primaryKey[0]!, column: perTenant.column };
}

/** Counts a request of a scope under `policy`. */
export function rateLimiter(ctx: Context, policy: RateLimit) {
  if (!wholeFromOne(policy.requests) || !wholeFromOne(policy.seconds)) {
    throw new Error('engine: a rate limit is a whole number of requests per whole number of seconds, each at least 1');
  }
  const perTenant = policy.perTenant && tenantLimit(policy.perTenant);
  let swept = 0;
  // The counters' table, made (if need be) before this process counts its first request.
  let table: Promise<void> | undefined;
  const ensureTable = () =>
    ctx.db.transaction(async (tx) => {
      await tx.query(INSTALL_LOCK);
      await tx.query(RATE_LIMIT_TABLE);
    });
  return async (scope: Scope | undefined): Promise<RateLimitState> => {
    table ??= ensureTable().catch((error) => {
      table = undefined;
      throw ctx.fail(error);
    });
    await table;
    const key = scope === undefined ? '' : 'tokenHash' in scope ? `token ${scope.tokenHash}` : `tenant ${scope.tenant}`;
    const hit = compileHit(
      key,
      policy.seconds,
      perTenant && ctx.scoping.tenancy ? { limit: perTenant, scope, scoping: ctx.scoping } : undefined,
    );
    const [row] = await ctx.execute<{ hits: number; reset: number; limit: number | null }>(
      hit.text,
      hit.params,
      scope,
      'rate-limit',
    );
    if (Date.now() - swept > SWEEP_MS) {
      swept = Date.now();
      const sweep = compileSweep(policy.seconds);
      // Best effort, off the request's path: a failed sweep is retried a minute later.
      ctx.execute(sweep.text, sweep.params, undefined, 'rate-limit').catch(() => {});
    }
    const hits = Number(row!.hits);
    const requests = row!.limit === null ? policy.requests : Number(row!.limit);
    return {
      policy: requests === policy.requests ? policy : { ...policy, requests },
      remaining: Math.max(0, requests - hits),
      reset: Math.max(0, Math.ceil(Number(row!.reset))),
      exceeded: hits > requests,
    };
  };
}
