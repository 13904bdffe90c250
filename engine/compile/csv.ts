/**
 * CSV bodies (`Accept: text/csv`, docs/contract.md section 11), built by PostgreSQL in the request's
 * one statement as PostgREST builds them: each line is a row's record text output without its
 * parentheses, so values are quoted and printed exactly as PostgreSQL prints a record (`t`/`f`,
 * `{a,b}`, `2026-12-01 09:00:00+00`, NULL as nothing). One change makes it RFC 4180: the record
 * output doubles a backslash inside a quoted value, and CSV does not, so `\\` becomes `\` again.
 */
import type { Params } from './sql.ts';

/** What a CSV body is made of, over the page rows aliased `_t`. */
export interface CsvRow {
  /** The header's keys: the selected columns' keys, in order. */
  readonly keys: readonly string[];
  /** The record of the selected columns. */
  readonly record: string;
  /** `*_details`: a jsonb object of the row's custom-field values as text (NULL without any), or null. */
  readonly custom: string | null;
}

const NEWLINE = String.raw`E'\n'`;

/**
 * A record's text output as a CSV line. Its first and last characters are the parentheses; the
 * characters next to them are never parentheses (a value holding one is quoted), so trimming
 * both ends strips exactly those two. A backslash in the output only ever comes doubled.
 */
const line = (record: string) => String.raw`replace(btrim(${record}::text, '()'), E'\\\\', E'\\')`;

/** One value as a CSV cell, quoted by the same rule as every other value. */
const cell = (value: string) => line(`ROW(${value})`);

/**
 * The body: the header line, then one line per row, joined by "\n" with no newline at the end.
 * The header is the keys as PostgREST writes them, joined by "," (a key never holds ",", '"' or
 * a line break: plan/read.ts allows letters, digits, "_", "$", "-" and spaces), and is there even
 * for an empty page. On `*_details` the custom-field keys of the page's rows follow, in byte order,
 * quoted like values (they are data); a row without a value for one leaves its cell empty.
 */
export function csvBody(row: CsvRow, params: Params): string {
  const header = params.add(row.keys.join(','), 'text');
  if (row.custom === null) {
    return `${header} || coalesce(${NEWLINE} || string_agg(${line(row.record)}, ${NEWLINE}), '')`;
  }
  // The rows' lines and custom values are aggregated in the page's order; the subquery then reads
  // them knowing the union of their keys, which no single row's line can know.
  const keys =
    `(SELECT array_agg(DISTINCT k COLLATE "C" ORDER BY k COLLATE "C")` +
    ` FROM unnest(array_agg(${row.custom})) c, jsonb_object_keys(c) k)`;
  const cells = (value: string) =>
    `coalesce((SELECT string_agg(',' || ${cell(value)}, '' ORDER BY h.i)` +
    ` FROM unnest(ks.keys) WITH ORDINALITY h(k, i)), '')`;
  return (
    `(SELECT ${header} || ${cells('h.k')}` +
    ` || coalesce(${NEWLINE} || string_agg(l.line || ${cells('l.cf ->> h.k')}, ${NEWLINE} ORDER BY l.n), '')` +
    ` FROM (SELECT ${keys} AS keys) ks` +
    ` LEFT JOIN unnest(array_agg(${line(row.record)}), array_agg(${row.custom})) WITH ORDINALITY l(line, cf, n)` +
    ' ON true GROUP BY ks.keys)'
  );
}
