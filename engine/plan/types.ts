/** The plan: a request checked against the registry, every name resolved to a field. */
import type { Field, Resource } from '../registry.ts';
import type { CountPreference, JsonPathStep, ResponseFormat } from '../request.ts';

/** A field, possibly followed by a JSON path. */
export interface Target {
  readonly field: Field;
  readonly jsonPath: readonly JsonPathStep[];
  /** The SQL type of the expression: the field's, or text/jsonb after a JSON path. */
  readonly type: string;
}

export type Comparison =
  | '='
  | '<>'
  | '>'
  | '>='
  | '<'
  | '<='
  | 'LIKE'
  | 'ILIKE'
  | '~'
  | '~*'
  | '@>'
  | '<@'
  | '&&'
  | 'IS DISTINCT FROM';
export type IsKeyword = 'NULL' | 'NOT NULL' | 'TRUE' | 'FALSE' | 'UNKNOWN';
export type TsQueryFunction = 'to_tsquery' | 'plainto_tsquery' | 'phraseto_tsquery' | 'websearch_to_tsquery';

/** Values travel as bound parameters cast to `type`; nothing here is ever spliced into SQL. */
export type PlannedOperation =
  | { readonly kind: 'compare'; readonly operator: Comparison; readonly value: string; readonly type: string }
  | {
      readonly kind: 'quantified';
      readonly operator: Comparison;
      readonly quantifier: 'ANY' | 'ALL';
      readonly array: string;
      readonly type: string;
    }
  | { readonly kind: 'in'; readonly array: string; readonly type: string }
  | { readonly kind: 'is'; readonly keyword: IsKeyword }
  | { readonly kind: 'fts'; readonly fn: TsQueryFunction; readonly language: string | null; readonly query: string };

export interface PlannedFilter {
  readonly kind: 'filter';
  readonly target: Target;
  readonly negated: boolean;
  readonly operation: PlannedOperation;
}

export interface PlannedLogic {
  readonly kind: 'logic';
  readonly op: 'AND' | 'OR';
  readonly negated: boolean;
  readonly children: readonly PlannedCondition[];
}

export type PlannedCondition = PlannedFilter | PlannedLogic;

export interface PlannedColumn {
  readonly target: Target;
  /** A cast from the safe list, already normalised (`int4`, `text`...). */
  readonly cast: string | null;
  /** The key of this column in each JSON object. */
  readonly key: string;
}

export interface PlannedOrder {
  readonly target: Target;
  readonly direction: 'ASC' | 'DESC' | null;
  readonly nulls: 'FIRST' | 'LAST' | null;
}

export interface ReadPlan {
  readonly resource: Resource;
  readonly columns: readonly PlannedColumn[];
  /** Whether each object also carries the record's custom-field values. */
  readonly customFields: boolean;
  readonly where: readonly PlannedCondition[];
  readonly order: readonly PlannedOrder[];
  readonly offset: number;
  /** Always set: MAX_ROWS when the caller asked for no limit. */
  readonly limit: number;
  readonly count: CountPreference | null;
  /** How far `count=estimated` counts exactly before it asks the planner: MAX_ROWS + 1. */
  readonly limitOfCount: number;
  readonly format: ResponseFormat;
  /** HEAD: the same statement without building a body. */
  readonly head: boolean;
}

/** What a write answers with, and the checks that roll it back (decisions.md section 3). */
export interface WriteOutput {
  /** The fields of the representation (`select`), and whether custom fields are merged in. */
  readonly columns: readonly PlannedColumn[];
  readonly customFields: boolean;
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
  readonly resource: Resource;
  /** The body's fields, in order; the union of every item's keys (or `columns=`). */
  readonly fields: readonly Field[];
  /** Items as JSON text, one parameter for the whole body. */
  readonly rows: string;
  readonly claimedOrganisations: readonly string[];
  readonly conflict: { readonly target: readonly Field[]; readonly action: 'update' | 'nothing' } | null;
}

export interface UpdatePlan extends WriteOutput {
  readonly kind: 'update';
  readonly resource: Resource;
  readonly fields: readonly Field[];
  readonly row: string;
  readonly claimedOrganisations: readonly string[];
  readonly where: readonly PlannedCondition[];
  /** Custom-field values to write with the update (`*_details`), as a JSON object's text. */
  readonly customValues: string | null;
}

export interface DeletePlan extends WriteOutput {
  readonly kind: 'delete';
  readonly resource: Resource;
  readonly where: readonly PlannedCondition[];
}

export type WritePlan = InsertPlan | UpdatePlan | DeletePlan;
