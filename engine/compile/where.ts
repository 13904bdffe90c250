/** Conditions, targets and ORDER BY terms to SQL, over a table aliased `t` (or the level's alias). */
import type { Operator } from '../operators.ts';
import type { PlannedCondition, PlannedEmbed, PlannedOperation, PlannedOrder, Target } from '../plan/types.ts';
import { ident, type Params } from './sql.ts';

/**
 * The SQL of every operator of the query language (operators.ts): the infix operator between a
 * field and its value, `IS` before a keyword for `is`, the tsquery function for searches. The type
 * checker holds this record to every operator, so a new one cannot be left without SQL.
 */
const OPERATOR_SQL = {
  eq: '=',
  neq: '<>',
  gt: '>',
  gte: '>=',
  lt: '<',
  lte: '<=',
  like: 'LIKE',
  ilike: 'ILIKE',
  match: '~',
  imatch: '~*',
  in: '= ANY',
  is: 'IS',
  isdistinct: 'IS DISTINCT FROM',
  cs: '@>',
  cd: '<@',
  ov: '&&',
  sl: '<<',
  sr: '>>',
  nxr: '&<',
  nxl: '&>',
  adj: '-|-',
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
} as const satisfies Record<Operator, string>;

const IS_SQL = { null: 'NULL', not_null: 'NOT NULL', true: 'TRUE', false: 'FALSE', unknown: 'UNKNOWN' } as const;

/** Regular expressions are compiled where first matched, so `match`/`imatch` values are tried once on ''. */
const REGEX: ReadonlySet<Operator> = new Set(['match', 'imatch']);

/** `t."col"`, followed by its JSON path with every key a parameter. */
export function target(t: Target, params: Params, table = 't'): string {
  let sql = `${table}.${ident(t.field.name)}`;
  for (const step of t.jsonPath) {
    sql +=
      step.arrow + (typeof step.key === 'number' ? params.add(String(step.key), 'int4') : params.add(step.key, 'text'));
  }
  return t.jsonPath.length ? `(${sql})` : sql;
}

/** `part`: the query string part of a top-level filter on a plain field (Params.parts). */
function operation(left: string, t: Target, op: PlannedOperation, params: Params, part?: number): string {
  const type = t.type.sql;
  switch (op.kind) {
    case 'compare': {
      const value = params.addFilterValue(op.value, type, part);
      if (REGEX.has(op.op)) params.evaluateOnce(`'' ${OPERATOR_SQL[op.op]} ${value}`);
      return `${left} ${OPERATOR_SQL[op.op]} ${value}`;
    }
    case 'quantified': {
      const list = params.addFilterValue(op.list, `${type}[]`);
      return `${left} ${OPERATOR_SQL[op.op]} ${op.quantifier.toUpperCase()}(${list})`;
    }
    case 'in':
      return `${left} ${OPERATOR_SQL.in}(${params.addFilterValue(op.list, `${type}[]`)})`;
    case 'is':
      return `${left} ${OPERATOR_SQL.is} ${IS_SQL[op.value]}`;
    case 'search': {
      const config = op.config === null ? '' : `${params.addFilterValue(op.config, 'regconfig')}, `;
      const query = `${OPERATOR_SQL[op.op]}(${config}${params.add(op.query, 'text')})`;
      params.evaluateOnce(query);
      return `to_tsvector(${config}${left}) @@ ${query}`;
    }
  }
}

/** Where a level's conditions and order are compiled: its table's alias, and how an embed is tested. */
export interface LevelContext {
  readonly params: Params;
  readonly table: string;
  /** The organisation, as SQL: the scope, or a parameter when planning an estimate. */
  readonly scoped: string;
  /** `EXISTS (...)` over an embed's matching rows; only reads have embeds. */
  readonly exists?: (embed: PlannedEmbed) => string;
  /** The value of a field of a to-one embed's row (after its filters), for ordering by it. */
  readonly embedded?: (embed: PlannedEmbed, field: Target) => string;
}

export function condition(c: PlannedCondition, ctx: LevelContext): string {
  switch (c.kind) {
    case 'filter': {
      const part = c.target.jsonPath.length === 0 ? c.part : undefined;
      const sql = operation(target(c.target, ctx.params, ctx.table), c.target, c.operation, ctx.params, part);
      return c.negated ? `NOT (${sql})` : sql;
    }
    case 'embedded': {
      if (!ctx.exists) throw new Error('an embed check outside a read');
      const exists = ctx.exists(c.embed);
      return c.present ? exists : `NOT ${exists}`;
    }
    case 'logic': {
      const sql = `(${c.children.map((child) => condition(child, ctx)).join(` ${c.op.toUpperCase()} `)})`;
      return c.negated ? `NOT ${sql}` : sql;
    }
  }
}

const DIRECTION_SQL = { asc: 'ASC', desc: 'DESC' } as const;
const NULLS_SQL = { first: 'NULLS FIRST', last: 'NULLS LAST' } as const;

/** The value an order term sorts by: a field of the level, or of a to-one embed (`contact(display_name)`). */
function orderValue(o: PlannedOrder, ctx: LevelContext): string {
  if (o.embed === null) return target(o.target, ctx.params, ctx.table);
  if (!ctx.embedded) throw new Error('ordering by an embed outside a read');
  return ctx.embedded(o.embed, o.target);
}

export function orderBy(terms: readonly PlannedOrder[], ctx: LevelContext): string {
  if (terms.length === 0) return '';
  const parts = terms.map((o) =>
    [orderValue(o, ctx), o.direction && DIRECTION_SQL[o.direction], o.nulls && NULLS_SQL[o.nulls]]
      .filter(Boolean)
      .join(' '),
  );
  return ` ORDER BY ${parts.join(', ')}`;
}
