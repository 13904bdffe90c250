/**
 * A private PostgreSQL 15 cluster for tests that stop, crash or restart the database: never the
 * shared one. It lives in a temp directory owned by the `postgres` OS user (initdb refuses root),
 * listens on 127.0.0.1 on a free port, trusts every local connection, and is gone after destroy().
 *
 * fsync is off for speed. Acknowledged commits still survive `pg_ctl stop -m immediate`: with
 * synchronous_commit on, a commit returns only after its WAL is written to the kernel, which keeps
 * it in the page cache when every PostgreSQL process dies; only an OS crash could lose it.
 *
 * An orphan cluster must not outlive the test process: destroy() runs in afterAll, a process exit
 * handler stops it on a normal exit or a signal, and a detached watchdog shell stops it and kills
 * the adopted processes (a server under test) when the test process dies even by SIGKILL.
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { freePort } from './ports.ts';

const BIN = process.env.PG15_BIN ?? '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';

export type StopMode = 'smart' | 'fast' | 'immediate';

export interface Cluster {
  readonly port: number;
  readonly dir: string;
  /** postgres://postgres@127.0.0.1:PORT/postgres over TCP, as a server under test would connect. */
  readonly url: string;
  start(): Promise<void>;
  stop(mode?: StopMode): Promise<void>;
  /** `pg_ctl restart`: stops in `mode` (immediate: a crash, then WAL recovery) and starts again. */
  restart(mode?: StopMode): Promise<void>;
  /** Terminates every client backend but the admin connection's own; resolves to how many. */
  terminateBackends(): Promise<number>;
  /** One statement on a fresh admin connection over the unix socket. */
  query<T extends Record<string, unknown>>(text: string, params?: readonly (string | null)[]): Promise<T[]>;
  /** The server's log. */
  log(): string;
  /** Kills `pid` (SIGKILL) when the cluster is destroyed or the test process dies. */
  adopt(pid: number): void;
  /** Stops the cluster (immediate) and removes its directory; safe to call twice. */
  destroy(): Promise<void>;
}

/** Runs a PostgreSQL binary as the postgres OS user; rejects with its output on failure. */
function asPostgres(bin: string, args: string[], timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'runuser',
      ['-u', OS_USER, '--', join(BIN, bin), ...args],
      { timeout: timeoutMs, cwd: '/' },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`${bin} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/** The same, synchronously: for exit handlers, where nothing asynchronous runs any more. */
function asPostgresSync(bin: string, args: string[]) {
  spawnSync('runuser', ['-u', OS_USER, '--', join(BIN, bin), ...args], { stdio: 'ignore', timeout: 10_000 });
}

export async function startCluster(): Promise<Cluster> {
  const pw = spawnSync('id', ['-u', OS_USER], { encoding: 'utf8' });
  const uid = Number(pw.stdout.trim());
  const gid = Number(spawnSync('id', ['-g', OS_USER], { encoding: 'utf8' }).stdout.trim());
  if (pw.status !== 0 || !Number.isInteger(uid)) throw new Error(`no "${OS_USER}" OS user to run PostgreSQL as`);

  const dir = mkdtempSync(join(tmpdir(), 'engage-pg-'));
  chownSync(dir, uid, gid);
  const data = join(dir, 'data');
  const log = join(dir, 'postgres.log');
  const pidsFile = join(dir, 'adopted.pids');
  writeFileSync(pidsFile, '');
  const adopted: number[] = [];
  let destroyed = false;

  // Stops the cluster and removes its files once the test process is gone, however it died.
  const watchdog = spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null && [ -d "$1" ]; do sleep 1; done
       [ -d "$1" ] || exit 0
       for p in $(cat "$1/adopted.pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
       runuser -u ${OS_USER} -- "${BIN}/pg_ctl" stop -D "$1/data" -m immediate >/dev/null 2>&1
       rm -rf "$1"`,
      'watchdog',
      dir,
    ],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();

  function killAdopted() {
    for (const pid of adopted.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }

  // Synchronous: 'exit' handlers cannot wait for a promise.
  const onExit = () => {
    if (destroyed) return;
    destroyed = true;
    killAdopted();
    asPostgresSync('pg_ctl', ['stop', '-D', data, '-m', 'immediate']);
    rmSync(dir, { recursive: true, force: true });
  };
  const onSignal = (signal: NodeJS.Signals) => {
    onExit();
    process.kill(process.pid, signal);
  };
  process.once('exit', onExit);
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  process.once('SIGHUP', onSignal);

  const forget = () => {
    process.removeListener('exit', onExit);
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGHUP', onSignal);
  };
  const conf = (p: number) =>
    [
      `port = ${p}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${dir}'`,
      'fsync = off',
      'full_page_writes = off',
      'synchronous_commit = on',
      'max_connections = 60',
      'shared_buffers = 32MB',
    ].join('\n');

  const start = async () => {
    await asPostgres('pg_ctl', ['start', '-D', data, '-l', log, '-w', '-t', '30']);
  };
  let port = 0;
  try {
    await asPostgres('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
    // A port taken between freePort() and the start is retried with another.
    for (let attempt = 0; ; attempt++) {
      port = await freePort();
      writeFileSync(join(data, 'postgresql.auto.conf'), `${conf(port)}\n`);
      try {
        await start();
        break;
      } catch (error) {
        if (attempt >= 2) throw new Error(`${(error as Error).message}\n${readLog(log)}`);
      }
    }
  } catch (error) {
    onExit();
    forget();
    throw error;
  }

  // Its own settings: a server behind a pooler makes its own the role's defaults (engine/db/settings.ts).
  // As text: postgres.js leaves out a startup parameter whose value is falsy, such as the number 0.
  const connection: Record<string, string> = { statement_timeout: '0', enable_seqscan: 'on' };
  const admin = () =>
    postgres({ host: dir, port, user: 'postgres', database: 'postgres', max: 1, onnotice: () => {}, connection });

  async function query<T extends Record<string, unknown>>(
    text: string,
    params: readonly (string | null)[] = [],
  ): Promise<T[]> {
    const sql = admin();
    try {
      return (await sql.unsafe(text, params as never[])) as unknown as T[];
    } finally {
      await sql.end({ timeout: 1 });
    }
  }

  return {
    port,
    dir,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    async stop(mode: StopMode = 'fast') {
      await asPostgres('pg_ctl', ['stop', '-D', data, '-m', mode, '-w', '-t', '30']);
    },
    async restart(mode: StopMode = 'fast') {
      await asPostgres('pg_ctl', ['restart', '-D', data, '-m', mode, '-l', log, '-w', '-t', '30']);
    },
    async terminateBackends() {
      const rows = await query<{ n: number }>(
        'SELECT count(*) FILTER (WHERE pg_terminate_backend(pid))::int AS n FROM pg_stat_activity' +
          " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      return rows[0]?.n ?? 0;
    },
    query,
    log: () => readLog(log, Number.POSITIVE_INFINITY),
    adopt(pid: number) {
      adopted.push(pid);
      writeFileSync(pidsFile, `${adopted.join('\n')}\n`);
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      forget();
      killAdopted();
      await asPostgres('pg_ctl', ['stop', '-D', data, '-m', 'immediate', '-w', '-t', '30']).catch(() => {});
      // The watchdog sees the directory gone and exits.
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The end of the cluster's log (its last `chars`), for a failure message. */
function readLog(path: string, chars = 4000): string {
  try {
    return readFileSync(path, 'utf8').slice(-chars);
  } catch {
    return '';
  }
}
