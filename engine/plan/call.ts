/**
 * A call of a database function (`/rpc/<name>`), as PostgREST has it: its arguments from the query
 * string (GET, HEAD) or a JSON object body (POST; `Prefer: params=single-object` passes the whole
 * body as the one json argument), each checked against its type; the rest of the query string
 * filters, selects, orders and pages the rows a function returns, as a read of their resource.
 */
import * as v from 'valibot';
import { ApiError, invalidBody, type Problem } from '../errors.ts';
import { KINDS } from '../field-kinds.ts';
import { parseQuery, splitArguments } from '../parse/query.ts';
import type { FunctionArgument, RegistryFunction } from '../registry/functions.ts';
import type { ApiRequest } from '../request.ts';
import { isObject } from './body.ts';
import { planRead } from './read.ts';
import type { ReadPlan } from './types.ts';
import { arrayLiteral, checkValue } from './values.ts';

export interface CallPlan {
  readonly fn: RegistryFunction;
  /** The arguments given, each as the text its type reads (null: SQL NULL); the others take their defaults. */
  readonly args: ReadonlyArray<{ readonly arg: FunctionArgument; readonly value: string | null }>;
  /** For a function returning rows of a resource: the read over them. */
  readonly read: ReadPlan | null;
  readonly request: ApiRequest;
  /** `Prefer: tx=rollback`: run, and keep nothing. */
  readonly rollback: boolean;
}

/** The text `value` (a JSON body's) is read as by an argument of its type. */
function argumentText(arg: FunctionArgument, value: unknown): string | null {
  if (value === null) return null;
  const { kind } = arg.type;
  if (kind === 'json' || kind === 'jsonb') return JSON.stringify(value);
  if (Array.isArray(value)) return arrayLiteral(value.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))));
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The body's arguments, checked as a body's fields are; 400 listing every problem. */
function bodyArguments(fn: RegistryFunction, body: unknown, request: ApiRequest): Map<string, string | null> {
  const single = request.preferences.params === 'single-object';
  if (single) {
    const [only, ...more] = fn.args;
    if (!only || more.length > 0 || (only.type.kind !== 'json' && only.type.kind !== 'jsonb')) {
      throw new ApiError(
        'INVALID_PREFERENCE',
        `params=single-object passes the body to a function's one json argument, and ${fn.name} has none`,
        {
          hint: 'Leave the preference out and send the arguments as the keys of a JSON object.',
        },
      );
    }
    return new Map([[only.name, JSON.stringify(body)]]);
  }
  const given = body === null ? {} : Array.isArray(body) && body.length > 0 ? body[0] : body;
  if (!isObject(given)) {
    throw new ApiError('VALIDATION_FAILED', `${fn.name} takes its arguments as the keys of a JSON object`, {
      context: [{ field: '', message: 'must be an object' }],
    });
  }
  const byName = new Map(fn.args.map((a) => [a.name, a]));
  const problems: Problem[] = [];
  const values = new Map<string, string | null>();
  for (const [name, value] of Object.entries(given)) {
    const arg = byName.get(name);
    if (!arg) {
      throw new ApiError('UNKNOWN_FIELD', `${fn.name} has no argument "${name}"`, {
        hint: `Its arguments: ${fn.args.map((a) => a.name).join(', ') || 'none'}.`,
        context: { function: fn.name, argument: name },
      });
    }
    const checked = v.safeParse(v.nullable(KINDS[arg.type.kind].body(arg.type)), value);
    if (checked.success) values.set(name, argumentText(arg, value));
    else problems.push({ field: name, message: checked.issues[0].message });
  }
  if (problems.length > 0) throw invalidBody(problems);
  return values;
}

export function planCall(
  fn: RegistryFunction,
  request: ApiRequest,
  rawQuery: string,
  body: unknown,
  maxRows: number,
): CallPlan {
  const names = new Set(fn.args.map((a) => a.name));
  const { args: fromQuery, rest } = splitArguments(rawQuery, request.method === 'POST' ? new Set() : names);
  if (request.method !== 'POST') {
    for (const [name, value] of fromQuery) checkValue(name, fn.args.find((a) => a.name === name)!.type, value);
  }
  const given: ReadonlyMap<string, string | null> =
    request.method === 'POST' ? bodyArguments(fn, body, request) : fromQuery;
  const missing = fn.args.filter((a) => !a.optional && !given.has(a.name));
  if (missing.length > 0) {
    const where = request.method === 'POST' ? 'as keys of the JSON body' : 'in the query string';
    throw invalidBody(missing.map((a) => ({ field: a.name, message: `is required: give it ${where}` })));
  }
  const query = parseQuery(rest);
  const call: ApiRequest = { ...request, query };
  const { returns } = fn;
  let read: ReadPlan | null = null;
  if (returns.kind === 'rows') {
    // Every count counts what the call returns: there is nothing to estimate it from.
    const count = request.preferences.count && 'exact';
    // One row (a function returning a composite, not a set) is a JSON object, as in PostgREST.
    const format = !returns.set && request.format === 'json' ? 'object' : request.format;
    read = planRead(returns.resource, { ...call, format, preferences: { ...request.preferences, count } }, maxRows);
  } else {
    const extra = rest.split('&').filter(Boolean);
    if (extra.length > 0) {
      throw new ApiError(
        'UNKNOWN_FIELD',
        `${fn.name} returns ${returns.kind === 'void' ? 'nothing' : 'a value'}, which takes no ${extra[0]!.split('=')[0]}`,
        {
          hint: `Its arguments: ${fn.args.map((a) => a.name).join(', ') || 'none'}.`,
          context: { function: fn.name },
        },
      );
    }
  }
  return {
    fn,
    args: fn.args.filter((a) => given.has(a.name)).map((arg) => ({ arg, value: given.get(arg.name)! })),
    read,
    request: call,
    rollback: request.preferences.tx === 'rollback',
  };
}
