/**
 * A read plan to one statement that returns one row: whether the scope resolved, the page's row
 * count, the total (when a count was asked for) and the body (JSON or CSV), built by PostgreSQL.
 *
 *   WITH scope AS (...)
 *   SELECT (SELECT count(*) FROM scope)::int AS authorized, <tenant> AS tenant,
 *          count(*)::int AS page_total, <total> AS total, <body> AS body,
 *          num_nonnulls(<each filter value converted>) AS converted
 *   FROM (<the resource's level: level.ts>) _t
 */
import { sqlType } from '../field-kinds.ts';
import type { ReadPlan } from '../plan/types.ts';
import type { Tenancy } from '../registry/index.ts';
import { ReadCompiler } from './level.ts';
import { jsonBody } from './projection.ts';
import { type Scope, type Scoping, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export function compileRead(plan: ReadPlan, scope: Scope | undefined, scoping: Scoping): CompiledStatement {
  const params = new Params();
  const { cte, scoped, column } = scopeCte(scope, params, scoping);
  const compiler = new ReadCompiler(params, scoped);
  const rows = compiler.level(plan, 't', null, { csv: plan.format === 'csv' });

  // exact: every matching row counted. estimated: counted up to MAX_ROWS + 1, past which the
  // engine asks the planner (compileCountEstimate). planned: the planner alone.
  let total = 'NULL::int8';
  if (plan.count === 'exact') total = compiler.count(plan);
  if (plan.count === 'estimated') total = compiler.count(plan, params.add(String(plan.limitOfCount), 'int8'));
  const body = jsonBody(rows.row, plan.head ? 'none' : plan.format, params);
  // The tenant the scope resolved to, which an estimate is asked for (compileCountEstimate).
  const estimated = (plan.count === 'planned' || plan.count === 'estimated') && column !== null;
  const tenant = estimated ? `${scoped}::text` : 'NULL::text';

  const text =
    `${cte} SELECT (SELECT count(*) FROM scope)::int4 AS authorized, ${tenant} AS tenant,` +
    ` count(*)::int4 AS page_total, ${total}::text AS total, ${body} AS body,` +
    ` ${params.evaluations()} AS converted FROM (${rows.sql}) _t`;
  return { text, params: params.values };
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
  const scoped = tenant !== null && tenancy ? params.add(tenant, sqlType(tenancy.kind)) : 'NULL';
  const compiler = new ReadCompiler(params, scoped);
  return {
    text: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${ident(plan.resource.table)} t${compiler.where(plan, 't')}`,
    params: params.values,
  };
}
