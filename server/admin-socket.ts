/**
 * The embedded server's admin channel: PGlite serves one process, so while a server holds the data
 * directory the token and organisation commands ask it to create, list and revoke tokens and to list
 * organisations (server/engine.ts's Admin). HTTP on a Unix domain socket in a 0700 directory inside
 * the data directory, the socket itself 0600: only the user running the server can connect, and
 * nothing listens on the network.
 */
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import type { Database, TokenInfo } from '@engage/engine';
import { type Admin, adminOperations, type CreatedToken, type OrganisationInfo } from './engine.ts';

export const adminSocket = (dir: string) => join(dir, 'admin', 'engage.sock');

const MAX_BODY = 64 * 1024;

type Reply = { status: number; body: unknown };

async function handle(admin: Admin, method: string, url: URL, body: string): Promise<Reply> {
  const path = url.pathname;
  if (method === 'POST' && path === '/tokens')
    return { status: 201, body: await admin.createToken(JSON.parse(body || '{}')) };
  if (method === 'GET' && path === '/tokens')
    return { status: 200, body: await admin.listTokens(url.searchParams.get('organisation') ?? undefined) };
  const revoke = /^\/tokens\/([^/]+)\/revoke$/.exec(path);
  if (method === 'POST' && revoke) return { status: 200, body: { revoked: await admin.revokeToken(revoke[1]!) } };
  if (method === 'GET' && path === '/organisations') return { status: 200, body: await admin.listOrganisations() };
  if (method === 'POST' && path === '/organisations')
    return { status: 201, body: await admin.createOrganisation((JSON.parse(body || '{}') as { name: string }).name) };
  return { status: 404, body: { error: `no ${method} ${path}` } };
}

/** Serves the channel until the returned function is called. `dir` must be held (holdEmbedded). */
export async function serveAdmin(dir: string, db: Database): Promise<() => Promise<void>> {
  const admin = adminOperations(db);
  const socketDir = join(dir, 'admin');
  mkdirSync(socketDir, { recursive: true, mode: 0o700 });
  chmodSync(socketDir, 0o700);
  const path = adminSocket(dir);
  // A socket a killed server left behind; the directory is ours (the lock is held).
  if (existsSync(path)) rmSync(path, { force: true });
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > MAX_BODY) req.destroy();
    });
    req.on('end', () => {
      handle(admin, req.method ?? 'GET', new URL(req.url ?? '/', 'http://admin'), body).then(
        (reply) => send(reply),
        (error: Error) => send({ status: 500, body: { error: error.message } }),
      );
    });
    const send = ({ status, body: payload }: Reply) => {
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(path, () => resolve());
    });
  } catch (error) {
    // E.g. a path past the 107 bytes a Unix socket's name may have: the API still serves; the token CLI
    // then says it cannot reach the server.
    console.error(`No admin channel at ${path} (${(error as Error).message}): stop the server to manage tokens.`);
    return async () => {};
  }
  chmodSync(path, 0o600);
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
}

/** A request to the running server's admin channel. */
async function call<T>(dir: string, method: string, path: string, body?: unknown): Promise<T> {
  const socketPath = adminSocket(dir);
  if (!existsSync(socketPath))
    throw new Error(`the server holding ${dir} has no admin channel (${socketPath}); restart it with this version`);
  return new Promise<T>((resolve, reject) => {
    const req = http.request({ socketPath, method, path, headers: { 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const parsed = JSON.parse(text || 'null') as T & { error?: string };
        // A server started from an older version lacks the newer commands' routes.
        if (res.statusCode === 404)
          reject(new Error(`it runs an older version, which has no ${method} ${path}; restart it with this one`));
        else if ((res.statusCode ?? 500) >= 400) reject(new Error(parsed?.error ?? `admin channel: ${res.statusCode}`));
        else resolve(parsed);
      });
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The admin operations (server/engine.ts), run by the server holding `dir`. */
export const adminChannel = (dir: string): Admin => ({
  createOrganisation: (name) => call<Omit<OrganisationInfo, 'active_tokens'>>(dir, 'POST', '/organisations', { name }),
  createToken: (input) => call<CreatedToken>(dir, 'POST', '/tokens', input),
  listTokens: (organisationId) =>
    call<TokenInfo[]>(
      dir,
      'GET',
      `/tokens${organisationId === undefined ? '' : `?organisation=${encodeURIComponent(organisationId)}`}`,
    ),
  revokeToken: async (tokenId) =>
    (await call<{ revoked: boolean }>(dir, 'POST', `/tokens/${encodeURIComponent(tokenId)}/revoke`)).revoked,
  listOrganisations: () => call<OrganisationInfo[]>(dir, 'GET', '/organisations'),
});
