/**
 * Read plan: resolves every field a GET names against the registry, checks that each operator
 * fits its field, validates values and works out the page (limit, offset, Range, MAX_ROWS).
 * A name that does not exist, may not be filtered or may not be ordered on is a 400 here.
 */
import { ApiError } from '../errors.ts';
import { type FieldKind, KINDS, kindType, typeName } from '../field-kinds.ts';
import { IS_VALUES, MAX_PATTERN_LENGTH, OPERATORS, OPERATORS_BY_KIND, SCALAR_KINDS } from '../operators.ts';
import { showField } from '../parse/field.ts';
import type { Field, Resource } from '../registry/index.ts';
import type {
  ApiRequest,
  Condition,
  EmbedItem,
  FieldRef,
  LevelParams,
  Operation,
  OrderTerm,
  SelectItem,
} from '../request.ts';
import { checkAggregate, planCast } from './casts.ts';
import { findRelation, notEmbedded } from './relations.ts';
import type {
  AggregateColumn,
  PlannedColumn,
  PlannedCondition,
  PlannedEmbed,
  PlannedOperation,
  PlannedOrder,
  ReadColumn,
  ReadLevel,
  ReadPlan,
  SpreadColumn,
  Target,
} from './types.ts';
import { arrayLiteral, checkList, checkValue } from './values.ts';

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
  const target = resolveField(resource, ref, use);
  const { kind } = target.type;
  // A type the engine has no record for is ordered as PostgreSQL orders it, if it does.
  if (use === 'order' && !KINDS[kind].ordered && kind !== 'other') {
    throw new ApiError(
      'INVALID_QUERY',
      `${showField(ref)} cannot be ordered: ${typeName(target.type)} values have no order`,
      {
        hint: 'Order by another field, or by a key of it (data->>key) when it is JSON.',
        context: { resource: resource.name, field: ref.name },
      },
    );
  }
  return target;
}

function resolveField(resource: Resource, ref: FieldRef, use: 'select' | 'filter' | 'order'): Target {
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
  if (ref.jsonPath.length === 0) return { field, jsonPath: [], type: field.type };
  if (field.kind !== 'jsonb' && field.kind !== 'json') {
    throw new ApiError(
      'INVALID_QUERY',
      `"${showField(ref)}": a JSON path ("->", "->>") applies only to JSON fields, and ${field.name} is ${field.kind}`,
      {
        context: { field: field.name },
      },
    );
  }
  const last = ref.jsonPath[ref.jsonPath.length - 1]!;
  return { field, jsonPath: ref.jsonPath, type: kindType(last.arrow === '->>' ? 'text' : field.kind) };
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
  const { type } = target;
  const { kind } = type;
  const name = target.field.name;
  const kinds =
    operation.kind === 'is'
      ? IS_VALUES[operation.value]
      : OPERATORS[operation.kind === 'in' ? 'in' : operation.op].kinds;
  if (!applies(kinds, kind)) {
    refuse(target, operatorName(operation), `a ${typeName(type)} field takes ${OPERATORS_BY_KIND[kind].join(', ')}`);
  }
  switch (operation.kind) {
    case 'is':
      return { kind: 'is', value: operation.value };
    case 'in':
      for (const v of operation.values) checkValue(name, type, v);
      return { kind: 'in', list: arrayLiteral(operation.values) };
    case 'search':
      checkValue(name, type, operation.value);
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
        checkValue(name, type, operation.value);
        return { kind: 'compare', op, value };
      }
      if (!applies(SCALAR_KINDS, kind)) {
        refuse(target, `${op}(${quantifier})`, `it applies to scalar fields, and this field is ${typeName(type)}`);
      }
      checkList(name, type, operation.value, `${op}(${quantifier})`);
      return { kind: 'quantified', op, quantifier, list: value };
    }
  }
}

/** An embed null check (`contact=is.null`, `contact=not.is.null`); anything else on an embed is a 400. */
function planEmbedCheck(embed: PlannedEmbed, negated: boolean, operation: Operation): PlannedCondition {
  if (operation.kind !== 'is' || (operation.value !== 'null' && operation.value !== 'not_null')) {
    throw new ApiError(
      'INVALID_QUERY',
      `"${embed.name}" is an embedded resource: it can only be filtered with is.null`,
      {
        hint:
          `Use ${embed.name}=is.null (no match) or ${embed.name}=not.is.null (a match),` +
          ` or filter its fields with ${embed.name}.<field>=...`,
        context: { embed: embed.name },
      },
    );
  }
  return { kind: 'embedded', embed, present: (operation.value === 'not_null') !== negated };
}

/** A filter or logic tree checked against the resource; `embeds` are the level's, for null checks. */
export function planCondition(
  resource: Resource,
  condition: Condition,
  embeds: readonly PlannedEmbed[] = [],
): PlannedCondition {
  if (condition.kind === 'logic') {
    return {
      kind: 'logic',
      op: condition.op,
      negated: condition.negated,
      children: condition.children.map((c) => planCondition(resource, c, embeds)),
    };
  }
  const { field, negated, operation, part } = condition;
  const embed = field.jsonPath.length === 0 && !resource.field(field.name) && embeds.find((e) => e.name === field.name);
  if (embed) return planEmbedCheck(embed, negated, operation);
  if (!resource.field(field.name) && resource.relations.some((r) => r.name === field.name)) {
    throw new ApiError('NOT_EMBEDDED', `"${field.name}" is not an embedded resource in this request`, {
      hint: `Embed it in select (${field.name}(...) or ${field.name}!inner()) to filter on whether it has a match.`,
      context: { embed: field.name },
    });
  }
  const target = resolve(resource, field, 'filter');
  return { kind: 'filter', target, negated, operation: planOperation(target, operation), part };
}

/** Output keys become quoted identifiers: printable name characters only, and no longer than PostgreSQL keeps. */
const SAFE_KEY = /^[\p{L}\p{N}_$ -]+$/u;

function checkKey(key: string, context: Record<string, unknown>): string {
  if (!SAFE_KEY.test(key) || Buffer.byteLength(key) > 63) {
    throw new ApiError(
      'INVALID_QUERY',
      `"${key}" cannot be a key of the response: ` +
        'use an alias of letters, digits, "_", "$", "-" or spaces, at most 63 bytes',
      { context: { ...context, key } },
    );
  }
  return key;
}

type FieldItem = Extract<SelectItem, { kind: 'field' }>;

/** The key a selected field gets: its alias, else the last key of its JSON path, else its name. */
function columnKey(item: FieldItem): string {
  const named = [...item.field.jsonPath].reverse().find((step) => typeof step.key === 'string');
  return checkKey(item.alias ?? (named ? String(named.key) : item.field.name), { field: item.field.name });
}

/** A field as `*` selects it. */
export const wholeField = (field: Field): PlannedColumn => ({
  kind: 'field',
  target: { field, jsonPath: [], type: field.type },
  cast: null,
  key: field.name,
});

function planField(resource: Resource, item: FieldItem): PlannedColumn {
  const target = resolve(resource, item.field, 'select');
  const cast = item.cast === null ? null : planCast(item.cast, showField(item.field)).type;
  return { kind: 'field', target, cast, key: columnKey(item) };
}

/** `count()`, `field.fn()`, or a bare `count` where the resource has no such field (PostgREST's `rel(count)`). */
function planAggregate(resource: Resource, item: SelectItem): AggregateColumn | null {
  if (item.kind === 'count') {
    const resultCast = item.cast === null ? null : planCast(item.cast, 'count()').type;
    return {
      kind: 'aggregate',
      fn: 'count',
      target: null,
      cast: null,
      resultCast,
      key: checkKey(item.alias ?? 'count', {}),
    };
  }
  if (item.kind !== 'field') return null;
  const { field, aggregate } = item;
  if (aggregate === null) {
    const bareCount = field.name === 'count' && field.jsonPath.length === 0 && !resource.field('count');
    return bareCount ? planAggregate(resource, { kind: 'count', alias: item.alias, cast: item.cast }) : null;
  }
  const target = resolve(resource, field, 'select');
  const shown = showField(field);
  const cast = item.cast === null ? null : planCast(item.cast, shown);
  checkAggregate(aggregate.fn, cast?.kind ?? target.type.kind, shown);
  const resultCast = aggregate.cast === null ? null : planCast(aggregate.cast, `${shown}.${aggregate.fn}()`).type;
  const key = checkKey(item.alias ?? aggregate.fn, { field: field.name });
  return { kind: 'aggregate', fn: aggregate.fn, target, cast: cast?.type ?? null, resultCast, key };
}

/** What a read's levels share while planning: the embedded parameters, and which were used. */
interface Planning {
  readonly embedded: ReadonlyMap<string, LevelParams>;
  readonly used: Set<string>;
  /** MAX_ROWS, which bounds every level's rows as it bounds the page's. */
  readonly maxRows: number;
}

const NO_PARAMS: LevelParams = { where: [], order: [], limit: null, offset: null };

function planEmbed(parent: Resource, item: EmbedItem, path: readonly string[], planning: Planning): PlannedEmbed {
  const relation = findRelation(parent, item.relation, item.hint);
  const name = item.alias ?? item.relation;
  const here = [...path, name].join('.');
  const params = planning.embedded.get(here) ?? NO_PARAMS;
  if (planning.embedded.has(here)) planning.used.add(here);
  const level = planLevel(relation.target, item.select, params, [...path, name], planning);
  if (item.spread && level.customFields) {
    throw new ApiError('INVALID_QUERY', `the custom-field properties of ${relation.target.name} cannot be spread`, {
      hint: `Embed it instead (${name}(*)), or spread named fields (...${item.relation}(id,name)).`,
      context: { embed: here },
    });
  }
  const show = item.select.length === 0 ? 'none' : item.spread ? 'spread' : 'object';
  if (show === 'spread' && relation.cardinality === 'many' && level.grouped) {
    throw new ApiError('INVALID_AGGREGATE', `a to-many spread (...${item.relation}) cannot hold an aggregate`, {
      hint: `Aggregate in an embed instead: ${item.relation}(count()).`,
      context: { embed: here },
    });
  }
  return { relation, name, inner: item.join === 'inner', show, level };
}

/**
 * 400 unless a level's aggregates can be computed: the resource allows them, everything else
 * shown can group the rows, and the order names only grouping fields.
 */
function checkGrouping(
  resource: Resource,
  embeds: readonly PlannedEmbed[],
  customFields: boolean,
  columns: readonly ReadColumn[],
  order: readonly PlannedOrder[],
): void {
  const refuse = (message: string, hint: string) => {
    throw new ApiError('INVALID_AGGREGATE', message, { hint, context: { resource: resource.name } });
  };
  if (!resource.aggregates)
    refuse(`${resource.name} does not offer aggregates`, 'Select its fields without aggregate functions.');
  if (customFields)
    refuse(`${resource.name}'s custom-field properties cannot be grouped`, 'Name the fields to group by instead of *.');
  const ungroupable = embeds.find(
    (e) => e.show === 'object' || (e.show === 'spread' && e.relation.cardinality === 'many'),
  );
  if (ungroupable) {
    refuse(
      `"${ungroupable.name}" cannot be selected beside an aggregate:` +
        ' only the fields of a level and of its to-one spreads group rows',
      `Spread a to-one relation (...${ungroupable.name}(field)) to group by its fields,` +
        ` or aggregate inside the embed (${ungroupable.name}(count())).`,
    );
  }
  const sameTarget = (a: Target, b: Target) =>
    a.field === b.field &&
    a.jsonPath.length === b.jsonPath.length &&
    a.jsonPath.every((step, i) => step.arrow === b.jsonPath[i]!.arrow && step.key === b.jsonPath[i]!.key);
  const grouping = (o: PlannedOrder) =>
    o.embed === null && columns.some((c) => c.kind === 'field' && sameTarget(c.target, o.target));
  const stray = order.find((o) => !grouping(o));
  if (stray) {
    refuse(
      `cannot order by ${stray.target.field.name}:` +
        ' with an aggregate selected, rows are grouped by the other selected fields',
      'Order by one of the selected fields that are not aggregated, or select that field too.',
    );
  }
}

/** Order terms; `relation(field)` names a to-one embed of the level (by its alias, else as written). */
function planOrder(resource: Resource, terms: readonly OrderTerm[], embeds: readonly PlannedEmbed[]): PlannedOrder[] {
  return terms.map((term) => {
    const { direction, nulls } = term;
    if (term.relation === null)
      return { embed: null, target: resolve(resource, term.field, 'order'), direction, nulls };
    const embed = embeds.find((e) => e.name === term.relation);
    if (!embed) {
      throw new ApiError('NOT_EMBEDDED', `"${term.relation}" is not an embedded resource in this request`, {
        hint: `Embed it in select (${term.relation}(...)) to order by its fields.`,
        context: { embed: term.relation },
      });
    }
    if (embed.relation.cardinality !== 'one') {
      throw new ApiError('INVALID_QUERY', `cannot order ${resource.name} by ${embed.name}, a to-many relation`, {
        hint: `Order by a to-one relation's field, or order the embed itself (${embed.name}.order=...).`,
        context: { resource: resource.name, relation: embed.name },
      });
    }
    return { embed, target: resolve(embed.relation.target, term.field, 'order'), direction, nulls };
  });
}

/**
 * One level of a read. `select` null is every field (`*`); an embed's `()` selects nothing. The
 * level's parameters are the root's or those prefixed by this embed's path.
 */
function planLevel(
  resource: Resource,
  select: readonly SelectItem[] | null,
  params: LevelParams,
  path: readonly string[],
  planning: Planning,
): ReadLevel {
  const columns: ReadColumn[] = [];
  const embeds: PlannedEmbed[] = [];
  let star = false;
  for (const item of select ?? [{ kind: 'star' } as const]) {
    if (item.kind === 'star') {
      star = true;
      columns.push(...resource.fields.map(wholeField));
      continue;
    }
    if (item.kind === 'embed') {
      const embed = planEmbed(resource, item, path, planning);
      if (embeds.some((e) => e.name === embed.name)) {
        throw new ApiError('INVALID_QUERY', `"${embed.name}" is embedded twice at the same level`, {
          hint: `Give one of them an alias: other_${embed.name}:${item.relation}(...).`,
          context: { embed: [...path, embed.name].join('.') },
        });
      }
      embeds.push(embed);
      if (embed.show === 'object') columns.push({ kind: 'embed', embed, key: checkKey(embed.name, {}) });
      if (embed.show === 'spread') {
        columns.push(...embed.level.columns.map((c): SpreadColumn => ({ kind: 'spread', embed, key: c.key })));
      }
      continue;
    }
    columns.push(planAggregate(resource, item) ?? planField(resource, item as FieldItem));
  }
  const grouped = columns.some((c) => c.kind === 'aggregate');
  const customFields = star && resource.customFields !== undefined;
  const order = planOrder(resource, params.order, embeds);
  if (grouped) checkGrouping(resource, embeds, customFields, columns, order);
  return {
    resource,
    columns,
    customFields,
    where: params.where.map((c) => planCondition(resource, c, embeds)),
    order,
    offset: params.offset ?? 0,
    // The root's page is worked out by planPage; an embed holds at most MAX_ROWS rows too.
    limit: Math.min(params.limit ?? planning.maxRows, planning.maxRows),
    embeds,
    grouped,
  };
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

/** The root level of a read, or of a write's representation (`root`: its own filters, order and page). */
function planRoot(resource: Resource, request: ApiRequest, root: LevelParams, maxRows: number): ReadLevel {
  const { query } = request;
  const planning: Planning = { embedded: query.embedded, used: new Set(), maxRows };
  const level = planLevel(resource, query.select, root, [], planning);
  // Longest first, so the message names the deepest path that is not embedded.
  const unused = [...query.embedded.keys()].filter((path) => !planning.used.has(path));
  if (unused.length > 0) throw notEmbedded(unused.sort((a, b) => b.length - a.length)[0]!);
  return level;
}

/**
 * What a write returns (`select` on POST, PATCH and DELETE): the written rows as a read shows them,
 * embeds included, in the request's `order`. The request's filters are the write's, not the
 * representation's.
 */
export function planRepresentation(resource: Resource, request: ApiRequest, maxRows: number): ReadLevel {
  const level = planRoot(resource, request, { ...NO_PARAMS, order: request.query.order }, maxRows);
  if (level.grouped) {
    throw new ApiError('INVALID_AGGREGATE', 'a write returns the rows it wrote: its select cannot aggregate them', {
      hint: 'Select fields and embeds here, and aggregate with a GET.',
      context: { resource: resource.name },
    });
  }
  return level;
}

export function planRead(resource: Resource, request: ApiRequest, maxRows: number): ReadPlan {
  const level = planRoot(resource, request, request.query, maxRows);
  const { offset, limit } = planPage(request, maxRows);
  return {
    ...level,
    offset,
    limit,
    count: request.preferences.count,
    limitOfCount: maxRows + 1,
    format: request.format,
    head: request.method === 'HEAD',
  };
}
