/**
 * A read plan to one statement: whether the scope resolved, the total (when a count was asked for)
 * and the page. Where PostgreSQL builds the body (JSON or CSV) it is one row:
 *
 *   WITH scope AS (...)
 *   SELECT (SELECT count(*) FROM scope)::int AS authorized, <tenant> AS tenant,
 *          count(*)::int AS page_total, <total> AS total, <body> AS body,
 *          num_nonnulls(<each filter value converted>) AS converted
 *   FROM (<the resource's level: level.ts>) _t
 *
 * Where Node builds it (row-json.ts), one row per row of the page, each with the same first
 * columns, and one with the first columns alone when the page is empty:
 *
 *   WITH scope AS (...)
 *   SELECT m.*, r.* FROM (SELECT <authorized>, <tenant>, <total>, <converted>) m
 *   LEFT JOIN LATERAL (SELECT row_number() OVER () AS n, <the level, each value as text> ) r ON true
 *   ORDER BY r.n
 */
import type { ReadPlan } from '../plan/types.ts';
import type { Tenancy } from '../registry/index.ts';
import { rowShape } from '../row-json.ts';
import { ReadCompiler } from './level.ts';
import { jsonBody } from './projection.ts';
import { type Scope, type Scoping, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export interface ReadOptions {
  readonly nodeJson?: boolean;
  /**
   * Where the resource's rows come from instead of its table (a function's call): SQL over the
   * statement's parameters and the caller's tenant, run after the scope's parameters are added.
   */
  readonly from?: (params: Params, scoped: string) => string;
}

export function compileRead(
  plan: ReadPlan,
  scope: Scope | undefined,
  scoping: Scoping,
  options: ReadOptions = {},
): CompiledStatement {
  const params = new Params();
  const { cte, scoped, column } = scopeCte(scope, params, scoping);
  const compiler = new ReadCompiler(
    params,
    scoped,
    options.from && { level: plan, from: options.from(params, scoped) },
  );
  const shape = options.nodeJson ? rowShape(plan) : null;
  const rows = compiler.level(plan, 't', null, { csv: plan.format === 'csv', text: shape !== null });

  // exact: every matching row counted. estimated: counted up to MAX_ROWS + 1, past which the
  // engine asks the planner (compileCountEstimate). planned: the planner alone.
  let total = 'NULL::int8';
  if (plan.count === 'exact') total = compiler.count(plan);
  if (plan.count === 'estimated') total = compiler.count(plan, params.add(String(plan.limitOfCount), 'int8'));
  // The tenant the scope resolved to: an estimate is asked for it (compileCountEstimate), and the
  // engine keeps a token's.
  const tenant = column === null ? 'NULL::text' : `${scoped}::text`;
  const head = `(SELECT count(*) FROM scope)::int4 AS authorized, ${tenant} AS tenant`;
  // A singular read of a record with versions answers its ETag.
  const versioned = plan.format === 'object' && plan.resource.updatedAt && !plan.grouped;
  const version = versioned ? compiler.version(plan) : 'NULL::text';
  // A resource with changes tells the snapshot the read saw: a stream resumes from it (Change-Position).
  const snapshot = plan.resource.changes ? 'pg_current_snapshot()::text' : 'NULL::text';

  if (shape) {
    // The page's rows in order after one row of the rest, which an empty page still has.
    const text =
      `${cte} SELECT m.*, r.* FROM (SELECT ${head}, ${total}::text AS total, ${version} AS version,` +
      ` ${snapshot} AS snapshot,` +
      ` ${params.evaluations()} AS converted) m LEFT JOIN LATERAL (SELECT row_number() OVER () AS "n", _r.*` +
      ` FROM (${rows.sql}) _r) r ON true ORDER BY r."n"`;
    return { text, params: params.values, rows: shape, parts: params.parts };
  }
  const body = jsonBody(rows.row, plan.head ? 'none' : plan.format, params);
  const text =
    `${cte} SELECT ${head}, count(*)::int4 AS page_total, ${total}::text AS total, ${body} AS body,` +
    ` ${version} AS version, ${snapshot} AS snapshot, ${params.evaluations()} AS converted FROM (${rows.sql}) _t`;
  return { text, params: params.values, parts: params.parts };
}

/**
 * `EXPLAIN` of the count of a read's rows in one tenant: the planner's estimate, for planned and
 * estimated counts. The tenant is a parameter rather than the scope, whose value is unknown when
 * planning: EXPLAIN plans with its parameters' values, so the estimate is this tenant's, not the
 * average over every tenant in the table. A single-tenant registry has no tenant to give.
 */
export function compileCountEstimate(
  plan: ReadPlan,
  tenant: string | null,
  tenancy: Tenancy | null,
): CompiledStatement {
  const params = new Params();
  const scoped = tenant !== null && tenancy ? params.add(tenant, tenancy.type.sql) : 'NULL';
  const compiler = new ReadCompiler(params, scoped);
  return {
    text: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${ident(plan.resource.table)} t${compiler.where(plan, 't')}`,
    params: params.values,
  };
}
