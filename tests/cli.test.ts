/**
 * The `engage` command (bin/engage.js, scripts/) as a user runs it: `--help` on every command, the
 * token CLI's documented forms and refusals, the token and organisation commands reaching the
 * database of a running embedded server through its admin channel, `import` following a job against
 * a started server (its exit code, --columns, --ignore-unknown, the README's quick path),
 * `seed --contacts`, a second server on the same directory, the demo organisation named at every
 * start, the migrations logged as they are applied (before the server says it listens), and on an
 * empty PostgreSQL database the commands to make an organisation and its first token.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminChannel, adminSocket } from '../server/admin-socket.ts';
import { lastLine, ROOT, run, type Server, serve, stop } from './helpers/cli.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
const TOKEN = /^engage_[A-Za-z0-9_-]{43}$/;
const newUuid = () => crypto.randomUUID();

/** The migrations the code ships, in order (drizzle-kit's journal). */
const MIGRATIONS = (
  JSON.parse(readFileSync(join(ROOT, 'drizzle', 'meta', '_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string }>;
  }
).entries.map((e) => e.tag);

/** The migrations named by the JSON log lines in `output`, in order. */
const loggedMigrations = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; migration?: string; msg: string })
    .filter((entry) => entry.migration !== undefined)
    .map((entry) => {
      expect(entry).toMatchObject({ level: 30, msg: `applied migration ${entry.migration}` });
      return entry.migration;
    });

/** The start-up line naming the demo organisation. */
const demoLine = (id: string) =>
  `Demo organisation: ${id} ("Demo organisation"). Tokens: npx engage token create --organisation ${id}`;

const ORGANISATIONS_HEADER = 'id\tname\tcreated_at\tactive_tokens';

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
    for (const command of ['serve', 'migrate', 'token', 'organisation', 'seed', 'import', 'openapi'])
      expect(stdout).toContain(command);
  });

  it.each([
    ['serve'],
    ['migrate'],
    ['token'],
    ['token', 'create'],
    ['token', 'list'],
    ['token', 'revoke'],
    ['organisation'],
    ['organisation', 'list'],
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
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\tci\\tcreated \\d{4}-\\d\\d-\\d\\dT[\\d:.]+\\+00:00\\t`, 'm'));
    expect(listed.stdout).not.toContain('engage_');

    const revoked = await run(['token', 'revoke', id], env);
    expect(revoked).toMatchObject({ code: 0, stdout: `Revoked token ${id}.\n` });
    const again = await run(['token', 'revoke', id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`No active token ${id}.`);
  }, 240_000);

  it("organisation list counts each one's active tokens; token list alone lists every organisation's", async () => {
    const [first, second] = [newUuid(), newUuid()];
    const created = await run(['token', 'create', '--organisation', first, '--name', 'one'], env);
    const revoked = UUID.exec((await run(['token', 'create', '--organisation', first], env)).stdout)![0];
    await run(['token', 'create', '--organisation', second, '--name', 'two', '--expires-in', '3'], env);
    expect((await run(['token', 'revoke', revoked], env)).code).toBe(0);

    const organisations = await run(['organisation', 'list'], env);
    expect(organisations.code, organisations.stderr).toBe(0);
    const lines = organisations.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe(ORGANISATIONS_HEADER);
    expect(lines).toContainEqual(
      expect.stringMatching(new RegExp(`^${first}\\t\\t\\d{4}-\\d\\d-\\d\\dT[\\d:.]+\\+00:00\\t1$`)),
    );
    expect(lines).toContainEqual(expect.stringMatching(new RegExp(`^${second}\\t\\t.+\\t1$`)));

    const tokens = await run(['token', 'list'], env);
    expect(tokens.code, tokens.stderr).toBe(0);
    const id = UUID.exec(created.stdout)![0];
    expect(tokens.stdout).toMatch(new RegExp(`^${id}\\tone\\tcreated .+\\tactive\\torganisation ${first}$`, 'm'));
    expect(tokens.stdout).toMatch(new RegExp(`^${revoked}\\t\\tcreated .+\\trevoked .+\\torganisation ${first}$`, 'm'));
    expect(tokens.stdout).toMatch(new RegExp(`\\ttwo\\tcreated .+\\texpires .+\\torganisation ${second}$`, 'm'));
    // Neither the tokens nor their hashes.
    expect(tokens.stdout).not.toMatch(/engage_|[0-9a-f]{64}/);
  }, 120_000);
});

it("a server of an older version, whose admin channel lacks a command's route, is to be restarted", async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'admin'));
  const older = createServer((req, res) =>
    res.writeHead(404).end(JSON.stringify({ error: `no ${req.method} ${req.url}` })),
  );
  await new Promise<void>((resolve) => older.listen(adminSocket(dir), resolve));
  try {
    await expect(adminChannel(dir).listOrganisations()).rejects.toThrow(
      'it runs an older version, which has no GET /organisations; restart it with this one',
    );
  } finally {
    older.close();
  }
});

describe('against a running embedded server', () => {
  let server: Server | undefined;
  let dir: string;
  let env: Record<string, string | undefined>;
  let demoToken: string;
  let demo: string;

  beforeAll(async () => {
    dir = tempDir();
    env = { DATABASE_URL: undefined, PGLITE_DIR: dir };
    server = await serve({ ...env, LOG_LEVEL: 'info' });
    demoToken = /Its API token \(shown once\): (\S+)/.exec(server.output())![1]!;
    demo = /Created a demo organisation (\S+) with sample data/.exec(server.output())![1]!;
  }, 120_000);
  afterAll(async () => {
    await stop(server);
  }, 30_000);

  it('its first start logs each migration it applied, then names the demo organisation, then listens', () => {
    const output = server!.output();
    expect(loggedMigrations(output)).toEqual(MIGRATIONS);
    expect(output).toContain(`${demoLine(demo)}\n`);
    // In the order written to one file: the migrations, the demo, the listening lines.
    const last = output.lastIndexOf('applied migration');
    expect(last).toBeLessThan(output.indexOf('Created a demo organisation'));
    expect(output.indexOf(demoLine(demo))).toBeLessThan(output.indexOf('"msg":"listening"'));
    expect(output.indexOf('"msg":"listening"')).toBeLessThan(output.indexOf('Engage API listening on'));
  });

  it('organisation list and token list (every organisation) reach its database while it runs', async () => {
    const organisations = await run(['organisation', 'list'], env);
    expect(organisations.code, organisations.stderr).toBe(0);
    expect(organisations.stdout.split('\n')[0]).toBe(ORGANISATIONS_HEADER);
    expect(organisations.stdout).toMatch(new RegExp(`^${demo}\\tDemo organisation\\t.+\\t1$`, 'm'));
    const tokens = await run(['token', 'list'], env);
    expect(tokens.code, tokens.stderr).toBe(0);
    expect(tokens.stdout).toMatch(
      new RegExp(`^${UUID.source}\\tdemo\\tcreated .+\\tactive\\torganisation ${demo}$`, 'm'),
    );
    expect(tokens.stdout).not.toContain('engage_');
  }, 60_000);

  it('organisation create reaches its database while it runs, and its token works at once', async () => {
    const created = await run(['organisation', 'create', '--name', 'Live Ltd', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const { id, name } = JSON.parse(created.stdout) as { id: string; name: string };
    expect(name).toBe('Live Ltd');
    const token = await run(['token', 'create', '--organisation', id], env);
    expect(token.stderr).toBe('');
    expect((await get(server!.port, lastLine(token.stdout), '/api/v1/contact')).status).toBe(200);
    expect((await run(['organisation', 'list'], env)).stdout).toMatch(new RegExp(`^${id}\\tLive Ltd\\t.+\\t1$`, 'm'));
  }, 60_000);

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

  // Before the other imports, which add contacts: the export is then the demo's five.
  it("the README's quick path: the demo's contacts exported as CSV import back as 5 updates", async () => {
    const file = join(tempDir(), 'contacts.csv');
    const exported = await fetch(
      `http://127.0.0.1:${server!.port}/api/v1/contact?select=external_id,display_name,city`,
      { headers: { Authorization: `Bearer ${demoToken}`, Accept: 'text/csv' } },
    );
    expect(exported.status).toBe(200);
    writeFileSync(file, await exported.text());
    // The README's server listens on PORT, the default of --url.
    const result = await run(['import', file, '--token', demoToken], { PORT: String(server!.port) });
    expect(result.code, result.stderr).toBe(0);
    expect(lastLine(result.stdout)).toMatch(
      /^Import \S+ succeeded: 5 of 5 rows imported in [\d.]+ s \(\d+ rows\/s\): 0 created, 5 updated, 0 failed\.$/,
    );
  }, 60_000);

  it('import uploads a CSV, follows the job with a progress bar and prints a summary', async () => {
    const file = join(tempDir(), 'contacts.csv');
    const rows = Array.from({ length: 3000 }, (_, i) => `cli-${i},Imported ${i},cli${i}@example.com,`);
    writeFileSync(file, `external_id,display_name,email,birthday\n${rows.join('\n')}\nbad-1,Bad,b@example.com,never\n`);
    const url = `http://127.0.0.1:${server!.port}`;
    const result = await run(['import', file, '--url', url, '--token', demoToken]);
    // A row failed: exit code 1, after the summary.
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain('1 row failed: exit code 1 (--allow-failures exits 0).');
    expect(result.stderr).toMatch(/3001 rows\); import job/);
    expect(result.stderr).toMatch(/\d+% \| \d+\/3001 rows \| \d+ rows\/s \| ETA/);
    expect(result.stdout).toMatch(
      /partly succeeded: 3000 of 3001 rows imported in [\d.]+ s \(\d+ rows\/s\): 3000 created, 0 updated, 1 failed/,
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

  it('import --columns renames and drops columns, --ignore-unknown drops those the collection lacks', async () => {
    const url = `http://127.0.0.1:${server!.port}`;
    const importing = (file: string, ...options: string[]) =>
      run(['import', file, '--url', url, '--token', demoToken, ...options]);
    const csv = join(tempDir(), 'people.csv');
    writeFileSync(
      csv,
      // created_at is a field of contact (set by the server, which ignores it): known, so kept.
      'external_id,name,email,notes,colour,created_at\n' +
        'col-1,"Lovelace, Ada",ada@example.com,"a ""note""\non two lines",red,2020-01-01T00:00:00Z\n' +
        'col-2,Grace,grace@example.com,,blue,\n',
    );
    // Every row fails on the columns contact lacks; --allow-failures exits 0 all the same.
    const failing = await importing(csv);
    expect(failing.code).toBe(1);
    expect(failing.stdout).toMatch(
      /failed: 0 of 2 rows imported .*0 created, 0 updated, 2 failed\.\n {2}item 0: UNKNOWN_FIELD .*"name", "notes", "colour"/,
    );
    const allowed = await importing(csv, '--allow-failures');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/2 failed/);

    const mapped = await importing(csv, '--columns', 'name=display_name, notes=', '--ignore-unknown');
    expect(mapped.code, mapped.stderr).toBe(0);
    expect(mapped.stderr).toContain(
      'Renamed columns: name as display_name.\nDropped columns (--columns): notes.\n' +
        'Ignored columns contacts does not know (--ignore-unknown): colour.\n',
    );
    expect(mapped.stdout).toMatch(/succeeded: 2 of 2 rows .*: 2 created, 0 updated, 0 failed\./);
    const people = await get(
      server!.port,
      demoToken,
      '/api/v1/contact?external_id=like.col-*&select=display_name&order=display_name',
    );
    expect(await people.json()).toEqual([{ display_name: 'Grace' }, { display_name: 'Lovelace, Ada' }]);

    // A deal's custom-field keys (the demo's "source") are known; NDJSON and JSON alike.
    const deals = join(tempDir(), 'deals.ndjson');
    writeFileSync(
      deals,
      '{"external_id":"col-d1","name":"Deal","source":"fair","colour":"red"}\n\n{"external_id":"col-d2","shoe":4}\n',
    );
    const ignored = await importing(deals, '--collection', 'deals', '--ignore-unknown');
    expect(ignored.code, ignored.stderr).toBe(0);
    expect(ignored.stderr).toContain('Ignored columns deals does not know (--ignore-unknown): colour, shoe.\n');
    expect(ignored.stdout).toMatch(/2 created, 0 updated, 0 failed/);
    const deal = await get(server!.port, demoToken, '/api/v1/deal_details?external_id=eq.col-d1');
    expect(await deal.json()).toMatchObject([{ name: 'Deal', source: 'fair' }]);
    const json = join(tempDir(), 'deals.json');
    writeFileSync(json, JSON.stringify({ items: [{ external_id: 'col-d3', title: 'Renamed', source: 'web' }] }));
    const renamed = await importing(json, '--collection', 'deals', '--columns', 'title=name,source=');
    expect(renamed.code, renamed.stderr).toBe(0);
    expect(renamed.stderr).toContain('Renamed columns: title as name.\nDropped columns (--columns): source.\n');

    // Mappings that do not fit are usage errors, before anything is uploaded.
    for (const [columns, message] of [
      ['name', /--columns.*must be SOURCE=FIELD pairs separated by commas.*"name" is not one/],
      [
        'nmae=display_name',
        /--columns names "nmae", which the file does not have; its columns are "external_id", "name"/,
      ],
      ['name=email', /the columns "name" and "email" would both be "email"/],
      ['=x', /"=x" is not one/],
    ] as const) {
      const refused = await importing(csv, '--columns', columns);
      expect(refused.code, columns).toBe(2);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr).not.toMatch(/import job/);
    }
  }, 90_000);

  it('import --ignore-unknown refuses a --columns target the collection lacks, rather than drop it', async () => {
    const url = `http://127.0.0.1:${server!.port}`;
    const csv = join(tempDir(), 'typo.csv');
    writeFileSync(csv, 'external_id,name,colour\ntypo-1,Ada,red\n');
    const importing = (...options: string[]) => run(['import', csv, '--url', url, '--token', demoToken, ...options]);
    const refused = await importing('--columns', 'name=dispaly_name', '--ignore-unknown');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--columns renames "name" to "dispaly_name", which contacts does not know');
    expect(refused.stderr).not.toMatch(/colour|import job/);
    // Without --ignore-unknown the server names it, row by row.
    const failed = await importing('--columns', 'name=dispaly_name,colour=');
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/^ {2}item 0: UNKNOWN_FIELD .*"dispaly_name"/m);
  }, 60_000);

  it('import refuses to rewrite a JSON number too large to carry, rather than import it as null', async () => {
    const url = `http://127.0.0.1:${server!.port}`;
    for (const [name, text] of [
      ['huge.json', '[{"external_id":"huge-0","name":"Fine"},{"external_id":"huge-1","name":"Huge","value":1e400}]'],
      [
        'huge.ndjson',
        '{"external_id":"huge-0","name":"Fine"}\n{"external_id":"huge-1","name":"Huge","value":-1e400}\n',
      ],
    ] as const) {
      const file = join(tempDir(), name);
      writeFileSync(file, text);
      const result = await run([
        'import',
        file,
        '--url',
        url,
        '--token',
        demoToken,
        '--collection',
        'deals',
        '--ignore-unknown',
      ]);
      expect(result.code, name).toBe(2);
      expect(result.stderr).toContain(`error: item 1's "value" is a number too large for JSON`);
      expect(result.stderr).not.toMatch(/import job/);
    }
    const deals = await get(server!.port, demoToken, '/api/v1/deal?external_id=like.huge-*');
    expect(await deals.json()).toEqual([]);
  }, 60_000);

  it('import counts the items of a {"items": [...]} JSON file', async () => {
    const file = join(tempDir(), 'wrapped.json');
    writeFileSync(
      file,
      JSON.stringify({
        items: [
          { external_id: 'wrap-1', display_name: 'One' },
          { external_id: 'wrap-2', display_name: 'Two' },
        ],
      }),
    );
    const url = `http://127.0.0.1:${server!.port}`;
    const result = await run(['import', file, '--url', url, '--token', demoToken]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/ bytes, 2 rows\); import job/);
    expect(result.stdout).toMatch(/succeeded: 2 of 2 rows .*: 2 created, 0 updated, 0 failed\./);
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

    const demo = /^Added 1200 contacts to organisation (\S+) in/m.exec(result.stdout)![1]!;
    const server = await serve(env);
    try {
      // A start that did not create the demo names it all the same, without a token.
      expect(server.output()).toContain(`${demoLine(demo)}\n`);
      expect(server.output()).not.toContain('engage_');
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

describe('engage migrate', () => {
  // An empty database: a PostgreSQL one when the suite runs on PostgreSQL.
  let env: Record<string, string | undefined>;
  let drop = async () => {};
  beforeAll(async () => {
    const adminUrl = process.env.DATABASE_URL;
    if (!adminUrl) {
      env = { DATABASE_URL: undefined, PGLITE_DIR: tempDir(), LOG_LEVEL: 'info' };
      return;
    }
    const name = `engage_test_migrate_${newUuid().slice(0, 8)}`;
    const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    env = { DATABASE_URL: Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString(), LOG_LEVEL: 'info' };
    drop = async () => {
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end({ timeout: 5 });
    };
  });
  afterAll(() => drop());

  it('logs each migration it applies (info), and none once there are none to apply', async () => {
    const first = await run(['migrate'], env);
    expect(first.code, first.stderr).toBe(0);
    expect(loggedMigrations(first.stderr)).toEqual(MIGRATIONS);
    expect(first.stdout).toMatch(/^Migrations applied \((pglite|postgres)\)\.$/m);
    const again = await run(['migrate'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(loggedMigrations(again.stderr)).toEqual([]);
  }, 60_000);
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

  it('on a database with no organisation, prints how to make one and its token; those commands work', async () => {
    const env = { DATABASE_URL: database.url };
    server = await serve(env);
    const output = server.output();
    expect(output).not.toContain('Demo organisation');
    expect(output).toMatch(/^ {2}npx engage organisation create --name "Acme" +# prints its id last$/m);
    expect(output).toMatch(
      /^ {2}npx engage token create --organisation <its id> --name admin +# prints the token last$/m,
    );
    expect(output).toMatch(/^or the demo organisation, with sample data and a token: npx engage seed$/m);

    const organisation = await run(['organisation', 'create', '--name', 'Acme'], env);
    expect(organisation.code, organisation.stderr).toBe(0);
    const id = lastLine(organisation.stdout);
    expect(id).toMatch(new RegExp(`^${UUID.source}$`));
    expect(organisation.stdout).toContain(`npx engage token create --organisation ${id} --name admin`);
    const created = await run(['create', '--organisation', id, '--name', 'admin'], env, 'token');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toBe('');
    const answer = await get(server.port, lastLine(created.stdout), '/api/v1/contact');
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual([]);

    const json = await run(['organisation', 'create', '--name', '  Beta Ltd  ', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      id: expect.stringMatching(UUID),
      name: 'Beta Ltd',
      created_at: expect.any(String),
    });
    const listed = await run(['organisation', 'list'], env);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\tAcme\\t.+\\t1$`, 'm'));
    expect(listed.stdout).toMatch(new RegExp(`^${JSON.parse(json.stdout).id}\\tBeta Ltd\\t.+\\t0$`, 'm'));

    for (const name of ['', '   ', 'tab\there', 'x'.repeat(201)]) {
      const refused = await run(['organisation', 'create', '--name', name], env);
      expect(refused.code, name).toBe(2);
      expect(refused.stderr).toMatch(/--name .* (blank|control characters|200 characters)/);
    }
    expect((await run(['organisation', 'create'], env)).code).toBe(2);
  }, 120_000);

  it('token create for an organisation that does not exist creates it, as the contract says, and says so', async () => {
    const env = { DATABASE_URL: database.url };
    const unknown = newUuid();
    const created = await run(['token', 'create', '--organisation', unknown], env);
    expect(created.code, created.stderr).toBe(0);
    expect(lastLine(created.stdout)).toMatch(TOKEN);
    expect(created.stderr).toBe(
      `Organisation ${unknown} did not exist, so it was created, without a name ` +
        '(npx engage organisation list shows those there are).\n',
    );
    const again = await run(['token', 'create', '--organisation', unknown], env);
    expect(again.stderr).toBe('');
  }, 60_000);

  it('seed adds the demo beside other organisations, once; a later start names it', async () => {
    const env = { DATABASE_URL: database.url };
    const seeded = await run(['seed'], env);
    expect(seeded.code, seeded.stderr).toBe(0);
    expect(lastLine(seeded.stdout)).toMatch(TOKEN);
    const demo = /^Created the demo organisation (\S+)\./m.exec(seeded.stdout)![1]!;
    const again = await run(['seed'], env);
    expect(again.code).toBe(1);
    expect(again.stderr.trim()).toBe(
      `The database has the demo organisation already (${demo}); ` +
        `a token for it: npx engage token create --organisation ${demo}`,
    );
    await stop(server);
    server = await serve(env);
    expect(server.output()).toContain(`${demoLine(demo)}\n`);
    expect(server.output()).not.toContain('has no organisation yet');
    const organisations = await run(['organisation', 'list'], env);
    expect(organisations.code, organisations.stderr).toBe(0);
    expect(organisations.stdout.split('\n')[0]).toBe(ORGANISATIONS_HEADER);
    expect(organisations.stdout).toMatch(new RegExp(`^${demo}\\tDemo organisation\\t.+\\t1$`, 'm'));
    const tokens = await run(['token', 'list'], env);
    expect(tokens.stdout).toMatch(new RegExp(`\\tdemo\\tcreated .+\\tactive\\torganisation ${demo}$`, 'm'));
    const response = await get(server.port, lastLine(seeded.stdout), '/api/v1/contact?select=display_name&limit=1');
    expect(await response.json()).toEqual([{ display_name: expect.any(String) }]);
  }, 120_000);
});
