/**
 * The filter operators of the query language, PostgREST's: what follows each in a filter (its
 * grammar) and the kinds of field it applies to. Parse, plan, OpenAPI and error hints read this
 * table, and compile gives each operator its SQL in a record the type checker holds to every key
 * (`OPERATOR_SQL` in compile/where.ts). Adding an operator is an entry here, its SQL there, and
 * tests (docs/architecture.md, "Adding an operator").
 */
import { FIELD_KINDS, type FieldKind, KINDS } from './field-kinds.ts';

/**
 * How an operator is written after `field=[not.]`:
 * - `value`: `op.value`
 * - `quantifiable`: `op.value`, or `op(any).{a,b}` / `op(all).{a,b}` over a list
 * - `list`: `op.(a,b,"c,d")`
 * - `is`: `op.null|not_null|true|false|unknown`
 * - `search`: `op.query` or `op(config).query`, a text-search configuration in parentheses
 */
type Grammar = 'value' | 'quantifiable' | 'list' | 'is' | 'search';

interface OperatorSpec {
  readonly grammar: Grammar;
  /**
   * The kinds of field it applies to, those whose record (field-kinds.ts) allows it; a field reached
   * through `->`/`->>` is `jsonb`/`text`.
   */
  readonly kinds: readonly FieldKind[];
  /** What it means, for OpenAPI and docs/query-language.md. */
  readonly meaning: string;
  /** `*` in its value stands for `%` (PostgREST's like patterns: `%` is awkward in URLs). */
  readonly starWildcard?: true;
  /** Its value is a pattern matched against each row, whose cost grows with its length: see MAX_PATTERN_LENGTH. */
  readonly pattern?: true;
}

/**
 * The longest value a pattern operator takes. A pattern of thousands of characters costs seconds
 * per thousand rows to match, and no search a person writes needs more.
 */
export const MAX_PATTERN_LENGTH = 400;

/**
 * The text-search configurations `fts(config)` may name: PostgreSQL's built-in ones. A name is
 * checked here rather than by the database, which would report another schema's absence as a fault.
 */
export const TEXT_SEARCH_CONFIGS: ReadonlySet<string> = new Set(
  (
    'arabic armenian basque catalan danish dutch english finnish french german greek hindi hungarian indonesian' +
    ' irish italian lithuanian nepali norwegian portuguese romanian russian serbian simple spanish swedish tamil' +
    ' turkish yiddish'
  ).split(' '),
);

/** What a kind's values allow, as its record says. */
type Capability = 'equality' | 'ordered' | 'textual' | 'contains' | 'overlaps' | 'ranged' | 'listable';

const ALL: readonly FieldKind[] = FIELD_KINDS;
/** The kinds whose record allows `capability`. */
const having = (capability: Capability): readonly FieldKind[] => ALL.filter((kind) => KINDS[kind][capability]);
/** Kinds with single values, which lists (`in`, `any`, `all`) hold. */
export const SCALAR_KINDS: readonly FieldKind[] = having('listable');
const EQUALITY = having('equality');
const ORDERED = having('ordered');
const TEXT = having('textual');
const RANGED = having('ranged');

export const OPERATORS = {
  eq: { grammar: 'quantifiable', kinds: EQUALITY, meaning: 'equals' },
  neq: { grammar: 'value', kinds: EQUALITY, meaning: 'does not equal' },
  gt: { grammar: 'quantifiable', kinds: ORDERED, meaning: 'greater than' },
  gte: { grammar: 'quantifiable', kinds: ORDERED, meaning: 'greater than or equal' },
  lt: { grammar: 'quantifiable', kinds: ORDERED, meaning: 'less than' },
  lte: { grammar: 'quantifiable', kinds: ORDERED, meaning: 'less than or equal' },
  like: {
    grammar: 'quantifiable',
    kinds: TEXT,
    meaning: 'matches a LIKE pattern (`*` for `%`)',
    starWildcard: true,
    pattern: true,
  },
  ilike: { grammar: 'quantifiable', kinds: TEXT, meaning: 'like, ignoring case', starWildcard: true, pattern: true },
  match: { grammar: 'quantifiable', kinds: TEXT, meaning: 'matches a POSIX regular expression', pattern: true },
  imatch: { grammar: 'quantifiable', kinds: TEXT, meaning: 'match, ignoring case', pattern: true },
  in: { grammar: 'list', kinds: SCALAR_KINDS.filter((k) => EQUALITY.includes(k)), meaning: 'is one of a list' },
  is: { grammar: 'is', kinds: ALL, meaning: 'is null, not null, true, false or unknown' },
  isdistinct: { grammar: 'value', kinds: EQUALITY, meaning: 'is distinct from (null-safe not equal)' },
  cs: { grammar: 'value', kinds: having('contains'), meaning: 'contains' },
  cd: { grammar: 'value', kinds: having('contains'), meaning: 'is contained in' },
  ov: { grammar: 'value', kinds: having('overlaps'), meaning: 'overlaps (has an element in common)' },
  sl: { grammar: 'value', kinds: RANGED, meaning: 'is strictly left of (a range)' },
  sr: { grammar: 'value', kinds: RANGED, meaning: 'is strictly right of (a range)' },
  nxr: { grammar: 'value', kinds: RANGED, meaning: 'does not extend to the right of (a range)' },
  nxl: { grammar: 'value', kinds: RANGED, meaning: 'does not extend to the left of (a range)' },
  adj: { grammar: 'value', kinds: RANGED, meaning: 'is adjacent to (a range)' },
  fts: { grammar: 'search', kinds: TEXT, meaning: 'full-text search (to_tsquery)' },
  plfts: { grammar: 'search', kinds: TEXT, meaning: 'full-text search, plain words (plainto_tsquery)' },
  phfts: { grammar: 'search', kinds: TEXT, meaning: 'full-text search, a phrase (phraseto_tsquery)' },
  wfts: { grammar: 'search', kinds: TEXT, meaning: 'full-text search, web syntax (websearch_to_tsquery)' },
} as const satisfies Record<string, OperatorSpec>;

export type Operator = keyof typeof OPERATORS;

/** The operators written with a given grammar. */
type OperatorsWith<G extends Grammar> = {
  [K in Operator]: (typeof OPERATORS)[K]['grammar'] extends G ? K : never;
}[Operator];
export type CompareOperator = OperatorsWith<'value' | 'quantifiable'>;
export type SearchOperator = OperatorsWith<'search'>;

export const isOperator = (name: string): name is Operator => Object.hasOwn(OPERATORS, name);

/** The values `is` takes, and the kinds of field each applies to. */
export const IS_VALUES = {
  null: ALL,
  not_null: ALL,
  true: ['boolean'],
  false: ['boolean'],
  unknown: ['boolean'],
} as const satisfies Record<string, readonly FieldKind[]>;

export type IsValue = keyof typeof IS_VALUES;

export const isIsValue = (value: string): value is IsValue => Object.hasOwn(IS_VALUES, value);

/** What a field of each kind can be filtered with, as written in hints and OpenAPI: `is.<value>` spelled out. */
export const OPERATORS_BY_KIND = Object.fromEntries(
  ALL.map((kind) => [
    kind,
    (Object.keys(OPERATORS) as Operator[]).flatMap((op) => {
      if (!(OPERATORS[op].kinds as readonly FieldKind[]).includes(kind)) return [];
      if (op !== 'is') return [op];
      return (Object.keys(IS_VALUES) as IsValue[])
        .filter((value) => (IS_VALUES[value] as readonly FieldKind[]).includes(kind))
        .map((value) => `is.${value}`);
    }),
  ]),
) as unknown as Record<FieldKind, readonly string[]>;
