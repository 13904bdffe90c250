/**
 * A statement under construction: SQL text plus the list of its parameters. Values only enter
 * through `Params.add`, which appends a `$n::text::type` placeholder; identifiers only through
 * `ident`; SQL types only through the field kinds' (field-kinds.ts) and the planner's fixed list of casts.
 */

import type { SqlParam } from '../db/port.ts';
import type { Field } from '../registry/index.ts';
import type { RowShape } from '../row-json.ts';

export interface CompiledStatement {
  readonly text: string;
  readonly params: readonly SqlParam[];
  /** A read whose rows are its page, their JSON built in Node (row-json.ts); otherwise one row with the body. */
  readonly rows?: RowShape;
  /** A read's parameters holding the value of each top-level comparison, by query string part (Params.parts). */
  readonly parts?: ReadonlyMap<number, readonly number[]>;
  /** The parameters added under a name (Params.named): a write's body, the tenants it names, its key. */
  readonly named?: ReadonlyMap<string, number>;
}

/**
 * The names of the parameters a write's request gives (Params.named): a PATCH's row or a POST's
 * rows, the tenants they name, and its Idempotency-Key with the request's fingerprint. The write
 * cache binds each request's there.
 */
export const BOUND = { claimed: 'claimed', row: 'row', key: 'key', fingerprint: 'fingerprint' } as const;

/** A simple or quoted identifier. */
const NAME = '(?:[a-z_][a-z0-9_]*|"(?:[^"]|"")+")';
/** Only type names reach SQL text (`int4`, `"mood"`, `"shop"."mood"[]`), whatever a caller passes. */
const TYPE_NAME = new RegExp(`^${NAME}(?:\\.${NAME})?(?:\\[\\])?$`);
/** Our own constants: simple names only. */
const CONSTANT = /^[a-z][a-z0-9_]*(\[\])?$/;

export class Params {
  readonly values: SqlParam[] = [];
  /**
   * Where the value of each top-level comparison on a plain field went, by the query string part
   * it was written in: recorded as it is added, so the read cache (read-cache.ts) binds another
   * value in exactly those places (each of them, should a value be compiled more than once).
   */
  readonly parts = new Map<number, number[]>();
  /** Where each value added with a name went (`add`'s `name`): the write cache binds another there. */
  readonly named = new Map<string, number>();
  /** Expressions over the caller's values that `evaluations` evaluates once. */
  readonly #once: string[] = [];

  /**
   * A bound parameter cast to `type`. The parameter itself is always declared text, so every
   * driver sends the caller's string untouched (postgres.js would otherwise re-serialise values
   * of boolean, date or JSON parameters) and PostgreSQL's own parser converts it.
   */
  add(value: SqlParam, type: string, name?: string): string {
    if (!TYPE_NAME.test(type)) throw new Error(`refusing SQL type name ${JSON.stringify(type)}`);
    this.values.push(value);
    if (name !== undefined) this.named.set(name, this.values.length - 1);
    const placeholder = `$${this.values.length}::text`;
    return type === 'text' ? placeholder : `${placeholder}::${type}`;
  }

  /**
   * A filter value: like `add`, and converted once by `evaluations` whether or not a row is read.
   * `part`: the query string part of the comparison it is the value of (`parts`).
   */
  addFilterValue(value: SqlParam, type: string, part?: number): string {
    const sql = this.add(value, type);
    if (part !== undefined) this.parts.set(part, [...(this.parts.get(part) ?? []), this.values.length - 1]);
    if (type !== 'text') this.evaluateOnce(sql);
    return sql;
  }

  /** Has `evaluations` evaluate `expression` (built from the caller's values) once per statement. */
  evaluateOnce(expression: string): void {
    this.#once.push(expression);
  }

  /**
   * An expression that evaluates every registered expression once. Plans are generic (see
   * db/port.ts), so a filter's cast runs per row, and a malformed date, an overflowing number or a
   * broken search query over no rows would pass unnoticed; selected once per statement, it fails
   * the same way whatever the data.
   */
  evaluations(): string {
    return this.#once.length ? `num_nonnulls(${this.#once.join(', ')})` : '0';
  }
}

/** A quoted identifier. Names come from the registry, but quoting keeps them inert regardless. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A string literal of one of our own constants (a type name, a custom-field type), never of a caller's value. */
export function constant(text: string): string {
  if (!CONSTANT.test(text)) throw new Error(`refusing SQL constant ${JSON.stringify(text)}`);
  return `'${text}'`;
}

/** `"a" text, "b" uuid`: a column list for json_to_record(set) with each field's SQL type. */
export const recordType = (fields: readonly Field[]): string =>
  fields.map((f) => `${ident(f.name)} ${f.type.sql}`).join(', ');
