/**
 * The server process as clients on the network meet it (server/main.ts, server/node-server.ts):
 * requests Node refuses before the app sees them still get the contract's error body and a
 * Request-Id; slow headers, stalled bodies and over-limit uploads are cut off within the configured
 * timeouts; SIGTERM finishes every request in flight, puts the running import job back in the
 * queue after its batch commits, and exits 0, with /ready saying 503 meanwhile.
 *
 * Each server is spawned as `npm start` runs it, on a fresh database: a new PostgreSQL database
 * when DATABASE_URL is set, an embedded PGlite directory otherwise.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../server/database.ts';
import { seedDemo } from '../server/demo.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/ports.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const onPostgres = Boolean(process.env.DATABASE_URL);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Small timeouts, so cut-offs show within the test's time. */
const SMALL_TIMEOUTS = {
  HEADERS_TIMEOUT_MS: '1000',
  BODY_TIMEOUT_MS: '1000',
  REQUEST_TIMEOUT_MS: '3000',
};
const SHUTDOWN_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------------------------
// A spawned server

/** A database with the demo organisation: a new PostgreSQL database, or a PGlite directory. */
interface Data {
  readonly env: Record<string, string | undefined>;
  token: string | undefined;
  /** The job's row and how many contacts its import wrote; on PGlite only once no server holds the directory. */
  importState(job: ImportJob): Promise<{ status: string; processed: number; imported: number }>;
  drop(): Promise<void>;
}

/** `postgres`: on PostgreSQL whatever the suite runs on. */
async function createData(postgres = onPostgres): Promise<Data> {
  const database: TestDatabase | undefined = postgres ? await createTestDatabase({ postgres: true }) : undefined;
  const dir = database ? undefined : mkdtempSync(join(tmpdir(), 'engage-process-'));
  return {
    // PGlite: the server creates the demo on its first start and prints the token.
    env: database
      ? { DATABASE_URL: database.url, PGLITE_DIR: undefined }
      : { DATABASE_URL: undefined, PGLITE_DIR: dir },
    token: database ? (await seedDemo(database.db, database.engine))!.token : undefined,
    async importState({ id: jobId, prefix }) {
      const db = database ? database.db : await openDatabase({ PGLITE_DIR: dir });
      try {
        const [job] = await db.query<{ status: string; processed: number; organisation_id: string }>(
          'SELECT status, processed, organisation_id::text AS organisation_id FROM import_job WHERE id = $1::uuid',
          [jobId],
        );
        const [count] = await db.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM contact WHERE organisation_id = $1::uuid AND external_id LIKE $2',
          [job!.organisation_id, `${prefix}-%`],
        );
        return { status: job!.status, processed: job!.processed, imported: count!.n };
      } finally {
        if (!database) await db.close();
      }
    },
    async drop() {
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Spawned {
  readonly child: ChildProcess;
  readonly port: number;
  readonly token: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `node server/main.ts` on `data`, once every worker answers /health. */
async function startServer(data: Data, env: Record<string, string> = {}): Promise<Spawned> {
  const port = await freePort();
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'silent',
    HOST: '127.0.0.1',
    PORT: String(port),
    SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
    ...env,
  };
  for (const [name, value] of Object.entries(data.env)) {
    if (value === undefined) delete childEnv[name];
    else childEnv[name] = value;
  }
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: ROOT,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  for (const deadline = Date.now() + 90_000; ; await sleep(100)) {
    if (gone) throw new Error(`the server exited on start: ${output}`);
    if (Date.now() > deadline) throw new Error(`the server did not start: ${output}`);
    const up = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
  }
  data.token ??= /Its API token \(shown once\): (\S+)/.exec(output)?.[1];
  if (!data.token) throw new Error(`no demo token printed: ${output}`);
  const server = { child, port, token: data.token, exited };
  started.push(server);
  return server;
}

/** Every server started, to kill whichever a failed test left running. */
const started: Spawned[] = [];

async function killServer(server: Spawned) {
  if (server.child.exitCode === null && server.child.signalCode === null) {
    server.child.kill('SIGKILL');
    await server.exited;
  }
}

/** The exit of a server sent `signal`, and how long it took; null if it is still running after 20 s. */
async function stopWith(server: Spawned, signal: NodeJS.Signals) {
  const sent = performance.now();
  server.child.kill(signal);
  const exit = await Promise.race([server.exited, sleep(20_000).then(() => null)]);
  return { exit, ms: performance.now() - sent };
}

// ---------------------------------------------------------------------------------------------
// Raw sockets: what a client sees byte for byte

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Whether the server closed the connection before `waitMs` passed. */
  readonly closed: boolean;
  /** From the first byte sent to the close (or to `waitMs`). */
  readonly ms: number;
  /** From the first byte sent to the first byte of the response. */
  readonly firstByteMs: number;
  /** Body bytes sent by `stream`. */
  readonly streamed: number;
}

interface RawOptions {
  /** Pause between the parts. */
  readonly gapMs?: number;
  readonly waitMs?: number;
  /** After the parts, send this chunk again and again until the server answers or closes. */
  readonly stream?: Buffer;
}

/** A response's status, headers and body, read off the wire. */
function parseResponse(text: string) {
  const split = text.indexOf('\r\n\r\n');
  const head = split < 0 ? text : text.slice(0, split);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: split < 0 ? '' : text.slice(split + 4) };
}

/**
 * A request in flight across the signal: on a connection that has served a first request (so the
 * server accepted it), the request line is sent by `begin` and the rest of the headers by `end`.
 */
async function openProbe(port: number, path: string) {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => (text += chunk));
  socket.on('error', () => {});
  const closed = new Promise((resolve) => socket.on('close', resolve));
  socket.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
  while (!text.endsWith('{"status":"ok"}')) await sleep(20);
  return {
    begin: () => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n`),
    async end(): Promise<RawResponse> {
      text = '';
      socket.write('X-Probe: 1\r\n\r\n');
      const wasClosed = await Promise.race([closed.then(() => true), sleep(5000).then(() => false)]);
      socket.destroy();
      return { ...parseResponse(text), closed: wasClosed, ms: 0, firstByteMs: 0, streamed: 0 };
    },
  };
}

/** Whether a connection to the port is accepted (closed again at once). */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** The most a connection's unread bytes can fill: the largest receive and send buffers (Linux), plus 4 MB. */
function socketBuffers(): number {
  const largest = (file: string) => {
    try {
      return Number(readFileSync(file, 'utf8').trim().split(/\s+/)[2]);
    } catch {
      return 16 * 1024 * 1024;
    }
  };
  return largest('/proc/sys/net/ipv4/tcp_rmem') + largest('/proc/sys/net/ipv4/tcp_wmem') + 4 * 1024 * 1024;
}

/** Sends `parts` on a new connection and reads until the server closes it. */
function rawRequest(port: number, parts: Array<string | Buffer>, options: RawOptions = {}): Promise<RawResponse> {
  const { gapMs = 0, waitMs = 5000 } = options;
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const started = performance.now();
    let streamed = 0;
    let firstByteMs = Number.POSITIVE_INFINITY;
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({
        ...parseResponse(Buffer.concat(chunks).toString('utf8')),
        closed,
        ms: performance.now() - started,
        firstByteMs,
        streamed,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => {
      firstByteMs = Math.min(firstByteMs, performance.now() - started);
      chunks.push(chunk);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && gapMs > 0) await sleep(gapMs);
        if (done || socket.destroyed) return;
        socket.write(part);
      }
      const { stream } = options;
      while (stream && !done && !socket.destroyed && chunks.length === 0 && streamed < 200 * 1024 * 1024) {
        await new Promise<void>((written) => socket.write(stream, () => written()));
        streamed += stream.length;
      }
    });
  });
}

/** The contract's error body (docs/errors.md), its Request-Id, and Connection: close. */
function expectContractError(response: RawResponse, status: number, code: string) {
  expect(response.status, `${response.status} ${response.body}`).toBe(status);
  expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(response.headers.connection).toBe('close');
  const id = response.headers['request-id'];
  expect(id).toMatch(UUID);
  const body = JSON.parse(response.body) as Record<string, unknown>;
  expect(body).toMatchObject({
    name: 'APIError',
    code,
    status_code: status,
    contact_support: false,
    request_id: id,
    details: null,
  });
  expect(Object.keys(body)).toEqual(
    expect.arrayContaining(['message', 'is_transient', 'timestamp', 'hint', 'details', 'request_id']),
  );
  expect(Number(response.headers['content-length'])).toBe(Buffer.byteLength(response.body));
  expect(response.closed).toBe(true);
  return body as { message: string; is_transient: boolean };
}

// ---------------------------------------------------------------------------------------------
// Load: requests in flight while the server is stopped

interface Outcome {
  /** When the request was handed to the kernel. */
  sentAt: number;
  /** When its response ended, or it failed. */
  doneAt?: number;
  status?: number;
  error?: string;
  connection?: string;
}

/** A GET whose outcome records whether its whole body arrived and parsed. */
function timedGet(port: number, path: string, token: string, agent: http.Agent): Promise<Outcome> {
  return new Promise((settle) => {
    const outcome: Outcome = { sentAt: Number.POSITIVE_INFINITY };
    const resolve = (o: Outcome) => {
      o.doneAt ??= performance.now();
      settle(o);
    };
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        agent,
        headers: { Authorization: `Bearer ${token}`, Prefer: 'count=exact' },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          try {
            if (!Array.isArray(JSON.parse(text))) throw new Error('not an array');
            outcome.status = response.statusCode;
            outcome.connection = response.headers.connection;
          } catch (error) {
            outcome.error = `${response.statusCode}: ${(error as Error).message}: ${text.slice(0, 200)}`;
          }
          resolve(outcome);
        });
        response.on('error', (error) => {
          outcome.error = (error as NodeJS.ErrnoException).code ?? error.message;
          resolve(outcome);
        });
      },
    );
    request.on('finish', () => (outcome.sentAt = performance.now()));
    request.on('error', (error) => {
      outcome.error = (error as NodeJS.ErrnoException).code ?? error.message;
      resolve(outcome);
    });
    request.end();
  });
}

/** `concurrency` loops of reads until `until` resolves or a request fails after the signal. */
function keepLoaded(port: number, token: string, concurrency: number, signalAt: () => number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const outcomes: Outcome[] = [];
  let stopped = false;
  const loop = async () => {
    while (!stopped) {
      const outcome = await timedGet(port, '/api/v1/contact?select=id,display_name,email&limit=100', token, agent);
      outcomes.push(outcome);
      // After the signal the server refuses new connections: that loop is done.
      if (outcome.error && performance.now() > signalAt()) return;
    }
  };
  const loops = Array.from({ length: concurrency }, loop);
  return {
    outcomes,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

async function api(port: number, token: string, method: string, path: string, body?: string, type?: string) {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(type ? { 'Content-Type': type } : {}) },
    body,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

interface ImportJob {
  readonly id: string;
  /** Of the external ids of its rows. */
  readonly prefix: string;
}

/** Enough rows that the job is still running a second after it starts. */
const IMPORT_ROWS = 100_000;

/** Uploads a CSV of contacts and starts its import. */
async function startImport(port: number, token: string, prefix: string): Promise<ImportJob> {
  const lines = Array.from({ length: IMPORT_ROWS }, (_, i) => `${prefix}-${i},Imported ${i},${prefix}${i}@example.com`);
  const file = await api(
    port,
    token,
    'POST',
    '/v1/files',
    `external_id,display_name,email\n${lines.join('\n')}\n`,
    'text/csv',
  );
  const body = JSON.stringify({ file_id: file.id });
  const job = await api(port, token, 'POST', '/v1/contacts/imports', body, 'application/json');
  return { id: job.id, prefix };
}

/** Every request sent before the signal got its whole response; most were still in flight then. */
function expectAllAnswered(outcomes: Outcome[], signalAt: number) {
  const sentBefore = outcomes.filter((o) => o.sentAt < signalAt);
  const failed = sentBefore.filter((o) => o.error || (o.status !== 200 && o.status !== 206));
  expect(failed.map((o) => `${o.error ?? o.status} sent ${o.sentAt - signalAt} done ${o.doneAt! - signalAt}`)).toEqual(
    [],
  );
  expect(sentBefore.filter((o) => o.doneAt! > signalAt).length).toBeGreaterThanOrEqual(16);
}

// ---------------------------------------------------------------------------------------------

describe('the server process', () => {
  let data: Data;

  beforeAll(async () => {
    data = await createData();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(started.map(killServer));
    await data?.drop();
  }, 60_000);

  describe('with small timeouts', () => {
    let server: Spawned;

    beforeAll(async () => {
      server = await startServer(data, SMALL_TIMEOUTS);
    }, 120_000);
    describe.concurrent('refused before the app: the contract body, a Request-Id, the connection closed', () => {
      it('a 1 MiB URL is 431', async () => {
        const response = await rawRequest(server.port, [
          `GET /api/v1/contact?q=${'a'.repeat(1024 * 1024)} HTTP/1.1\r\n`,
        ]);
        const body = expectContractError(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
        expect(body.message).toMatch(/larger than \d+ bytes/);
      });

      it('10,000 headers are 431', async () => {
        const headers = Array.from({ length: 10_000 }, (_, i) => `X-Header-${i}: ${i}\r\n`).join('');
        const response = await rawRequest(server.port, [`GET /health HTTP/1.1\r\nHost: x\r\n${headers}\r\n`]);
        expectContractError(response, 431, 'REQUEST_HEADER_FIELDS_TOO_LARGE');
      });

      it.each([
        ['Content-Length: abc', 'Content-Length: abc\r\n'],
        ['two Content-Length headers', 'Content-Length: 2\r\nContent-Length: 3\r\n'],
        ['Content-Length with Transfer-Encoding', 'Content-Length: 2\r\nTransfer-Encoding: chunked\r\n'],
        ['a negative Content-Length', 'Content-Length: -1\r\n'],
      ])('a lying Content-Length is 400: %s', async (_name, header) => {
        const response = await rawRequest(server.port, [
          `POST /api/v1/calendar HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${header}\r\n{}`,
        ]);
        const body = expectContractError(response, 400, 'INVALID_REQUEST');
        expect(body.message).toMatch(/Content-Length|Transfer-Encoding/);
      });

      it('raw UTF-8 in the request line is 400 and says to percent-encode the URL', async () => {
        const response = await rawRequest(server.port, [
          Buffer.from('GET /api/v1/contact?city=eq.Zürich HTTP/1.1\r\nHost: x\r\n\r\n', 'utf8'),
        ]);
        const body = expectContractError(response, 400, 'INVALID_REQUEST');
        expect(body.message).toMatch(/percent-encode/);
      });

      it('a body that stops arriving is cut off with 408 after BODY_TIMEOUT_MS of silence', async () => {
        const response = await rawRequest(server.port, [
          `POST /api/v1/calendar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"display_',
        ]);
        const body = expectContractError(response, 408, 'REQUEST_TIMEOUT');
        expect(body.is_transient).toBe(true);
        expect(response.ms).toBeGreaterThan(900);
        expect(response.ms).toBeLessThan(2500);
      });

      it('a body that trickles in is cut off with 408 after REQUEST_TIMEOUT_MS', async () => {
        const response = await rawRequest(
          server.port,
          [
            `POST /api/v1/calendar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
              'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n',
            ...Array.from({ length: 30 }, () => ' '),
          ],
          { gapMs: 300, waitMs: 8000 },
        );
        expectContractError(response, 408, 'REQUEST_TIMEOUT');
        expect(response.ms).toBeGreaterThan(2900);
        expect(response.ms).toBeLessThan(5000);
      });

      it('headers that never end are cut off with 408 after HEADERS_TIMEOUT_MS', async () => {
        const response = await rawRequest(
          server.port,
          ['GET /health HTTP/1.1\r\nHost: x\r\n', ...Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: 1\r\n`)],
          { gapMs: 200, waitMs: 8000 },
        );
        expectContractError(response, 408, 'REQUEST_TIMEOUT');
        expect(response.ms).toBeLessThan(2500);
      });

      it('a connection that sends nothing is closed after HEADERS_TIMEOUT_MS', async () => {
        const response = await rawRequest(server.port, [], { waitMs: 8000 });
        expect(response.closed).toBe(true);
        expect(response.ms).toBeLessThan(2500);
      });

      it('a declared 100 MB body is 413 at once, and the connection closes without reading it', async () => {
        const response = await rawRequest(
          server.port,
          [
            `POST /api/v1/calendar HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${server.token}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${100 * 1024 * 1024}\r\n\r\n`,
          ],
          { stream: Buffer.alloc(64 * 1024, 0x20) },
        );
        expectContractError(response, 413, 'PAYLOAD_TOO_LARGE');
        expect(response.firstByteMs).toBeLessThan(1000);
        expect(response.ms).toBeLessThan(4000);
        // Unread bytes still fill the kernel's buffers on both ends (up to 36 MB on loopback here).
        expect(response.streamed).toBeLessThan(Math.min(socketBuffers(), 60 * 1024 * 1024));
      });

      it('a normal request on the same server keeps its connection alive', async () => {
        const response = await rawRequest(server.port, ['GET /health HTTP/1.1\r\nHost: x\r\n\r\n'], { waitMs: 500 });
        expect(response.status).toBe(200);
        expect(response.headers['request-id']).toMatch(UUID);
        expect(response.closed).toBe(false);
      });
    });

    it('QUERY passes through Node’s HTTP server to the API', async () => {
      const res = await fetch(`http://127.0.0.1:${server.port}/api/v1/contact?select=id`, {
        method: 'QUERY',
        headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'limit=2',
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as unknown[]).length).toBe(2);
    });

    it('an idle server exits 0 at once on SIGTERM', async () => {
      const { exit, ms } = await stopWith(server, 'SIGTERM');
      expect(exit).toEqual({ code: 0, signal: null });
      expect(ms).toBeLessThan(5000);
    });
  });

  // The default timeouts: PGlite's work in the event loop may outlast small ones.
  describe('under load', () => {
    let server: Spawned;

    beforeAll(async () => {
      // Time for the import to start before the probes' headers end (Node's keep-alive timer runs
      // until a request's headers are complete).
      server = await startServer(data, { HEADERS_TIMEOUT_MS: '60000', KEEP_ALIVE_TIMEOUT_MS: '60000' });
    }, 120_000);
    it('SIGTERM: requests in flight answered, /ready 503, the import job back in the queue, exit 0', async () => {
      const { port, token } = server;
      // Rows to read, and an import long enough to be running when the signal comes.
      const items = Array.from({ length: 500 }, (_, i) => ({
        display_name: `Reader ${i}`,
        email: `r${i}@example.com`,
      }));
      await api(port, token, 'POST', '/v1/contacts/imports/batch', JSON.stringify({ items }), 'application/json');

      // The load's connections open first, as a balancer's pool would: PGlite's work in the event
      // loop may keep a connection opened at the signal in the listen queue until the listener closes.
      let signalAt = Number.POSITIVE_INFINITY;
      const load = keepLoaded(port, token, 32, () => signalAt);
      while (load.outcomes.length < 64) await sleep(50);
      // Requests whose headers are half sent across the signal: in flight, they are answered while draining.
      const [ready, health] = await Promise.all([openProbe(port, '/ready'), openProbe(port, '/health')]);
      ready.begin();
      health.begin();

      const job = await startImport(port, token, 'first');
      // A few batches in (on PGlite the job holds the database between them, so its progress
      // cannot be asked meanwhile).
      await sleep(1000);

      signalAt = performance.now();
      const stopped = stopWith(server, 'SIGTERM');
      // The server has seen the signal once it refuses connections (PGlite may keep it busy a while).
      while (await accepts(port)) await sleep(50);
      const [readyAnswer, healthAnswer] = [ready.end(), health.end()];
      const { exit, ms } = await stopped;
      await load.stop();

      expect(exit, 'the server did not exit within 20 s').toEqual({ code: 0, signal: null });
      expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      expectAllAnswered(load.outcomes, signalAt);

      const readyResponse = await readyAnswer;
      expectContractError(readyResponse, 503, 'SHUTTING_DOWN');
      expect(readyResponse.headers['retry-after']).toBeDefined();
      const healthResponse = await healthAnswer;
      expect(healthResponse.status).toBe(200);
      expect(healthResponse.headers.connection).toBe('close');

      // The batch in hand was committed with its progress, and the job waits for another process.
      const state = await data.importState(job);
      expect(state.status).toBe('queued');
      expect(state.processed).toBeGreaterThan(0);
      expect(state.processed).toBeLessThan(IMPORT_ROWS);
      expect(state.imported).toBe(state.processed);
    }, 60_000);
  });

  // On PostgreSQL even when the suite runs on PGlite, which serves one process.
  describe('WORKERS=2', () => {
    let pg: Data;
    beforeAll(async () => {
      pg = onPostgres ? data : await createData(true);
    }, 120_000);
    afterAll(async () => {
      if (pg !== data) await pg?.drop();
    });

    it('SIGTERM reaches every worker; each drains as one process does; then the primary exits 0', async () => {
      const server = await startServer(pg, { WORKERS: '2' });
      let signalAt = Number.POSITIVE_INFINITY;
      const load = keepLoaded(server.port, server.token, 32, () => signalAt);
      const job = await startImport(server.port, server.token, 'second');
      await sleep(1000);
      signalAt = performance.now();
      const { exit, ms } = await stopWith(server, 'SIGTERM');
      await load.stop();
      expect(exit).toEqual({ code: 0, signal: null });
      expect(ms).toBeLessThan(SHUTDOWN_TIMEOUT_MS);
      expectAllAnswered(load.outcomes, signalAt);
      // No worker outlives the primary: the job is back in the queue, not running on.
      const state = await pg.importState(job);
      expect(state.status).toBe('queued');
      expect(state.imported).toBe(state.processed);
    }, 120_000);
  });
});
