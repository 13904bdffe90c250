/**
 * Prometheus metrics (prom-client), in a registry of their own per app: requests by route, method
 * and status, their latency, the database pool, statements by kind, read-cache lookups, import
 * jobs, and the process's defaults. The engine reports statements and cache lookups through its
 * observer (EngineObserver); the pool and imports are read when scraped.
 */

import type { Database, Engine, EngineObserver } from '@engage/engine';
import { type ServerType, serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Imports } from '../imports/index.ts';
import type { RequestRecord } from './access-log.ts';
import type { Logger } from './logger.ts';

export interface Metrics {
  readonly registry: Registry;
  /** The engine's observer: statements and read-cache lookups. */
  readonly observer: EngineObserver;
  /** Counts a finished request (access-log.ts hands each record here). */
  onRequest(record: RequestRecord): void;
  /** The database, imports and the engine's streams, read when scraped. */
  watch(sources: { db?: Database; imports?: Imports; engine?: Engine }): void;
  /** Prometheus text and its Content-Type. */
  render(): Promise<{ text: string; contentType: string }>;
}

/** Seconds: requests and statements take from a fraction of a millisecond to seconds. */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'engage_' });
  let db: Database | undefined;
  let imports: Imports | undefined;
  let engine: Engine | undefined;

  const requests = new Counter({
    name: 'engage_http_requests_total',
    help: 'Requests served, by route pattern, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'engage_http_request_duration_seconds',
    help: 'Time from a request arriving to its response body sent, by route pattern and method.',
    labelNames: ['route', 'method'] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  const bytes = new Counter({
    name: 'engage_http_response_bytes_total',
    help: 'Response body bytes sent, by route pattern.',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const statements = new Counter({
    name: 'engage_db_statements_total',
    help: 'Statements run, by kind (read, write, estimate, keyset, authorize, explain) and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const statementLatency = new Histogram({
    name: 'engage_db_statement_duration_seconds',
    help: 'Statement time, waiting for a connection included, by kind.',
    labelNames: ['kind'] as const,
    buckets: BUCKETS,
    registers: [registry],
  });
  const cache = new Counter({
    name: 'engage_read_cache_lookups_total',
    help: 'Read-cache lookups: hit (compiled read reused) or miss (parsed, planned and compiled).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'engage_db_pool_connections',
    help: 'Database pool connections: size, in_use (running a statement or transaction).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = db?.stats?.();
      if (!stats) return;
      this.set({ state: 'size' }, stats.size);
      this.set({ state: 'in_use' }, stats.inUse);
    },
  });
  new Gauge({
    name: 'engage_db_pool_waiting',
    help: 'Statements waiting for a database connection.',
    registers: [registry],
    collect() {
      const stats = db?.stats?.();
      if (stats) this.set(stats.waiting);
    },
  });
  new Gauge({
    name: 'engage_import_jobs',
    help: 'Import jobs by status (queued, running, succeeded, failed), over every organisation.',
    labelNames: ['status'] as const,
    registers: [registry],
    async collect() {
      const stats = await imports?.stats().catch(() => undefined);
      if (!stats) return;
      this.reset();
      for (const [status, n] of Object.entries(stats.jobs)) this.set({ status }, n);
    },
  });
  new Gauge({
    name: 'engage_import_items',
    help: 'Items of import jobs by outcome: created and updated (rows imported), failed.',
    labelNames: ['outcome'] as const,
    registers: [registry],
    async collect() {
      const stats = await imports?.stats().catch(() => undefined);
      if (!stats) return;
      for (const [outcome, n] of Object.entries(stats.items)) this.set({ outcome }, n);
    },
  });

  new Gauge({
    name: 'engage_streams_open',
    help: 'Streams of changes open in this process.',
    registers: [registry],
    collect() {
      const stats = engine?.streams();
      if (stats) this.set(stats.open);
    },
  });
  const streamEvents = new Counter({
    name: 'engage_stream_events_total',
    help: 'Events sent on streams of changes.',
    registers: [registry],
  });
  const streamLag = new Histogram({
    name: 'engage_stream_lag_seconds',
    help: 'Time from a change being written to its event being sent on a stream.',
    buckets: BUCKETS,
    registers: [registry],
  });

  return {
    registry,
    observer: {
      onStreamEvent(lagMs) {
        streamEvents.inc();
        streamLag.observe(lagMs / 1000);
      },
      onStatement(kind, ms, failed) {
        statements.inc({ kind, outcome: failed ? 'error' : 'ok' });
        statementLatency.observe({ kind }, ms / 1000);
      },
      onCache(hit) {
        cache.inc({ result: hit ? 'hit' : 'miss' });
      },
    },
    onRequest(record) {
      requests.inc({ route: record.route, method: record.method, status: String(record.status) });
      latency.observe({ route: record.route, method: record.method }, record.durationMs / 1000);
      bytes.inc({ route: record.route }, record.bytes);
    },
    watch(sources) {
      db = sources.db ?? db;
      imports = sources.imports ?? imports;
      engine = sources.engine ?? engine;
    },
    async render() {
      return { text: await registry.metrics(), contentType: registry.contentType };
    },
  };
}

/** GET /metrics alone on its own port (METRICS_PORT); everything else there is 404. */
export function serveMetrics(metrics: Metrics, hostname: string, port: number, log: Logger): ServerType {
  const app = new Hono();
  app.get('/metrics', async (c) => {
    const { text, contentType } = await metrics.render();
    return c.body(text, 200, { 'Content-Type': contentType });
  });
  return serve({ fetch: app.fetch, hostname, port }, () => log.info({ port, host: hostname }, 'metrics listening'));
}
