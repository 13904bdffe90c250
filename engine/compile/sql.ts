/**
 * A statement under construction: SQL text plus the list of its parameters. Values only enter
 * through `param`, which appends a `$n::type` placeholder; identifiers only through `ident`.
 */

import { SQL_TYPE } from '../plan/values.ts';
import type { Field } from '../registry.ts';

export interface CompiledStatement {
  readonly text: string;
  readonly params: readonly (string | null)[];
}

/** Only simple type names reach SQL text; the planner already restricted them to a fixed list. */
const TYPE_NAME = /^[a-z][a-z0-9_]*(\[\])?$/;

export class Params {
  readonly values: (string | null)[] = [];
  /** Expressions over the caller's values that `conversions` evaluates once. */
  readonly #converted: string[] = [];

  /**
   * A bound parameter cast to `type`. The parameter itself is always declared text, so every
   * driver sends the caller's string untouched (postgres.js would otherwise re-serialise values
   * of boolean, date or JSON parameters) and PostgreSQL's own parser converts it.
   */
  add(value: string | null, type: string): string {
    if (!TYPE_NAME.test(type)) throw new Error(`refusing SQL type name ${JSON.stringify(type)}`);
    this.values.push(value);
    const placeholder = `$${this.values.length}::text`;
    return type === 'text' ? placeholder : `${placeholder}::${type}`;
  }

  /** A filter value: like `add`, and converted once by `conversions` whether or not a row is read. */
  addFilterValue(value: string | null, type: string): string {
    const sql = this.add(value, type);
    if (type !== 'text') this.convertOnce(sql);
    return sql;
  }

  /** Has `conversions` evaluate `expression` (built from the caller's values) once. */
  convertOnce(expression: string): void {
    this.#converted.push(expression);
  }

  /**
   * An expression that converts every filter value once. Plans are generic (see db/port.ts), so a
   * filter's cast runs per row, and a malformed date, an overflowing number or a broken search
   * query over no rows would pass unnoticed; selected once per statement, it fails the same way
   * whatever the data.
   */
  conversions(): string {
    return this.#converted.length ? `num_nonnulls(${this.#converted.join(', ')})` : '0';
  }
}

/** A quoted identifier. Names come from the registry, but quoting keeps them inert regardless. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `"a" text, "b" uuid`: a column list for json_to_record(set) with each field's SQL type. */
export const recordType = (fields: readonly Field[]): string =>
  fields.map((f) => `${ident(f.name)} ${SQL_TYPE[f.kind]}`).join(', ');
