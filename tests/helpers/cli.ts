/**
 * The `engage` command and server as a user runs them: child processes of bin/engage.js (or of the
 * npm scripts), their exit codes and output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'engage.js');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The environment of a child: `env`'s undefined values removed from ours (its logs silent). */
export function childEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete result[name];
    else result[name] = value;
  }
  return result;
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node bin/engage.js ...args`, or `npm run --silent <script> -- ...` when `npm` is given. */
export function run(args: string[], env: Record<string, string | undefined> = {}, npm?: string): Promise<Run> {
  const [command, argv] = npm ? ['npm', ['run', '--silent', npm, '--', ...args]] : [process.execPath, [BIN, ...args]];
  const child = spawn(command, argv, { cwd: ROOT, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

export const lastLine = (text: string) => text.trimEnd().split('\n').at(-1)!.trim();

export interface Server {
  child: ChildProcess;
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/**
 * `engage serve` on `env`, once it answers /health. Its stdout and stderr go to one file, so
 * `output()` has their lines in the order the server wrote them.
 */
export async function serve(env: Record<string, string | undefined>): Promise<Server> {
  const port = await freePort();
  const file = join(mkdtempSync(join(tmpdir(), 'engage-serve-')), 'output');
  const fd = openSync(file, 'w');
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: childEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const output = () => readFileSync(file, 'utf8');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let gone = false;
  void exited.then(() => (gone = true));
  for (const deadline = Date.now() + 90_000; ; await sleep(100)) {
    if (gone) throw new Error(`the server exited on start: ${output()}`);
    if (Date.now() > deadline) throw new Error(`the server did not start: ${output()}`);
    if (
      await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
  }
  return { child, port, output, exited };
}

export async function stop(server: Server | undefined) {
  if (!server || server.child.exitCode !== null) return;
  server.child.kill('SIGTERM');
  await Promise.race([server.exited, sleep(15_000).then(() => server.child.kill('SIGKILL'))]);
}
