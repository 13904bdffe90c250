/**
 * A read plan to one statement that returns one row: whether the scope resolved, the page's row
 * count, the total (when a count was asked for) and the JSON body, built by PostgreSQL.
 *
 *   WITH scope AS (...)
 *   SELECT (SELECT count(*) FROM scope)::int AS authorized,
 *          count(*)::int AS page_total, <total> AS total, <body> AS body
 *   FROM (SELECT <columns> FROM "table" t WHERE t.organisation_id = <scope> AND ...
 *         ORDER BY ... LIMIT $n OFFSET $m) _t
 */
import type { PlannedColumn, ReadPlan } from '../plan/types.ts';
import { arrayLiteral } from '../plan/values.ts';
import { SCOPED, type Scope, scopeCte } from './scope.ts';
import { type CompiledStatement, ident, Params } from './sql.ts';
import { condition, orderBy, target } from './where.ts';

/** Custom-field value, read from the typed column that `custom_field.type` names. */
const TYPED_VALUE =
  `CASE cf."type" WHEN 'string' THEN to_jsonb(v."string_value") WHEN 'number' THEN to_jsonb(v."number_value")` +
  ` WHEN 'boolean' THEN to_jsonb(v."boolean_value") WHEN 'date' THEN to_jsonb(v."date_value")` +
  ` WHEN 'datetime' THEN to_jsonb(v."datetime_value") WHEN 'string_list' THEN to_jsonb(v."string_list_value") END`;

function column(c: PlannedColumn, params: Params): string {
  const expr = target(c.target, params);
  return `${c.cast ? `CAST(${expr} AS ${c.cast})` : expr} AS ${ident(c.key)}`;
}

/** The record's custom-field values as one JSON object, or NULL when it has none. */
function customFieldsObject(plan: ReadPlan, params: Params): string {
  const custom = plan.resource.customFields!;
  // A custom field never hides a field of the resource itself.
  const reserved = params.add(arrayLiteral(plan.resource.fields.map((f) => f.name)), 'text[]');
  const entity = params.add(custom.entity, 'text');
  return (
    `(SELECT jsonb_object_agg(cf."key", ${TYPED_VALUE}) FROM ${ident(custom.table)} v` +
    ' JOIN "custom_field" cf ON cf."organisation_id" = v."organisation_id" AND cf."id" = v."custom_field_id"' +
    ` AND cf."entity" = ${entity}` +
    ` WHERE v."organisation_id" = t."organisation_id" AND v.${ident(custom.parentKey)} = t."id" AND cf."key" <> ALL(${reserved}))`
  );
}

/** The organisation's rows that pass the filters, shared by the page and the count. */
function where(plan: ReadPlan, params: Params): string {
  const conditions = [`t."organisation_id" = ${SCOPED}`, ...plan.where.map((c) => condition(c, params))];
  return ` WHERE ${conditions.join(' AND ')}`;
}

export function compileRead(plan: ReadPlan, scope: Scope): CompiledStatement {
  const params = new Params();
  const cte = scopeCte(scope, params);
  const from = ` FROM ${ident(plan.resource.table)} t`;
  const filter = where(plan, params);
  const columns = plan.columns.map((c) => column(c, params)).join(', ');

  // Objects with custom fields: the row's own JSON with the custom-field object spliced onto its
  // end, so keys keep the select order and PostgreSQL still builds the whole body.
  let page: string;
  let row: string;
  if (plan.customFields) {
    page = `SELECT _r AS "__row", ${customFieldsObject(plan, params)} AS "__cf"${from} CROSS JOIN LATERAL (SELECT ${columns}) _r${filter}`;
    row =
      'CASE WHEN _t."__cf" IS NULL THEN to_json(_t."__row")' +
      ` ELSE (left(to_json(_t."__row")::text, -1) || ',' || substr(_t."__cf"::text, 2))::json END`;
  } else {
    page = `SELECT ${columns}${from}${filter}`;
    row = '_t';
  }
  page += orderBy(plan.order, params);
  page += ` LIMIT ${params.add(String(plan.limit), 'int8')}`;
  if (plan.offset > 0) page += ` OFFSET ${params.add(String(plan.offset), 'int8')}`;

  const total = plan.count ? `(SELECT count(*)${from}${filter})::int8` : 'NULL::int8';
  const body = plan.head
    ? 'NULL::text'
    : plan.format === 'object'
      ? `(json_agg(${row}) -> 0)::text`
      : `coalesce(json_agg(${row}), '[]')::text`;

  const text =
    `${cte} SELECT (SELECT count(*) FROM scope)::int4 AS authorized, count(*)::int4 AS page_total,` +
    ` ${total}::text AS total, ${body} AS body FROM (${page}) _t`;
  return { text, params: params.values };
}
