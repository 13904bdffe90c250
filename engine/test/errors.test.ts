/**
 * Nothing silent, nothing of the application's: through the Hono adapter, an unexpected failure is
 * logged with its Request-Id and cause when the host gives no onError; a database the engine was
 * not installed on says so in one sentence; a host's own credentials refuse without naming bearer
 * tokens, which the bearer scope alone names; a host's own error codes bring their status; the
 * headers and request id a host's middleware set are the response's.
 */
import { integer, pgTable, text } from 'drizzle-orm/pg-core';
import { Hono, type MiddlewareHandler } from 'hono';
import { requestId } from 'hono/request-id';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adapterHeaders, engageApp } from '../hono/index.ts';
import { ApiError, createEngine, createRegistry, defineResource, type Engine, unauthorized } from '../index.ts';
import { type TestDatabase, testDatabase } from './database.ts';

const note = pgTable('note', { id: integer().primaryKey(), body: text() });
/** Declared, but never made in the database. */
const ghost = pgTable('ghost', { id: integer().primaryKey() });

const registry = createRegistry([
  defineResource({ name: 'note', table: note, verbs: ['GET', 'POST', 'PATCH'] }),
  defineResource({ name: 'ghost', table: ghost, verbs: ['GET'] }),
]);

let t: TestDatabase;
let engine: Engine;

beforeAll(async () => {
  t = await testDatabase('CREATE TABLE note (id integer PRIMARY KEY, body text)');
  // Not installed: engine.install() is left out on purpose.
  engine = createEngine({ registry, db: t.db });
});
afterAll(() => t?.drop());

/** The adapter with a logger that keeps what it is given. */
function app(options: Partial<Parameters<typeof engageApp>[0]> = {}) {
  const logged: unknown[][] = [];
  const hono = engageApp({ engine, logger: { error: (...data) => logged.push(data) }, ...options });
  return { hono, logged };
}

describe('a 500 is never silent', () => {
  it('without onError, an unexpected failure is logged with its Request-Id and cause', async () => {
    const { hono, logged } = app();
    const res = await hono.request('/ghost', { headers: { 'Request-Id': 'req-42' } });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { message: string; request_id: string };
    expect(body).toMatchObject({ code: 'INTERNAL_ERROR', request_id: 'req-42' });
    expect(JSON.stringify(body)).not.toMatch(/ghost|relation|SELECT/);
    expect(logged).toHaveLength(1);
    expect(logged[0]![0]).toBe('GET /ghost failed (Request-Id req-42):');
    expect(String(logged[0]![1])).toMatch(/relation "ghost" does not exist/);
  });

  it('with onError, the host is told instead, the cause on the error', async () => {
    const seen: ApiError[] = [];
    const { hono, logged } = app({ onError: (error) => seen.push(error) });
    expect((await hono.request('/ghost')).status).toBe(500);
    expect(logged).toEqual([]);
    expect(seen[0]!.cause).toBeDefined();
  });

  it('a write that needs what engine.install() makes says that it has not run', async () => {
    const { hono, logged } = app();
    const res = await hono.request('/note', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'k-1' },
      body: JSON.stringify({ id: 1, body: 'x' }),
    });
    expect(res.status).toBe(500);
    expect(String(logged[0]![1])).toMatch(
      /^Error: engine\.install\(\) has not run on this database \(engage_\w+ is missing\): call it once at start-up/,
    );
  });
});

describe("the host's own", () => {
  it('unauthorized() refuses without naming bearer tokens or asking for one', async () => {
    const { hono } = app({
      scope: () => {
        throw unauthorized('the X-Api-Key header names no key', 'Send your key in X-Api-Key.');
      },
    });
    const res = await hono.request('/note');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expect(await res.json()).toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'the X-Api-Key header names no key',
      hint: 'Send your key in X-Api-Key.',
    });
  });

  it("an error code of its own brings its status, and renders as the engine's do", async () => {
    const { hono } = app({
      check: () => {
        throw new ApiError('TEAPOT', 'this host brews tea', { status: 418, transient: true });
      },
    });
    const res = await hono.request('/note');
    expect(res.status).toBe(418);
    expect(await res.json()).toMatchObject({ code: 'TEAPOT', status_code: 418, is_transient: true });
  });
});

describe("the host's headers and request id", () => {
  /** The adapter behind a host's middleware that sets headers (two cookies among them) before it runs. */
  function hosted(middleware: MiddlewareHandler) {
    const host = new Hono();
    host.use(middleware);
    host.route('/api', app().hono);
    return host;
  }
  const setHeaders: MiddlewareHandler = async (c, next) => {
    c.header('X-Host', 'kept');
    c.header('Cache-Control', 'public');
    c.header('Set-Cookie', 'a=1');
    c.header('Set-Cookie', 'b=2', { append: true });
    await next();
  };

  it('headers a middleware set before the adapter are kept, its own winning; each cookie stays a line', async () => {
    for (const path of ['/api/note', '/api/nothing', '/api/']) {
      const res = await hosted(setHeaders).request(path, { headers: { 'Request-Id': 'given-1' } });
      expect(res.headers.get('x-host'), path).toBe('kept');
      expect(res.headers.getSetCookie(), path).toEqual(['a=1', 'b=2']);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(res.headers.get('request-id'), path).toBe('given-1');
    }
  });

  it("a host's own request id (hono/request-id) is the request's; the adapter adds no header of its own", async () => {
    const res = await hosted(requestId()).request('/api/nothing', { headers: { 'X-Request-Id': 'host-7' } });
    expect(res.status).toBe(404);
    expect(res.headers.get('x-request-id')).toBe('host-7');
    expect(res.headers.get('request-id')).toBeNull();
    expect(await res.json()).toMatchObject({ request_id: 'host-7' });
  });

  it("responseHeaders go on every response of the adapter, and adapterHeaders tells the host's middleware", async () => {
    const seen: Array<Record<string, string> | undefined> = [];
    const host = new Hono();
    host.use(async (c, next) => {
      await next();
      seen.push(adapterHeaders(c));
    });
    const adapter = app({ responseHeaders: (c) => ({ 'X-Version': c.req.header('x-asked') ?? 'current' }) }).hono;
    host.route('/api', adapter);
    host.get('/own', (c) => c.text('host'));
    for (const path of ['/api/note', '/api/nothing', '/api/']) {
      const res = await host.request(path, { headers: { 'X-Asked': '2' } });
      expect(res.headers.get('x-version'), path).toBe('2');
      expect(seen.at(-1), path).toMatchObject({ 'x-version': '2', 'cache-control': 'no-store' });
    }
    const own = await host.request('/own');
    expect(own.headers.get('x-version')).toBeNull();
    expect(seen.at(-1)).toBeUndefined();
  });

  it('a Request-Id that is not sane is replaced by a UUID, in the header and the error body alike', async () => {
    const res = await app().hono.request('/nothing', { headers: { 'Request-Id': 'no spaces <here>' } });
    const id = res.headers.get('request-id');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(await res.json()).toMatchObject({ request_id: id });
  });
});
