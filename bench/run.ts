/**
 * `npm run bench [-- --quick] [--duration S] [--rounds N] [--connections C] [--before DIR] [--only TEXT] [--scale]
 * [--rate R]`
 *
 * `--only TEXT` (repeatable): only the scenarios whose name contains TEXT (`--only import` for the
 * batch import); its results.md and results.json hold those alone.
 *
 * `--before DIR`: another checkout of Engage (an earlier commit, `git worktree add DIR <commit>`)
 * built and run as the target `engage-before` in the same rounds, for before/after ratios.
 *
 * `--rate R`: every target is sent R requests a second at a steady pace (open loop, over at most
 * `--connections` sockets; latency counted from when each request was due) instead of as many as
 * it answers, so that CPU per request is compared at one load: a server answering more requests a
 * second batches more of its socket work into each wake-up and pays less per request. Its results
 * go to bench/results-rate.md and .json, their ratio column on Node µs/req.
 *
 * `--scale`: Engage connected directly, through PgBouncer (transaction pooling, DATABASE_PREPARE=0)
 * and with a streaming replica taking its reads, on a primary and replica of its own
 * (tests/scale/replica.sh, tests/scale/pgbouncer.sh), with the 40,000-contact dataset; the
 * baselines with Engage's token check run directly and through the same PgBouncer, for the share of
 * its direct throughput each keeps there. Its results go to bench/results-scale.md and .json.
 *
 * Prepares a fresh PostgreSQL database (DATABASE_URL is the admin connection; default the local
 * server), generates the dataset, starts Engage and its baselines as separate processes, and runs
 * every scenario against each of them in alternation after a warm-up, so the machine's noise falls
 * on all alike. Writes bench/results.md and bench/results.json.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { connectPostgres } from '@engage/engine/postgres';
import autocannon from 'autocannon';
import postgres from 'postgres';
import ts from 'typescript';
import { openDatabase } from '../server/database.ts';
import { createOrganisationToken, engageEngine } from '../server/engine.ts';
import { perRequest, postgresTicks, spent, treeTicks } from './cpu.ts';
import { type Dataset, type DatasetSize, FULL, generate, PATCHED_DEALS, QUICK, SMALL } from './dataset.ts';
import { type StreamRun, streamsRun } from './streams.ts';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string', default: '32' },
    'skip-platformatic': { type: 'boolean', default: false },
    before: { type: 'string' },
    only: { type: 'string', multiple: true },
    scale: { type: 'boolean', default: false },
    rate: { type: 'string' },
  },
});
/** Whether the scenario named `name` runs: all of them unless `--only` names some. */
const selected = (name: string) => !args.only?.length || args.only.some((text) => name.includes(text));
const quick = args.quick ?? false;
const DURATION = Number(args.duration ?? (quick ? 3 : 10));
const ROUNDS = Number(args.rounds ?? (quick ? 2 : 3));
const CONNECTIONS = Number(args.connections);
/** `--rate`: the requests a second offered to every target; undefined: as many as each answers. */
const RATE = args.rate === undefined ? undefined : Number(args.rate);
if (RATE !== undefined && !(RATE > 0))
  throw new Error(`--rate takes a number of requests a second, not "${args.rate}"`);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);

// ---------------------------------------------------------------- database and dataset

/** `--scale`: a primary, its streaming replica and a PgBouncer in front of the primary (tests/scale). */
interface Cluster {
  readonly dirs: { REPLICA_DIR: string; PGBOUNCER_DIR: string };
  readonly primary: string;
  readonly replica: string;
  readonly pgbouncer: string;
}
const SCALE_SCRIPTS = 'source tests/scale/replica.sh && source tests/scale/pgbouncer.sh';
function startCluster(): Cluster {
  const out = execFileSync(
    'bash',
    ['-c', `${SCALE_SCRIPTS} && replica_start >&2 && pgbouncer_start >&2 && echo "$REPLICA_DIR $PGBOUNCER_DIR"`],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PRIMARY_PORT: '5441', UPSTREAM_PORT: '5441' } },
  );
  const [REPLICA_DIR = '', PGBOUNCER_DIR = ''] = out.trim().split(' ');
  return {
    dirs: { REPLICA_DIR, PGBOUNCER_DIR },
    primary: 'postgres://root@127.0.0.1:5441/postgres',
    replica: 'postgres://root@127.0.0.1:5442/postgres',
    pgbouncer: 'postgres://root@127.0.0.1:6439/postgres',
  };
}
const stopCluster = (cluster: Cluster) =>
  execFileSync('bash', ['-c', `${SCALE_SCRIPTS}; replica_stop; pgbouncer_stop`], {
    cwd: ROOT,
    env: { ...process.env, ...cluster.dirs },
  });
const cluster = args.scale ? startCluster() : undefined;
/** `url` naming the same database on the server of `server` (a URL). */
const sameDatabase = (url: string, server: string) =>
  Object.assign(new URL(server), { pathname: new URL(url).pathname }).toString();

const admin = cluster?.primary ?? process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const adminSql = postgres(admin, { max: 1, onnotice: () => {} });
const databases: string[] = [];
/** A new database on the admin connection's server, dropped when the run ends. */
async function createDatabase(suffix: string): Promise<string> {
  const name = `engage_bench_${Date.now()}_${suffix}`;
  await adminSql.unsafe(`CREATE DATABASE ${name}`);
  databases.push(name);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}
const dbUrl = await createDatabase('main');

const children: ChildProcess[] = [];
async function cleanUp() {
  for (const child of children) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (const name of databases) await adminSql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  await adminSql.end();
  if (cluster) stopCluster(cluster);
}
// Interrupted or killed, the run still stops its servers and drops its databases.
process.on('SIGINT', () => void cleanUp().then(() => process.exit(130)));
process.on('SIGTERM', () => void cleanUp().then(() => process.exit(143)));

function start(name: string, command: string, argv: string[], env: Record<string, string>, cwd = ROOT): ChildProcess {
  const child = spawn(command, argv, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr = (stderr + d).slice(-2000);
    if (/"level":50/.test(String(d))) log(`${name}: ${String(d).trim().slice(0, 600)}`);
  });
  child.on('exit', (code) => {
    if (code && code !== 143) log(`${name} exited ${code}: ${stderr.trim().split('\n').slice(-12).join(' | ')}`);
  });
  children.push(child);
  return child;
}

async function waitFor(url: string, seconds = 60): Promise<boolean> {
  for (let i = 0; i < seconds * 4; i++) {
    try {
      const res = await fetch(url);
      if (res.status < 500) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return false;
}

/** Resident memory of the largest process in a tree (a server, or a cluster's workers), in MB. */
function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((l) => l.startsWith('VmRSS'));
    const own = Math.round(Number(line?.match(/\d+/)?.[0] ?? 0) / 1024);
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    return Math.max(own, ...children.map(rssMb));
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------- targets and scenarios

interface Request {
  /** Several paths are cycled through, one per request. */
  readonly path: string | readonly string[];
  readonly method?: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Each request carries an Idempotency-Key of its own, as retried writes would. */
  readonly keyed?: boolean;
}

interface Target {
  readonly name: string;
  readonly base: string;
  readonly process: ChildProcess | null;
}

interface Scenario {
  readonly name: string;
  readonly requests: Partial<Record<string, Request>>;
  /** The SQL of the passthrough baseline, for the raw-driver ceiling. */
  readonly raw?: { text: string; params: string[] };
  /**
   * Checked once before the load: every target on the large database answers the same JSON as
   * Engage, the passthrough exactly, the stringify one up to the driver's conversions (canonical).
   */
  readonly sameJson?: boolean;
}

/** Single-row POSTs one request each, and the same in batches: compared by rows per second. */
const BATCH_SIZE = 20;
const SINGLE_POST = 'POST of one calendar';
const BATCH_POST = `$batch of ${BATCH_SIZE} single-row POSTs of calendars`;

function scenarios(data: Dataset, small: Dataset): Scenario[] {
  const engine = (token: string) => ({ Authorization: `Bearer ${token}` });
  const org = (id: string) => ({ 'x-organisation': id });
  const json = { 'Content-Type': 'application/json' };
  const calendars = JSON.stringify(Array.from({ length: 100 }, (_, i) => ({ name: `Calendar ${i}` })));
  const oneCalendar = JSON.stringify({ name: 'Calendar' });
  const batchOfCalendars = JSON.stringify({
    operations: Array.from({ length: BATCH_SIZE }, (_, i) => ({
      method: 'POST',
      path: '/calendar',
      body: { name: `Calendar ${i}` },
    })),
  });
  const L = data.large;
  const S = small.large;
  const list = '/api/v1/contact?city=eq.Bern&is_blocked=is.false&order=display_name&limit=25';
  const listSql =
    "SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT * FROM contact" +
    ' WHERE organisation_id = $1 AND city = $2 AND is_blocked = false ORDER BY display_name LIMIT 25) t';
  // The embed scenarios, ordered so that every target pages alike, and their passthrough statements
  // (bench/baselines.ts).
  const dealsWithContact = '/api/v1/deal?select=*,contact(*)&order=won_at&limit=25';
  const contactsWithDeals = '/api/v1/contact?select=*,deal(*)&order=created_at.desc&limit=25';
  const dealsWithContactSql =
    "SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT d.*, (SELECT to_json(c) FROM contact c" +
    ' WHERE c.organisation_id = $1 AND c.id = d.contact_id) AS contact FROM deal d WHERE d.organisation_id = $1' +
    ' ORDER BY d.won_at LIMIT 25) t';
  const contactsWithDealsSql =
    "SELECT coalesce(json_agg(t), '[]')::text FROM (SELECT c.*, coalesce((SELECT json_agg(d) FROM deal d" +
    " WHERE d.organisation_id = $1 AND d.contact_id = c.id), '[]') AS deal FROM contact c" +
    ' WHERE c.organisation_id = $1 ORDER BY c.created_at DESC LIMIT 25) t';
  // `keyed`: Engage's requests carry an Idempotency-Key each; the baseline has none to take. `ids`: the deals
  // written in turn (one, which every connection waits on in turn, or many, as a deployment's writes).
  const patchDeal = (keyed: boolean, ids: readonly string[] = [L.dealId]) => ({
    engage: {
      path: ids.map((id) => `/api/v1/deal?id=eq.${id}`),
      method: 'PATCH',
      headers: { ...engine(L.token), ...json },
      body: '{"status_key":"open"}',
      keyed,
    },
    stringify: {
      path: ids.map((id) => `/deal?id=${id}`),
      method: 'PATCH',
      headers: { ...org(L.id), ...json },
      body: '{"status_key":"open"}',
    },
  });
  return [
    {
      name: 'list: 2 filters + order + limit 25 on contacts',
      requests: {
        engage: { path: list, headers: engine(L.token) },
        'engage-10k': { path: list, headers: engine(S.token) },
        stringify: { path: '/list?city=Bern', headers: org(L.id) },
        passthrough: { path: '/list?city=Bern', headers: org(L.id) },
      },
      raw: { text: listSql, params: [L.id, 'Bern'] },
    },
    {
      name: 'by id',
      requests: {
        // Each connection cycles through 2,000 contacts: one shape, compiled once, each id bound.
        engage: { path: L.contactIds.map((id) => `/api/v1/contact?id=eq.${id}`), headers: engine(L.token) },
        'engage-10k': { path: S.contactIds.map((id) => `/api/v1/contact?id=eq.${id}`), headers: engine(S.token) },
        stringify: { path: L.contactIds.map((id) => `/by-id?id=${id}`), headers: org(L.id) },
        passthrough: { path: L.contactIds.map((id) => `/by-id?id=${id}`), headers: org(L.id) },
        // Platformatic DB 2.61 answers its list routes with 500 PLT_SQL_MAPPER_UNKNOWN_FIELD on
        // tables keyed by (organisation_id, id); only its by-key route works on this schema.
        platformatic: { path: L.contactIds.map((id) => `/contact/organisation/${L.id}/id/${id}`) },
      },
    },
    {
      name: 'count=exact over a 5,000-contact organisation',
      requests: {
        engage: { path: '/api/v1/contact?limit=25', headers: { ...engine(data.counted.token), Prefer: 'count=exact' } },
        stringify: { path: '/count', headers: org(data.counted.id) },
        passthrough: { path: '/count', headers: org(data.counted.id) },
      },
    },
    {
      name: 'appointment_details with custom fields',
      requests: {
        engage: { path: '/api/v1/appointment_details?order=start_time&limit=25', headers: engine(L.token) },
        stringify: { path: '/details', headers: org(L.id) },
        passthrough: { path: '/details', headers: org(L.id) },
      },
    },
    {
      // Every deal has its contact (bench/dataset.ts).
      name: 'embed: 25 deals, each with its contact',
      requests: {
        engage: { path: dealsWithContact, headers: engine(L.token) },
        'engage-10k': { path: dealsWithContact, headers: engine(S.token) },
        stringify: { path: '/deals-with-contact', headers: org(L.id) },
        passthrough: { path: '/deals-with-contact', headers: org(L.id) },
      },
      raw: { text: dealsWithContactSql, params: [L.id] },
      sameJson: true,
    },
    {
      // The newest contacts have DEALS_PER_CONTACT deals each (bench/dataset.ts).
      name: 'embed: 25 contacts, each with their deals',
      requests: {
        engage: { path: contactsWithDeals, headers: engine(L.token) },
        'engage-10k': { path: contactsWithDeals, headers: engine(S.token) },
        stringify: { path: '/contacts-with-deals', headers: org(L.id) },
        passthrough: { path: '/contacts-with-deals', headers: org(L.id) },
      },
      raw: { text: contactsWithDealsSql, params: [L.id] },
      sameJson: true,
    },
    {
      name: 'PATCH one deal',
      requests: patchDeal(false),
    },
    {
      name: 'PATCH one deal, each with an Idempotency-Key',
      requests: patchDeal(true),
    },
    {
      name: `PATCH deals in turn (${PATCHED_DEALS.toLocaleString('en')})`,
      requests: patchDeal(false, L.dealIds),
    },
    {
      name: `PATCH deals in turn (${PATCHED_DEALS.toLocaleString('en')}), each with an Idempotency-Key`,
      requests: patchDeal(true, L.dealIds),
    },
    {
      name: SINGLE_POST,
      requests: {
        engage: {
          path: '/api/v1/calendar',
          method: 'POST',
          headers: { ...engine(L.token), ...json },
          body: oneCalendar,
        },
        stringify: { path: '/calendars', method: 'POST', headers: { ...org(L.id), ...json }, body: `[${oneCalendar}]` },
      },
    },
    {
      name: BATCH_POST,
      requests: {
        engage: {
          path: '/api/v1/$batch',
          method: 'POST',
          headers: { ...engine(L.token), ...json },
          body: batchOfCalendars,
        },
      },
    },
    {
      name: 'bulk POST of 100 calendars',
      requests: {
        engage: { path: '/api/v1/calendar', method: 'POST', headers: { ...engine(L.token), ...json }, body: calendars },
        stringify: { path: '/calendars', method: 'POST', headers: { ...org(L.id), ...json }, body: calendars },
      },
    },
  ];
}

interface Measurement {
  rps: number;
  /** Mean latency in ms, to a hundredth (autocannon's percentiles are whole milliseconds). */
  mean: number;
  p50: number;
  p99: number;
  errors: number;
  rssMb: number;
  /** CPU time of this machine's PostgreSQL processes per request answered, in µs. */
  dbUs: number;
  /** CPU time of the target's process tree per request answered, in µs. */
  nodeUs: number;
}

/** What a load gave: requests answered, their latencies (ms) and failures. */
type Load = Pick<Measurement, 'rps' | 'mean' | 'p50' | 'p99' | 'errors'> & { answered: number };

async function load(target: Target, request: Request, duration: number): Promise<Measurement> {
  let peak = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssMb(target.process?.pid));
  }, 250);
  // Sampled right around the load; the load generator runs in this process, outside both.
  const [db, node] = [postgresTicks(), treeTicks(target.process?.pid)];
  const result = RATE ? await steady(target, request, duration, RATE) : await saturating(target, request, duration);
  const [dbAfter, nodeAfter] = [postgresTicks(), treeTicks(target.process?.pid)];
  clearInterval(sampler);
  const { answered, ...measured } = result;
  return {
    ...measured,
    rssMb: peak,
    dbUs: perRequest(spent(db, dbAfter), answered),
    nodeUs: perRequest(spent(node, nodeAfter), answered),
  };
}

/** autocannon: each connection sends its next request as soon as the last is answered. */
async function saturating(target: Target, request: Request, duration: number): Promise<Load> {
  const paths = typeof request.path === 'string' ? [request.path] : request.path;
  const result = await autocannon({
    url: target.base + paths[0],
    method: (request.method ?? 'GET') as 'GET',
    headers: request.headers,
    body: request.body,
    ...(paths.length > 1 || request.keyed
      ? {
          requests: paths.map((path) => ({
            path,
            ...(request.keyed && {
              setupRequest: (req: { headers?: Record<string, string> }) => ({
                ...req,
                headers: { ...req.headers, 'Idempotency-Key': randomUUID() },
              }),
            }),
          })),
        }
      : {}),
    connections: CONNECTIONS,
    duration,
  });
  return {
    answered: result.requests.total,
    rps: Math.round(result.requests.average),
    mean: Math.round(result.latency.mean * 100) / 100,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors + result.non2xx + result.timeouts,
  };
}

/**
 * `--rate`: `rate` requests a second, each sent when due whether or not earlier ones are answered
 * (autocannon's own rate sends each connection's share of a second in one burst). Requests beyond
 * the open sockets wait for one, and their latency counts the wait.
 */
async function steady(target: Target, request: Request, duration: number, rate: number): Promise<Load> {
  const paths = typeof request.path === 'string' ? [request.path] : request.path;
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let [sent, pending, errors, over] = [0, 0, 0, false];
  const start = performance.now();
  await new Promise<void>((resolve) => {
    const settle = (due: number, failed: boolean) => {
      latencies.push(performance.now() - due);
      if (failed) errors++;
      if (--pending === 0 && over) resolve();
    };
    const send = (due: number) => {
      pending++;
      const path = paths[sent % paths.length]!;
      const headers = { ...request.headers, ...(request.keyed && { 'Idempotency-Key': randomUUID() }) };
      const req = httpRequest(target.base + path, { method: request.method ?? 'GET', headers, agent }, (res) => {
        res.resume().on('end', () => settle(due, (res.statusCode ?? 500) >= 400));
      });
      req.on('error', () => settle(due, true));
      req.end(request.body);
    };
    const timer = setInterval(() => {
      const elapsed = Math.min(performance.now() - start, duration * 1000);
      for (; sent < (elapsed * rate) / 1000; sent++) send(start + (sent * 1000) / rate);
      if (elapsed < duration * 1000) return;
      clearInterval(timer);
      over = true;
      if (pending === 0) resolve();
    }, 1);
  });
  const took = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
  return {
    answered: latencies.length,
    // Over the time until the last answer: a target that falls behind answers fewer a second than sent.
    rps: Math.round(latencies.length / took),
    mean: Math.round((latencies.reduce((a, b) => a + b, 0) / Math.max(1, latencies.length)) * 100) / 100,
    p50: at(0.5),
    p99: at(0.99),
    errors,
  };
}

/**
 * The same statement through the driver alone, as many in flight as the HTTP runs have, driven as
 * Engage drives it (engine/db/postgres.ts: four single-connection clients, generic plans).
 */
async function rawCeiling(text: string, params: string[], duration: number): Promise<number> {
  const db = connectPostgres(dbUrl, { poolSize: 4 });
  let count = 0;
  const end = Date.now() + duration * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (Date.now() < end) {
        await db.query(text, params);
        count++;
      }
    }),
  );
  await db.close();
  return Math.round(count / duration);
}

/** A baseline's request with the bearer token of its organisation instead of the `x-organisation` header. */
function withToken(request: Request | undefined, tokens: ReadonlyMap<string, string>): Request | undefined {
  const organisation = request?.headers?.['x-organisation'];
  if (!request || organisation === undefined) return undefined;
  const { 'x-organisation': _, ...headers } = request.headers!;
  return { ...request, headers: { ...headers, Authorization: `Bearer ${tokens.get(organisation)}` } };
}

/** The name `--only` picks the streams scenario by. */
const STREAMS = 'streams of changes';

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * A response body in a form two targets' answers can be compared in. Arrays below the top level
 * (to-many embeds, whose order the query leaves open) are sorted. `driver`: values as a driver's
 * rows give them to JSON.stringify are taken as PostgreSQL's JSON gives them (a timestamp or date
 * as the instant it names, to the millisecond a JavaScript Date keeps; a numeric as a number).
 */
function canonical(value: unknown, driver: boolean, depth = 0): unknown {
  if (Array.isArray(value)) {
    const items = value.map((v) => canonical(v, driver, depth + 1));
    if (depth === 0) return items;
    return items.sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, canonical(v, driver, depth + 1)]));
  }
  if (driver && typeof value === 'string') {
    if (/^\d{4}-\d{2}-\d{2}([T ]|$)/.test(value) && !Number.isNaN(Date.parse(value))) return Date.parse(value);
    if (/^-?\d+(\.\d+)?$/.test(value)) return Number(value);
  }
  return value;
}

/** The first difference between two canonical bodies, as a path and both values; null when equal. */
function difference(a: unknown, b: unknown, path = '$'): string | null {
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keysA = Object.keys(a);
    const keysB = Object.keys(b);
    if (keysA.join() !== keysB.join()) return `${path}: keys ${keysA.join()} against ${keysB.join()}`;
    for (const k of keysA) {
      const d = difference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return a === b ? null : `${path}: ${JSON.stringify(a)} against ${JSON.stringify(b)}`;
}

/** Each target's answer to a sameJson scenario's first request, held to Engage's; throws on a difference. */
async function checkSameJson(
  scenario: Scenario,
  targets: readonly Target[],
  requestFor: (t: Target) => Request | undefined,
): Promise<void> {
  const body = async (t: Target, request: Request) => {
    const path = typeof request.path === 'string' ? request.path : request.path[0]!;
    const res = await fetch(t.base + path, { headers: request.headers });
    if (res.status !== 200) throw new Error(`${scenario.name}: ${t.name} answered ${res.status}`);
    return res.json() as Promise<unknown>;
  };
  const engage = targets.find((t) => t.name === 'engage');
  if (!engage) return;
  const expected = await body(engage, scenario.requests.engage!);
  if (!Array.isArray(expected) || expected.length === 0) throw new Error(`${scenario.name}: Engage answered no rows`);
  for (const t of targets) {
    // engage-10k reads another database.
    const request = requestFor(t);
    if (t.name === 'engage' || t.name === 'engage-10k' || !request) continue;
    const driver = t.name.startsWith('stringify');
    const d = difference(canonical(expected, driver), canonical(await body(t, request), driver));
    if (d) throw new Error(`${scenario.name}: ${t.name} answers other JSON than Engage (${d})`);
  }
  log(`${scenario.name}: every target answers the same JSON (${expected.length} rows)`);
}

// ---------------------------------------------------------------- the import scenario

async function importScenario(
  base: string,
): Promise<{ rows: number; batchRowsPerSecond: number; copyRowsPerSecond: number }> {
  const LIMIT = 5 * 1024 * 1024;
  const item = (i: number) => ({
    external_id: `bench-${i}`,
    display_name: `Imported ${i}`,
    email: `imported${i}@example.com`,
    city: 'Bern',
    country: 'CH',
  });
  const items: unknown[] = [];
  let size = 12;
  for (let i = 0; ; i++) {
    const next = Buffer.byteLength(JSON.stringify(item(i))) + 1;
    if (size + next > LIMIT) break;
    size += next;
    items.push(item(i));
  }
  const body = JSON.stringify({ items });
  const batch: number[] = [];
  const copy: number[] = [];
  const db = await openDatabase({ DATABASE_URL: dbUrl, DB_POOL_SIZE: 1 });
  const sql = postgres(dbUrl, { max: 1, onnotice: () => {} });
  // Both land in a fresh, empty organisation each round, so neither meets the other's rows.
  const fresh = async () => {
    const organisationId = randomUUID();
    return { organisationId, token: (await createOrganisationToken(engageEngine(db), db, { organisationId })).token };
  };
  for (let round = 0; round < ROUNDS; round++) {
    const target = await fresh();
    let start = performance.now();
    const res = await fetch(`${base}/v1/contacts/imports/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${target.token}`, 'Content-Type': 'application/json' },
      body,
    });
    const outcome = (await res.json()) as { created?: number; failed?: number };
    if (res.status !== 200 || outcome.failed !== 0 || outcome.created !== items.length) {
      throw new Error(`batch import answered ${res.status} with ${JSON.stringify(outcome).slice(0, 200)}`);
    }
    batch.push(performance.now() - start);
    const copied = await fresh();
    start = performance.now();
    const writable = await sql
      .unsafe('COPY contact (organisation_id, external_id, display_name, email, city, country) FROM STDIN')
      .writable();
    await new Promise<void>((resolve, reject) => {
      writable.on('finish', resolve).on('error', reject);
      const lines = items.map((x) => {
        const r = x as Record<string, string>;
        return [copied.organisationId, r.external_id, r.display_name, r.email, r.city, r.country].join('\t');
      });
      writable.end(`${lines.join('\n')}\n`);
    });
    copy.push(performance.now() - start);
  }
  await sql.end();
  await db.close();
  return {
    rows: items.length,
    batchRowsPerSecond: Math.round((items.length / median(batch)) * 1000),
    copyRowsPerSecond: Math.round((items.length / median(copy)) * 1000),
  };
}

// ---------------------------------------------------------------- main

/** A database of `size`, migrated and filled. */
async function prepare(url: string, size: DatasetSize): Promise<Dataset> {
  const db = await openDatabase({ DATABASE_URL: url, DB_POOL_SIZE: 2 });
  await db.migrate();
  log(
    `generating ${size.contacts} contacts, ${size.deals} deals, ${size.appointments} appointments` +
      ` in ${size.organisations} organisations`,
  );
  const data = await generate(db, size, (what) => log(`  ${what}`));
  await db.close();
  return data;
}

/**
 * Every server runs as JavaScript, as `npm start` runs Engage: Engage from its build, the
 * baselines transpiled here (they import only packages), so no target pays for a TypeScript loader.
 */
function build(): string {
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
  if (args.before) execFileSync('npm', ['run', '--silent', 'build'], { cwd: args.before, stdio: 'inherit' });
  const source = readFileSync(`${ROOT}bench/baselines.ts`, 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  mkdirSync(`${ROOT}bench/dist`, { recursive: true });
  writeFileSync(`${ROOT}bench/dist/baselines.js`, outputText);
  return `${ROOT}bench/dist/baselines.js`;
}

/** Waits until the replica has replayed all the primary has written (the dataset). */
async function caughtUp(primaryUrl: string, replicaUrl: string) {
  const [primary, replica] = [postgres(primaryUrl, { max: 1 }), postgres(replicaUrl, { max: 1 })];
  const [{ lsn }] = (await primary`SELECT pg_current_wal_lsn()::text AS lsn`) as unknown as [{ lsn: string }];
  while (!(await replica`SELECT pg_last_wal_replay_lsn() >= ${lsn}::pg_lsn AS ok`)[0]!.ok) {
    await new Promise((r) => setTimeout(r, 200));
  }
  await Promise.all([primary.end(), replica.end()]);
}

try {
  const size = cluster ? QUICK : quick ? QUICK : FULL;
  const data = await prepare(dbUrl, size);
  // The same scenarios on a small database, for how latency grows with the data.
  const smallUrl = cluster ? dbUrl : await createDatabase('small');
  const small = cluster ? data : await prepare(smallUrl, SMALL);
  const baselines = build();

  const ports = {
    engage: 31000,
    stringify: 31001,
    passthrough: 31002,
    platformatic: 31003,
    engage2: 31004,
    engage10k: 31005,
    before: 31006,
    stringifyToken: 31007,
    passthroughToken: 31008,
    engageInfo: 31009,
    stringifyTokenPgbouncer: 31010,
    passthroughTokenPgbouncer: 31011,
  };
  const node = process.execPath;
  const engageTarget = (name: string, port: number, env: Record<string, string>, cwd = ROOT): Target => ({
    name,
    base: `http://127.0.0.1:${port}`,
    // Streams of changes: the streams scenario holds 1,000 of one organisation's on one process.
    process: start(
      name,
      node,
      ['dist/server/main.js'],
      { LOG_LEVEL: 'warn', PORT: String(port), STREAM_MAX_PER_TENANT: '5000', ...env },
      cwd,
    ),
  });
  const baseline = (name: string, port: number, argv: string[], env: Record<string, string>): Target => ({
    name,
    base: `http://127.0.0.1:${port}`,
    process: start(name, node, [baselines, ...argv], env),
  });
  if (cluster) await caughtUp(dbUrl, sameDatabase(dbUrl, cluster.replica));
  const targets: Target[] = cluster
    ? [
        engageTarget('engage', ports.engage, { DATABASE_URL: dbUrl }),
        engageTarget('engage-pgbouncer', ports.engage2, {
          DATABASE_URL: sameDatabase(dbUrl, cluster.pgbouncer),
          DATABASE_PREPARE: '0',
        }),
        engageTarget('engage-replica', ports.engage10k, {
          DATABASE_URL: dbUrl,
          READ_DATABASE_URL: sameDatabase(dbUrl, cluster.replica),
        }),
        // The hand-written code with Engage's token check, directly and through the same PgBouncer: the share
        // of its direct throughput it keeps there is the yardstick for Engage's.
        ...(['stringify', 'passthrough'] as const).flatMap((mode) => {
          const [port, pooled] = [ports[`${mode}Token`], ports[`${mode}TokenPgbouncer`]];
          const through = sameDatabase(dbUrl, cluster.pgbouncer);
          return [
            baseline(`${mode}-token`, port, [`${mode}-token`, String(port), dbUrl], {}),
            baseline(`${mode}-token-pgbouncer`, pooled, [`${mode}-token`, String(pooled), through], {
              DATABASE_PREPARE: '0',
            }),
          ];
        }),
      ]
    : [
        engageTarget('engage', ports.engage, { DATABASE_URL: dbUrl }),
        // The same server with WORKERS=2, for the scaling from one process to two.
        engageTarget('engage-2-workers', ports.engage2, { DATABASE_URL: dbUrl, WORKERS: '2' }),
        // With the access log on, as a deployment runs by default (LOG_LEVEL=info).
        engageTarget('engage-log-info', ports.engageInfo, { DATABASE_URL: dbUrl, LOG_LEVEL: 'info' }),
        engageTarget('engage-10k', ports.engage10k, { DATABASE_URL: smallUrl }),
        ...(args.before ? [engageTarget('engage-before', ports.before, { DATABASE_URL: dbUrl }, args.before)] : []),
        baseline('stringify', ports.stringify, ['stringify', String(ports.stringify), dbUrl], {}),
        baseline('passthrough', ports.passthrough, ['passthrough', String(ports.passthrough), dbUrl], {}),
        // The same, checking the bearer token in each statement as Engage does: the fair comparison.
        ...(['stringify', 'passthrough'] as const).map((mode) => {
          const port = ports[`${mode}Token`];
          return baseline(`${mode}-token`, port, [`${mode}-token`, String(port), dbUrl], {});
        }),
      ];
  const chosen = scenarios(data, small).filter((scenario) => selected(scenario.name));
  const tokens = new Map([
    [data.large.id, data.large.token],
    [data.counted.id, data.counted.token],
  ]);
  if (!cluster && !args['skip-platformatic'] && chosen.some((scenario) => scenario.requests.platformatic)) {
    const config = {
      server: { hostname: '127.0.0.1', port: ports.platformatic, logger: { level: 'warn' } },
      db: { connectionString: dbUrl, graphql: false, openapi: true },
      watch: false,
    };
    writeFileSync(`${ROOT}bench/platformatic.db.json`, JSON.stringify(config, null, 2));
    targets.push({
      name: 'platformatic',
      base: `http://127.0.0.1:${ports.platformatic}`,
      process: start(
        'platformatic',
        node,
        [`${ROOT}bench/node_modules/@platformatic/db/db.mjs`, 'start', '-c', 'platformatic.db.json'],
        {},
        `${ROOT}bench`,
      ),
    });
  }
  const up: Target[] = [];
  for (const target of targets) {
    if (await waitFor(`${target.base}/`, 90)) up.push(target);
    else log(`${target.name} did not start; left out`);
  }

  const results: Array<{ scenario: string; target: string } & Measurement> = [];
  const ceilings: Record<string, number> = {};
  for (const scenario of chosen) {
    // The other builds and set-ups of Engage answer the same requests as Engage.
    const asEngage = new Set([
      'engage-2-workers',
      'engage-log-info',
      'engage-before',
      'engage-pgbouncer',
      'engage-replica',
    ]);
    const requestFor = (t: Target) => {
      const token = /^(\w+)-token(?:-pgbouncer)?$/.exec(t.name);
      return token
        ? withToken(scenario.requests[token[1]!], tokens)
        : scenario.requests[asEngage.has(t.name) ? 'engage' : t.name];
    };
    const runs = up.filter((t) => requestFor(t));
    if (scenario.sameJson) await checkSameJson(scenario, runs, requestFor);
    log(`${scenario.name}: warm-up`);
    for (const t of runs) await load(t, requestFor(t)!, 2);
    const samples = new Map<string, Measurement[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of runs) {
        const m = await load(t, requestFor(t)!, DURATION);
        samples.set(t.name, [...(samples.get(t.name) ?? []), m]);
        log(
          `${scenario.name} / ${t.name} round ${round + 1}: ${m.rps} req/s,` +
            ` p50 ${m.p50} ms, p99 ${m.p99} ms, errors ${m.errors}`,
        );
      }
    }
    for (const [target, ms] of samples) {
      results.push({
        scenario: scenario.name,
        target,
        rps: median(ms.map((m) => m.rps)),
        mean: median(ms.map((m) => m.mean)),
        p50: median(ms.map((m) => m.p50)),
        p99: median(ms.map((m) => m.p99)),
        errors: ms.reduce((s, m) => s + m.errors, 0),
        rssMb: Math.max(...ms.map((m) => m.rssMb)),
        dbUs: median(ms.map((m) => m.dbUs)),
        nodeUs: median(ms.map((m) => m.nodeUs)),
      });
    }
    if (scenario.raw && !cluster)
      ceilings[scenario.name] = await rawCeiling(scenario.raw.text, scenario.raw.params, DURATION);
  }
  const engage = up.find((t) => t.name === 'engage');
  if (!engage) throw new Error('Engage did not start');
  let imported: { rows: number; batchRowsPerSecond: number; copyRowsPerSecond: number } | null = null;
  if (selected('5 MiB batch import')) {
    log('5 MiB batch import against COPY');
    imported = await importScenario(engage.base).catch((error: Error) => {
      log(`batch import failed: ${error.message}`);
      return { rows: 0, batchRowsPerSecond: 0, copyRowsPerSecond: 0 };
    });
  }

  const streams: StreamRun[] = [];
  if (!cluster && selected(STREAMS)) {
    // No subscribers first: what the changes cost the database without streams, triggers included.
    for (const subscribers of [0, 10, 1000]) {
      const runs: StreamRun[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const run = await streamsRun({
          base: engage.base,
          dbUrl,
          organisation: data.large,
          engage: engage.process,
          subscribers,
          changesPerSecond: 50,
          seconds: DURATION,
        });
        log(
          `${STREAMS}, ${subscribers} subscribers, round ${round + 1}: ${run.events} events,` +
            ` lag p50 ${run.lagP50Ms} ms, p99 ${run.lagP99Ms} ms, DB ${run.dbUsPerChange} µs/change,` +
            ` Node ${run.nodeUsPerChange} µs/change`,
        );
        runs.push(run);
      }
      const mid = (pick: (r: StreamRun) => number) => median(runs.map(pick));
      streams.push({
        subscribers,
        changes: mid((r) => r.changes),
        events: mid((r) => r.events),
        lagP50Ms: mid((r) => r.lagP50Ms),
        lagP99Ms: mid((r) => r.lagP99Ms),
        dbUsPerChange: mid((r) => r.dbUsPerChange),
        nodeUsPerChange: mid((r) => r.nodeUsPerChange),
      });
    }
  }

  const report = {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model,
      memoryGb: Math.round(totalmem() / 2 ** 30),
      node: process.version,
    },
    settings: { quick, durationSeconds: DURATION, rounds: ROUNDS, connections: CONNECTIONS, rate: RATE, dataset: size },
    results,
    rawDriverCeiling: ceilings,
    batchImport: imported,
    streams,
  };
  const file = cluster ? 'results-scale' : RATE ? 'results-rate' : 'results';
  writeFileSync(`${ROOT}bench/${file}.json`, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(`${ROOT}bench/${file}.md`, markdown(report));
  log(`wrote bench/${file}.md and bench/${file}.json`);
} finally {
  await cleanUp();
}

/** Per scenario, the req/s each target keeps through PgBouncer as a share of its direct req/s (with --scale). */
function pooledShares(results: ReadonlyArray<{ scenario: string; target: string } & Measurement>) {
  const rps = (scenario: string, target: string) =>
    results.find((r) => r.scenario === scenario && r.target === target)?.rps;
  return [...new Set(results.map((r) => r.scenario))].flatMap((scenario) => {
    const share = (target: string) => {
      const [direct, pooled] = [rps(scenario, target), rps(scenario, `${target}-pgbouncer`)];
      return direct && pooled !== undefined ? pooled / direct : undefined;
    };
    const engage = share('engage');
    if (engage === undefined) return [];
    return [
      {
        scenario,
        engage,
        'stringify-token': share('stringify-token'),
        'passthrough-token': share('passthrough-token'),
      },
    ];
  });
}

function markdown(report: {
  date: string;
  machine: Record<string, unknown>;
  settings: { readonly rate?: number } & Record<string, unknown>;
  results: Array<{ scenario: string; target: string } & Measurement>;
  rawDriverCeiling: Record<string, number>;
  batchImport: { rows: number; batchRowsPerSecond: number; copyRowsPerSecond: number } | null;
  streams: readonly StreamRun[];
}): string {
  const rate = report.settings.rate;
  const lines = [
    '# Benchmark results',
    '',
    `${report.date}; ${report.machine.cpus} × ${report.machine.model}, ${report.machine.memoryGb} GiB,` +
      ` Node ${report.machine.node}.`,
    `Dataset ${JSON.stringify(report.settings.dataset)}; ${report.settings.connections} connections,` +
      ` ${report.settings.rounds} rounds of ${report.settings.durationSeconds} s per target, medians shown.`,
    ...(rate
      ? [
          `Every target was offered ${rate} requests a second (--rate): the ratio is Engage's Node µs/req ÷ the` +
            " target's, CPU per request at one load (a target that answers fewer than offered was saturated).",
        ]
      : []),
    'engage-2-workers is the same server with WORKERS=2 (each process with its own pool; RSS is the largest worker);' +
      ' engage-10k is Engage on a database of 10,000 contacts;' +
      ' engage-log-info is Engage with LOG_LEVEL=info (its access log on, as deployed; the others run at warn);' +
      ' stringify-token and passthrough-token check the bearer token in their statements as Engage does;' +
      ' engage-before, when present, is the build given with --before (its ratio is after ÷ before).',
    'With --scale, all on one primary with a streaming replica on the same machine: engage connects directly,' +
      ' engage-pgbouncer through PgBouncer 1.18 (pool_mode=transaction, DATABASE_PREPARE=0),' +
      ' engage-replica sends its reads to the replica (READ_DATABASE_URL);' +
      ' stringify-token-pgbouncer and passthrough-token-pgbouncer are the baselines through the same PgBouncer' +
      ' (unnamed statements, as DATABASE_PREPARE=0 has Engage send them).',
    'The by-id scenario cycles through 2,000 contacts, all of one shape (id=eq.<uuid>), so Engage compiles it once' +
      ' and binds each id; the list scenario repeats one request; PATCH one deal has every connection write the same' +
      ' row, PATCH deals in turn cycles through 2,000 deals.',
    "DB µs/req is the CPU time (utime + stime from /proc) that all of this machine's PostgreSQL processes" +
      ' spent during a run (with --scale, the primary and the replica alike; PgBouncer is not counted),' +
      " divided by the requests answered; Node µs/req the same for the target's process and its children." +
      " The autocannon load generator runs in the bench's own process and is in neither.",
    '',
    '| scenario | target | req/s | p50 ms | p99 ms | errors | RSS MB | DB µs/req | Node µs/req | engage ÷ target |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of report.results) {
    const engage = report.results.find((x) => x.scenario === r.scenario && x.target === 'engage');
    const [mine, theirs] = engage ? (rate ? [engage.nodeUs, r.nodeUs] : [engage.rps, r.rps]) : [0, 0];
    const ratio = engage && r.target !== 'engage' ? (mine / theirs).toFixed(2) : '';
    lines.push(
      `| ${r.scenario} | ${r.target} | ${r.rps} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.rssMb} |` +
        ` ${r.dbUs} | ${r.nodeUs} | ${ratio} |`,
    );
  }
  const shares = pooledShares(report.results);
  if (shares.length > 0) {
    lines.push(
      '',
      "Through PgBouncer: the share of its direct req/s each keeps, and Engage's share ÷ the baseline's.",
      '',
      '| scenario | engage | stringify-token | passthrough-token | ÷ stringify-token | ÷ passthrough-token |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const s of shares) {
      const [e, st, pt] = [s.engage, s['stringify-token'], s['passthrough-token']];
      const ratio = (base: number | undefined) => (e !== undefined && base ? (e / base).toFixed(2) : '');
      const cell = (share: number | undefined) => share?.toFixed(2) ?? '';
      lines.push(`| ${s.scenario} | ${cell(e)} | ${cell(st)} | ${cell(pt)} | ${ratio(st)} | ${ratio(pt)} |`);
    }
  }
  const ceilings = Object.entries(report.rawDriverCeiling);
  if (ceilings.length > 0) {
    lines.push(
      '',
      '| raw driver, the passthrough SQL, no HTTP, driven as Engage drives it | queries/s |',
      '|---|---:|',
    );
    for (const [scenario, qps] of ceilings) lines.push(`| ${scenario} | ${qps} |`);
  }
  const small = report.results.filter((r) => r.target === 'engage-10k');
  if (small.length > 0) {
    lines.push(
      '',
      '| latency with the data | mean ms (large / 10k) | p99 ms (large / 10k) | mean ratio | p99 ratio |',
      '|---|---:|---:|---:|---:|',
    );
  }
  for (const big of report.results.filter((r) => r.target === 'engage')) {
    const little = small.find((r) => r.scenario === big.scenario);
    if (!little) continue;
    // autocannon's percentiles are whole milliseconds; a 0 ms one is taken as 1 ms.
    const ratio = (a: number, b: number) => (Math.max(a, 1) / Math.max(b, 1)).toFixed(2);
    lines.push(
      `| ${big.scenario} | ${big.mean} / ${little.mean} | ${big.p99} / ${little.p99} |` +
        ` ${ratio(big.mean, little.mean)} | ${ratio(big.p99, little.p99)} |`,
    );
  }
  const single = report.results.find((r) => r.scenario === SINGLE_POST && r.target === 'engage');
  const batched = report.results.find((r) => r.scenario === BATCH_POST && r.target === 'engage');
  if (single && batched) {
    lines.push(
      '',
      `Single-row POSTs in batches of ${BATCH_SIZE}: ${batched.rps * BATCH_SIZE} rows/s; one request each:` +
        ` ${single.rps} rows/s (ratio ${((batched.rps * BATCH_SIZE) / single.rps).toFixed(2)}).`,
    );
  }
  const b = report.batchImport;
  if (b) {
    lines.push(
      '',
      `Batch import of ${b.rows} contacts (5 MiB): ${b.batchRowsPerSecond} rows/s;` +
        ` COPY of the same rows: ${b.copyRowsPerSecond} rows/s` +
        ` (ratio ${(b.batchRowsPerSecond / b.copyRowsPerSecond).toFixed(2)}).`,
    );
  }
  if (report.streams.length > 0) {
    const at = (n: number) => report.streams.find((r) => r.subscribers === n);
    const [few, many] = [at(10), at(1000)];
    lines.push(
      '',
      `Streams of changes (${report.date.slice(0, 10)}): subscribers on one Engage process, over 10 distinct` +
        " queries of the large organisation's deals; a writer PATCHes a deal 50 times a second. Lag from before" +
        ' each PATCH is sent to each event showing it. CPU per change: over the writing window, less what as long' +
        ' a window without changes costs (the write, its trigger, the reads of the log, the evaluation of the' +
        ' queries, the events).',
      '',
      '| subscribers | changes | events | lag p50 ms | lag p99 ms | DB µs/change | Node µs/change |',
      '|---:|---:|---:|---:|---:|---:|---:|',
      ...report.streams.map(
        (r) =>
          `| ${r.subscribers} | ${r.changes} | ${r.events} | ${r.lagP50Ms} | ${r.lagP99Ms} |` +
          ` ${r.dbUsPerChange} | ${r.nodeUsPerChange} |`,
      ),
    );
    if (few && many) {
      lines.push(
        '',
        `DB CPU per change at 1,000 subscribers ÷ at 10: ${(many.dbUsPerChange / few.dbUsPerChange).toFixed(2)}.`,
      );
    }
  }
  lines.push('');
  return lines.join('\n');
}
