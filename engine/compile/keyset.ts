/**
 * A keyset page to one statement: the tenant's rows ordered by the resource's keyset
 * fields, after the cursor's key, one row more than the page to tell whether another follows. The
 * rows' JSON and the last row's key are built by PostgreSQL.
 *
 *   WITH scope AS (...), page AS (SELECT <fields>, row_number() OVER (ORDER BY <keyset>) AS n
 *     FROM "table" t WHERE t.<tenant> = <scope> AND (<keyset>) > (<cursor>) ORDER BY ... LIMIT $n)
 *   SELECT authorized, rows in page, <first `limit` rows as JSON>, <key of row `limit` as JSON text>
 */
import type { Resource } from '../registry/index.ts';
import { type Scope, type Scoping, scopeCte, tenantFilter } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';

export function compileKeysetPage(
  resource: Resource,
  scope: Scope | undefined,
  scoping: Scoping,
  limit: number,
  after: readonly string[] | null,
): CompiledStatement {
  const keyset = resource.keyset!;
  const params = new Params();
  const { cte, scoped } = scopeCte(scope, params, scoping);
  const key = (table: string) => keyset.map((f) => `${table}.${ident(f.name)}`).join(', ');
  const conditions = tenantFilter(resource, 't', scoped);
  if (after !== null) {
    const values = keyset.map((f, i) => params.addFilterValue(after[i]!, f.type.sql));
    conditions.push(`(${key('t')}) > (${values.join(', ')})`);
  }
  const where = conditions.length ? ` WHERE ${conditions.join(' AND ')}` : '';
  const fields = resource.fields.map((f) => ident(f.name));
  const size = params.add(String(limit), 'int8');
  const text =
    `${cte}, page AS (SELECT ${fields.map((f) => `t.${f}`).join(', ')}, row_number() OVER (ORDER BY ${key('t')}) AS n` +
    ` FROM ${ident(resource.table)} t${where}` +
    ` ORDER BY ${key('t')} LIMIT ${params.add(String(limit + 1), 'int8')})` +
    ` SELECT (SELECT count(*) FROM scope)::int4 AS authorized, (SELECT count(*) FROM page)::int4 AS n,` +
    ` (SELECT coalesce(json_agg(p ORDER BY ${key('p')}), '[]') FROM (SELECT ${fields.join(', ')} FROM page` +
    ` WHERE n <= ${size}) p)::text AS data,` +
    ` (SELECT json_build_array(${keyset.map((f) => `p.${ident(f.name)}::text`).join(', ')})::text FROM page p` +
    ` WHERE p.n = ${size}) AS last_key, ${params.evaluations()} AS converted`;
  return { text, params: params.values };
}
