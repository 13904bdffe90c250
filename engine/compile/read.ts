/**
 * A read plan to one statement that returns one row: whether the scope resolved, the page's row
 * count, the total (when a count was asked for) and the body (JSON or CSV), built by PostgreSQL.
 *
 *   WITH scope AS (...)
 *   SELECT (SELECT count(*) FROM scope)::int AS authorized, <organisation> AS organisation_id,
 *          count(*)::int AS page_total, <total> AS total, <body> AS body,
 *          num_nonnulls(<each filter value converted>) AS converted
 *   FROM (SELECT <columns> FROM "table" t WHERE t.organisation_id = <scope> AND ...
 *         ORDER BY ... LIMIT $n OFFSET $m) _t
 */
import type { ReadPlan } from '../plan/types.ts';
import { storedCustomFields } from './custom-fields.ts';
import { jsonBody, projection } from './projection.ts';
import { SCOPED, type Scope, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';
import { condition, orderBy } from './where.ts';

/** The organisation's rows that pass the filters: ` WHERE ...` over `t`. */
export function where(conditions: ReadPlan['where'], params: Params, scoped = SCOPED): string {
  return ` WHERE ${[`t."organisation_id" = ${scoped}`, ...conditions.map((c) => condition(c, params))].join(' AND ')}`;
}

export function compileRead(plan: ReadPlan, scope: Scope): CompiledStatement {
  const params = new Params();
  const cte = scopeCte(scope, params);
  const from = ` FROM ${ident(plan.resource.table)} t`;
  const filter = where(plan.where, params);
  const p = projection(
    plan.resource,
    plan.columns,
    plan.customFields
      ? storedCustomFields(
          plan.resource.customFields!,
          plan.columns.map((c) => c.key),
          params,
          plan.format === 'csv',
        )
      : null,
    params,
  );
  let page = `SELECT ${p.select}${from}${p.join}${filter}`;
  page += orderBy(plan.order, params);
  page += ` LIMIT ${params.add(String(plan.limit), 'int8')}`;
  if (plan.offset > 0) page += ` OFFSET ${params.add(String(plan.offset), 'int8')}`;

  // exact: every matching row counted. estimated: counted up to MAX_ROWS + 1, past which the
  // engine asks the planner (compileCountEstimate). planned: the planner alone.
  let total = 'NULL::int8';
  if (plan.count === 'exact') total = `(SELECT count(*)${from}${filter})::int8`;
  if (plan.count === 'estimated') {
    const upTo = params.add(String(plan.limitOfCount), 'int8');
    total = `(SELECT count(*) FROM (SELECT 1${from}${filter} LIMIT ${upTo}) c)::int8`;
  }
  const body = jsonBody(p.row, plan.head ? 'none' : plan.format, params);
  // The organisation the scope resolved to, which an estimate is asked for (compileCountEstimate).
  const organisation = plan.count === 'planned' || plan.count === 'estimated' ? `${SCOPED}::text` : 'NULL::text';

  const text =
    `${cte} SELECT (SELECT count(*) FROM scope)::int4 AS authorized, ${organisation} AS organisation_id,` +
    ` count(*)::int4 AS page_total, ${total}::text AS total, ${body} AS body,` +
    ` ${params.evaluations()} AS converted FROM (${page}) _t`;
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
  const filter = where(plan.where, params, params.add(organisationId, 'uuid'));
  return {
    text: `EXPLAIN (FORMAT JSON) SELECT 1 FROM ${ident(plan.resource.table)} t${filter}`,
    params: params.values,
  };
}
