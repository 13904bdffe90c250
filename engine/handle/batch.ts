/**
 * `POST <mount>/$batch`: several requests the engine serves, run in order in one transaction, all
 * or nothing. Each operation is served as it would be alone (the same handlers, on the
 * transaction); `@{ref.field}` in a later operation's path or body stands for a field of the one
 * row the operation named `ref` wrote or read.
 */
import { laneOf, type Scope } from '../compile/scope.ts';
import type { Queryable } from '../db/port.ts';
import { inTransaction } from '../db/within.ts';
import { ApiError, bearerRefused, invalidBody, type Problem } from '../errors.ts';
import { contentType, JSON_MEDIA } from '../media-types.ts';
import { parseJsonBody } from '../parse/body.ts';
import { CONSISTENCY_HEADER, parsePreferences } from '../parse/headers.ts';
import { IDEMPOTENCY_HEADER, parseIdempotencyKey } from '../parse/idempotency.ts';
import type { RawRequest } from '../parse/index.ts';
import type { EngineResponse } from '../respond.ts';
import type { Context } from './context.ts';
import type { Idempotency } from './idempotency.ts';

/** The path a batch is posted to, under the engine's mount. */
export const BATCH_PATH = '$batch';

/** The most operations of a batch unless told. */
export const DEFAULT_MAX_OPERATIONS = 100;

export interface BatchOptions {
  /** The most operations one batch may hold (default 100). */
  readonly maxOperations?: number;
  /** How long a whole batch may run, in ms (default 30,000); each statement has its own timeout too. */
  readonly deadlineMs?: number;
}

/** The rows an operation wrote or read, for references to it: each with every field of its resource. */
type Captured = readonly Record<string, unknown>[];

/** What an operation did, for a reference to it: a write's one row by its key, or a read's rows. */
export interface Written {
  readonly resource: string;
  /** The key values of the one row written, or null when it wrote none or several. */
  readonly location: readonly unknown[] | null;
  readonly affected: number;
}

/**
 * Serves one operation on the batch's context: `seen` is told what a write wrote. Throws ApiError as
 * `Engine.handle` does.
 */
export type Serve = (
  ctx: Context,
  raw: RawRequest,
  scope: Scope | undefined,
  seen?: (written: Written) => void,
) => Promise<EngineResponse>;

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
type Method = (typeof METHODS)[number];

interface Operation {
  readonly ref: string | undefined;
  readonly method: Method;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

const REF_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** `@{ref.field}`: a field of the row an earlier operation wrote or read. */
const REFERENCE = /@\{([^}.]*)\.([^}]*)\}/g;
const WHOLE_REFERENCE = /^@\{([^}.]*)\.([^}]*)\}$/;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The failure of operation `index`, as the batch answers it: its own error, and which operation it was. */
const atOperation = (ctx: Context, error: unknown, index: number): ApiError => {
  const failure = ctx.fail(error);
  return failure.operation === undefined ? failure.at(index) : failure;
};

/** The batch's operations, checked as a whole before any runs. */
function parseOperations(body: unknown, max: number): Operation[] {
  if (!isObject(body) || !Array.isArray(body.operations)) {
    throw new ApiError('VALIDATION_FAILED', 'a batch is a JSON object with an "operations" array', {
      hint: 'Send {"operations": [{"method": "POST", "path": "/<resource>", "body": {...}}, ...]}.',
    });
  }
  const list = body.operations as unknown[];
  if (list.length === 0 || list.length > max) {
    throw new ApiError('VALIDATION_FAILED', `a batch holds 1 to ${max} operations, not ${list.length}`, {
      hint: list.length ? 'Split the operations into several batches.' : 'Give at least one operation.',
    });
  }
  const problems: Problem[] = [];
  const refs = new Set<string>();
  const operations = list.map((op, item): Operation => {
    const problem = (field: string, message: string) => problems.push({ item, field, message });
    if (!isObject(op)) {
      problem('', 'must be a JSON object');
      return { ref: undefined, method: 'GET', path: '/', headers: {}, body: undefined };
    }
    for (const key of Object.keys(op)) {
      if (!['ref', 'method', 'path', 'headers', 'body'].includes(key)) problem(key, 'is not a field of an operation');
    }
    const method = typeof op.method === 'string' ? op.method.toUpperCase() : '';
    if (!(METHODS as readonly string[]).includes(method)) problem('method', `must be one of ${METHODS.join(', ')}`);
    if (typeof op.path !== 'string' || op.path.replace(/^\//, '') === '') {
      problem('path', 'must be a path under the API, such as "/<resource>?<query>"');
    }
    const ref = op.ref;
    if (ref !== undefined && (typeof ref !== 'string' || !REF_NAME.test(ref))) {
      problem('ref', 'must be a name of letters, digits and underscores');
    } else if (ref !== undefined && refs.has(ref)) {
      problem('ref', `names "${ref}", which an earlier operation is named`);
    } else if (ref !== undefined) refs.add(ref);
    const headers: Record<string, string> = {};
    if (op.headers !== undefined) {
      if (!isObject(op.headers)) problem('headers', 'must be an object of header names and string values');
      else {
        for (const [name, value] of Object.entries(op.headers)) {
          if (typeof value === 'string') headers[name.toLowerCase()] = value;
          else problem(`headers.${name}`, 'must be a string');
        }
      }
    }
    // The leading slash may be left out: `deal?id=eq.1` is `/deal?id=eq.1`.
    const path = String(op.path).replace(/^\/?/, '/');
    return { ref: ref as string | undefined, method: method as Method, path, headers, body: op.body };
  });
  if (problems.length) throw invalidBody(problems);
  return operations;
}

/** A transaction of reads alone: one snapshot for all of them, and nothing written by mistake. */
const READ_ONLY = 'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY';

/** Whether an operation only reads a resource (a function may write, whatever its method). */
const reads = (op: Operation) => (op.method === 'GET' || op.method === 'HEAD') && !op.path.startsWith('/rpc/');

/** Whether an operation's path or body uses `@{ref.field}`. */
const usesReferences = (op: Operation) =>
  op.path.includes('@{') || (op.body !== undefined && JSON.stringify(op.body).includes('@{'));

/** A referenced value as text: in a path (encoded for the query string) or inside a longer string. */
const asText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** Resolves the references of operation `index` against what earlier operations captured. */
function resolver(captured: ReadonlyMap<string, { readonly index: number; readonly rows: Captured }>, index: number) {
  const value = (ref: string, field: string): unknown => {
    const named = `@{${ref}.${field}}`;
    const earlier = captured.get(ref);
    const fail = (message: string, hint: string) => {
      throw new ApiError('VALIDATION_FAILED', `${named} ${message}`, { hint }).at(index);
    };
    if (!earlier) {
      return fail(
        'names no earlier operation',
        'Give an earlier operation "ref": "<name>" and refer to it as @{name.field}.',
      );
    }
    const rows = earlier.rows;
    if (rows.length !== 1) {
      return fail(
        `refers to operation ${earlier.index}, which ${rows.length ? `gave ${rows.length} rows` : 'gave no row'}`,
        'A reference needs an operation that writes or reads exactly one row: filter it by its key.',
      );
    }
    const row = rows[0]!;
    if (!Object.hasOwn(row, field)) {
      return fail(
        `names no field of the row operation ${earlier.index} gave`,
        `Its fields: ${Object.keys(row).join(', ')}.`,
      );
    }
    return row[field];
  };
  const inString = (text: string, encode: (text: string) => string): string =>
    text.replace(REFERENCE, (_, ref: string, field: string) => encode(asText(value(ref, field))));
  const inBody = (body: unknown): unknown => {
    if (typeof body === 'string') {
      const whole = WHOLE_REFERENCE.exec(body);
      return whole ? value(whole[1]!, whole[2]!) : inString(body, (text) => text);
    }
    if (Array.isArray(body)) return body.map(inBody);
    if (isObject(body)) return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, inBody(v)]));
    return body;
  };
  return { path: (path: string) => inString(path, encodeURIComponent), body: inBody };
}

/** The request an operation stands for, with the batch's scope and its own headers. */
function operationRequest(op: Operation, path: string, body: unknown): RawRequest {
  const q = path.indexOf('?');
  const target = (q < 0 ? path : path.slice(0, q)).slice(1);
  const headers: Record<string, string> = { ...op.headers };
  if (body !== undefined) headers['content-type'] ??= 'application/json';
  return {
    method: op.method,
    resource: target,
    query: q < 0 ? '' : path.slice(q + 1),
    header: (name) => headers[name.toLowerCase()] ?? null,
    body: body === undefined ? null : JSON.stringify(body),
  };
}

/** A read of `raw`'s rows with every field of its resource (`select=*`, the same filters). */
function everyField(raw: RawRequest): RawRequest {
  const query = raw.query
    .split('&')
    .filter((part) => part !== '' && !part.startsWith('select='))
    .concat('select=*')
    .join('&');
  return { method: 'GET', resource: raw.resource, query, header: () => null, body: null };
}

const rowsOf = (response: EngineResponse): Captured => {
  if (response.body === null) return [];
  const parsed = JSON.parse(response.body) as unknown;
  return (Array.isArray(parsed) ? parsed : [parsed]).filter(isObject);
};

/** Whether `resource` names a resource that may be read (a function's rows are its answer). */
const readable = (ctx: Context, resource: string) => ctx.registry.get(resource)?.verbs.has('GET') ?? false;

/** The result of an operation in the batch's answer: its body as JSON when it is JSON. */
function result(response: EngineResponse) {
  const json = (response.headers['Content-Type'] ?? '').includes('json') && response.body !== null;
  return {
    status: response.status,
    headers: response.headers,
    body: json ? JSON.parse(response.body!) : response.body,
  };
}

export function batcher(ctx: Context, serve: Serve, keys: Idempotency | null, options: BatchOptions) {
  const max = options.maxOperations ?? DEFAULT_MAX_OPERATIONS;
  const deadlineMs = options.deadlineMs ?? 30_000;
  if (!Number.isInteger(max) || max < 1)
    throw new Error('engine: batch.maxOperations must be a whole number, at least 1');

  /** Runs the operations on `tx`, in order; the first failure throws, and the caller rolls back. */
  async function runAll(tx: Queryable, operations: Operation[], given: Scope | undefined, db = ctx.db) {
    const within = ctx.within(inTransaction(db, tx));
    const tenant = await within.authorize(given);
    if (tenant === null) throw bearerRefused();
    // The token holds for this transaction, checked in it: its operations need not check it again.
    const scope: Scope | undefined = given && within.scoping.tenancy ? { tenant } : given;
    const started = performance.now();
    const captured = new Map<string, { index: number; rows: Captured }>();
    /** Operation `index`: its references resolved, served, and captured when later ones may refer to it. */
    const run = async (index: number, op: Operation) => {
      try {
        const resolve = resolver(captured, index);
        const raw = operationRequest(op, resolve.path(op.path), resolve.body(op.body));
        if (raw.resource === BATCH_PATH) {
          throw new ApiError('VALIDATION_FAILED', 'a batch cannot hold a batch');
        }
        let written: Written | undefined;
        // A deleted row can no longer be read: a reference to a DELETE gets the rows it is about to delete.
        const before =
          op.ref && op.method === 'DELETE' && readable(within, raw.resource)
            ? rowsOf(await serve(within, everyField(raw), scope))
            : null;
        const response = await serve(within, raw, scope, (w) => {
          written = w;
        });
        if (op.ref)
          captured.set(op.ref, { index, rows: before ?? (await capture(within, raw, scope, response, written)) });
        return result(response);
      } catch (error) {
        throw atOperation(within, error, index);
      }
    };
    // Operations that neither name nor use a reference are sent without waiting for the answers of
    // those before them (pipelined, in order, on the transaction's connection); the rest wait.
    const results: unknown[] = [];
    const sent: Promise<unknown>[] = [];
    /** The answers of every operation sent, in order: the first failure is the batch's. */
    const settle = async () => {
      while (results.length < sent.length) results.push(await sent[results.length]);
    };
    for (const [index, op] of operations.entries()) {
      const ordered = op.ref !== undefined || usesReferences(op);
      if (ordered) await settle();
      if (performance.now() - started > deadlineMs) {
        await settle();
        throw new ApiError('QUERY_TIMEOUT', `the batch ran past its deadline of ${deadlineMs} ms`, {
          hint: 'Split the operations into smaller batches.',
        }).at(index);
      }
      const answer = run(index, op);
      // Told by `settle`, in order; an operation sent after a failed one fails too.
      answer.catch(() => {});
      sent.push(answer);
      if (ordered) await settle();
    }
    await settle();
    return results;
  }

  /** Every field of the row (or rows) an operation wrote or read. */
  async function capture(
    within: Context,
    raw: RawRequest,
    scope: Scope | undefined,
    response: EngineResponse,
    written: Written | undefined,
  ): Promise<Captured> {
    // A function is not called twice, nor a resource read that offers no GET: their rows are those they answered.
    if (!readable(within, raw.resource)) return rowsOf(response);
    if (raw.method === 'GET' || raw.method === 'HEAD') return rowsOf(await serve(within, everyField(raw), scope));
    if (!written) return [];
    if (written.location === null) return Array.from({ length: written.affected }, () => ({}));
    const resource = within.registry.get(written.resource)!;
    const query = resource.key
      .map((f, i) => `${f.name}=eq.${encodeURIComponent(String(written.location![i]))}`)
      .concat('select=*')
      .join('&');
    return rowsOf(await serve(within, { ...everyField(raw), resource: written.resource, query }, scope));
  }

  async function batch(raw: RawRequest, scope: Scope | undefined): Promise<EngineResponse> {
    if (raw.method !== 'POST') {
      throw new ApiError('METHOD_NOT_ALLOWED', `${BATCH_PATH} answers POST, not ${raw.method}`, {
        headers: { Allow: 'POST' },
      });
    }
    const operations = parseOperations(parseJsonBody(raw.body ?? null, raw.header('content-type')), max);
    const rollback = parsePreferences(raw.header('prefer')).tx === 'rollback';
    const given = keys && !rollback ? parseIdempotencyKey(raw.header(IDEMPOTENCY_HEADER)) : null;
    const answer = (results: unknown[]): EngineResponse => ({
      status: 200,
      headers: {
        'Content-Type': contentType(JSON_MEDIA),
        ...(rollback ? { 'Preference-Applied': 'tx=rollback' } : {}),
      },
      body: JSON.stringify({ results }),
    });
    let response: EngineResponse;
    if (given) {
      const key = keys!.key(given, 'POST', BATCH_PATH, raw.body ?? null);
      const once = await ctx.untilAuthorized(scope, () =>
        keys!.once(scope, key, async (tx) => answer(await runAll(tx, operations, scope))),
      );
      response = once.response!;
    } else if (rollback) {
      const undo = new Error('dry run');
      let results: unknown[] = [];
      await ctx.db
        .transaction(async (tx) => {
          results = await runAll(tx, operations, scope);
          throw undo;
        }, laneOf(scope))
        .catch((error: unknown) => {
          if (error !== undo) throw error;
        });
      return answer(results);
    } else if (operations.every(reads)) {
      // Reads alone may run where a read would (a replica that has the Consistency-Token's write),
      // on one snapshot; they have written nothing to give a position for.
      const source = ctx.readOn(raw.header(CONSISTENCY_HEADER));
      const run = async (tx: Queryable) => {
        await tx.query(READ_ONLY);
        return runAll(tx, operations, scope, source);
      };
      return answer(await source.transaction(run, laneOf(scope)));
    } else {
      response = answer(await ctx.db.transaction((tx) => runAll(tx, operations, scope), laneOf(scope)));
    }
    return ctx.withPosition(response);
  }

  return { serve: batch, maxOperations: max };
}
