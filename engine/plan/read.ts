/**
 * Read plan: resolves every field a GET names against the registry, checks that each operator
 * fits its field, validates values and works out the page (limit, offset, Range, MAX_ROWS).
 * A name that does not exist, may not be filtered or may not be ordered on is a 400 here.
 */
import { ApiError } from '../errors.ts';
import { IS_VALUES, MAX_PATTERN_LENGTH, OPERATORS, OPERATORS_BY_KIND, SCALAR_KINDS } from '../operators.ts';
import { showField } from '../parse/field.ts';
import type { Field, FieldKind, Resource } from '../registry.ts';
import type { ApiRequest, Condition, FieldRef, Operation, OrderTerm, SelectItem } from '../request.ts';
import type { PlannedColumn, PlannedCondition, PlannedOperation, PlannedOrder, ReadPlan, Target } from './types.ts';
import { arrayLiteral, checkValue } from './values.ts';

/** Casts `select` may ask for, by the names callers write, to the name we emit. */
const SAFE_CASTS: Record<string, string> = {
  text: 'text',
  varchar: 'text',
  uuid: 'uuid',
  int: 'int4',
  int4: 'int4',
  integer: 'int4',
  int8: 'int8',
  bigint: 'int8',
  numeric: 'numeric',
  decimal: 'numeric',
  float8: 'float8',
  'double precision': 'float8',
  real: 'float4',
  float4: 'float4',
  bool: 'boolean',
  boolean: 'boolean',
  date: 'date',
  timestamptz: 'timestamptz',
  timestamp: 'timestamp',
  json: 'json',
  jsonb: 'jsonb',
};

/** The cast names `select` accepts, for documentation. */
export const SELECT_CASTS: readonly string[] = Object.keys(SAFE_CASTS);

/** The resource's field of that name; 400 UNKNOWN_FIELD listing its fields when it has none. */
export function knownField(resource: Resource, name: string): Field {
  const field = resource.field(name);
  if (field) return field;
  throw new ApiError('UNKNOWN_FIELD', `${resource.name} has no field "${name}"`, {
    hint: `Fields of ${resource.name}: ${resource.fields.map((f) => f.name).join(', ')}.`,
    context: { resource: resource.name, field: name },
  });
}

function resolve(resource: Resource, ref: FieldRef, use: 'select' | 'filter' | 'order'): Target {
  const field = knownField(resource, ref.name);
  if (use === 'filter' && !field.filterable) {
    throw new ApiError('UNKNOWN_FIELD', `${resource.name} cannot be filtered on "${field.name}"`, {
      hint: `Filterable fields: ${resource.fields
        .filter((f) => f.filterable)
        .map((f) => f.name)
        .join(', ')}.`,
      context: { resource: resource.name, field: field.name },
    });
  }
  if (use === 'order' && !field.orderable) {
    const allowed = resource.fields.filter((f) => f.orderable).map((f) => f.name);
    throw new ApiError('UNKNOWN_FIELD', `${resource.name} cannot be ordered by "${field.name}"`, {
      hint: allowed.length ? `Allowed order fields: ${allowed.join(', ')}.` : `${resource.name} has no order fields.`,
      context: { resource: resource.name, field: field.name },
    });
  }
  if (ref.jsonPath.length === 0) return { field, jsonPath: [], kind: field.kind };
  if (field.kind !== 'jsonb') {
    throw new ApiError(
      'INVALID_QUERY',
      `"${showField(ref)}": a JSON path ("->", "->>") applies only to JSON fields, and ${field.name} is ${field.kind}`,
      {
        context: { field: field.name },
      },
    );
  }
  const last = ref.jsonPath[ref.jsonPath.length - 1]!;
  return { field, jsonPath: ref.jsonPath, kind: last.arrow === '->>' ? 'text' : 'jsonb' };
}

function refuse(target: Target, op: string, why: string): never {
  const shown = showField({ name: target.field.name, jsonPath: target.jsonPath });
  throw new ApiError('INVALID_QUERY', `operator "${op}" cannot be used on ${shown}: ${why}`, {
    context: { field: target.field.name, operator: op },
  });
}

const applies = (kinds: readonly FieldKind[], kind: FieldKind) => kinds.includes(kind);

/** The operator's name as hints spell it: `is.<value>` for `is`. */
const operatorName = (operation: Operation): string =>
  operation.kind === 'in' ? 'in' : operation.kind === 'is' ? `is.${operation.value}` : operation.op;

function planOperation(target: Target, operation: Operation): PlannedOperation {
  const { kind } = target;
  const name = target.field.name;
  const kinds =
    operation.kind === 'is'
      ? IS_VALUES[operation.value]
      : OPERATORS[operation.kind === 'in' ? 'in' : operation.op].kinds;
  if (!applies(kinds, kind)) {
    refuse(target, operatorName(operation), `a ${kind} field takes ${OPERATORS_BY_KIND[kind].join(', ')}`);
  }
  switch (operation.kind) {
    case 'is':
      return { kind: 'is', value: operation.value };
    case 'in':
      for (const v of operation.values) checkValue(name, kind, v);
      return { kind: 'in', list: arrayLiteral(operation.values) };
    case 'search':
      return { kind: 'search', op: operation.op, config: operation.config, query: operation.value };
    case 'compare': {
      const { op, quantifier } = operation;
      if ('pattern' in OPERATORS[op] && operation.value.length > MAX_PATTERN_LENGTH) {
        throw new ApiError(
          'INVALID_QUERY',
          `the ${op} pattern on ${name} is ${operation.value.length} characters long;` +
            ` a pattern may have at most ${MAX_PATTERN_LENGTH}`,
          { context: { field: name, operator: op, length: operation.value.length, limit: MAX_PATTERN_LENGTH } },
        );
      }
      const value = 'starWildcard' in OPERATORS[op] ? operation.value.replace(/\*/g, '%') : operation.value;
      if (quantifier === null) {
        checkValue(name, kind, operation.value);
        return { kind: 'compare', op, value };
      }
      if (!applies(SCALAR_KINDS, kind)) {
        refuse(target, `${op}(${quantifier})`, `it applies to scalar fields, and this field is ${kind}`);
      }
      if (!/^\{.*\}$/s.test(operation.value.trim())) {
        throw new ApiError(
          'INVALID_QUERY',
          `${op}(${quantifier}) on ${name} takes a list literal such as {a,b}, not "${operation.value}"`,
          { context: { field: name, value: operation.value } },
        );
      }
      return { kind: 'quantified', op, quantifier, list: value };
    }
  }
}

export function planCondition(resource: Resource, condition: Condition): PlannedCondition {
  if (condition.kind === 'logic') {
    return {
      kind: 'logic',
      op: condition.op,
      negated: condition.negated,
      children: condition.children.map((c) => planCondition(resource, c)),
    };
  }
  const target = resolve(resource, condition.field, 'filter');
  return { kind: 'filter', target, negated: condition.negated, operation: planOperation(target, condition.operation) };
}

/** Output keys become quoted identifiers: printable name characters only, and no longer than PostgreSQL keeps. */
const SAFE_KEY = /^[\p{L}\p{N}_$ -]+$/u;

/** The key a selected column gets: its alias, else the last key of its JSON path, else its name. */
function columnKey(item: Extract<SelectItem, { kind: 'field' }>): string {
  const named = [...item.field.jsonPath].reverse().find((step) => typeof step.key === 'string');
  const key = item.alias ?? (named ? String(named.key) : item.field.name);
  if (!SAFE_KEY.test(key) || Buffer.byteLength(key) > 63) {
    throw new ApiError(
      'INVALID_QUERY',
      `"${key}" cannot be a key of the response: ` +
        'use an alias of letters, digits, "_", "$", "-" or spaces, at most 63 bytes',
      {
        context: { field: item.field.name, key },
      },
    );
  }
  return key;
}

export function planColumns(
  resource: Resource,
  select: readonly SelectItem[] | null,
): { columns: PlannedColumn[]; star: boolean } {
  const items = select ?? [{ kind: 'star' } as const];
  const columns: PlannedColumn[] = [];
  let star = false;
  const whole = (field: Field): PlannedColumn => ({
    target: { field, jsonPath: [], kind: field.kind },
    cast: null,
    key: field.name,
  });
  for (const item of items) {
    if (item.kind === 'star') {
      star = true;
      columns.push(...resource.fields.map(whole));
      continue;
    }
    let cast: string | null = null;
    if (item.cast !== null) {
      cast = Object.hasOwn(SAFE_CASTS, item.cast.toLowerCase()) ? SAFE_CASTS[item.cast.toLowerCase()]! : null;
      if (!cast) {
        throw new ApiError('INVALID_QUERY', `cannot cast ${showField(item.field)} to "${item.cast}"`, {
          hint: `Casts allowed in select: ${Object.keys(SAFE_CASTS).join(', ')}.`,
          context: { field: item.field.name, cast: item.cast },
        });
      }
    }
    columns.push({ target: resolve(resource, item.field, 'select'), cast, key: columnKey(item) });
  }
  return { columns, star };
}

function planOrder(resource: Resource, terms: readonly OrderTerm[]): PlannedOrder[] {
  return terms.map((term) => ({
    target: resolve(resource, term.field, 'order'),
    direction: term.direction,
    nulls: term.nulls,
  }));
}

/**
 * The page: limit/offset intersected with the Range header (GET only), capped at MAX_ROWS.
 * A null limit means "all rows" before the cap.
 */
function planPage(request: ApiRequest, maxRows: number): { offset: number; limit: number } {
  let offset = request.query.offset ?? 0;
  let last = request.query.limit === null ? Number.POSITIVE_INFINITY : offset + request.query.limit - 1;
  if (request.range) {
    offset = Math.max(offset, request.range.from);
    last = Math.min(last, request.range.to ?? Number.POSITIVE_INFINITY);
  }
  const limit = last === Number.POSITIVE_INFINITY ? maxRows : Math.max(0, Math.min(maxRows, last - offset + 1));
  return { offset, limit };
}

export function planRead(resource: Resource, request: ApiRequest, maxRows: number): ReadPlan {
  const { columns, star } = planColumns(resource, request.query.select);
  const { offset, limit } = planPage(request, maxRows);
  return {
    resource,
    columns,
    customFields: star && resource.customFields !== undefined,
    where: request.query.where.map((c) => planCondition(resource, c)),
    order: planOrder(resource, request.query.order),
    offset,
    limit,
    count: request.preferences.count,
    limitOfCount: maxRows + 1,
    format: request.format,
    head: request.method === 'HEAD',
  };
}
