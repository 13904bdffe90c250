/**
 * The README's path on PostgreSQL, followed from top to bottom as a reader in a shell would: its
 * marked blocks run by bash as printed, but for the database's name and the port (a fresh database,
 * a free port), so that nothing here meets a database or server of the machine's own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { childEnv, ROOT } from './helpers/cli.ts';
import { LOCAL_POSTGRES } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The code block under `<!-- <marker> -->` in the README. */
function block(marker: string): string {
  const at = README.indexOf(`<!-- ${marker} -->\n`);
  const found = at < 0 ? null : /^```sh\n([\s\S]*?)\n```/.exec(README.slice(at + marker.length + 10));
  if (!found) throw new Error(`README.md has no sh block marked "${marker}"`);
  return found[1]!;
}

/** Each of `replacements` made in `text`, which must hold each. */
function substitute(text: string, replacements: Record<string, string>): string {
  for (const [from, to] of Object.entries(replacements)) {
    expect(text, `the README's block no longer says ${from}`).toContain(from);
    text = text.replaceAll(from, to);
  }
  return text;
}

const name = `engage_readme_${process.pid}_${Date.now() % 100000}`;
const dir = mkdtempSync(join(tmpdir(), 'engage-readme-'));
let port: number;
let server: ChildProcess | undefined;
const output = () => readFileSync(join(dir, 'server'), 'utf8');

function bash(
  script: string,
  env: Record<string, string | undefined>,
): Promise<{ code: number | null; stdout: string }> {
  const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env: childEnv(env), stdio: 'pipe' });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.resume();
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout })));
}

beforeAll(async () => {
  port = await freePort();
});

afterAll(async () => {
  if (server?.pid) {
    process.kill(-server.pid, 'SIGTERM');
    await new Promise((resolve) => server!.once('exit', resolve));
  }
  const admin = postgres(LOCAL_POSTGRES, { max: 1, onnotice: () => {} });
  await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end({ timeout: 5 });
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

it('creates the database, starts on it, makes an organisation and a token, and calls the API', async () => {
  const start = substitute(block('postgres-start'), {
    'createdb engage': `createdb ${name}`,
    '5432/engage': `5432/${name}`,
  });
  const fd = openSync(join(dir, 'server'), 'w');
  server = spawn('bash', ['-euo', 'pipefail', '-c', start], {
    cwd: ROOT,
    env: childEnv({ PORT: String(port), LOG_LEVEL: 'info', DATABASE_URL: undefined }),
    stdio: ['ignore', fd, fd],
    detached: true,
  });
  closeSync(fd);
  let exited = false;
  server.once('exit', () => (exited = true));
  for (const deadline = Date.now() + 150_000; ; await new Promise((resolve) => setTimeout(resolve, 250))) {
    if (exited) throw new Error(`npm start exited: ${output()}`);
    if (Date.now() > deadline) throw new Error(`npm start did not answer: ${output()}`);
    if (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
  }
  // The migrations, logged, then the commands the next block runs.
  const started = output();
  expect(started.indexOf('"msg":"applied migration 0000_init"')).toBeGreaterThan(-1);
  expect(started.indexOf('"msg":"applied migration 0000_init"')).toBeLessThan(started.indexOf('no organisation yet'));
  expect(started).toContain('npx engage organisation create --name "Acme"');
  expect(started).toContain('npx engage token create --organisation <its id> --name admin');

  const calls = substitute(block('postgres-calls'), {
    '5432/engage': `5432/${name}`,
    '127.0.0.1:3000': `127.0.0.1:${port}`,
  });
  const shown = /^# (\S+)/.exec(calls.split('\n').at(-1)!)![1];
  const { code, stdout } = await bash(calls, { DATABASE_URL: undefined });
  expect(code).toBe(0);
  expect(stdout.trim()).toBe(shown);
}, 240_000);
