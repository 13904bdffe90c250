/**
 * Reliability: the real server process under a steady load of writes and reads while its
 * PostgreSQL crashes and restarts (`pg_ctl restart -m immediate`), and then has every backend
 * terminated, a few times over. Every request gets an HTTP answer within a bound: a success, or the
 * contract's 503/504 with is_transient true; never a 500, a reset socket or silence. Every write
 * acknowledged with 201 is in the database afterwards, after WAL recovery.
 *
 * The database is a private cluster this file starts (tests/helpers/cluster.ts), never the shared
 * one, so the test runs the same whatever DATABASE_URL says.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { connectPostgres } from '@engage/engine/postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createOrganisationToken, engageEngine } from '../server/engine.ts';
import { type Cluster, startCluster } from './helpers/cluster.ts';
import { freePort } from './helpers/ports.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const STATEMENT_TIMEOUT_MS = 5000;
/** The longest a statement may wait for a connection (where the pool has such a queue). */
const QUEUE_TIMEOUT_MS = 2000;
/** A request unanswered by then hangs: a wait for a connection, the statement timeout, and a margin. */
const ANSWER_BOUND_MS = QUEUE_TIMEOUT_MS + STATEMENT_TIMEOUT_MS + 3000;
const CONCURRENCY = 24;
/** Load before the crash, and after the restart before the backends are terminated. */
const WARM_MS = 1500;
const AFTER_RESTART_MS = 2000;
/**
 * Rounds of terminating every backend, and the load between them and after the last. Each round
 * is a chance for a driver to strand statements sent to a connection that is going away.
 */
const TERMINATE_ROUNDS = 3;
const AFTER_TERMINATE_MS = 1000;
const TAIL_MS = 2000;
/** After the load, how long the server may take to serve again. */
const RECOVERY_MS = 5000;

let cluster: Cluster;
let server: ChildProcess;
let base: string;
let token: string;
let serverExit: string | null = null;
/** The server's error log lines other than the expected 503s, to say why when the test fails. */
const errorLog: string[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  cluster = await startCluster();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: cluster.url,
    PORT: String(port),
    HOST: '127.0.0.1',
    STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
    DB_QUEUE_TIMEOUT_MS: String(QUEUE_TIMEOUT_MS),
    WORKERS: '1',
    // Errors only (not silent): a 500's cause is logged, and kept for the failure message.
    LOG_LEVEL: 'error',
  };
  delete env.PGLITE_DIR;
  server = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cluster.adopt(server.pid!);
  server.on('exit', (code, signal) => {
    serverExit = `code ${code} signal ${signal}`;
  });
  let partial = '';
  server.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      const expected = line.includes('"DATABASE_UNAVAILABLE"') || line.includes('"QUERY_TIMEOUT"');
      if (!expected && errorLog.length < 20) errorLog.push(line.slice(0, 2000));
    }
  });

  // The server migrates the database on start; /ready answers once it serves.
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (serverExit) throw new Error(`the server exited on start (${serverExit}): ${errorLog.join('\n')}`);
    const ready = await fetch(`${base}/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error('the server did not become ready within 60 s');
    await sleep(200);
  }
  const db = connectPostgres(cluster.url, { poolSize: 1 });
  const organisationId = randomUUID();
  ({ token } = await createOrganisationToken(engageEngine(db), db, { organisationId, name: 'restart test' }));
  await db.close();
}, 120_000);

afterAll(async () => {
  if (server && serverExit === null) server.kill('SIGKILL');
  await cluster?.destroy();
});

type Outcome =
  | { kind: 'answered'; status: number; code: string | null; transient: boolean | null }
  | { kind: 'hung' }
  | { kind: 'socket'; error: string };

interface Sent {
  readonly write: boolean;
  /** When it was sent and how long its answer took, in ms from the start of the load. */
  readonly at: number;
  ms: number;
  outcome: Outcome;
  /** The id of a write acknowledged with 201. */
  id?: string;
}

const RUN = randomUUID().slice(0, 8);
let counter = 0;
let loadStart = Date.now();

/** A POST of a uniquely named deal with its representation back, or a read of the latest deals. */
async function send(write: boolean, timeoutMs = ANSWER_BOUND_MS): Promise<Sent> {
  const name = `restart-${RUN}-${++counter}`;
  const started = Date.now();
  const sent: Sent = { write, at: started - loadStart, ms: 0, outcome: { kind: 'hung' } };
  const init: RequestInit = write
    ? {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': 'application/json',
          Prefer: 'return=representation',
        },
        body: JSON.stringify({ name, external_id: name }),
      }
    : { headers: { Authorization: `Bearer ${token}` } };
  const url = write ? `${base}/api/v1/deal` : `${base}/api/v1/deal?select=id,name&order=id.desc&limit=5`;
  try {
    // The timeout covers the body too: an answer is whole or it is not one.
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: neither a success nor the contract's error body.
    }
    const error =
      body !== null && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
    sent.outcome = {
      kind: 'answered',
      status: res.status,
      code: typeof error.code === 'string' ? error.code : null,
      transient: typeof error.is_transient === 'boolean' ? error.is_transient : null,
    };
    const first = Array.isArray(body) ? (body[0] as { id?: unknown } | undefined) : undefined;
    if (write && res.status === 201 && typeof first?.id === 'string') sent.id = first.id;
  } catch (error) {
    const e = error as Error & { cause?: { code?: string; message?: string } };
    sent.outcome =
      e.name === 'TimeoutError' || e.name === 'AbortError'
        ? { kind: 'hung' }
        : { kind: 'socket', error: e.cause?.code ?? e.cause?.message ?? e.message };
  }
  sent.ms = Date.now() - started;
  return sent;
}

/** A success, or the contract's transient 503/504. */
function acceptable(o: Outcome): boolean {
  if (o.kind !== 'answered') return false;
  if (o.status >= 200 && o.status < 300) return true;
  const unavailable = o.status === 503 && o.code === 'DATABASE_UNAVAILABLE';
  const timeout = o.status === 504 && o.code === 'QUERY_TIMEOUT';
  return (unavailable || timeout) && o.transient === true;
}

const label = (o: Outcome) =>
  o.kind === 'hung' ? 'hung' : o.kind === 'socket' ? `socket ${o.error}` : `${o.status}${o.code ? ` ${o.code}` : ''}`;

it('answers every request through a crash-restart and killed backends, keeping every acknowledged write', async () => {
  const requests: Sent[] = [];
  const phases: Record<string, number> = {};
  const mark = (phase: string) => {
    phases[phase] = Date.now() - loadStart;
  };
  let loading = true;
  loadStart = Date.now();
  const worker = async (index: number) => {
    // Two writes for each read, the workers out of step.
    for (let n = 0; loading; n++) requests.push(await send((n + index) % 3 !== 0));
  };
  const workers = Array.from({ length: CONCURRENCY }, (_, i) => worker(i));

  await sleep(WARM_MS);
  const beforeCrash = requests.length;
  mark('restart');
  await cluster.restart('immediate');
  mark('restarted');
  await sleep(AFTER_RESTART_MS);
  let terminated = 0;
  for (let round = 1; round <= TERMINATE_ROUNDS; round++) {
    mark(`terminate${round}`);
    terminated += await cluster.terminateBackends();
    await sleep(round < TERMINATE_ROUNDS ? AFTER_TERMINATE_MS : TAIL_MS);
  }
  loading = false;
  mark('stop');
  await Promise.all(workers);
  mark('answered');

  // After the disruption the server serves again.
  const recoverBy = Date.now() + RECOVERY_MS;
  let recovered: Sent | undefined;
  while (recovered?.id === undefined && Date.now() < recoverBy) {
    recovered = await send(true, recoverBy - Date.now());
    if (recovered.id === undefined) await sleep(250);
  }

  const acknowledged = requests.flatMap((r) => (r.id === undefined ? [] : [r.id]));
  const [found] = await cluster.query<{ acked: number; all: number }>(
    `SELECT count(*) FILTER (WHERE id = ANY(string_to_array($1, ',')::uuid[]))::int AS acked, count(*)::int AS all
       FROM deal WHERE name LIKE $2`,
    [acknowledged.join(','), `restart-${RUN}-%`],
  );

  const statuses: Record<string, number> = {};
  for (const r of requests) statuses[label(r.outcome)] = (statuses[label(r.outcome)] ?? 0) + 1;
  const hung = requests.filter((r) => r.outcome.kind === 'hung');
  const bad = requests.filter((r) => !acceptable(r.outcome));
  const summary = {
    sent: requests.length,
    answered: requests.filter((r) => r.outcome.kind === 'answered').length,
    hung: hung.length,
    statuses,
    slowestAnswerMs: Math.max(0, ...requests.filter((r) => r.outcome.kind === 'answered').map((r) => r.ms)),
    hungSentAtMs: [...new Set(hung.map((r) => r.at))],
    phasesMs: phases,
    beforeCrash,
    terminatedBackends: terminated,
    acknowledgedWrites: acknowledged.length,
    acknowledgedFound: found!.acked,
    acknowledgedMissing: acknowledged.length - found!.acked,
    rowsWritten: found!.all,
    recovered: recovered?.id !== undefined,
    serverExit,
  };
  console.log(`database restart: ${JSON.stringify(summary)}`);
  const why = `${JSON.stringify(summary)}\n${errorLog.slice(0, 5).join('\n')}`;

  expect(serverExit, why).toBeNull();
  expect(beforeCrash, 'the load ran before the crash').toBeGreaterThan(CONCURRENCY);
  // The restart went through crash recovery: the writes below survived a crash, not a clean stop.
  expect(cluster.log()).toMatch(/not properly shut down; automatic recovery in progress/);
  expect(hung.length, why).toBe(0);
  expect(
    bad.map((r) => label(r.outcome)),
    why,
  ).toEqual([]);
  expect(acknowledged.length, why).toBeGreaterThan(0);
  expect(found!.acked, why).toBe(acknowledged.length);
  expect(summary.recovered, why).toBe(true);
}, 60_000);
