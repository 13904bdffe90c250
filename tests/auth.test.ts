/**
 * Authentication (docs/contract.md section 4): every way a bearer token can be missing or not valid
 * is a 401 UNAUTHORIZED with `WWW-Authenticate: Bearer` and the contract's error body, decided
 * before anything else about the request; tokens are stored as SHA-256 only; revocation is
 * immediate; the token CLI works end to end on the configured database.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/app.ts';
import { openDatabase } from '../server/database.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

let t: TestApp;
let org: Organisation;

const TOKEN_FORMAT = /^engage_[A-Za-z0-9_-]{43}$/;
/** A token in the right format that no one was ever given. */
const unknownToken = () => `engage_${randomBytes(32).toString('base64url')}`;

beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
  await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada' }, { display_name: 'Bob' }]);
});
afterAll(() => t?.drop());

/** A request with a raw Authorization header (or none); `path` is below /api/v1 unless absolute. */
function raw(path: string, authorization: string | null, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (authorization !== null) headers.set('Authorization', authorization);
  const url =
    path.startsWith('/api/') || path.startsWith('/v1') || path === '/health' || path === '/ready'
      ? path
      : `/api/v1${path}`;
  return Promise.resolve(t.app.request(url, { ...init, headers }));
}

/** The 401 of the contract: status, WWW-Authenticate, Request-Id, and the whole error body. */
async function expectUnauthorized(res: Response, options: { head?: boolean } = {}) {
  const text = await res.text();
  expect(res.status, text).toBe(401);
  expect(res.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  const requestId = res.headers.get('request-id');
  expect(requestId).toBeTruthy();
  if (options.head) {
    expect(text).toBe('');
    return;
  }
  expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toMatchObject({
    name: 'APIError',
    code: 'UNAUTHORIZED',
    is_transient: false,
    status_code: 401,
    contact_support: false,
    request_id: requestId,
  });
  expect(typeof body.message).toBe('string');
  expect((body.message as string).length).toBeGreaterThan(0);
  expect(typeof body.timestamp).toBe('string');
  expect(new Date(body.timestamp as string).toISOString()).toBe(body.timestamp);
  expect(Math.abs(Date.now() - Date.parse(body.timestamp as string))).toBeLessThan(60_000);
  // Nothing about the data leaks into a 401.
  expect(text).not.toContain('Ada');
  expect(text).not.toContain(org.id);
}

describe('missing or unusable Authorization header', () => {
  const valid = () => org.token;
  const cases: Array<[string, () => string | null]> = [
    ['no Authorization header', () => null],
    ['empty Authorization header', () => ''],
    ['Basic scheme', () => `Basic ${Buffer.from('user:pass').toString('base64')}`],
    ['Basic scheme carrying a valid token', () => `Basic ${valid()}`],
    ['Token scheme carrying a valid token', () => `Token ${valid()}`],
    ['the token alone, without a scheme', () => valid()],
    ['Bearer with no token', () => 'Bearer'],
    ['Bearer and a space', () => 'Bearer '],
    ['Bearer and spaces', () => 'Bearer    '],
    ['Bearer with two tokens', () => `Bearer ${valid()} ${valid()}`],
    ['Bearer with a short token', () => 'Bearer abc'],
    ['Bearer with only the prefix', () => 'Bearer engage_'],
    ['Bearer with a token one character too long', () => `Bearer ${valid()}x`],
    ['Bearer with a token one character too short', () => `Bearer ${valid().slice(0, -1)}`],
    ['Bearer with a wrong prefix', () => `Bearer ENGAGE_${valid().slice(7)}`],
    ['Bearer with the random part alone', () => `Bearer ${valid().slice(7)}`],
    ['Bearer with a character outside base64url', () => `Bearer ${valid().slice(0, -1)}!`],
    ['Bearer with a quoted token', () => `Bearer "${valid()}"`],
    [
      'Bearer with the stored hash of a valid token',
      () => `Bearer ${createHash('sha256').update(valid()).digest('hex')}`,
    ],
    ['Bearer with a JWT-looking value', () => 'Bearer eyJhbGciOiJub25lIn0.eyJvcmciOiJ4In0.'],
    ['Bearer with SQL', () => "Bearer engage_' OR '1'='1"],
    ['Bearer with an unknown well-formed token', () => `Bearer ${unknownToken()}`],
  ];
  it.each(cases)('%s -> 401', async (_name, header) => {
    await expectUnauthorized(await raw('/contact', header()));
  });

  it('the scheme is case-insensitive (RFC 7235): "bearer" with a valid token is accepted', async () => {
    const res = await raw('/contact?select=display_name&order=display_name', `bearer ${org.token}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ display_name: 'Ada' }, { display_name: 'Bob' }]);
  });

  it("a valid token answers 200 with the organisation's rows (control)", async () => {
    const res = await raw('/contact?select=display_name&order=display_name', `Bearer ${org.token}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ display_name: 'Ada' }, { display_name: 'Bob' }]);
  });

  it('the 401 keeps a sane incoming Request-Id in the header and the body', async () => {
    const res = await raw('/contact', null, { headers: { 'Request-Id': 'client-chosen-id-42' } });
    expect(res.headers.get('request-id')).toBe('client-chosen-id-42');
    await expectUnauthorized(res);
  });

  it('HEAD without a valid token is a 401 without a body', async () => {
    await expectUnauthorized(await raw('/contact', null, { method: 'HEAD' }), { head: true });
    await expectUnauthorized(await raw('/contact', `Bearer ${unknownToken()}`, { method: 'HEAD' }), { head: true });
  });
});

describe('tokens that were valid once', () => {
  it('an expired token is 401; one expiring later works', async () => {
    const { id, token } = await t.engine.tokens!.create(org.id, { name: 'expiring', expiresInDays: 1 });
    expect((await raw('/contact', `Bearer ${token}`)).status).toBe(200);
    await t.db.query("UPDATE api_token SET expires_at = now() - interval '1 second' WHERE id = $1::uuid", [id]);
    await expectUnauthorized(await raw('/contact', `Bearer ${token}`));
    await expectUnauthorized(await raw('/', `Bearer ${token}`));
    // Listings say so by the same rule the statements apply.
    expect((await t.engine.tokens!.list(org.id)).find((x) => x.id === id)?.active).toBe(false);
  });

  it('a token past its expiry is refused', async () => {
    const { id, token } = await t.engine.tokens!.create(org.id, { expiresInDays: 1 });
    await t.db.query("UPDATE api_token SET expires_at = now() - interval '1 second' WHERE id = $1::uuid", [id]);
    await expectUnauthorized(await raw('/contact', `Bearer ${token}`));
  });

  it('a revoked token stops at once; another token of the organisation keeps working', async () => {
    const first = await t.engine.tokens!.create(org.id, { name: 'first' });
    const second = await t.engine.tokens!.create(org.id, { name: 'second' });
    // Warm up both: a cache, if any, now holds them.
    for (let i = 0; i < 3; i++) {
      expect((await raw('/contact', `Bearer ${first.token}`)).status).toBe(200);
      expect((await raw('/contact', `Bearer ${second.token}`)).status).toBe(200);
    }
    expect(await t.engine.tokens!.revoke(first.id)).toBe(true);
    await expectUnauthorized(await raw('/contact', `Bearer ${first.token}`));
    await expectUnauthorized(await raw('/contact', `Bearer ${first.token}`, { method: 'HEAD' }), { head: true });
    await expectUnauthorized(await raw('/', `Bearer ${first.token}`));
    const res = await raw('/contact?select=display_name&order=display_name', `Bearer ${second.token}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ display_name: 'Ada' }, { display_name: 'Bob' }]);
    expect((await raw('/contact', `Bearer ${org.token}`)).status).toBe(200);
    // Revoking twice reports that nothing was revoked; unknown ids likewise.
    expect(await t.engine.tokens!.revoke(first.id)).toBe(false);
    expect(await t.engine.tokens!.revoke(randomUUID())).toBe(false);
  });

  it('the token of a deleted organisation is 401', async () => {
    const gone = await createOrganisation(t);
    await insertRows(t.db, 'contact', gone.id, [{ display_name: 'Gone' }]);
    expect((await raw('/contact', `Bearer ${gone.token}`)).status).toBe(200);
    await t.db.query('DELETE FROM organisation WHERE id = $1::uuid', [gone.id]);
    await expectUnauthorized(await raw('/contact', `Bearer ${gone.token}`));
    await expectUnauthorized(await raw('/', `Bearer ${gone.token}`));
  });
});

describe('authentication is decided before anything else', () => {
  /** Each request fails for another reason too; with a valid token it gets `otherwise`. */
  const requests: Array<{ name: string; path: string; init?: RequestInit; otherwise: number }> = [
    { name: 'malformed select', path: '/contact?select=((', otherwise: 400 },
    { name: 'malformed filter', path: '/contact?display_name=nope.x', otherwise: 400 },
    { name: 'unknown field', path: '/contact?nope=eq.1', otherwise: 400 },
    { name: 'value the database rejects', path: '/contact?birthday=eq.not-a-date', otherwise: 400 },
    { name: 'bad uuid value', path: '/contact?id=eq.1', otherwise: 400 },
    { name: 'order on a field that is not orderable', path: '/contact?order=email', otherwise: 400 },
    { name: 'bad Range header', path: '/contact', init: { headers: { Range: 'bytes=a-b' } }, otherwise: 400 },
    { name: 'inverted Range', path: '/contact', init: { headers: { Range: '5-1' } }, otherwise: 416 },
    {
      name: 'offset past the end with a count',
      path: '/contact?offset=50',
      init: { headers: { Prefer: 'count=exact' } },
      otherwise: 416,
    },
    {
      name: 'singular with several rows',
      path: '/contact',
      init: { headers: { Accept: 'application/vnd.pgrst.object+json' } },
      otherwise: 406,
    },
    { name: 'unsupported Accept', path: '/contact', init: { headers: { Accept: 'application/xml' } }, otherwise: 406 },
    {
      name: 'strict unknown preference',
      path: '/contact',
      init: { headers: { Prefer: 'handling=strict, nope=1' } },
      otherwise: 400,
    },
    {
      name: 'unsupported engage-version',
      path: '/contact',
      init: { headers: { 'engage-version': '1999-01-01' } },
      otherwise: 400,
    },
    { name: 'unknown resource', path: '/nope', otherwise: 404 },
    { name: 'path below a resource', path: '/contact/deeper', otherwise: 404 },
    { name: 'unknown path under /v1', path: '/v1/nothing-here', otherwise: 404 },
    {
      name: 'method not offered (PUT)',
      path: '/contact',
      init: { method: 'PUT', body: '{}', headers: { 'Content-Type': 'application/json' } },
      otherwise: 405,
    },
    {
      name: 'method not offered (POST on segment)',
      path: '/segment',
      init: { method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } },
      otherwise: 405,
    },
    {
      name: 'method not offered (DELETE on campaign)',
      path: '/campaign?id=eq.00000000-0000-0000-0000-000000000000',
      init: { method: 'DELETE' },
      otherwise: 405,
    },
    {
      name: 'body over the limit',
      path: '/calendar',
      init: { method: 'POST', body: 'x'.repeat(1024 * 1024 + 1), headers: { 'Content-Type': 'application/json' } },
      otherwise: 413,
    },
  ];

  it.each(requests)('$name: a valid token gets $otherwise', async ({ path, init, otherwise }) => {
    const res = await raw(path, `Bearer ${org.token}`, init);
    expect(res.status, await res.text()).toBe(otherwise);
  });

  it.each(requests)('$name: no token is 401', async ({ path, init }) => {
    await expectUnauthorized(await raw(path, null, init));
  });

  it.each(requests)('$name: an unknown well-formed token is 401', async ({ path, init }) => {
    await expectUnauthorized(await raw(path, `Bearer ${unknownToken()}`, init));
  });

  it.each(requests)('$name: a revoked token is 401', async ({ path, init }) => {
    const { id, token } = await t.engine.tokens!.create(org.id, { name: 'to revoke' });
    await t.engine.tokens!.revoke(id);
    await expectUnauthorized(await raw(path, `Bearer ${token}`, init));
  });

  it('a verb offered but not served yet (POST /calendar) is 401 with an unknown token', async () => {
    const init = {
      method: 'POST',
      body: JSON.stringify({ name: 'x', type: 'virtual' }),
      headers: { 'Content-Type': 'application/json' },
    };
    await expectUnauthorized(await raw('/calendar', `Bearer ${unknownToken()}`, init));
    await expectUnauthorized(await raw('/calendar', null, init));
  });

  it('OPTIONS on a resource is 401 with an unknown token (and without one)', async () => {
    await expectUnauthorized(await raw('/contact', null, { method: 'OPTIONS' }));
    await expectUnauthorized(await raw('/contact', `Bearer ${unknownToken()}`, { method: 'OPTIONS' }));
  });
});

describe('token storage', () => {
  it('only the SHA-256 of a token is stored; the token appears nowhere in api_token', async () => {
    const { id, token } = await t.engine.tokens!.create(org.id, { name: 'stored' });
    expect(token).toMatch(TOKEN_FORMAT);
    const [row] = await t.db.query<{ token_hash: string; everything: string }>(
      'SELECT token_hash, row_to_json(a)::text AS everything FROM api_token a WHERE id = $1::uuid',
      [id],
    );
    expect(row!.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
    const all = await t.db.query<{ everything: string }>('SELECT row_to_json(a)::text AS everything FROM api_token a');
    const secret = token.slice('engage_'.length);
    for (const r of all) {
      expect(r.everything).not.toContain(token);
      expect(r.everything).not.toContain(secret);
      expect(r.everything).not.toContain(Buffer.from(secret, 'base64url').toString('hex'));
    }
    const columns = await t.db.query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'api_token' ORDER BY column_name",
    );
    expect(columns.map((c) => c.column_name)).not.toContain('token');
  });

  it('tokens carry at least 256 random bits and are never equal', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 5; i++) tokens.add((await t.engine.tokens!.create(org.id)).token);
    expect(tokens.size).toBe(5);
    for (const token of tokens) expect(Buffer.from(token.slice(7), 'base64url')).toHaveLength(32);
  });

  it('listTokens shows neither the token nor its hash', async () => {
    const { token } = await t.engine.tokens!.create(org.id, { name: 'listed' });
    const list = await t.engine.tokens!.list(org.id);
    const text = JSON.stringify(list);
    expect(text).not.toContain(token);
    expect(text).not.toContain(createHash('sha256').update(token).digest('hex'));
    expect(list.some((x) => x.name === 'listed')).toBe(true);
    for (const info of list)
      expect(Object.keys(info).sort()).toEqual([
        'active',
        'created_at',
        'expires_at',
        'id',
        'name',
        'revoked_at',
        'tenant',
      ]);
  });
});

describe('endpoints without and with a token', () => {
  it('/health and /ready need no token (and ignore a bad one)', async () => {
    for (const auth of [null, 'Bearer nonsense', `Bearer ${unknownToken()}`]) {
      const health = await raw('/health', auth);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok' });
      expect(health.headers.get('request-id')).toBeTruthy();
      const ready = await raw('/ready', auth);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toMatchObject({ status: 'ready' });
    }
  });

  it('GET /api/v1/ (OpenAPI) needs a valid token', async () => {
    await expectUnauthorized(await raw('/api/v1/', null));
    await expectUnauthorized(await raw('/api/v1/', 'Basic abc'));
    await expectUnauthorized(await raw('/api/v1/', `Bearer ${unknownToken()}`));
    await expectUnauthorized(await raw('/api/v1', null));
    const ok = await raw('/api/v1/', `Bearer ${org.token}`);
    expect(ok.status).toBe(200);
    const doc = (await ok.json()) as { openapi: string; info: { title: string } };
    expect(doc.openapi).toMatch(/^3\.1/);
    expect(doc.info.title).toBe('API');
  });

  it('/v1 endpoints need a token too', async () => {
    await expectUnauthorized(await raw('/v1/contacts', null));
    await expectUnauthorized(
      await raw('/v1/contacts/imports/batch', null, {
        method: 'POST',
        body: '{"items":[]}',
        headers: { 'Content-Type': 'application/json' },
      }),
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The token CLI, end to end

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const onPostgres = Boolean(process.env.DATABASE_URL);

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('token CLI', () => {
  let dir: string | undefined;

  beforeAll(() => {
    if (!onPostgres) dir = mkdtempSync(join(tmpdir(), 'engage-cli-'));
  });
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  function env(): NodeJS.ProcessEnv {
    const e: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
    if (onPostgres) {
      e.DATABASE_URL = t.url;
      delete e.PGLITE_DIR;
    } else {
      delete e.DATABASE_URL;
      e.PGLITE_DIR = dir;
    }
    return e;
  }

  function cli(...args: string[]): Promise<Run> {
    return new Promise((resolve) => {
      execFile(
        'npm',
        ['run', '--silent', 'token', '--', ...args],
        { cwd: ROOT, env: env(), timeout: 90_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** Calls the API on the CLI's database: the test app on PostgreSQL, a fresh app over PGLITE_DIR otherwise. */
  async function callWith(token: string, path: string): Promise<Response> {
    if (onPostgres) return raw(path, `Bearer ${token}`);
    const db = await openDatabase({ PGLITE_DIR: dir });
    try {
      await db.migrate();
      const engine = engageEngine(db, { maxRows: 1000 });
      const app = createApp({ engine, ping: () => db.ping() });
      const res = await app.request(`/api/v1${path}`, { headers: { Authorization: `Bearer ${token}` } });
      // Read the body before the database closes.
      const body = await res.text();
      return new Response(res.status === 204 || res.status === 304 ? null : body, {
        status: res.status,
        headers: res.headers,
      });
    } finally {
      await db.close();
    }
  }

  const lastLine = (s: string) => s.trimEnd().split('\n').at(-1) ?? '';

  it('create prints the token alone on the last line; it authenticates, is listed,' +
    ' and revoke makes it 401', async () => {
    const organisation = randomUUID();
    const created = await cli('create', '--organisation', organisation, '--name', 'x');
    expect(created.code, created.stderr).toBe(0);
    const token = lastLine(created.stdout);
    expect(token).toMatch(TOKEN_FORMAT);
    const idMatch = /\b([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b/.exec(
      created.stdout.replace(organisation, ''),
    );
    expect(idMatch).not.toBeNull();
    const tokenId = idMatch![1]!;

    const ok = await callWith(token, '/contact');
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.text()).toBe('[]');

    const listed = await cli('list', '--organisation', organisation);
    expect(listed.code, listed.stderr).toBe(0);
    const line = listed.stdout.split('\n').find((l) => l.startsWith(tokenId));
    expect(line).toBeDefined();
    expect(line).toContain('\tx\t');
    expect(line).toContain('active');
    expect(listed.stdout).not.toContain(token);
    expect(listed.stdout).not.toContain(createHash('sha256').update(token).digest('hex'));

    const revoked = await cli('revoke', tokenId);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await callWith(token, '/contact');
    expect(after.status).toBe(401);
    expect(after.headers.get('www-authenticate')).toMatch(/^Bearer/);
    expect(((await after.json()) as { code: string }).code).toBe('UNAUTHORIZED');

    const relisted = await cli('list', '--organisation', organisation);
    expect(relisted.stdout.split('\n').find((l) => l.startsWith(tokenId))).toContain('revoked');

    const again = await cli('revoke', tokenId);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain(tokenId);
  }, 180_000);

  it('create --expires-in 7 gives a working token listed with its expiry,' +
    ' for an existing organisation too', async () => {
    const created = await cli('create', '--organisation', org.id, '--name', 'weekly', '--expires-in', '7');
    expect(created.code, created.stderr).toBe(0);
    const token = lastLine(created.stdout);
    expect(token).toMatch(TOKEN_FORMAT);
    if (onPostgres) {
      // Same organisation as the test's own token: same rows.
      const res = await callWith(token, '/contact?select=display_name&order=display_name');
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([{ display_name: 'Ada' }, { display_name: 'Bob' }]);
    } else {
      expect((await callWith(token, '/contact')).status).toBe(200);
    }
    const listed = await cli('list', '--organisation', org.id);
    expect(listed.stdout.split('\n').find((l) => l.includes('\tweekly\t'))).toContain('expires');
  }, 180_000);

  const refusals: Array<[string, string[]]> = [
    ['--expires-in 0', ['create', '--organisation', randomUUID(), '--expires-in', '0']],
    ['--expires-in -1', ['create', '--organisation', randomUUID(), '--expires-in', '-1']],
    ['--expires-in not a number', ['create', '--organisation', randomUUID(), '--expires-in', 'soon']],
    ['a bad organisation uuid', ['create', '--organisation', 'not-a-uuid']],
    ['no organisation', ['create']],
    ['list with a bad organisation uuid', ['list', '--organisation', 'nope']],
    ['revoke without an id', ['revoke']],
    ['revoke with a bad id', ['revoke', 'nope']],
    ['an unknown command', ['frobnicate']],
    ['no command', []],
    ['an unknown option', ['create', '--organisation', randomUUID(), '--owner', 'x']],
  ];
  it.each(refusals)(
    '%s exits non-zero with the usage on stderr and no token on stdout',
    async (_name, args) => {
      const run = await cli(...args);
      expect(run.code).toBe(2);
      // The command's usage follows the error, on stderr.
      expect(run.stderr).toMatch(/Usage: engage token/);
      expect(run.stdout).not.toMatch(/engage_[A-Za-z0-9_-]{43}/);
    },
    120_000,
  );
});
