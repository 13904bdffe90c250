/**
 * Responses built in Node from a read's rows, for the shapes where that costs the database less:
 * PostgreSQL returning a page's values as text spends about half the CPU that building the page's
 * JSON with json_agg does (docs/architecture.md, "Where JSON is built"). The bytes are those
 * json_agg gives: each value is written as PostgreSQL's to_json writes it (field-kinds.ts, `toJson`),
 * objects as row_to_json does, the array's items separated by ", \n ".
 *
 * A read qualifies when each object is its own row's fields: no embed, aggregate, cast or
 * custom-field object, and no key twice. Everything else is built by PostgreSQL (compile/read.ts).
 */
import { writerOf } from './field-kinds.ts';
import type { PlannedColumn, ReadPlan } from './plan/types.ts';

/** A qualifying read's objects: each column's JSON key (quoted) and how its value is written. */
export interface RowShape {
  readonly columns: readonly PlannedColumn[];
  /** `"key":` of each column, the first without its comma. */
  readonly prefixes: readonly string[];
  readonly writers: readonly ((text: string) => string)[];
  /** The name each column is selected as. */
  readonly names: readonly string[];
}

/** The shape Node builds the read's JSON from, or null when PostgreSQL builds it. */
export function rowShape(plan: ReadPlan): RowShape | null {
  if (plan.head || (plan.format !== 'json' && plan.format !== 'object')) return null;
  if (plan.embeds.length > 0 || plan.grouped || plan.customFields || plan.columns.length === 0) return null;
  const columns: PlannedColumn[] = [];
  for (const c of plan.columns) {
    if (c.kind !== 'field' || c.cast !== null) return null;
    columns.push(c);
  }
  if (new Set(columns.map((c) => c.key)).size !== columns.length) return null;
  return {
    columns,
    prefixes: columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.key)}:`),
    writers: columns.map((c) => writerOf(c.target.type)),
    names: columns.map((_, i) => rowColumn(i)),
  };
}

/** The column a row's `i`th value is selected as. */
export const rowColumn = (i: number): string => `c${i}`;

/** One row's object; values are the columns' text, null for SQL NULL. */
function rowObject(shape: RowShape, row: object): string {
  const values = row as Readonly<Record<string, string | null>>;
  let json = '';
  for (let i = 0; i < shape.writers.length; i++) {
    const value = values[shape.names[i]!] ?? null;
    json += shape.prefixes[i] + (value === null ? 'null' : shape.writers[i]!(value));
  }
  return `${json}}`;
}

/** The body of `rows` (each a page row): an array, or the one object of a singular read. */
export function rowsBody(shape: RowShape, rows: readonly object[], single: boolean): string {
  if (single) return rows.length > 0 ? rowObject(shape, rows[0]!) : '';
  if (rows.length === 0) return '[]';
  let json = `[${rowObject(shape, rows[0]!)}`;
  for (let i = 1; i < rows.length; i++) json += `, \n ${rowObject(shape, rows[i]!)}`;
  return `${json}]`;
}
