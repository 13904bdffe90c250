/**
 * The typed request: what the parse stage makes of a query string and headers, before anything
 * is checked against the registry. Names here are what the caller wrote, not yet known to exist.
 */
import type { CompareOperator, IsValue, SearchOperator } from './operators.ts';

export interface JsonPathStep {
  readonly arrow: '->' | '->>';
  readonly key: string | number;
}

export interface FieldRef {
  readonly name: string;
  readonly jsonPath: readonly JsonPathStep[];
}

export type Quantifier = 'any' | 'all';

/** An operator and what followed it, as written; its grammar comes from the operator table (operators.ts). */
export type Operation =
  | {
      readonly kind: 'compare';
      readonly op: CompareOperator;
      /** `(any)`/`(all)`: the value is a list `{a,b}`, as quantifiable operators allow. */
      readonly quantifier: Quantifier | null;
      readonly value: string;
    }
  | { readonly kind: 'in'; readonly values: readonly string[] }
  | { readonly kind: 'is'; readonly value: IsValue }
  | { readonly kind: 'search'; readonly op: SearchOperator; readonly config: string | null; readonly value: string };

export interface FilterNode {
  readonly kind: 'filter';
  readonly field: FieldRef;
  readonly negated: boolean;
  readonly operation: Operation;
}

/** `and(...)`/`or(...)` over conditions of type C: the parsed request's, or the plan's. */
export interface Logic<C> {
  readonly kind: 'logic';
  readonly op: 'and' | 'or';
  readonly negated: boolean;
  readonly children: readonly C[];
}

export type LogicNode = Logic<Condition>;

export type Condition = FilterNode | LogicNode;

export type SelectItem =
  | { readonly kind: 'star' }
  | { readonly kind: 'field'; readonly field: FieldRef; readonly alias: string | null; readonly cast: string | null };

export interface OrderTerm {
  readonly field: FieldRef;
  readonly direction: 'asc' | 'desc' | null;
  readonly nulls: 'first' | 'last' | null;
}

/** The query string of a request, parsed. */
export interface QueryParams {
  /** null: the default, every field. */
  readonly select: readonly SelectItem[] | null;
  /** Conditions ANDed together: each filter parameter and each `and=`/`or=` tree. */
  readonly where: readonly Condition[];
  readonly order: readonly OrderTerm[];
  readonly limit: number | null;
  readonly offset: number | null;
  /** `columns=a,b`: the body keys a POST reads; null when absent. */
  readonly columns: readonly string[] | null;
  /** `on_conflict=a,b`: the unique fields an upsert resolves on; null when absent. */
  readonly onConflict: readonly string[] | null;
}

export type CountPreference = 'exact' | 'planned' | 'estimated';

export interface Preferences {
  readonly count: CountPreference | null;
  readonly return: 'minimal' | 'headers-only' | 'representation' | null;
  readonly resolution: 'merge-duplicates' | 'ignore-duplicates' | null;
  readonly missing: 'default' | 'null' | null;
  readonly handling: 'strict' | 'lenient' | null;
  readonly tx: 'commit' | 'rollback' | null;
  readonly maxAffected: number | null;
}

/** The media type the response will use: a JSON array, one JSON object, or CSV. */
export type ResponseFormat = 'json' | 'object' | 'csv';

export interface RangeHeader {
  readonly from: number;
  readonly to: number | null;
}

export type Method = 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  readonly method: Method;
  readonly resource: string;
  readonly query: QueryParams;
  readonly preferences: Preferences;
  readonly format: ResponseFormat;
  /** The Range header; honoured on GET only, as PostgREST does. */
  readonly range: RangeHeader | null;
}
