/** The plan: a request checked against the registry, every name resolved to a field. */

import type { ColumnType } from '../field-kinds.ts';
import type { CompareOperator, IsValue, SearchOperator } from '../operators.ts';
import type { Field, Relation, Resource } from '../registry/index.ts';
import type {
  AggregateFunction,
  CountPreference,
  JsonPathStep,
  Logic,
  Quantifier,
  ResponseFormat,
} from '../request.ts';
import type { Nested } from './nested.ts';

/** A field, possibly followed by a JSON path. */
export interface Target {
  readonly field: Field;
  readonly jsonPath: readonly JsonPathStep[];
  /**
   * The type of the expression's values: the field's, or text (`->>`) or json/jsonb (`->`, as the
   * field is) after a JSON path.
   */
  readonly type: ColumnType;
}

/**
 * An operation checked against its target: operators by name (compile gives them their SQL) and
 * values as the caller wrote them, each bound as a parameter of the target's kind.
 */
export type PlannedOperation =
  | { readonly kind: 'compare'; readonly op: CompareOperator; readonly value: string }
  /** `op(any)` / `op(all)` over a list literal `{a,b}`. */
  | {
      readonly kind: 'quantified';
      readonly op: CompareOperator;
      readonly quantifier: Quantifier;
      readonly list: string;
    }
  /** `in`: the elements as a list literal. */
  | { readonly kind: 'in'; readonly list: string }
  | { readonly kind: 'is'; readonly value: IsValue }
  | { readonly kind: 'search'; readonly op: SearchOperator; readonly config: string | null; readonly query: string };

export interface PlannedFilter {
  readonly kind: 'filter';
  readonly target: Target;
  readonly negated: boolean;
  readonly operation: PlannedOperation;
  /** The query string part it was written in, at the top level (FilterNode.part). */
  readonly part?: number;
}

/** `contact=is.null` / `contact=not.is.null`: whether an embed (after its own filters) has a match. */
export interface PlannedEmbedCheck {
  readonly kind: 'embedded';
  readonly embed: PlannedEmbed;
  readonly present: boolean;
}

export type PlannedLogic = Logic<PlannedCondition>;

export type PlannedCondition = PlannedFilter | PlannedEmbedCheck | PlannedLogic;

/** A field of the resource (with its JSON path) under a key. */
export interface PlannedColumn {
  readonly kind: 'field';
  readonly target: Target;
  /** A cast from the safe list, already normalised (`int4`, `text`...). */
  readonly cast: string | null;
  /** The key of this column in each JSON object. */
  readonly key: string;
}

/** `count()`, `field.sum()` and the like; the level's other fields group the rows. */
export interface AggregateColumn {
  readonly kind: 'aggregate';
  readonly fn: AggregateFunction;
  /** null for `count()`, which counts rows. */
  readonly target: Target | null;
  /** A cast of the field before it is aggregated (`value::int.sum()`). */
  readonly cast: string | null;
  /** A cast of the result (`value.sum()::int`). */
  readonly resultCast: string | null;
  readonly key: string;
}

/** An embed shown under its key: an object or null (to one), an array (to many). */
export interface EmbedColumn {
  readonly kind: 'embed';
  readonly embed: PlannedEmbed;
  readonly key: string;
}

/** One key of a spread embed lifted into the parent: its value (to one) or the array of its values (to many). */
export interface SpreadColumn {
  readonly kind: 'spread';
  readonly embed: PlannedEmbed;
  readonly key: string;
}

export type ReadColumn = PlannedColumn | AggregateColumn | EmbedColumn | SpreadColumn;

export interface PlannedOrder {
  /** Set when ordering by a field of a to-one embed, `order=contact(display_name)`: after its filters. */
  readonly embed: PlannedEmbed | null;
  readonly target: Target;
  readonly direction: 'asc' | 'desc' | null;
  readonly nulls: 'first' | 'last' | null;
}

/** How an embed appears in its parent's objects. */
export type EmbedShow = 'object' | 'spread' | 'none';

export interface PlannedEmbed {
  readonly relation: Relation;
  /** The alias, else the relation as written: what keys it in objects and prefixes its parameters. */
  readonly name: string;
  /** `!inner`: parent rows without a match are left out. */
  readonly inner: boolean;
  readonly show: EmbedShow;
  readonly level: ReadLevel;
}

/** One level of a read: the resource itself, or an embed with its own filters, order and page. */
export interface ReadLevel {
  readonly resource: Resource;
  readonly columns: readonly ReadColumn[];
  /** Whether each object also carries the record's custom-field values. */
  readonly customFields: boolean;
  readonly where: readonly PlannedCondition[];
  readonly order: readonly PlannedOrder[];
  readonly offset: number;
  /** At most MAX_ROWS, on every level. */
  readonly limit: number;
  /** Every embed of this level, shown or not (`relation()` only filters). */
  readonly embeds: readonly PlannedEmbed[];
  /** Whether an aggregate is selected: the level's fields then group its rows. */
  readonly grouped: boolean;
}

export interface ReadPlan extends ReadLevel {
  /** Always set: MAX_ROWS when the caller asked for no limit. */
  readonly limit: number;
  readonly count: CountPreference | null;
  /** How far `count=estimated` counts exactly before it asks the planner: MAX_ROWS + 1. */
  readonly limitOfCount: number;
  readonly format: ResponseFormat;
  /** HEAD: the same statement without building a body. */
  readonly head: boolean;
}

/** What a write answers with, and the checks that roll it back (docs/contract.md section 3). */
export interface WriteOutput {
  /** The representation (`select`): the written rows' fields, custom fields and embeds. */
  readonly representation: ReadLevel;
  readonly return: 'minimal' | 'headers-only' | 'representation';
  readonly count: CountPreference | null;
  readonly format: ResponseFormat;
  /** `Prefer: handling=strict, max-affected=n`: more affected rows roll the write back. */
  readonly maxAffected: number | null;
  /** `Prefer: tx=rollback`: answer as if written, then roll back. */
  readonly rollback: boolean;
  /** Preferences honoured, for Preference-Applied. */
  readonly applied: readonly string[];
}

export interface InsertPlan extends WriteOutput {
  readonly kind: 'insert';
  /** PUT: the one record the filters' key names, created or replaced (204 without a representation). */
  readonly put: boolean;
  readonly resource: Resource;
  /** The body's fields, in order; the union of every item's keys (or `columns=`). */
  readonly fields: readonly Field[];
  /** Items as JSON text, one parameter for the whole body. */
  readonly rows: string;
  /**
   * With `Prefer: missing=default`, when items leave out different fields: the items by the fields
   * they give, each group inserted with its own column list so that the database fills in the
   * others' defaults, whatever they are. Null when one insert takes every item.
   */
  readonly groups: readonly InsertGroup[] | null;
  readonly claimedTenants: readonly string[];
  /** Records the items name by reference, or create with them (plan/nested.ts). */
  readonly nested: Nested;
  readonly conflict: { readonly target: readonly Field[]; readonly action: 'update' | 'nothing' } | null;
}

/** Items that give the same fields, and those fields. */
export interface InsertGroup {
  readonly fields: readonly Field[];
  readonly rows: string;
}

export interface UpdatePlan extends WriteOutput {
  readonly kind: 'update';
  readonly resource: Resource;
  readonly fields: readonly Field[];
  /**
   * The fields to set, as a JSON object's text; for a PATCH by key (an array body), the items as a
   * JSON array's text, each with its key and `__keys`, the fields it gives.
   */
  readonly row: string;
  /** For a PATCH by key: how many items, each of which must change one record. */
  readonly items: number | null;
  readonly claimedTenants: readonly string[];
  readonly where: readonly PlannedCondition[];
  /** Custom-field values to write with the update (`*_details`), as a JSON object's text. */
  readonly customValues: string | null;
  readonly ifMatch: IfMatch | null;
}

export interface DeletePlan extends WriteOutput {
  readonly kind: 'delete';
  readonly resource: Resource;
  readonly where: readonly PlannedCondition[];
  readonly ifMatch: IfMatch | null;
}

/**
 * `If-Match` on PATCH and DELETE: the write goes ahead only if every record its filters match is
 * at one of these versions (any version for `*`), and at least one is; otherwise 412, nothing written.
 */
export type IfMatch = { readonly any: true } | { readonly any: false; readonly versions: readonly string[] };

export type WritePlan = InsertPlan | UpdatePlan | DeletePlan;
