/**
 * Reliability: the statements the postgres.js port owes when its database goes away are answered
 * at once with a 503, never left to the statement timeout. Under 32 concurrent slow reads a private
 * cluster (tests/helpers/cluster.ts) is stopped with `-m immediate`, and the reads go on against the
 * dead server for a moment: every statement in flight at the kill, waiting for a connection or sent
 * after it must be rejected with an error that maps to 503 within ANSWER_BOUND_MS of the kill or of
 * its start. Once the cluster is back the same pool serves again.
 *
 * The database is a private cluster this file starts, so the test runs the same whatever
 * DATABASE_URL says.
 */

import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import type { Database } from '@engage/engine';
import { connectPostgres } from '@engage/engine/postgres';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mapDatabaseError } from '../../engine/db/errors.ts';
import { type Cluster, startCluster } from '../helpers/cluster.ts';

const CONCURRENCY = 32;
const STATEMENT = 'SELECT pg_sleep(0.5)';
const STATEMENT_TIMEOUT_MS = 15_000;
/** Load before the kill: every connection has a read in flight and more are waiting for one. */
const WARM_MS = 1200;
/** Reads sent against the dead server after the kill. */
const AFTER_KILL_MS = 1000;
/** The longest a statement may take to be answered after the kill (or after its start, if later). */
const ANSWER_BOUND_MS = 2000;

interface Statement {
  readonly started: number;
  settled?: number;
  error?: unknown;
}

let cluster: Cluster;
let db: Database;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  cluster = await startCluster();
  db = connectPostgres(cluster.url, { poolSize: 4, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  await db.query('SELECT 1');
}, 120_000);

afterAll(async () => {
  await db?.close().catch(() => {});
  await cluster?.destroy();
});

it('fails a transaction whose connection is reset with a 503, and leaves nothing to throw later', async () => {
  // A proxy in front of the cluster resets the connection mid-transaction, as a crashed server does.
  const target = new URL(cluster.url);
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    const server = connect(Number(target.port), target.hostname);
    sockets.add(client);
    client.pipe(server).pipe(client);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = new URL(cluster.url);
  url.port = String((proxy.address() as AddressInfo).port);
  const proxied = connectPostgres(url.href, { poolSize: 1, statementTimeoutMs: STATEMENT_TIMEOUT_MS });
  // An exception from a timer (a write to the closed socket) would end a server's process.
  const thrown: unknown[] = [];
  const record = (error: unknown) => thrown.push(error);
  process.on('uncaughtException', record);
  try {
    // One transaction loses its connection mid-statement, the next between two statements.
    const transaction = proxied.transaction(async (q) => {
      await q.query('SELECT 1');
      return q.query('SELECT pg_sleep(5)');
    });
    await sleep(300);
    for (const socket of sockets) socket.resetAndDestroy();
    const failure = (promise: Promise<unknown>) =>
      promise.then(
        () => null,
        (e: unknown) => e,
      );
    const error = await failure(transaction);
    expect(error && mapDatabaseError(error).status).toBe(503);
    let reset = () => {};
    const between = proxied.transaction(async (q) => {
      await q.query('SELECT 1');
      await new Promise<void>((resolve) => {
        reset = resolve;
        for (const socket of sockets) socket.resetAndDestroy();
      });
      return q.query('SELECT 2');
    });
    await sleep(300);
    reset();
    const second = await failure(between);
    expect(second && mapDatabaseError(second).status).toBe(503);
    await sleep(200);
    expect(thrown).toEqual([]);
    await expect(proxied.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
  } finally {
    process.off('uncaughtException', record);
    await proxied.close().catch(() => {});
    for (const socket of sockets) socket.destroy();
    proxy.close();
  }
}, 30_000);

it('answers every statement owed when the database dies with a 503, at once', async () => {
  const statements: Statement[] = [];
  let loading = true;
  const worker = async () => {
    while (loading) {
      const statement: Statement = { started: performance.now() };
      statements.push(statement);
      await db.query(STATEMENT).catch((error: unknown) => {
        statement.error = error;
      });
      statement.settled = performance.now();
      // Against a dead server a failure is instant: do not spin.
      if (statement.error) await sleep(20);
    }
  };
  const workers = Array.from({ length: CONCURRENCY }, worker);
  await sleep(WARM_MS);

  const killedAt = performance.now();
  await cluster.stop('immediate');
  await sleep(AFTER_KILL_MS);
  loading = false;
  // Each worker's last statement is answered within the bound, or the test says which hang.
  await Promise.race([Promise.all(workers), sleep(ANSWER_BOUND_MS)]);

  const owed = statements.filter((s) => (s.settled ?? Number.POSITIVE_INFINITY) > killedAt);
  const late = owed
    .map((s) => ({ ms: Math.round((s.settled ?? Number.POSITIVE_INFINITY) - Math.max(s.started, killedAt)), s }))
    .filter(({ ms }) => ms > ANSWER_BOUND_MS)
    .map(({ ms, s }) => `${s.started < killedAt ? 'in flight' : 'sent after'}: ${ms} ms`);
  expect(late, 'statements answered too late or never').toEqual([]);
  const failures = owed.filter((s) => s.error !== undefined);
  const not503 = failures.map((s) => mapDatabaseError(s.error)).filter((e) => e.status !== 503);
  expect(not503.map((e) => `${e.status} ${e.code}: ${e.message}`)).toEqual([]);
  // Some were in flight at the kill, and the server was dead for the rest.
  expect(owed.filter((s) => s.started < killedAt).length).toBeGreaterThan(0);
  expect(failures.length).toBeGreaterThan(CONCURRENCY);

  // Connections that failed were replaced: the pool serves again once the server is back.
  await cluster.start();
  await expect(db.query('SELECT 1 AS one')).resolves.toEqual([{ one: 1 }]);
}, 60_000);
