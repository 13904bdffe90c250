/** Conditions, targets and ORDER BY terms to SQL, over a table aliased `t`. */
import type { PlannedCondition, PlannedOperation, PlannedOrder, Target } from '../plan/types.ts';
import { ident, type Params } from './sql.ts';

/** `t."col"`, followed by its JSON path with every key a parameter. */
export function target(t: Target, params: Params, table = 't'): string {
  let sql = `${table}.${ident(t.field.name)}`;
  for (const step of t.jsonPath) {
    sql +=
      step.arrow + (typeof step.key === 'number' ? params.add(String(step.key), 'int4') : params.add(step.key, 'text'));
  }
  return t.jsonPath.length ? `(${sql})` : sql;
}

function operation(left: string, op: PlannedOperation, params: Params): string {
  switch (op.kind) {
    case 'compare': {
      const value = params.addFilterValue(op.value, op.type);
      // A regular expression is compiled where it is first matched: match it once against ''.
      if (op.operator === '~' || op.operator === '~*') params.convertOnce(`'' ${op.operator} ${value}`);
      return `${left} ${op.operator} ${value}`;
    }
    case 'quantified':
      return `${left} ${op.operator} ${op.quantifier}(${params.addFilterValue(op.array, `${op.type}[]`)})`;
    case 'in':
      return `${left} = ANY(${params.addFilterValue(op.array, `${op.type}[]`)})`;
    case 'is':
      return `${left} IS ${op.keyword}`;
    case 'fts': {
      const language = op.language === null ? '' : `${params.addFilterValue(op.language, 'regconfig')}, `;
      const query = `${op.fn}(${language}${params.add(op.query, 'text')})`;
      params.convertOnce(query);
      return `to_tsvector(${language}${left}) @@ ${query}`;
    }
  }
}

export function condition(c: PlannedCondition, params: Params): string {
  if (c.kind === 'filter') {
    const sql = operation(target(c.target, params), c.operation, params);
    return c.negated ? `NOT (${sql})` : sql;
  }
  const sql = `(${c.children.map((child) => condition(child, params)).join(` ${c.op} `)})`;
  return c.negated ? `NOT ${sql}` : sql;
}

export function orderBy(terms: readonly PlannedOrder[], params: Params): string {
  if (terms.length === 0) return '';
  const parts = terms.map((o) =>
    [target(o.target, params), o.direction, o.nulls && `NULLS ${o.nulls}`].filter(Boolean).join(' '),
  );
  return ` ORDER BY ${parts.join(', ')}`;
}
