/**
 * Prometheus metrics at GET /metrics (prom-client): requests, latency, the pool, statements by
 * kind, read-cache lookups, import jobs and process metrics move under load; the endpoint is off
 * the public API (METRICS_TOKEN on the main port, or METRICS_PORT); GET /ready reports the pool
 * and the migrations.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApi } from '../server/build.ts';
import { createLogger } from '../server/logger.ts';
import { serveMetrics } from '../server/metrics.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
let t: TestDatabase;
let org: Organisation;
let api: ReturnType<typeof buildApi>;

const scrape = async (token = METRICS_TOKEN) => {
  const res = await api.app.request('/metrics', { headers: { Authorization: `Bearer ${token}` } });
  return { res, text: await res.text() };
};
/** The value of one series (name and exact label text), 0 when absent. */
const value = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
};
const get = async (path: string) => {
  const res = await api.app.request(path, { headers: { Authorization: `Bearer ${org.token}` } });
  await res.arrayBuffer();
  return res;
};

beforeAll(async () => {
  t = await createTestDatabase();
  org = await createOrganisation(t);
  await insertRows(t.db, 'contact', org.id, [{ display_name: 'Ada' }, { display_name: 'Bob' }]);
  api = buildApi({ db: t.db, metrics: { token: METRICS_TOKEN }, logger: createLogger('silent') });
});
afterAll(() => t?.drop());

describe('GET /metrics', () => {
  it('counts requests, statements and read-cache lookups as they happen', async () => {
    const before = (await scrape()).text;
    for (let i = 0; i < 20; i++) await get('/api/v1/contact?select=id,display_name');
    await get('/api/v1/contact?select=nope');
    await get('/v1/contacts?limit=1');
    const { res, text } = await scrape();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const ok = 'engage_http_requests_total{route="/api/v1/:resource",method="GET",status="200"}';
    expect(value(text, ok) - value(before, ok)).toBe(20);
    const bad = 'engage_http_requests_total{route="/api/v1/:resource",method="GET",status="400"}';
    expect(value(text, bad) - value(before, bad)).toBe(1);
    expect(value(text, 'engage_http_request_duration_seconds_count{route="/api/v1/:resource",method="GET"}')).toBe(
      value(before, 'engage_http_request_duration_seconds_count{route="/api/v1/:resource",method="GET"}') + 21,
    );
    const reads = 'engage_db_statements_total{kind="read",outcome="ok"}';
    expect(value(text, reads) - value(before, reads)).toBe(20);
    expect(value(text, 'engage_db_statements_total{kind="keyset",outcome="ok"}')).toBeGreaterThanOrEqual(1);
    // The token's first read, its organisation not known yet, has a statement of its own: two misses.
    expect(value(text, 'engage_read_cache_lookups_total{result="hit"}')).toBeGreaterThanOrEqual(18);
    expect(value(text, 'engage_read_cache_lookups_total{result="miss"}')).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/^engage_db_pool_connections\{state="size"\} \d+/m);
    expect(text).toMatch(/^engage_db_pool_connections\{state="in_use"\} \d+/m);
    expect(text).toMatch(/^engage_db_pool_waiting \d+/m);
    expect(text).toMatch(/^engage_process_cpu_seconds_total/m);
    expect(text).toMatch(/^engage_nodejs_heap_size_used_bytes/m);
  });

  it('counts import jobs by status and the items they imported', async () => {
    const worker = api.imports.startWorker({ pollMs: 50 });
    try {
      const csv = 'display_name,external_id\nAda,m-1\nBob,m-2\nCy,m-3\n';
      const file = await api.imports.storeFile(org.id, 'text/csv', new Response(csv).body, 1 << 20);
      const job = await api.imports.startJob('contacts', org.id, JSON.stringify({ file_id: file.id }), undefined);
      for (let i = 0; i < 100; i++) {
        if ((await api.imports.getJob(org.id, job.id)).status === 'succeeded') break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      await worker.stop();
    }
    const { text } = await scrape();
    expect(value(text, 'engage_import_jobs{status="succeeded"}')).toBe(1);
    expect(value(text, 'engage_import_jobs{status="queued"}')).toBe(0);
    expect(value(text, 'engage_import_items{outcome="created"}')).toBe(3);
  });

  it('needs the metrics token; without a token or a port it is not served at all', async () => {
    expect((await scrape('wrong-token-0123456789abcdef')).res.status).toBe(401);
    expect((await api.app.request('/metrics')).status).toBe(401);
    // An API token is not a metrics token.
    expect((await scrape(org.token)).res.status).toBe(401);
    const plain = buildApi({ db: t.db });
    expect(
      (await plain.app.request('/metrics', { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } })).status,
    ).toBe(404);
    // Collected for METRICS_PORT, but not on the main port without a token.
    const portOnly = buildApi({ db: t.db, metrics: {} });
    expect(portOnly.metrics).not.toBeNull();
    expect((await portOnly.app.request('/metrics')).status).toBe(404);
  });

  it('serves them on METRICS_PORT without a token', async () => {
    const portOnly = buildApi({ db: t.db, metrics: {} });
    await (await portOnly.app.request('/health')).text();
    const server = serveMetrics(portOnly.metrics!, '127.0.0.1', 0, createLogger('silent'));
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(value(text, 'engage_http_requests_total{route="/health",method="GET",status="200"}')).toBe(1);
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/contact`)).status).toBe(404);
    } finally {
      server.close();
    }
  });
});

describe('GET /ready and /health', () => {
  it('/ready reports the pool and the migrations', async () => {
    const res = await api.app.request('/ready');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { pool: unknown; migrations: { applied: number; latest: number } };
    expect(body).toMatchObject({ status: 'ready', database: t.db.kind });
    expect(body.pool).toEqual({ size: expect.any(Number), in_use: expect.any(Number), waiting: 0 });
    expect(body.migrations.applied).toBeGreaterThan(0);
    expect(body.migrations).toEqual({ applied: body.migrations.latest, latest: body.migrations.latest, pending: 0 });
  });

  it('/health stays cheap: no database, same answer', async () => {
    const res = await api.app.request('/health');
    expect(await res.json()).toEqual({ status: 'ok' });
  });
});
