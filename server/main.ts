/**
 * `npm start`: applies pending migrations, seeds a demo organisation on an empty embedded
 * database, and serves the API on HOST:PORT. With WORKERS=n (PostgreSQL only) the first process
 * prepares the database and n worker processes share the port (node:cluster).
 */
import cluster from 'node:cluster';
import { createServer } from 'node:net';
import { serveAdmin } from './admin-socket.ts';
import { buildApi } from './build.ts';
import { firstOrganisationHint, localBase, migrate } from './cli.ts';
import { type Config, loadConfig } from './config.ts';
import { openDatabase } from './database.ts';
import { findDemo, seedDemo } from './demo.ts';
import { holdEmbedded } from './embedded-lock.ts';
import { engageEngine } from './engine.ts';
import { createLogger, type Logger } from './logger.ts';
import { serveMetrics } from './metrics.ts';
import { startNodeServer } from './node-server.ts';
import { exitWith, Problem } from './problems.ts';

/** Start-up's failures, a setting's included: one line, exit code 1 (problems.ts). */
const cannotStart = (error: unknown, where: Partial<Config> = {}) => exitWith(error, where, 'Engage could not start');

const config = (() => {
  try {
    return loadConfig();
  } catch (error) {
    return cannotStart(error);
  }
})();
const log = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT });
/** Start-up's lines, each written before what start-up prints next (the migrations, then the demo). */
const startLog = createLogger(config.LOG_LEVEL, { format: config.LOG_FORMAT, sync: true });
const embedded = !config.DATABASE_URL;
const base = localBase(config);

// postgres.js 3.4 looks up array types on each new connection (unless told not to, as Engage's own
// clients are) and leaves that promise unhandled: a connection lost during the lookup (a database
// restarting) would end the process, dropping every request in flight. Such a failure harms
// nothing else, so it is logged rather than fatal.
process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));

/**
 * Migrations, and on an empty embedded database a demo organisation with a token to try; on every
 * start, the demo organisation if there is one, and on a database with no organisation how to make
 * one and its first token.
 */
async function prepare(db: Awaited<ReturnType<typeof openDatabase>>) {
  await prepareDatabase(db);
  const demo = await findDemo(db);
  if (demo) {
    console.log(
      `Demo organisation: ${demo.id} (${JSON.stringify(demo.name)}). ` +
        `Tokens: npx engage token create --organisation ${demo.id}`,
    );
  } else if ((await db.query('SELECT 1 FROM organisation LIMIT 1')).length === 0) {
    console.log(firstOrganisationHint());
  }
}

/** Migrations, then on PostgreSQL the role's settings checked, or on PGlite the demo seeded. */
async function prepareDatabase(db: Awaited<ReturnType<typeof openDatabase>>) {
  await migrate(db, startLog);
  if (!embedded) {
    // Behind a pooler the settings are the role's; a server connection opened before they were
    // made keeps its old ones.
    const missing = await db.missingSettings();
    if (missing.length > 0) {
      startLog.warn(
        { missing },
        `the database role lacks Engage's settings (${missing.join('; ')}): run \`engage migrate\` with` +
          ' DATABASE_PREPARE=0 as a role that may ALTER ROLE, then RECONNECT in the PgBouncer console',
      );
    }
    return;
  }
  const demo = await seedDemo(db, engageEngine(db));
  if (demo) {
    console.log(`Created a demo organisation ${demo.organisationId} with sample data in ${config.PGLITE_DIR}.`);
    console.log(`Its API token (shown once): ${demo.token}`);
    console.log(
      `Try: curl -H "Authorization: Bearer ${demo.token}" ` +
        `"${base}/api/v1/contact?select=id,display_name,email&order=display_name"`,
    );
  }
}

/**
 * Fails at once when HOST:PORT cannot be listened on (a port in use), before the database is
 * opened and migrated: the listener itself is made once the database is ready.
 */
function checkListen(): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host: config.HOST, port: config.PORT, exclusive: true }, () => probe.close(() => resolve()));
  });
}

async function serveApi(config: Config, log: Logger, prepared: boolean) {
  const release = embedded ? holdEmbedded(config.PGLITE_DIR) : () => {};
  const db = await openDatabase(config);
  if (!prepared) await prepare(db);
  // The token CLI reaches the embedded database through this while the server holds it.
  const closeAdmin = embedded ? await serveAdmin(config.PGLITE_DIR, db) : async () => {};
  let draining = false;
  const { app, worker, metrics, engine } = buildApi({
    db,
    maxRows: config.MAX_ROWS,
    fileLimit: config.FILE_UPLOAD_LIMIT,
    serverUrl: `${base}/api/v1`,
    logger: log,
    draining: () => draining,
    worker: {},
    serverTiming: config.SERVER_TIMING,
    planEnabled: config.PLAN_ENABLED,
    jsonBuiltBy: config.JSON_BUILT_BY,
    rateLimit: config.RATE_LIMIT,
    idempotencyHours: config.IDEMPOTENCY_HOURS,
    batchMaxOperations: config.BATCH_MAX_OPERATIONS,
    streams: {
      heartbeatSeconds: config.STREAM_HEARTBEAT_S,
      reauthSeconds: config.STREAM_REAUTH_S,
      maxPerTenant: config.STREAM_MAX_PER_TENANT,
      retentionHours: config.CHANGES_RETENTION_HOURS,
    },
    webhooks: { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE },
    metrics: config.METRICS_PORT || config.METRICS_TOKEN ? { token: config.METRICS_TOKEN } : undefined,
  });
  // GET /metrics on a port of its own (no token: reachable only where that port is).
  const metricsServer =
    metrics && config.METRICS_PORT ? serveMetrics(metrics, config.HOST, config.METRICS_PORT, log) : undefined;
  const server = startNodeServer({
    fetch: app.fetch,
    port: config.PORT,
    hostname: config.HOST,
    headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    bodyTimeoutMs: config.BODY_TIMEOUT_MS,
    keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
    logger: log,
  });
  await server.listening;
  startLog.info({ port: config.PORT, host: config.HOST, database: db.kind, pid: process.pid }, 'listening');
  if (cluster.isPrimary)
    console.log(
      `Engage API listening on ${base}/api/v1 ` +
        `(${embedded ? `embedded PGlite in ${config.PGLITE_DIR}` : 'PostgreSQL'})\n` +
        `API reference, to read and try in a browser: ${base}/api/v1/docs`,
    );

  // Drains rather than drops: /ready says 503 at once, the requests in flight and the import batch
  // in hand finish (within SHUTDOWN_TIMEOUT_MS, the job going back to the queue; requests still in
  // flight then are answered 503 SHUTTING_DOWN), then the database closes.
  const stop = async (signal: string) => {
    if (draining) return;
    draining = true;
    log.info({ signal }, 'stopping: finishing the requests in flight');
    // Streams end now (their clients resume elsewhere with Last-Event-ID), or the drain would wait for them.
    engine.close();
    const timeout = new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_TIMEOUT_MS));
    const [cut] = await Promise.all([
      server.drain(config.SHUTDOWN_TIMEOUT_MS),
      Promise.race([worker?.stop(), timeout]),
    ]);
    await closeAdmin();
    metricsServer?.close();
    // The statements of the requests cut off may still run: PostgreSQL's are left to end there rather
    // than waited for. PGlite's run in this process, and its files must be closed.
    const closed = db.close().catch(() => {});
    if (cut === 0 || embedded) await closed;
    release();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

/** n worker processes sharing the port, after this one prepared the database. */
async function serveWorkers() {
  if (embedded) throw new Problem('WORKERS > 1 needs DATABASE_URL: the embedded PGlite database serves one process.');
  await checkListen();
  const db = await openDatabase({ ...config, DB_POOL_SIZE: 1 });
  await prepare(db);
  await db.close();
  let stopping = false;
  let failed = false;
  const live = new Set<number>();
  const fork = () => live.add(cluster.fork().id);
  for (let i = 0; i < config.WORKERS; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    live.delete(worker.id);
    if (stopping) {
      failed ||= code !== 0;
      if (live.size === 0) process.exit(failed ? 1 : 0);
      return;
    }
    // A worker that dies is replaced; the others keep serving meanwhile.
    log.error({ pid: worker.process.pid, code, signal }, 'worker exited; starting another');
    fork();
  });
  console.log(`Engage API listening on ${base}/api/v1 (PostgreSQL, ${config.WORKERS} processes)`);
  console.log(`API reference, to read and try in a browser: ${base}/api/v1/docs`);
  // Each worker drains itself (serveApi); the signal goes to its process, not through worker.kill(),
  // which would disconnect it first. One still there past its timeout and a margin is killed.
  const stop = () => {
    if (stopping) return;
    stopping = true;
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    setTimeout(() => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

const main = () => {
  if (config.WORKERS > 1 && cluster.isPrimary) return serveWorkers();
  // A worker listens on the port its primary checked.
  return cluster.isWorker ? serveApi(config, log, true) : checkListen().then(() => serveApi(config, log, false));
};
await main().catch((error: unknown) => cannotStart(error, config));
