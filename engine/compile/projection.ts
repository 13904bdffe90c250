/**
 * The objects a response is made of: a SELECT list, and for `*_details` resources the record's
 * custom-field values spliced onto the end of each object, so keys keep the select order and
 * PostgreSQL still builds the whole body.
 */
import type { PlannedColumn, ReadColumn } from '../plan/types.ts';
import type { Resource } from '../registry/index.ts';
import type { ResponseFormat } from '../request.ts';
import { type CsvRow, csvBody } from './csv.ts';
import type { Params } from './sql.ts';
import { target } from './where.ts';

export interface Projection {
  /** The SELECT list. */
  readonly select: string;
  /** What follows the FROM items to make that list work. */
  readonly join: string;
  /** One object over the projected row aliased `_t`: a record json_agg turns into JSON, or JSON text. */
  readonly row: { readonly kind: 'record' | 'text'; readonly sql: string; readonly csv: CsvRow };
}

/**
 * Whether the columns are the table's own, in order, untouched: `t.*` then costs PostgreSQL least.
 * Never with fields shown once: the table has more columns than the resource shows.
 */
export const wholeRow = (resource: Resource, columns: readonly ReadColumn[]): boolean =>
  resource.shownOnce.length === 0 &&
  columns.length === resource.fields.length &&
  columns.every(
    (c, i) =>
      c.kind === 'field' &&
      c.target.field === resource.fields[i] &&
      c.key === c.target.field.name &&
      !c.cast &&
      c.target.jsonPath.length === 0,
  );

/** A field column's value over `table`, cast when asked. */
export function fieldValue(c: PlannedColumn, params: Params, table: string): string {
  const expr = target(c.target, params, table);
  return c.cast ? `CAST(${expr} AS ${c.cast})` : expr;
}

/**
 * `list` (whose keys are `keys`) as a projection; `customFields` is an SQL expression giving the
 * custom-field jsonb object (for CSV, its values as text: storedCustomFields' `text`), or null.
 */
export function projection(list: string, keys: readonly string[], customFields: string | null): Projection {
  if (customFields === null) {
    return { select: list, join: '', row: { kind: 'record', sql: '_t', csv: { keys, record: '_t', custom: null } } };
  }
  // The row's JSON text with the custom-field object's members spliced in before its closing
  // brace: both are PostgreSQL's own JSON, so the result is JSON without being parsed again.
  return {
    select: `_r AS "__row", ${customFields} AS "__cf"`,
    join: ` CROSS JOIN LATERAL (SELECT ${list}) _r`,
    row: {
      kind: 'text',
      sql:
        'CASE WHEN _t."__cf" IS NULL THEN to_json(_t."__row")::text' +
        ` ELSE left(to_json(_t."__row")::text, -1) || ',' || substr(_t."__cf"::text, 2) END`,
      csv: { keys, record: '_t."__row"', custom: '_t."__cf"' },
    },
  };
}

/** One object as a json value, for an embed: the record, or the spliced text parsed. */
export const rowJson = (row: Projection['row']): string =>
  row.kind === 'record' ? `to_json(${row.sql})` : `(${row.sql})::json`;

/** The response body: an array of objects, one object (singular), CSV (compile/csv.ts), or nothing. */
export function jsonBody(row: Projection['row'], format: ResponseFormat | 'none', params: Params): string {
  if (format === 'none') return 'NULL::text';
  if (format === 'csv') return csvBody(row.csv, params);
  if (row.kind === 'text') {
    return format === 'object'
      ? `(array_agg(${row.sql}))[1]`
      : `coalesce('[' || string_agg(${row.sql}, ', ') || ']', '[]')`;
  }
  return format === 'object' ? `(json_agg(${row.sql}) -> 0)::text` : `coalesce(json_agg(${row.sql}), '[]')::text`;
}
