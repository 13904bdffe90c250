/**
 * A function call to one statement. The function runs only for a caller the scope lets in: it is
 * called from `scope` (CROSS JOIN LATERAL), which has no row otherwise. Rows of a resource are read
 * as a read of that resource reads its table (compile/read.ts), the call in the table's place,
 * still filtered by the caller's tenant; a scalar is its JSON value, a set of them a JSON array.
 *
 *   WITH scope AS (...)
 *   SELECT <authorized>, <tenant>, <rows>::int4 AS page_total, <total> AS total, <body> AS body, ...
 */
import type { CallPlan } from '../plan/call.ts';
import { compileRead } from './read.ts';
import { type Scope, type Scoping, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

/** `fn(a => $1::numeric, p_tenant => <scoped>)`: the call, every value a parameter. */
function callOf(plan: CallPlan, params: Params, scoped: string): string {
  const args = plan.args.map(({ arg, value }) => `${ident(arg.name)} => ${params.add(value, arg.type.sql)}`);
  if (plan.fn.tenantArg) args.push(`${ident(plan.fn.tenantArg)} => ${scoped}`);
  return `${ident(plan.fn.name)}(${args.join(', ')})`;
}

export function compileCall(
  plan: CallPlan,
  scope: Scope | undefined,
  scoping: Scoping,
  options: { readonly nodeJson?: boolean } = {},
): CompiledStatement {
  if (plan.read) {
    return compileRead(plan.read, scope, scoping, {
      ...options,
      from: (params, scoped) => `(SELECT r.* FROM scope CROSS JOIN LATERAL ${callOf(plan, params, scoped)} r)`,
    });
  }
  const params = new Params();
  const { cte, scoped, column } = scopeCte(scope, params, scoping);
  const from = `FROM scope CROSS JOIN LATERAL ${callOf(plan, params, scoped)} v`;
  const { returns } = plan.fn;
  // A scalar's JSON; a set's array of them; nothing of void, which runs all the same.
  const called =
    returns.kind === 'void'
      ? `SELECT NULL::text AS body, count(*) AS n ${from}`
      : returns.kind === 'scalar' && returns.set
        ? `SELECT coalesce(json_agg(v), '[]')::text AS body, count(*) AS n ${from}`
        : `SELECT to_json(v)::text AS body, 1 AS n ${from}`;
  const tenant = column === null ? 'NULL::text' : `${scoped}::text`;
  const text =
    `${cte}, called AS (${called})` +
    ` SELECT (SELECT count(*) FROM scope)::int4 AS authorized, ${tenant} AS tenant,` +
    ' (SELECT n FROM called)::int4 AS page_total, (SELECT n FROM called)::text AS total,' +
    ` (SELECT body FROM called) AS body, NULL::text AS version, ${params.evaluations()} AS converted`;
  return { text, params: params.values };
}
