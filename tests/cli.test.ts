/**
 * The `engage` command (bin/engage.js, scripts/) as a user runs it: `--help` on every command, the
 * token CLI's documented forms and refusals, the token commands reaching the database of a running
 * embedded server through its admin channel, `import` following a job against a started server,
 * `seed --contacts`, a second server on the same directory, and the token hint on PostgreSQL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminSocket } from '../server/admin-socket.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'engage.js');
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const TOKEN = /^engage_[A-Za-z0-9_-]{43}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const newUuid = () => crypto.randomUUID();

/** The environment of a child: `env`'s undefined values removed from ours. */
function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/engage.js ...args`, or `npm run --silent <script> -- ...` when `npm` is given. */
function run(args: string[], env: Record<string, string | undefined> = {}, npm?: string): Promise<Run> {
  const [command, argv] = npm ? ['npm', ['run', '--silent', npm, '--', ...args]] : [process.execPath, [BIN, ...args]];
  const child = spawn(command, argv, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)!.trim();

interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** `engage serve` on `env`, once it answers /health. */
async function serve(env: Record<string, string | undefined>): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  for (const deadline = Date.now() + 90_000; ; await sleep(100)) {
    if (gone) throw new Error(`the server exited on start: ${output}`);
    if (Date.now() > deadline) throw new Error(`the server did not start: ${output}`);
    if (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
  }
  return { child, port, output: () => output, exited };
}

async function stop(server: Server | undefined) {
  if (!server || server.child.exitCode !== null) return;
  server.child.kill('SIGTERM');
  await Promise.race([server.exited, sleep(15_000).then(() => server.child.kill('SIGKILL'))]);
}

const get = (port: number, token: string, path: string) =>
  fetch(`http://127.0.0.1:${port}${path}`, { headers: { Authorization: `Bearer ${token}` } });

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'engage-cli-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe.concurrent('engage --help', () => {
  it('lists every command', async () => {
    const { code, stdout } = await run(['--help']);
    expect(code).toBe(0);
    for (const command of ['serve', 'migrate', 'token', 'seed', 'import', 'openapi']) expect(stdout).toContain(command);
  });

  it.each([
    ['serve'],
    ['migrate'],
    ['token'],
    ['token', 'create'],
    ['token', 'list'],
    ['token', 'revoke'],
    ['seed'],
    ['import'],
    ['openapi'],
  ])('%s %s --help', async (...command) => {
    const { code, stdout } = await run([...command.filter(Boolean), '--help']);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: engage ${command.filter(Boolean).join(' ')}`);
  });

  it('an unknown command is a usage error (exit 2)', async () => {
    const { code, stderr } = await run(['frobnicate']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown command/);
  });

  it('openapi prints the document', async () => {
    const { code, stdout } = await run(['openapi']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ openapi: expect.stringMatching(/^3\.1/) });
  });
});

describe('the token CLI on a database no server holds', () => {
  // An embedded directory of its own (a PostgreSQL database when the suite runs on one).
  let env: Record<string, string | undefined>;
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = process.env.DATABASE_URL ? await createTestDatabase() : undefined;
    env = database ? { DATABASE_URL: database.url } : { DATABASE_URL: undefined, PGLITE_DIR: tempDir() };
  });
  afterAll(async () => {
    await database?.drop();
  });

  it.each([['0'], ['-1'], ['1.5'], ['soon']])(
    '--expires-in %s is refused with exit code 2 and a clear message',
    async (days) => {
      const { code, stdout, stderr } = await run([
        'token',
        'create',
        '--organisation',
        newUuid(),
        `--expires-in=${days}`,
      ]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/--expires-in.*whole number of days, at least 1/);
      expect(stdout).toBe('');
    },
    30_000,
  );

  it('a malformed organisation is refused with exit code 2', async () => {
    const { code, stderr } = await run(['token', 'create', '--organisation', 'nope']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--organisation must be a uuid/);
  });

  it('create (npm run token, as documented), list and revoke', async () => {
    const organisation = newUuid();
    const created = await run(
      ['create', '--organisation', organisation, '--name', 'ci', '--expires-in', '1'],
      env,
      'token',
    );
    expect(created.code, created.stderr).toBe(0);
    expect(lastLine(created.stdout)).toMatch(TOKEN);
    expect(created.stdout).toMatch(/expiring in 1 day\. It is shown once:/);
    const id = UUID.exec(created.stdout)![0];

    const seven = await run(['token', 'create', '--organisation', organisation, '--expires-in', '7'], env);
    expect(seven.stdout).toMatch(/expiring in 7 days\./);

    const listed = await run(['list', '--organisation', organisation], env, 'token');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${id}\tci\tcreated `);
    expect(listed.stdout).not.toContain('engage_');

    const revoked = await run(['token', 'revoke', id], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${id}.\n` });
    const again = await run(['token', 'revoke', id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No active token ${id}.`);
  }, 240_000);
});

describe('against a running embedded server', () => {
  let server: Server | undefined;
  let dir: string;
  let env: Record<string, string | undefined>;
  let demoToken: string;

  beforeAll(async () => {
    dir = tempDir();
    env = { DATABASE_URL: undefined, PGLITE_DIR: dir };
    server = await serve(env);
    demoToken = /Its API token \(shown once\): (\S+)/.exec(server.output())![1]!;
  }, 120_000);
  afterAll(async () => {
    await stop(server);
  }, 30_000);

  it('the admin channel is a socket only its owner can use', () => {
    const socket = statSync(adminSocket(dir));
    expect(socket.isSocket()).toBe(true);
    expect(socket.mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'admin')).mode & 0o777).toBe(0o700);
  });

  it('token create, list and revoke reach its database while it runs; revocation is immediate', async () => {
    const organisation = newUuid();
    const created = await run(['create', '--organisation', organisation, '--name', 'live'], env, 'token');
    expect(created.code, created.stderr).toBe(0);
    const token = lastLine(created.stdout);
    expect(token).toMatch(TOKEN);
    const id = UUID.exec(created.stdout)![0];
    expect((await get(server!.port, token, '/api/v1/contact')).status).toBe(200);

    const listed = await run(['token', 'list', '--organisation', organisation], env);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\tlive\\tcreated .*\\tactive$`, 'm'));

    const revoked = await run(['revoke', id], env, 'token');
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await get(server!.port, token, '/api/v1/contact')).status).toBe(401);
    expect((await run(['token', 'revoke', id], env)).code).toBe(1);
  }, 60_000);

  it('commands that open the database themselves refuse, in one line', async () => {
    const { code, stderr } = await run(['seed', '--contacts', '5'], env);
    expect(code).toBe(1);
    expect(stderr.trim()).toMatch(/^The embedded database in .* is in use by a running server \(pid \d+\);[^\n]*$/);
  });

  it('a second server on the same directory exits 1 with one line, no stack trace', async () => {
    const port = await freePort();
    const second = await run(['serve'], { ...env, PORT: String(port) });
    expect(second.code).toBe(1);
    expect(second.stderr.trim()).toMatch(
      /^The embedded database in .* is in use by a running server \(pid \d+\);[^\n]*$/,
    );
    expect(second.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);

  it('import uploads a CSV, follows the job with a progress bar and prints a summary', async () => {
    const file = join(tempDir(), 'contacts.csv');
    const rows = Array.from({ length: 3000 }, (_, i) => `cli-${i},Imported ${i},cli${i}@example.com,`);
    writeFileSync(file, `external_id,display_name,email,birthday\n${rows.join('\n')}\nbad-1,Bad,b@example.com,never\n`);
    const url = `http://127.0.0.1:${server!.port}`;
    const result = await run(['import', file, '--url', url, '--token', demoToken]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/3001 rows\); import job/);
    expect(result.stderr).toMatch(/\d+% \| \d+\/3001 rows \| \d+ rows\/s \| ETA/);
    expect(result.stdout).toMatch(
      /succeeded: 3001 of 3001 rows in [\d.]+ s \(\d+ rows\/s\): 3000 created, 0 updated, 1 failed/,
    );
    expect(result.stdout).toMatch(/^ {2}item 3000: VALIDATION_FAILED .*birthday/m);

    const page = await get(server!.port, demoToken, '/api/v1/contact?external_id=like.cli-*&limit=1');
    expect(page.headers.get('content-range')).toBeDefined();
    const count = await fetch(`http://127.0.0.1:${server!.port}/api/v1/contact?external_id=like.cli-*`, {
      method: 'HEAD',
      headers: { Authorization: `Bearer ${demoToken}`, Prefer: 'count=exact' },
    });
    expect(count.headers.get('content-range')).toMatch(/\/3000$/);

    const unauthorised = await run(['import', file, '--url', url, '--token', 'engage_nope']);
    expect(unauthorised.code).toBe(1);
    expect(unauthorised.stderr).toMatch(/answered 401/);
    const noToken = await run(['import', file, '--url', url], { ENGAGE_TOKEN: undefined });
    expect(noToken.code).toBe(2);
  }, 60_000);
});

describe('engage seed', () => {
  it('--contacts N creates the demo on an empty database and adds N contacts with progress', async () => {
    const env = { DATABASE_URL: undefined, PGLITE_DIR: tempDir() };
    const result = await run(['seed', '--contacts', '1200'], env);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Added 1200 contacts to organisation [0-9a-f-]{36} in/m);
    expect(lastLine(result.stdout)).toMatch(TOKEN);
    expect(result.stderr).toMatch(/1200\/1200 contacts/);
    const token = lastLine(result.stdout);

    const again = await run(['seed', '--contacts', '300'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('engage_');

    const server = await serve(env);
    try {
      const count = await fetch(`http://127.0.0.1:${server.port}/api/v1/contact`, {
        method: 'HEAD',
        headers: { Authorization: `Bearer ${token}`, Prefer: 'count=exact' },
      });
      expect(count.headers.get('content-range')).toMatch(/\/1505$/); // 5 demo contacts
    } finally {
      await stop(server);
    }
  }, 120_000);
});

describe('npm start on PostgreSQL', () => {
  let database: TestDatabase;
  let server: Server | undefined;
  beforeAll(async () => {
    database = await createTestDatabase({ postgres: true });
  });
  afterAll(async () => {
    await stop(server);
    await database?.drop();
  }, 30_000);

  it('prints the command that gives a token, and that command works', async () => {
    const env = { DATABASE_URL: database.url };
    server = await serve(env);
    const hint = /npm run token -- create --organisation (\S+) --name admin/.exec(server.output());
    expect(hint, server.output()).not.toBeNull();
    const created = await run(['create', '--organisation', hint![1]!, '--name', 'admin'], env, 'token');
    expect(created.code, created.stderr).toBe(0);
    expect((await get(server.port, lastLine(created.stdout), '/api/v1/contact')).status).toBe(200);
  }, 120_000);
});
