/** The casts `select` allows (`id::text`, `value.sum()::int`) and the aggregates it offers. */
import { ApiError } from '../errors.ts';
import { FIELD_KINDS, type FieldKind, KINDS } from '../field-kinds.ts';
import type { AggregateFunction } from '../request.ts';

/** Each cast by the names callers write: the type emitted, and the kind of its values. */
const CASTS = {
  text: ['text', 'text'],
  varchar: ['text', 'text'],
  uuid: ['uuid', 'uuid'],
  int2: ['int2', 'smallint'],
  smallint: ['int2', 'smallint'],
  int: ['int4', 'integer'],
  int4: ['int4', 'integer'],
  integer: ['int4', 'integer'],
  int8: ['int8', 'bigint'],
  bigint: ['int8', 'bigint'],
  numeric: ['numeric', 'numeric'],
  decimal: ['numeric', 'numeric'],
  float8: ['float8', 'double precision'],
  'double precision': ['float8', 'double precision'],
  real: ['float4', 'real'],
  float4: ['float4', 'real'],
  bool: ['boolean', 'boolean'],
  boolean: ['boolean', 'boolean'],
  date: ['date', 'date'],
  time: ['time', 'time'],
  timestamptz: ['timestamptz', 'timestamptz'],
  timestamp: ['timestamp', 'timestamp'],
  interval: ['interval', 'interval'],
  json: ['json', 'json'],
  jsonb: ['jsonb', 'jsonb'],
} as const satisfies Record<string, readonly [string, FieldKind]>;

/** The cast names `select` accepts, for documentation. */
export const SELECT_CASTS: readonly string[] = Object.keys(CASTS);

export interface Cast {
  /** The SQL type, from the list above. */
  readonly type: string;
  readonly kind: FieldKind;
}

/** The cast `name` stands for; 400 listing the allowed casts when it is none. `what` is what is cast. */
export function planCast(name: string, what: string): Cast {
  const key = name.toLowerCase();
  if (!Object.hasOwn(CASTS, key)) {
    throw new ApiError('INVALID_QUERY', `cannot cast ${what} to "${name}"`, {
      hint: `Casts allowed in select: ${SELECT_CASTS.join(', ')}.`,
      context: { field: what, cast: name },
    });
  }
  const [type, kind] = CASTS[key as keyof typeof CASTS];
  return { type, kind };
}

/** The kinds whose record allows `capability`. */
const having = (capability: 'extremes' | 'summable') => FIELD_KINDS.filter((kind) => KINDS[kind][capability]);

/** The kinds of values each aggregate takes, as their records say; the compiler gives each its SQL. */
export const AGGREGATE_KINDS = {
  count: FIELD_KINDS,
  sum: having('summable'),
  avg: having('summable'),
  min: having('extremes'),
  max: having('extremes'),
} as const satisfies Record<AggregateFunction, readonly FieldKind[]>;

/** 400 unless `fn` applies to values of `kind`. */
export function checkAggregate(fn: AggregateFunction, kind: FieldKind, what: string): void {
  const kinds: readonly FieldKind[] = AGGREGATE_KINDS[fn];
  if (kinds.includes(kind)) return;
  throw new ApiError('INVALID_AGGREGATE', `${fn}() cannot be applied to ${what}, which is ${kind}`, {
    hint: `${fn}() takes ${kinds.join(', ')} values; cast the field first (${what}::numeric.${fn}()) if it holds them.`,
    context: { field: what, aggregate: fn, kind },
  });
}
