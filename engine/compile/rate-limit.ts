/**
 * Rate limits' counters, one row per caller (a token's hash, or a tenant) in a table made when
 * limits are on (handle/rate-limit.ts): a fixed window of `seconds`, counted by one upsert per request, so
 * every process of a deployment shares the count. UNLOGGED: counts need not survive a crash.
 */
import { type Scope, type Scoping, scopeCte } from './scope.ts';
import type { CompiledStatement } from './sql.ts';
import { ident, Params } from './sql.ts';

export const RATE_LIMIT_TABLE =
  'CREATE UNLOGGED TABLE IF NOT EXISTS "engage_rate_limit" ("key" text PRIMARY KEY,' +
  ' "window_start" timestamptz NOT NULL, "hits" int4 NOT NULL)';

/** Where a tenant's own limit is kept: a column of the tenants' table, by its key. */
export interface TenantLimit {
  readonly table: string;
  readonly key: string;
  readonly column: string;
}

/**
 * Counts a request of `key` in the current window of `seconds`: its hits in that window, this one
 * included, the seconds until the window ends, and (with `own`) the limit the scope's tenant sets
 * itself, null where it sets none.
 */
export function compileHit(
  key: string,
  seconds: number,
  own?: { readonly limit: TenantLimit; readonly scope: Scope | undefined; readonly scoping: Scoping },
): CompiledStatement {
  const params = new Params();
  const scope = own && scopeCte(own.scope, params, own.scoping);
  const k = params.add(key, 'text');
  const s = params.add(String(seconds), 'int4');
  const window = `to_timestamp(floor(extract(epoch FROM now()) / ${s}) * ${s})`;
  const limit =
    own && scope?.column
      ? `, (SELECT o.${ident(own.limit.column)} FROM ${ident(own.limit.table)} o` +
        ` WHERE o.${ident(own.limit.key)} = (SELECT ${scope.column} FROM scope))::int4 AS "limit"`
      : ', NULL::int4 AS "limit"';
  const text =
    `${scope ? `${scope.cte} ` : ''}INSERT INTO "engage_rate_limit" AS r ("key", "window_start", "hits") VALUES (${k}, ${window}, 1)` +
    ' ON CONFLICT ("key") DO UPDATE SET "hits" = CASE WHEN r."window_start" = EXCLUDED."window_start"' +
    ' THEN r."hits" + 1 ELSE 1 END, "window_start" = EXCLUDED."window_start"' +
    ` RETURNING r."hits", extract(epoch FROM r."window_start" + make_interval(secs => ${s}) - now())::float8 AS "reset"` +
    limit;
  return { text, params: params.values };
}

/** Forgets the counters of windows that ended over `seconds` ago. */
export function compileSweep(seconds: number): CompiledStatement {
  const params = new Params();
  const s = params.add(String(seconds * 2), 'int4');
  return {
    text: `DELETE FROM "engage_rate_limit" WHERE "window_start" < now() - make_interval(secs => ${s})`,
    params: params.values,
  };
}
