/**
 * What a user sees when the server or a CLI command cannot go on, as a user runs them (child
 * processes): a database that does not exist, a PostgreSQL server that is not there or refuses the
 * user or password, a port in use, an invalid setting. Each is one line on stderr naming the problem
 * and the fix, exit code 1, no stack trace. Also the commands' output on a closed pipe and their URL
 * options.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as NetServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, childEnv, ROOT, run } from './helpers/cli.ts';
import { LOCAL_POSTGRES } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';

/** A line of a stack trace. */
const STACK = /\n\s+at /;

/** Every command that opens the configured database (serve too), with arguments it accepts. */
const DATABASE_COMMANDS = [
  ['serve'],
  ['migrate'],
  ['seed'],
  ['organisation', 'create', '--name', 'Acme'],
  ['organisation', 'list'],
  ['token', 'create', '--organisation', '6f1c1a3e-5a8e-4c38-9d33-0c3a3c0a9d11'],
  ['token', 'list'],
  ['token', 'revoke', '6f1c1a3e-5a8e-4c38-9d33-0c3a3c0a9d11'],
];

/** Runs `args` and expects exit code 1 with `line` alone on stderr, nothing on stdout. */
async function failsWith(args: string[], env: Record<string, string | undefined>, line: string | RegExp) {
  const result = await run(args, { PORT: String(await freePort()), ...env });
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(1);
  expect(result.stderr).not.toMatch(STACK);
  expect(result.stderr).toMatch(/^[^\n]+\n$/);
  expect(result.stderr.trimEnd()).toMatch(line);
  expect(result.stdout).toBe('');
}

/**
 * A server that speaks PostgreSQL's protocol just far enough to refuse every connection with
 * `code` (a password a real server here would take, as it trusts local users).
 */
function refusingPostgres(code: string, message: string): Promise<{ port: number; close: () => void }> {
  const field = (type: string, value: string) => Buffer.concat([Buffer.from(type), Buffer.from(`${value}\0`)]);
  const fields = Buffer.concat([
    field('S', 'FATAL'),
    field('V', 'FATAL'),
    field('C', code),
    field('M', message),
    Buffer.from([0]),
  ]);
  const length = Buffer.alloc(4);
  length.writeInt32BE(fields.length + 4);
  const refusal = Buffer.concat([Buffer.from('E'), length, fields]);
  const server: NetServer = createServer((socket) => {
    socket.once('data', () => socket.end(refusal));
    socket.on('error', () => {});
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ port: (server.address() as { port: number }).port, close: () => server.close() }),
    ),
  );
}

describe.concurrent('a database that cannot be used', { timeout: 120_000 }, () => {
  const missing = `engage_missing_${process.pid}`;
  const url = (user: string, port: number | string, database: string) =>
    `postgres://${user}@127.0.0.1:${port}/${database}`;
  const local = new URL(LOCAL_POSTGRES);
  const [user, port] = [local.username || 'postgres', local.port || '5432'];
  // createdb's options: those that differ from libpq's defaults (this user, port 5432).
  const options = `${port === '5432' ? '' : `-p ${port} `}${user === userInfo().username ? '' : `-U ${user} `}`;

  it.each(DATABASE_COMMANDS)('%s %s: a database that does not exist: create it', async (...args) => {
    await failsWith(
      args,
      { DATABASE_URL: url(user, port, missing) },
      `The database "${missing}" does not exist on the PostgreSQL server at 127.0.0.1:${port}: ` +
        `create it (createdb ${options}${missing}), then run this again.`,
    );
  });

  it.each(DATABASE_COMMANDS)('%s %s: nothing listens there', async (...args) => {
    const port = await freePort();
    await failsWith(
      args,
      { DATABASE_URL: url('root', port, 'engage') },
      `No PostgreSQL server answers at 127.0.0.1:${port} (connection refused): ` +
        'start it, or set DATABASE_URL to the server that runs it.',
    );
  });

  it('a role the server does not have', async () => {
    await failsWith(
      ['token', 'list'],
      { DATABASE_URL: url('nobody_of_engage', port, 'postgres') },
      `The PostgreSQL server at 127.0.0.1:${port} refused user "nobody_of_engage" ` +
        '(role "nobody_of_engage" does not exist): correct DATABASE_URL\'s user, or create that role.',
    );
  });

  it('a wrong password, on start-up and in the CLI', async () => {
    const server = await refusingPostgres('28P01', 'password authentication failed for user "ada"');
    try {
      for (const args of [['serve'], ['organisation', 'list']])
        await failsWith(
          args,
          { DATABASE_URL: `postgres://ada:wrong@127.0.0.1:${server.port}/engage` },
          `The PostgreSQL server at 127.0.0.1:${server.port} refused the password of user "ada": ` +
            'correct the user or the password in DATABASE_URL.',
        );
    } finally {
      server.close();
    }
  });

  it('a host that is not known', async () => {
    await failsWith(
      ['migrate'],
      { DATABASE_URL: 'postgres://root@no-such-host.invalid:5432/engage' },
      'The host of DATABASE_URL, no-such-host.invalid, is not known here: correct DATABASE_URL.',
    );
  });
});

describe.concurrent('settings and ports', { timeout: 120_000 }, () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'engage-failures-'));
    dirs.push(dir);
    return join(dir, 'data');
  };

  it('a port in use: one line, before the database is opened', async () => {
    const holder = createServer();
    const port = await freePort();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    const dir = freshDir();
    try {
      await failsWith(
        ['serve'],
        { DATABASE_URL: undefined, PGLITE_DIR: dir, PORT: String(port) },
        `Port ${port} on 127.0.0.1 is in use (another Engage server?): stop what holds it, or choose another PORT.`,
      );
      expect(existsSync(dir)).toBe(false);
    } finally {
      holder.close();
    }
  });

  it('a HOST that is not this machine', async () => {
    await failsWith(
      ['serve'],
      { DATABASE_URL: undefined, PGLITE_DIR: freshDir(), HOST: '192.0.2.1' },
      "HOST 192.0.2.1 is not an address of this machine: set HOST to one of this machine's addresses " +
        '(127.0.0.1, or 0.0.0.0 for all of them).',
    );
  });

  it.each([
    ['PORT', 'nope', /^Invalid configuration: PORT must be a whole number/],
    ['PORT', '70000', /^Invalid configuration: PORT must be at most 65535/],
    ['DATABASE_URL', 'localhost:5432', /^Invalid configuration: DATABASE_URL must be a URL such as postgres:\/\//],
  ])('%s=%s is an invalid setting, for the server and the CLI', async (name, value, line) => {
    for (const args of [['serve'], ['token', 'list'], ['openapi']]) await failsWith(args, { [name]: value }, line);
  });

  it('an embedded database directory that cannot be made', async () => {
    const file = join(dirname(freshDir()), 'a-file');
    writeFileSync(file, '');
    for (const args of [['serve'], ['migrate']])
      await failsWith(
        args,
        { DATABASE_URL: undefined, PGLITE_DIR: join(file, 'data') },
        `The embedded database cannot be kept in ${join(file, 'data')} (ENOTDIR): ` +
          'set PGLITE_DIR to a directory this user may write, or DATABASE_URL to use PostgreSQL.',
      );
  });
});

describe.concurrent('output and URL options', { timeout: 120_000 }, () => {
  it('openapi into a pipe closed early (| head) ends quietly', async () => {
    const child = spawn(
      'bash',
      ['-c', `"${process.execPath}" "${BIN}" openapi | head -c 100; echo " \${PIPESTATUS[0]}"`],
      {
        cwd: ROOT,
        env: childEnv({}),
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(stdout).toMatch(/^\{\n {2}"openapi": "3\.1[\s\S]{70,} 0\n$/);
    expect(stdout.length).toBe(100 + ' 0\n'.length);
  });

  it('openapi names the server at HOST and PORT; --server-url must be an http(s) URL', async () => {
    const at = await run(['openapi'], { PORT: '4123', HOST: '0.0.0.0' });
    expect(at.code, at.stderr).toBe(0);
    expect(JSON.parse(at.stdout).servers).toEqual([{ url: 'http://0.0.0.0:4123/api/v1' }]);
    const given = await run(['openapi', '--server-url', 'https://api.example.com/api/v1/']);
    expect(JSON.parse(given.stdout).servers).toEqual([{ url: 'https://api.example.com/api/v1' }]);
    for (const url of ['nope', 'ftp://example.com', '/api/v1']) {
      const refused = await run(['openapi', '--server-url', url]);
      expect(refused.code, url).toBe(2);
      expect(refused.stderr).toContain(`must be an absolute http:// or https:// URL, not "${url}".`);
      expect(refused.stdout).toBe('');
    }
  });

  it('import reaches the server at PORT by default; --url must be an http(s) URL', async () => {
    const port = await freePort();
    const file = join(mkdtempSync(join(tmpdir(), 'engage-failures-')), 'contacts.csv');
    writeFileSync(file, 'display_name\nAda\n');
    const unreachable = await run(['import', file, '--token', 't'], { PORT: String(port) });
    rmSync(dirname(file), { recursive: true });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr.trim()).toBe(
      `cannot reach the server at http://127.0.0.1:${port} (ECONNREFUSED); is it running? (--url)`,
    );
    const refused = await run(['import', 'x.csv', '--url', 'localhost:3000', '--token', 't']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('must be an absolute http:// or https:// URL, not "localhost:3000".');
  });
});
