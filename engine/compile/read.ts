/**
 * A read plan to one statement that returns one row: whether the scope resolved, the page's row
 * count, the total (when a count was asked for) and the body (JSON or CSV), built by PostgreSQL.
 *
 *   WITH scope AS (...)
 *   SELECT (SELECT count(*) FROM scope)::int AS authorized, <organisation> AS organisation_id,
 *          count(*)::int AS page_total, <total> AS total, <body> AS body,
 *          num_nonnulls(<each filter value converted>) AS converted
 *   FROM (<the resource's level: level.ts>) _t
 */
import type { PlannedCondition, ReadPlan } from '../plan/types.ts';
import { ReadCompiler } from './level.ts';
import { jsonBody } from './projection.ts';
import { type Scope, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';
import { condition } from './where.ts';

/** A write's rows in the organisation that pass its filters: ` WHERE ...` over `t`. */
export function where(conditions: readonly PlannedCondition[], params: Params, scoped: string): string {
  const ctx = { params, table: 't', scoped };
  return ` WHERE ${[`t."organisation_id" = ${scoped}`, ...conditions.map((c) => condition(c, ctx))].join(' AND ')}`;
}

export function compileRead(plan: ReadPlan, scope: Scope): CompiledStatement {
  const params = new Params();
  const { cte, scoped } = scopeCte(scope, params);
  const compiler = new ReadCompiler(params, scoped);
  const rows = compiler.level(plan, 't', null, { csv: plan.format === 'csv' });

  // exact: every matching row counted. estimated: counted up to MAX_ROWS + 1, past which the
  // engine asks the planner (compileCountEstimate). planned: the planner alone.
  let total = 'NULL::int8';
  if (plan.count === 'exact') total = compiler.count(plan);
  if (plan.count === 'estimated') total = compiler.count(plan, params.add(String(plan.limitOfCount), 'int8'));
  const body = jsonBody(rows.row, plan.head ? 'none' : plan.format, params);
  // The organisation the scope resolved to, which an estimate is asked for (compileCountEstimate).
  const organisation = plan.count === 'planned' || plan.count === 'estimated' ? `${scoped}::text` : 'NULL::text';

  const text =
    `${cte} SELECT (SELECT count(*) FROM scope)::int4 AS authorized, ${organisation} AS organisation_id,` +
    ` count(*)::int4 AS page_total, ${total}::text AS total, ${body} AS body,` +
    ` ${params.evaluations()} AS converted FROM (${rows.sql}) _t`;
  return { text, params: params.values };
}

/**
 * `EXPLAIN` of the count of a read's rows in one organisation: the planner's estimate, for planned
 * and estimated counts. The organisation is a parameter rather than the scope, whose value is
 * unknown when planning: EXPLAIN plans with its parameters' values, so the estimate is this
 * organisation's, not the average over every organisation in the table.
 */
export function compileCountEstimate(plan: ReadPlan, organisationId: string): CompiledStatement {
  const params = new Params();
  const compiler = new ReadCompiler(params, params.add(organisationId, 'uuid'));
  return {
    text: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${ident(plan.resource.table)} t${compiler.where(plan, 't')}`,
    params: params.values,
  };
}
