/**
 * The objects a response is made of, over rows aliased `t`: the selected columns, and for
 * `*_details` resources the record's custom-field values spliced onto the end of each object,
 * so keys keep the select order and PostgreSQL still builds the whole body.
 */
import type { PlannedColumn } from '../plan/types.ts';
import { arrayLiteral } from '../plan/values.ts';
import type { Resource } from '../registry.ts';
import { SCOPED } from './scope.ts';
import { ident, type Params } from './sql.ts';
import { target } from './where.ts';

/** Custom-field value, read from the typed column that `custom_field.type` names. */
const TYPED_VALUE =
  `CASE cf."type" WHEN 'string' THEN to_jsonb(v."string_value") WHEN 'number' THEN to_jsonb(v."number_value")` +
  ` WHEN 'boolean' THEN to_jsonb(v."boolean_value") WHEN 'date' THEN to_jsonb(v."date_value")` +
  ` WHEN 'datetime' THEN to_jsonb(v."datetime_value") WHEN 'string_list' THEN to_jsonb(v."string_list_value") END`;

/**
 * The stored custom-field values of row `t` as one jsonb object, or NULL when it has none.
 * `keys` are the object's other keys: a custom field never hides or repeats one of them.
 */
export function storedCustomFields(resource: Resource, keys: readonly string[], params: Params): string {
  const custom = resource.customFields!;
  const reserved = params.add(arrayLiteral(keys), 'text[]');
  const entity = params.add(custom.entity, 'text');
  return (
    `(SELECT jsonb_object_agg(cf."key", ${TYPED_VALUE}) FROM ${ident(custom.table)} v` +
    ' JOIN "custom_field" cf ON cf."organisation_id" = v."organisation_id" AND cf."id" = v."custom_field_id"' +
    ` AND cf."entity" = ${entity}` +
    ` WHERE v."organisation_id" = ${SCOPED} AND v.${ident(custom.parentKey)} = t."id" AND cf."key" <> ALL(${reserved}))`
  );
}

export interface Projection {
  /** The SELECT list over `t`. */
  readonly select: string;
  /** What follows `FROM <table> t` to make that list work. */
  readonly join: string;
  /** One object over the projected row aliased `_t`: a record json_agg turns into JSON, or JSON text. */
  readonly row: { readonly kind: 'record' | 'text'; readonly sql: string };
}

/** Whether the columns are the table's own, in order, untouched: `t.*` then costs PostgreSQL least. */
const wholeRow = (resource: Resource, columns: readonly PlannedColumn[]) =>
  columns.length === resource.fields.length &&
  columns.every(
    (c, i) =>
      c.target.field === resource.fields[i] &&
      c.key === c.target.field.name &&
      !c.cast &&
      c.target.jsonPath.length === 0,
  );

/**
 * `customFields`: an SQL expression over `t` giving the custom-field jsonb object, or null.
 * `tableRows`: whether `t` holds exactly the table's columns (a write's rows carry one more).
 */
export function projection(
  resource: Resource,
  columns: readonly PlannedColumn[],
  customFields: string | null,
  params: Params,
  tableRows = true,
): Projection {
  const list =
    tableRows && wholeRow(resource, columns)
      ? 't.*'
      : columns
          .map((c) => {
            const expr = target(c.target, params);
            return `${c.cast ? `CAST(${expr} AS ${c.cast})` : expr} AS ${ident(c.key)}`;
          })
          .join(', ');
  if (customFields === null) return { select: list, join: '', row: { kind: 'record', sql: '_t' } };
  // The row's JSON text with the custom-field object's members spliced in before its closing
  // brace: both are PostgreSQL's own JSON, so the result is JSON without being parsed again.
  return {
    select: `_r AS "__row", ${customFields} AS "__cf"`,
    join: ` CROSS JOIN LATERAL (SELECT ${list}) _r`,
    row: {
      kind: 'text',
      sql: `CASE WHEN _t."__cf" IS NULL THEN to_json(_t."__row")::text ELSE left(to_json(_t."__row")::text, -1) || ',' || substr(_t."__cf"::text, 2) END`,
    },
  };
}

/** The response body: an array of objects, one object (singular), or nothing. */
export function jsonBody(row: Projection['row'], format: 'json' | 'object' | 'none'): string {
  if (format === 'none') return 'NULL::text';
  if (row.kind === 'text') {
    return format === 'object'
      ? `(array_agg(${row.sql}))[1]`
      : `coalesce('[' || string_agg(${row.sql}, ', ') || ']', '[]')`;
  }
  return format === 'object' ? `(json_agg(${row.sql}) -> 0)::text` : `coalesce(json_agg(${row.sql}), '[]')::text`;
}
