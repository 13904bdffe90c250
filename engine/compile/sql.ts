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
}

/** A quoted identifier. Names come from the registry, but quoting keeps them inert regardless. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** `"a" text, "b" uuid`: a column list for json_to_record(set) with each field's SQL type. */
export const recordType = (fields: readonly Field[]): string => fields.map((f) => `${ident(f.name)} ${SQL_TYPE[f.kind]}`).join(', ');
