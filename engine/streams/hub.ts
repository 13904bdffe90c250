/**
 * One process's streams of changes: a single loop reads the change log (compile/changes.ts) once
 * per poll for every open stream, asks PostgreSQL in one statement which changed rows each distinct
 * query lets through (its tenant, filters and projection, as its GET would), and writes each
 * stream its events. A stream that starts behind the loop (resumed, or from an older read) first
 * reads its own table's changes up to where the loop is, then joins it.
 */
import {
  type ChangeRow,
  compileActiveTokens,
  compileChangesAfter,
  compileMatches,
  compilePrune,
  type StreamQuery,
} from '../compile/changes.ts';
import type { Scope } from '../compile/scope.ts';
import type { Database } from '../db/port.ts';
import { ApiError } from '../errors.ts';
import type { Resource } from '../registry/index.ts';
import { advance, formatPosition, includes, type Position } from './position.ts';

export interface StreamOptions {
  /** Seconds between `: ping` comments on every stream (STREAM_HEARTBEAT_S, default 15). */
  readonly heartbeatSeconds?: number;
  /** Seconds between checks that each stream's token still authorizes (STREAM_REAUTH_S, default 30). */
  readonly reauthSeconds?: number;
  /** Open streams per tenant in this process (STREAM_MAX_PER_TENANT, default 100); past it, 429. */
  readonly maxPerTenant?: number;
  /** Hours changes are kept for streams to resume from (CHANGES_RETENTION_HOURS, default 24). */
  readonly retentionHours?: number;
  /** Milliseconds between reads of the change log while streams are open (default 100). */
  readonly pollMs?: number;
  /** Bytes of events a stream may hold unread before it is cut off (default 1 MiB); the client resumes. */
  readonly bufferBytes?: number;
}

/** What the hub needs of its engine. */
export interface HubContext {
  readonly db: Database;
  /** The table of built-in tokens, or null without them. */
  readonly tokens: string | null;
  /** Runs a statement of the hub's, observed as the engine's are. */
  readonly observe: <T>(run: () => Promise<T>) => Promise<T>;
  /** Told of each event sent, with the milliseconds since its change was written. */
  readonly onEvent?: (lagMs: number) => void;
  /** Told when a read of the log, a check of tokens or a prune fails (each is tried again). */
  readonly onError?: (task: string, error: unknown) => void;
}

/** A stream as the hub keeps it. */
interface Subscriber {
  readonly query: StreamQuery;
  /** Streams with the same key share their evaluation: same resource, tenant and query. */
  readonly key: string;
  readonly scope: Scope | undefined;
  readonly tenantKey: string;
  position: Position;
  /** The last position the client was told. */
  told: string;
  /** Whether it has read up to where the loop is. */
  live: boolean;
  controller: ReadableStreamDefaultController<Uint8Array>;
}

/** Changes read per statement. */
const BATCH = 1000;
/** Changes pruned per statement. */
const PRUNE_BATCH = 10_000;
const PRUNE_EVERY_MS = 5 * 60_000;
const encoder = new TextEncoder();

/** SSE `data:` lines: a line break in the text starts another `data:` line, which clients join back. */
const dataLines = (text: string) => `data: ${text.replace(/\r\n|\r|\n/g, '\ndata: ')}\n`;

interface Change {
  readonly xid: bigint;
  readonly seq: bigint;
  readonly row: ChangeRow;
  /** When it was read, to tell its lag when sent. */
  readonly read: number;
}

export class StreamHub {
  readonly #subscribers = new Set<Subscriber>();
  readonly #perTenant = new Map<string, number>();
  /** Where the loop is: every change at or before it has been read for the live streams. */
  #at: { xid: bigint; seq: bigint } | null = null;
  #timer: NodeJS.Timeout | null = null;
  #running = false;
  #again = false;
  #closed = false;
  readonly #intervals: NodeJS.Timeout[] = [];
  #sent = 0;

  readonly heartbeatMs: number;
  readonly reauthMs: number;
  readonly maxPerTenant: number;
  readonly retentionHours: number;
  readonly pollMs: number;
  readonly bufferBytes: number;

  constructor(
    readonly ctx: HubContext,
    options: StreamOptions,
  ) {
    this.heartbeatMs = (options.heartbeatSeconds ?? 15) * 1000;
    this.reauthMs = (options.reauthSeconds ?? 30) * 1000;
    this.maxPerTenant = options.maxPerTenant ?? 100;
    this.retentionHours = options.retentionHours ?? 24;
    this.pollMs = options.pollMs ?? 100;
    this.bufferBytes = options.bufferBytes ?? 1024 * 1024;
  }

  /** Open streams, and events sent since the start. */
  stats(): { open: number; sent: number } {
    return { open: this.#subscribers.size, sent: this.#sent };
  }

  /**
   * Starts the timers, once: pruning changes past their retention, heartbeats, checks of tokens. The
   * first stream or write of the process starts them, so every process that serves prunes.
   */
  #start(): void {
    if (this.#closed || this.#intervals.length > 0) return;
    this.#every(PRUNE_EVERY_MS, () => void this.#prune());
    this.#every(this.heartbeatMs, () => this.#heartbeat());
    this.#every(this.reauthMs, () => void this.#reauthorize());
    void this.#prune();
  }

  #every(ms: number, run: () => void): void {
    const timer = setInterval(run, ms);
    timer.unref();
    this.#intervals.push(timer);
  }

  /** Deletes changes past their retention, a bounded batch per statement. */
  async #prune(): Promise<void> {
    try {
      for (;;) {
        const statement = compilePrune(this.retentionHours, PRUNE_BATCH);
        const rows = await this.ctx.observe(() =>
          this.ctx.db.query<{ pruned: number }>(statement.text, statement.params),
        );
        if ((rows[0]?.pruned ?? 0) < PRUNE_BATCH || this.#closed) return;
      }
    } catch (error) {
      if (!this.#closed) this.ctx.onError?.('prune', error);
    }
  }

  /**
   * A stream of `query` from `position` for the caller's tenant (`tenantKey`, '' without tenancy):
   * its body, written to until the client goes or the hub closes.
   */
  open(query: StreamQuery, key: string, scope: Scope | undefined, position: Position, tenantKey: string) {
    if (this.#closed) throw new ApiError('DATABASE_UNAVAILABLE', 'the server is shutting down: reconnect');
    const open = this.#perTenant.get(tenantKey) ?? 0;
    if (open >= this.maxPerTenant) {
      throw new ApiError(
        'RATE_LIMITED',
        `this tenant has ${open} streams open on this server, the most it may: close one before opening another`,
      );
    }
    this.#perTenant.set(tenantKey, open + 1);
    const told = formatPosition(position);
    const subscriber = { query, key, scope, tenantKey, position, told, live: false } as Subscriber;
    const body = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          subscriber.controller = controller;
          // The reconnection delay, and the position to resume from before any event arrives.
          controller.enqueue(encoder.encode(`retry: 3000\nid: ${told}\n\n`));
        },
        cancel: () => this.#remove(subscriber),
      },
      new ByteLengthQueuingStrategy({ highWaterMark: this.bufferBytes }),
    );
    this.#subscribers.add(subscriber);
    this.poke();
    return body;
  }

  /** Reads the log soon: a write of this process has committed, or a stream has opened. */
  poke(): void {
    this.#start();
    if (this.#subscribers.size === 0 || this.#closed) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#run(), 0);
  }

  /** Ends every stream (a client resumes elsewhere with Last-Event-ID) and stops the loop. */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    for (const timer of this.#intervals) clearInterval(timer);
    for (const subscriber of [...this.#subscribers]) this.#end(subscriber);
  }

  #remove(subscriber: Subscriber): void {
    if (!this.#subscribers.delete(subscriber)) return;
    const left = (this.#perTenant.get(subscriber.tenantKey) ?? 1) - 1;
    if (left > 0) this.#perTenant.set(subscriber.tenantKey, left);
    else this.#perTenant.delete(subscriber.tenantKey);
    if (this.#subscribers.size === 0) this.#at = null;
  }

  /** Ends a stream: what it holds is still sent, then the response ends. */
  #end(subscriber: Subscriber): void {
    this.#remove(subscriber);
    try {
      subscriber.controller.close();
    } catch {
      // Already closed or cancelled by the client.
    }
  }

  /** Writes to a stream; past its buffer (a client that does not read), the stream is cut off. */
  #write(subscriber: Subscriber, text: string): void {
    if (!this.#subscribers.has(subscriber)) return;
    try {
      subscriber.controller.enqueue(encoder.encode(text));
    } catch {
      this.#remove(subscriber);
      return;
    }
    if ((subscriber.controller.desiredSize ?? 0) < 0) {
      this.#remove(subscriber);
      subscriber.controller.error(new Error('the client read too slowly: it resumes with Last-Event-ID'));
    }
  }

  #heartbeat(): void {
    for (const subscriber of [...this.#subscribers]) {
      const at = formatPosition(subscriber.position);
      const id = at === subscriber.told ? '' : `id: ${at}\n`;
      subscriber.told = at;
      this.#write(subscriber, `: ping\n${id}\n`);
    }
  }

  /** Ends the streams whose built-in token no longer authorizes (revoked or expired). */
  async #reauthorize(): Promise<void> {
    if (this.ctx.tokens === null) return;
    const byToken = [...this.#subscribers].filter((s) => s.scope && 'tokenHash' in s.scope);
    if (byToken.length === 0) return;
    const hashes = [...new Set(byToken.map((s) => (s.scope as { tokenHash: string }).tokenHash))];
    try {
      const statement = compileActiveTokens(this.ctx.tokens, hashes);
      const rows = await this.ctx.observe(() => this.ctx.db.query<{ hash: string }>(statement.text, statement.params));
      const active = new Set(rows.map((r) => r.hash));
      for (const s of byToken) if (!active.has((s.scope as { tokenHash: string }).tokenHash)) this.#end(s);
    } catch (error) {
      if (!this.#closed) this.ctx.onError?.('reauthorize', error);
    }
  }

  async #run(): Promise<void> {
    this.#timer = null;
    this.#running = true;
    let more = false;
    try {
      more = await this.#tick();
    } catch (error) {
      if (!this.#closed) this.ctx.onError?.('stream', error);
    } finally {
      this.#running = false;
    }
    if (this.#closed || this.#subscribers.size === 0) return;
    const delay = more || this.#again ? 0 : this.pollMs;
    this.#again = false;
    this.#timer = setTimeout(() => void this.#run(), delay);
    this.#timer.unref();
  }

  async #read(
    after: { xid: bigint; seq: bigint },
    tables: readonly string[],
    options: { tenant?: string; through?: { xid: bigint; seq: bigint }; limit: number },
  ): Promise<{ watermark: bigint; changes: Change[] }> {
    const text = (p: { xid: bigint; seq: bigint }) => ({ xid: String(p.xid), seq: String(p.seq) });
    const statement = compileChangesAfter(text(after), tables, {
      ...options,
      through: options.through && text(options.through),
    });
    const rows = await this.ctx.observe(() => this.ctx.db.query<ChangeRow>(statement.text, statement.params));
    const read = performance.now();
    const changes = rows
      .filter((row) => row.xid !== null)
      .map((row) => ({ xid: BigInt(row.xid!), seq: BigInt(row.seq!), row, read }));
    return { watermark: BigInt(rows[0]!.watermark), changes };
  }

  /** One read of the log: streams behind catch up, then the live ones get what is new. Whether more is waiting. */
  async #tick(): Promise<boolean> {
    if (this.#subscribers.size === 0) return false;
    if (this.#at === null)
      this.#at = { xid: (await this.#read({ xid: 0n, seq: 0n }, [], { limit: 0 })).watermark, seq: 0n };
    const at = this.#at;
    let more = false;
    for (const subscriber of [...this.#subscribers]) {
      if (subscriber.live) continue;
      const { position, query } = subscriber;
      const { changes } = await this.#read(position, [tableOf(subscriber)], {
        tenant: query.tenant ?? undefined,
        through: at,
        limit: BATCH,
      });
      await this.#deliver(changes, [subscriber]);
      if (changes.length < BATCH) {
        subscriber.position = advance(subscriber.position, at.xid, at.seq);
        subscriber.live = true;
      } else more = true;
    }
    const live = [...this.#subscribers].filter((s) => s.live);
    if (live.length === 0) return more;
    const tables = [...new Set(live.map(tableOf))];
    const { watermark, changes } = await this.#read(at, tables, { limit: BATCH });
    await this.#deliver(changes, live);
    const last = changes.at(-1);
    const next = changes.length === BATCH ? last! : { xid: watermark, seq: 0n };
    const moved = next.xid > at.xid || (next.xid === at.xid && next.seq > at.seq) ? next : at;
    // The last stream may have gone meanwhile, and the loop with it.
    if (this.#at !== null) this.#at = { xid: moved.xid, seq: moved.seq };
    for (const s of live) s.position = advance(s.position, moved.xid, moved.seq);
    return more || changes.length === BATCH;
  }

  /** Sends each stream the events of `changes` (in log order) its query lets through. */
  async #deliver(changes: readonly Change[], subscribers: readonly Subscriber[]): Promise<void> {
    const versions: string[] = [];
    const queries = new Map<string, { query: StreamQuery; versions: number[] }>();
    const plans: { change: Change; old: number; new: number; to: Subscriber[] }[] = [];
    // The streams a change may reach, by its table and tenant; a shared resource's by its table alone.
    const reached = new Map<string, Subscriber[]>();
    for (const s of subscribers) {
      const at = s.query.tenant === null ? tableOf(s) : `${tableOf(s)}\n${s.query.tenant}`;
      const list = reached.get(at);
      if (list) list.push(s);
      else reached.set(at, [s]);
    }
    for (const change of changes) {
      const { row } = change;
      const to = [...(reached.get(`${row.table}\n${row.tenant}`) ?? []), ...(reached.get(row.table!) ?? [])].filter(
        (s) => !includes(s.position, change.xid, change.seq),
      );
      if (to.length === 0) continue;
      const old = row.old === null ? 0 : versions.push(row.old);
      const now = row.new === null ? 0 : versions.push(row.new);
      for (const s of to) {
        const q = queries.get(s.key) ?? { query: s.query, versions: [] };
        queries.set(s.key, q);
        if (old) q.versions.push(old);
        if (now) q.versions.push(now);
      }
      plans.push({ change, old, new: now, to });
    }
    if (plans.length > 0) {
      const keys = [...queries.keys()];
      const statement = compileMatches(versions, [...queries.values()]);
      const rows = await this.ctx.observe(() =>
        this.ctx.db.query<{ q: number; k: number; body: string | null }>(statement.text, statement.params),
      );
      const bodies = new Map(rows.map((r) => [`${keys[r.q]}\n${r.k}`, r.body]));
      // Each stream's events of this batch go out in one write.
      const out = new Map<Subscriber, string>();
      for (const { change, old, new: now, to } of plans) {
        let key: string | undefined;
        for (const s of to) {
          if (!this.#subscribers.has(s)) continue;
          const before = old ? (bodies.get(`${s.key}\n${old}`) ?? null) : null;
          const after = now ? (bodies.get(`${s.key}\n${now}`) ?? null) : null;
          s.position = advance(s.position, change.xid, change.seq);
          const type = before && after ? 'update' : after ? 'insert' : before ? 'delete' : null;
          if (type === null) continue;
          key ??= JSON.stringify(keyOf(s.query.plan.resource, change.row));
          const data = `{"type":"${type}","key":${key}${after ? `,"record":${after}` : ''}}`;
          const id = formatPosition(s.position);
          s.told = id;
          out.set(s, `${out.get(s) ?? ''}id: ${id}\nevent: ${type}\n${dataLines(data)}\n`);
          this.#sent++;
          this.ctx.onEvent?.((change.row.age ?? 0) + performance.now() - change.read);
        }
      }
      for (const [s, text] of out) this.#write(s, text);
    }
    const last = changes.at(-1);
    if (last) for (const s of subscribers) s.position = advance(s.position, last.xid, last.seq);
  }
}

/** The table a stream follows. */
const tableOf = (s: Subscriber) => s.query.plan.resource.table;

/** The key of a changed row, by the resource's key fields. */
function keyOf(resource: Resource, row: ChangeRow): Record<string, unknown> {
  const values = JSON.parse((row.new ?? row.old)!) as Record<string, unknown>;
  return Object.fromEntries(resource.key.map((f) => [f.name, values[f.name]]));
}
