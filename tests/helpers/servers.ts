/**
 * Server processes for tests on PostgreSQL: each spawned as `npm start` runs it (without the build)
 * on a port of its own, with `application_name=<name>` on its connections so pg_stat_activity tells
 * which server a backend serves. Every one started is killed by `killAll` (a test's afterAll).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Server {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;
  output(): string;
}

/** The environment of a child on the test database: DATABASE_URL set, no PGlite directory. */
export function childEnv(databaseUrl: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, ...extra };
  delete env.PGLITE_DIR;
  delete env.WORKERS;
  return env;
}

/**
 * `node server/main.ts` (what `npm start` runs, built) once it answers /health. Its connections
 * carry `application_name=<name>`, so pg_stat_activity tells which server a backend serves.
 */
export async function startServer(
  name: string,
  databaseUrl: string,
  extra: Record<string, string> = {},
): Promise<Server> {
  const port = await freePort();
  const url = new URL(databaseUrl);
  url.searchParams.set('application_name', name);
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env: childEnv(url.toString(), { HOST: '127.0.0.1', PORT: String(port), ...extra }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const server = { name, port, child, exited, output: () => output };
  servers.push(server);
  let gone = false;
  void exited.then(() => (gone = true));
  for (const deadline = Date.now() + 60_000; ; await sleep(100)) {
    if (gone) throw new Error(`${name} exited on start: ${output}`);
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return server;
  }
}

/** Every server started, killed in afterAll whatever happened. */
const servers: Server[] = [];

export async function kill(server: Server) {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

/** Kills every server started. */
export const killAll = () => Promise.all(servers.map(kill));
