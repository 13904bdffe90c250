/**
 * Rate limits' counters, one row per caller (a token's hash, or a tenant) in a table made when
 * limits are on (handle/rate-limit.ts): a fixed window of `seconds`, counted by one upsert per request, so
 * every process of a deployment shares the count. UNLOGGED: counts need not survive a crash.
 */
import type { CompiledStatement } from './sql.ts';
import { Params } from './sql.ts';

export const RATE_LIMIT_TABLE =
  'CREATE UNLOGGED TABLE IF NOT EXISTS "engage_rate_limit" ("key" text PRIMARY KEY,' +
  ' "window_start" timestamptz NOT NULL, "hits" int4 NOT NULL)';

/**
 * Counts a request of `key` in the current window of `seconds`: its hits in that window, this one
 * included, and the seconds until the window ends.
 */
export function compileHit(key: string, seconds: number): CompiledStatement {
  const params = new Params();
  const k = params.add(key, 'text');
  const s = params.add(String(seconds), 'int4');
  const window = `to_timestamp(floor(extract(epoch FROM now()) / ${s}) * ${s})`;
  const text =
    `INSERT INTO "engage_rate_limit" AS r ("key", "window_start", "hits") VALUES (${k}, ${window}, 1)` +
    ' ON CONFLICT ("key") DO UPDATE SET "hits" = CASE WHEN r."window_start" = EXCLUDED."window_start"' +
    ' THEN r."hits" + 1 ELSE 1 END, "window_start" = EXCLUDED."window_start"' +
    ` RETURNING r."hits", extract(epoch FROM r."window_start" + make_interval(secs => ${s}) - now())::float8 AS "reset"`;
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
