/**
 * The typed request: what the parse stage makes of a query string and headers, before anything
 * is checked against the registry. Names here are what the caller wrote, not yet known to exist.
 */

import type { CompareOperator, IsValue, SearchOperator } from './operators.ts';
import type { EntityTags } from './parse/preconditions.ts';

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
  /** A top-level filter's place among the query string's parts (read-cache.ts varies its value). */
  readonly part?: number;
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

/** The aggregate functions `select` offers (`value.sum()`, `count()`). */
export const AGGREGATES = ['count', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof AGGREGATES)[number];

/** `field.sum()` and the like: the function and the cast of its result (`value.sum()::int`). */
export interface AggregateCall {
  readonly fn: AggregateFunction;
  readonly cast: string | null;
}

/** `[alias:]relation[!hint][!inner|!left](...)` or `...relation(...)`: another resource embedded. */
export interface EmbedItem {
  readonly kind: 'embed';
  /** The relation as written: a resource's name, a foreign key's name or a foreign key's field. */
  readonly relation: string;
  /** `!name`: the foreign key (or its field) that picks one of several relations to the same resource. */
  readonly hint: string | null;
  /** `!inner` drops parent rows without a match; `!left` (the default) keeps them. */
  readonly join: 'inner' | 'left' | null;
  readonly alias: string | null;
  /** `...relation(...)`: the embed's fields are lifted into the parent object. */
  readonly spread: boolean;
  /** What is selected inside; empty for `relation()`, which filters without being shown. */
  readonly select: readonly SelectItem[];
}

export type SelectItem =
  | { readonly kind: 'star' }
  | {
      readonly kind: 'field';
      readonly field: FieldRef;
      readonly alias: string | null;
      readonly cast: string | null;
      readonly aggregate: AggregateCall | null;
    }
  /** `count()`: the number of rows (of each group). */
  | { readonly kind: 'count'; readonly alias: string | null; readonly cast: string | null }
  | EmbedItem;

export interface OrderTerm {
  /** `relation(field)`: ordering by a field of a to-one embed. */
  readonly relation: string | null;
  readonly field: FieldRef;
  readonly direction: 'asc' | 'desc' | null;
  readonly nulls: 'first' | 'last' | null;
}

/** The filters, order and page of one level of a read: the resource itself, or an embed. */
export interface LevelParams {
  /** Conditions ANDed together: each filter parameter and each `and=`/`or=` tree. */
  readonly where: readonly Condition[];
  readonly order: readonly OrderTerm[];
  readonly limit: number | null;
  readonly offset: number | null;
}

/** The query string of a request, parsed. */
export interface QueryParams extends LevelParams {
  /** null: the default, every field. */
  readonly select: readonly SelectItem[] | null;
  /**
   * Parameters prefixed by an embed's path (`deal.value=gt.1`, `deal.contact.order=...`), by that
   * path joined with "."; the planner checks that each path is embedded.
   */
  readonly embedded: ReadonlyMap<string, LevelParams>;
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
  /** `single-object`: a function call's whole body is its one json argument. */
  readonly params: 'single-object' | null;
  readonly maxAffected: number | null;
}

/** The media type the response will use: a JSON array, one JSON object, or CSV. */
export type ResponseFormat = 'json' | 'object' | 'csv';

export interface RangeHeader {
  readonly from: number;
  readonly to: number | null;
}

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface ApiRequest {
  readonly method: Method;
  readonly resource: string;
  readonly query: QueryParams;
  readonly preferences: Preferences;
  readonly format: ResponseFormat;
  /** The Range header; honoured on GET only, as PostgREST does. */
  readonly range: RangeHeader | null;
  /** `If-Match`: PATCH and DELETE write only records at one of its versions. */
  readonly ifMatch: EntityTags | null;
}
