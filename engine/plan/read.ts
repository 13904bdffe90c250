/**
 * Read plan: resolves every field a GET names against the registry, checks that each operator
 * fits its field, validates values and works out the page (limit, offset, Range, MAX_ROWS).
 * A name that does not exist, may not be filtered or may not be ordered on is a 400 here.
 */
import { ApiError } from '../errors.ts';
import { showField } from '../parse/field.ts';
import type { Field, FieldKind, Resource } from '../registry.ts';
import type { ApiRequest, Condition, FieldRef, FilterNode, Operation, OrderTerm, SelectItem } from '../request.ts';
import type {
  Comparison,
  PlannedColumn,
  PlannedCondition,
  PlannedOperation,
  PlannedOrder,
  ReadPlan,
  Target,
  TsQueryFunction,
} from './types.ts';
import { arrayLiteral, checkValue, SQL_TYPE } from './values.ts';

const COMPARISONS: Record<string, Comparison> = {
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
  cs: '@>',
  cd: '<@',
  ov: '&&',
  isdistinct: 'IS DISTINCT FROM',
};

const TS_QUERY: Record<string, TsQueryFunction> = {
  fts: 'to_tsquery',
  plfts: 'plainto_tsquery',
  phfts: 'phraseto_tsquery',
  wfts: 'websearch_to_tsquery',
};

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

const COMPARE = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'isdistinct', 'is.null', 'is.not_null'];
const SCALAR = [...COMPARE, 'in'];

/**
 * The filter operators each kind of value takes (`is.<value>` for `is`). The range operators
 * (sl, sr, nxr, nxl, adj) parse but no field takes them: no resource has a range field.
 */
export const OPERATORS: Record<FieldKind, readonly string[]> = {
  uuid: SCALAR,
  integer: SCALAR,
  numeric: SCALAR,
  date: SCALAR,
  timestamptz: SCALAR,
  text: [...SCALAR, 'like', 'ilike', 'match', 'imatch', 'fts', 'plfts', 'phfts', 'wfts'],
  boolean: [...SCALAR, 'is.true', 'is.false', 'is.unknown'],
  'text[]': [...COMPARE, 'cs', 'cd', 'ov'],
  jsonb: [...COMPARE, 'cs', 'cd'],
};

function resolve(resource: Resource, ref: FieldRef, use: 'select' | 'filter' | 'order'): Target {
  const field = resource.field(ref.name);
  if (!field) {
    throw new ApiError('UNKNOWN_FIELD', `${resource.name} has no field "${ref.name}"`, {
      hint: `Fields of ${resource.name}: ${resource.fields.map((f) => f.name).join(', ')}.`,
      context: { resource: resource.name, field: ref.name },
    });
  }
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
  if (ref.jsonPath.length === 0) return { field, jsonPath: [], type: SQL_TYPE[field.kind] };
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
  return { field, jsonPath: ref.jsonPath, type: last.arrow === '->>' ? 'text' : 'jsonb' };
}

/** The kind a target's values must have: the field's, or text/JSON after a JSON path. */
const valueKind = (target: Target) =>
  target.jsonPath.length === 0 ? target.field.kind : target.type === 'text' ? 'text' : 'jsonb';

function refuse(target: Target, op: string, why: string): never {
  throw new ApiError(
    'INVALID_QUERY',
    `operator "${op}" cannot be used on ${showField({ name: target.field.name, jsonPath: target.jsonPath })}: ${why}`,
    {
      context: { field: target.field.name, operator: op },
    },
  );
}

const operatorName = (operation: Operation): string =>
  operation.kind === 'in' ? 'in' : operation.kind === 'is' ? `is.${operation.value}` : operation.op;

function planOperation(target: Target, operation: Operation): PlannedOperation {
  const kind = valueKind(target);
  const name = target.field.name;
  const op = operatorName(operation);
  if (!OPERATORS[kind].includes(op)) refuse(target, op, `a ${kind} field takes ${OPERATORS[kind].join(', ')}`);

  switch (operation.kind) {
    case 'is':
      return {
        kind: 'is',
        keyword: ({ null: 'NULL', not_null: 'NOT NULL', true: 'TRUE', false: 'FALSE', unknown: 'UNKNOWN' } as const)[
          operation.value
        ],
      };
    case 'in':
      for (const v of operation.values) checkValue(name, kind, v);
      return { kind: 'in', array: arrayLiteral(operation.values), type: target.type };
    case 'fts':
      return { kind: 'fts', fn: TS_QUERY[operation.op]!, language: operation.language, query: operation.value };
    case 'simple':
      checkValue(name, kind, operation.value);
      return { kind: 'compare', operator: COMPARISONS[operation.op]!, value: operation.value, type: target.type };
    case 'quantifiable': {
      const operator = COMPARISONS[operation.op]!;
      // PostgREST's like patterns use * for %, as % is awkward in URLs.
      const pattern = (v: string) => (operation.op === 'like' || operation.op === 'ilike' ? v.replace(/\*/g, '%') : v);
      if (operation.quantifier === null) {
        checkValue(name, kind, operation.value);
        return { kind: 'compare', operator, value: pattern(operation.value), type: target.type };
      }
      if (kind === 'text[]' || kind === 'jsonb')
        refuse(
          target,
          `${operation.op}(${operation.quantifier})`,
          `it applies to scalar fields, and this field is ${kind}`,
        );
      if (!/^\{.*\}$/s.test(operation.value.trim())) {
        throw new ApiError(
          'INVALID_QUERY',
          `${operation.op}(${operation.quantifier}) on ${name} takes an array literal such as {a,b}, not "${operation.value}"`,
          {
            context: { field: name, value: operation.value },
          },
        );
      }
      return {
        kind: 'quantified',
        operator,
        quantifier: operation.quantifier === 'any' ? 'ANY' : 'ALL',
        array: pattern(operation.value),
        type: target.type,
      };
    }
  }
}

export function planCondition(resource: Resource, condition: Condition): PlannedCondition {
  if (condition.kind === 'logic') {
    return {
      kind: 'logic',
      op: condition.op === 'and' ? 'AND' : 'OR',
      negated: condition.negated,
      children: condition.children.map((c) => planCondition(resource, c)),
    };
  }
  const filter: FilterNode = condition;
  const target = resolve(resource, filter.field, 'filter');
  return { kind: 'filter', target, negated: filter.negated, operation: planOperation(target, filter.operation) };
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
      `"${key}" cannot be a key of the response: use an alias of letters, digits, "_", "$", "-" or spaces, at most 63 bytes`,
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
    target: { field, jsonPath: [], type: SQL_TYPE[field.kind] },
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
    direction: term.direction === null ? null : term.direction === 'asc' ? 'ASC' : 'DESC',
    nulls: term.nulls === null ? null : term.nulls === 'first' ? 'FIRST' : 'LAST',
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
