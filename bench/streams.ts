/**
 * Streams of changes at scale: `subscribers` streams open on one Engage process (the large
 * organisation's users, spread over ten distinct queries of its deals), while a writer PATCHes one
 * deal after another at a steady rate. Measures the lag from a change's request to each event that
 * shows it (p50, p99: from before the PATCH is sent, so the PATCH's own time is in it), and the CPU
 * that PostgreSQL and Engage spend per change over the writing window, less what they spend in as
 * long a window without changes: the write itself, its trigger, the reads of the change log that
 * find it and the evaluation of the queries.
 */
import type { ChildProcess } from 'node:child_process';
import postgres from 'postgres';
import { CLK_TCK, postgresTicks, spent, treeTicks } from './cpu.ts';

export interface StreamRun {
  readonly subscribers: number;
  readonly changes: number;
  readonly events: number;
  readonly lagP50Ms: number;
  readonly lagP99Ms: number;
  /** CPU microseconds per change over the writing window. */
  readonly dbUsPerChange: number;
  readonly nodeUsPerChange: number;
}

/** Distinct queries the subscribers hold: each change leaves one and enters another. */
const QUERIES = 10;

const percentile = (xs: number[], p: number) =>
  xs.length === 0 ? 0 : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

/** One stream held open, counting its events and their lag (from the `sent` time of the change they show). */
function follow(url: string, token: string, sent: Map<number, number>, lags: number[], abort: AbortSignal) {
  let events = 0;
  const opened = fetch(url, {
    headers: { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' },
    signal: abort,
  }).then(async (res) => {
    if (res.status !== 200) throw new Error(`a stream answered ${res.status}: ${await res.text()}`);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    return async () => {
      let buffer = '';
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return;
          buffer += value;
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const seq = /"name":"bench \d+ (\d+)"/.exec(block)?.[1];
            if (seq !== undefined) {
              events++;
              const at = sent.get(Number(seq));
              if (at !== undefined) lags.push(performance.now() - at);
            }
            end = buffer.indexOf('\n\n');
          }
        }
      } catch {
        // aborted at the end of the run
      }
    };
  });
  return { opened, events: () => events };
}

export async function streamsRun(options: {
  readonly base: string;
  readonly dbUrl: string;
  readonly organisation: { id: string; token: string };
  readonly engage: ChildProcess | undefined;
  readonly subscribers: number;
  readonly changesPerSecond: number;
  readonly seconds: number;
}): Promise<StreamRun> {
  const { base, organisation, subscribers } = options;
  const sql = postgres(options.dbUrl, { max: 1, onnotice: () => {} });
  const deals = (await sql`SELECT id::text FROM deal WHERE organisation_id = ${organisation.id} LIMIT 1000`).map(
    (r) => r.id as string,
  );
  await sql.end();
  const sent = new Map<number, number>();
  const lags: number[] = [];
  const abort = new AbortController();
  const streams = Array.from({ length: subscribers }, (_, i) =>
    follow(
      `${base}/api/v1/deal?select=id,name,value&name=like.bench%20${i % QUERIES}%20*`,
      organisation.token,
      sent,
      lags,
      abort.signal,
    ),
  );
  const readers = await Promise.all(streams.map((s) => s.opened));
  const reading = readers.map((read) => read());
  // Every stream is open and has caught up before the window starts.
  await new Promise((resolve) => setTimeout(resolve, 1000));

  const total = options.changesPerSecond * options.seconds;
  // What the database and Engage spend meanwhile without changes (the streams' polls, the workers'):
  // taken off, so that what is left is what the changes cost.
  const [idleDb, idleNode] = [postgresTicks(), treeTicks(options.engage?.pid)];
  await new Promise((resolve) => setTimeout(resolve, (options.seconds + 1) * 1000));
  const idle = {
    db: spent(idleDb, postgresTicks()),
    node: spent(idleNode, treeTicks(options.engage?.pid)),
  };
  const [db, node] = [postgresTicks(), treeTicks(options.engage?.pid)];
  const start = performance.now();
  for (let seq = 0; seq < total; seq++) {
    const due = start + (seq * 1000) / options.changesPerSecond;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    sent.set(seq, performance.now());
    const res = await fetch(`${base}/api/v1/deal?id=eq.${deals[seq % deals.length]}`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${organisation.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: `bench ${seq % QUERIES} ${seq}`, value: seq % 1000 }),
    });
    if (res.status !== 204) throw new Error(`a change answered ${res.status}: ${await res.text()}`);
  }
  // The last events arrive; the CPU they cost is in the window.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const [dbAfter, nodeAfter] = [postgresTicks(), treeTicks(options.engage?.pid)];
  abort.abort();
  await Promise.all(reading);
  const perChange = (ticks: number, idleTicks: number) =>
    Math.max(0, Math.round((((ticks - idleTicks) / CLK_TCK) * 1e6) / total));
  return {
    subscribers,
    changes: total,
    events: streams.reduce((sum, s) => sum + s.events(), 0),
    lagP50Ms: Math.round(percentile(lags, 0.5)),
    lagP99Ms: Math.round(percentile(lags, 0.99)),
    dbUsPerChange: perChange(spent(db, dbAfter), idle.db),
    nodeUsPerChange: perChange(spent(node, nodeAfter), idle.node),
  };
}
