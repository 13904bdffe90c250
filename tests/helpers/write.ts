/**
 * Shared by the write tests (tests/write-*.test.ts): requests as the caller's organisation, reads of
 * the database behind them, and the checks of the error contract (docs/contract.md section 5).
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { Organisation, TestApp } from './app.ts';

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;
export const OBJECT_TYPE = 'application/vnd.pgrst.object+json; charset=utf-8';
export const JSON_TYPE = 'application/json; charset=utf-8';

let counter = 0;
/** A name no other test uses. */
export const uniq = (prefix: string) => `${prefix}-${++counter}-${randomUUID().slice(0, 8)}`;

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
export type Json = any;

export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  body: Json;
}

export interface SendInit {
  body?: unknown;
  /** The body's text as is (malformed JSON, other media types). */
  raw?: string;
  headers?: Record<string, string>;
  token?: string | null;
}

export const REP = { Prefer: 'return=representation' };

/** The distinct fields named in a VALIDATION_FAILED context, sorted. */
export const fieldsOf = (res: Sent): string[] =>
  [...new Set<string>(res.body.context.map((p: Json) => p.field))].sort();
/** The distinct `item:field` pairs of a context, sorted. */
export const itemFieldsOf = (res: Sent): string[] =>
  [...new Set<string>(res.body.context.map((p: Json) => `${p.item}:${p.field}`))].sort();

/** The error body of the contract (docs/contract.md section 5). */
export function expectError(res: Sent, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get('content-type')).toBe(JSON_TYPE);
  expect(res.body).toMatchObject({
    name: 'APIError',
    code,
    status_code: status,
    is_transient: false,
    contact_support: false,
  });
  expect(typeof res.body.message).toBe('string');
  expect(res.body.timestamp).toMatch(ISO);
  expect(res.body.request_id).toBe(res.headers.get('request-id'));
}

/**
 * Requests to a test app with the token of the caller's organisation, and reads of its database.
 * The app and the organisation are looked up on each call, so a test file can create them in
 * beforeAll after making the client.
 */
export function writeClient(app: () => TestApp, caller: () => Organisation) {
  async function send(method: string, path: string, init: SendInit = {}): Promise<Sent> {
    const hasBody = init.raw !== undefined || init.body !== undefined;
    const headers: Record<string, string> = {
      ...(hasBody ? { 'Content-Type': 'application/json' } : {}),
      ...init.headers,
    };
    const res = await app().call(path, init.token === undefined ? caller().token : init.token, {
      method,
      headers,
      body: init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body)),
    });
    const text = await res.text();
    let body: Json;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, text, body };
  }

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    send('POST', path, { body, headers });
  const patch = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    send('PATCH', path, { body, headers });
  const del = (path: string, headers: Record<string, string> = {}) => send('DELETE', path, { headers });

  const query = <T extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params: (string | null)[] = [],
  ) => app().db.query<T>(text, params);

  /** Rows of a table with a column equal to a value, as JSON (timestamps as text, numbers as numbers). */
  async function rowsWhere(table: string, column: string, value: string): Promise<Json[]> {
    const found = await query<{ r: string }>(
      `SELECT row_to_json(x)::text AS r FROM "${table}" x WHERE "${column}"::text = $1 ORDER BY created_at, id`,
      [value],
    );
    return found.map((f) => JSON.parse(f.r));
  }
  async function countWhere(table: string, column: string, value: string): Promise<number> {
    const [row] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE "${column}"::text = $1`, [
      value,
    ]);
    return row!.n;
  }
  async function countLike(table: string, column: string, prefix: string): Promise<number> {
    const [row] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM "${table}" WHERE "${column}" LIKE $1`, [
      `${prefix}%`,
    ]);
    return row!.n;
  }
  /** created_at and updated_at of a row as epoch seconds, and its id. */
  async function stamps(table: string, id: string): Promise<{ created: number; updated: number }> {
    const [row] = await query<{ created: number; updated: number }>(
      'SELECT extract(epoch FROM created_at)::float8 AS created, extract(epoch FROM updated_at)::float8 AS updated' +
        ` FROM "${table}" WHERE id = $1::uuid`,
      [id],
    );
    return row!;
  }
  const dbNow = async () => (await query<{ now: number }>('SELECT extract(epoch FROM now())::float8 AS now'))[0]!.now;

  return { send, post, patch, del, query, rowsWhere, countWhere, countLike, stamps, dbNow };
}
