/**
 * The postgres.js port sends a statement to an idle single-connection client or pipelines it behind
 * young statements, never behind a slow one nor behind a transaction pooler, and behind a write
 * only its own lane's; a transaction has its client to itself; the rest wait per lane (organisation) with a bounded wait and length, lanes
 * served in turn, one lane on at most half the clients. Statements are prepared from their second
 * use on, and a client that has prepared too many, or whose connection broke, is replaced.
 * postgres.js is replaced by a recorder so this can be watched without a server.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { PoolBusy } from '../db/admission.ts';

interface FakeClient {
  readonly index: number;
  readonly options: Record<string, unknown>;
  /** Statements in flight, released by the test in order. */
  readonly pending: Array<() => void>;
  /** The text and `prepare` option of each statement sent. */
  readonly sent: Array<{ text: string; prepare: boolean }>;
  /** Fails the statement in flight, as the driver does when its connection breaks. */
  reject: (error: Error) => void;
  ended: boolean;
  /** Between a BEGIN the test released and its COMMIT or ROLLBACK. */
  inTransaction: boolean;
}

const clients: FakeClient[] = [];

vi.mock('postgres', () => ({
  default: (_url: string, options: Record<string, unknown>) => {
    const client: FakeClient = {
      index: clients.length,
      options,
      pending: [],
      sent: [],
      reject: () => {},
      ended: false,
      inTransaction: false,
    };
    clients.push(client);
    const hold = (text: string, _params: unknown, options: { prepare: boolean }) => {
      client.sent.push({ text, prepare: options.prepare });
      return new Promise<unknown[]>((resolve, reject) => {
        client.reject = reject;
        client.pending.push(() => resolve([{ client: client.index }]));
      });
    };
    // A transaction is one step the test releases (its BEGIN); what runs inside it is answered at once.
    const unsafe = (text: string, params?: unknown, options = { prepare: false }) => {
      if (text === 'BEGIN') {
        return new Promise<unknown[]>((resolve) =>
          client.pending.push(() => {
            client.inTransaction = true;
            resolve([]);
          }),
        );
      }
      if (!client.inTransaction) return hold(text, params, options);
      if (text === 'COMMIT' || text === 'ROLLBACK') client.inTransaction = false;
      return Promise.resolve([{ client: client.index }]);
    };
    return {
      unsafe,
      end: async () => {
        client.ended = true;
      },
    };
  },
}));

const { connectPostgres, MAX_PREPARED } = await import('../db/postgres.ts');

/** Lets the port's promise chains run (admission hands a freed client over asynchronously). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const release = async (index: number) => {
  clients[index]!.pending.shift()!();
  await settle();
};
const inFlight = () => clients.map((c) => c.pending.length);
/** Past the port's YOUNG_MS: statements in flight this long count as slow. */
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

beforeEach(() => {
  clients.length = 0;
});

describe('postgres.js pool', () => {
  it('opens poolSize clients of one connection each, with the session settings', () => {
    connectPostgres('postgres://x/db', { poolSize: 3, statementTimeoutMs: 250 });
    expect(clients).toHaveLength(3);
    for (const c of clients) {
      expect(c.options).toMatchObject({
        max: 1,
        connection: {
          TimeZone: 'UTC',
          statement_timeout: '250',
          lock_timeout: '3000',
          application_name: 'engage',
          enable_seqscan: 'off',
          max_parallel_workers_per_gather: '0',
          jit: 'off',
        },
      });
    }
  });

  it('sends a statement to an idle client, else pipelines it on the least loaded one', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2 });
    const first = [db.query('a'), db.query('b'), db.query('c')];
    await settle();
    expect(inFlight()).toEqual([2, 1]);
    await release(1);
    expect(await first[1]).toEqual([{ client: 1 }]);
    const next = db.query('d');
    await settle();
    expect(inFlight()).toEqual([2, 1]);
    await release(0);
    await release(0);
    await release(1);
    expect(await Promise.all([...first, next])).toEqual([
      [{ client: 0 }],
      [{ client: 1 }],
      [{ client: 0 }],
      [{ client: 1 }],
    ]);
  });

  it('behind a transaction pooler (prepare: false) pipelines nothing: a statement waits for an idle client', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2, prepare: false });
    const all = [db.query('a'), db.query('b'), db.query('c')];
    await settle();
    expect(inFlight()).toEqual([1, 1]);
    await release(0);
    expect(inFlight()).toEqual([1, 1]);
    await release(1);
    await release(0);
    expect(await Promise.all(all)).toEqual([[{ client: 0 }], [{ client: 1 }], [{ client: 0 }]]);
  });

  it('pipelines nothing behind a statement known to be slow: the next waits for a free client', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2 });
    const slow = [db.query('a'), db.query('b')];
    await settle();
    await sleep(60);
    const cheap = db.query('c');
    await settle();
    expect(inFlight()).toEqual([1, 1]);
    await release(1);
    expect(inFlight()).toEqual([1, 1]);
    await release(1);
    expect(await cheap).toEqual([{ client: 1 }]);
    await release(0);
    await Promise.all(slow);
  });

  it('keeps statements off a client whose transaction is open', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2 });
    const tx = db.transaction((q) => q.query('inside'));
    const queries = [db.query('a'), db.query('b')];
    await settle();
    expect(inFlight()).toEqual([1, 2]);
    await release(1);
    await release(1);
    expect(await Promise.all(queries)).toEqual([[{ client: 1 }], [{ client: 1 }]]);
    await release(0);
    expect(await tx).toEqual([{ client: 0 }]);
  });

  it("pipelines a write, and behind it only its own lane's statements while no other lane waits", async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2 });
    const sent = () => clients.map((c) => c.sent.map((x) => x.text));
    const all = [db.query('a', [], 'other'), db.query('UPDATE 1', [], 'org', true), db.query('b', [], 'other')];
    // Behind the write: a read and a write of its own lane; a write also goes behind another lane's reads.
    all.push(db.query('c', [], 'org'), db.query('UPDATE 2', [], 'org', true));
    await settle();
    expect(sent()).toEqual([
      ['a', 'b', 'UPDATE 2'],
      ['UPDATE 1', 'c'],
    ]);
    // Both clients hold org's writes: another lane waits, and while it does org's statements wait too.
    all.push(db.query('d', [], 'other'), db.query('e', [], 'org'));
    await settle();
    expect(inFlight()).toEqual([3, 2]);
    // UPDATE 1 answered: client 1 holds no write, so the waiting lane goes there first, then org.
    await release(1);
    expect(sent()[1]).toEqual(['UPDATE 1', 'c', 'd', 'e']);
    for (const c of clients) while (c.pending.length > 0) await release(c.index);
    expect((await Promise.all(all)).map(([row]) => row)).toEqual([0, 1, 0, 1, 0, 1, 1].map((client) => ({ client })));
  });

  it('gets a waiting transaction a client however steady the pipelined load: one takes nothing new', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2, laneLimit: 2 });
    const load = [db.query('a'), db.query('b')];
    await settle();
    const tx = db.transaction((q) => q.query('inside'));
    await settle();
    // Other organisations' statements keep coming; only client 1 takes them while client 0 drains.
    load.push(db.query('c', [], 'other'), db.query('d', [], 'another'));
    await settle();
    expect(inFlight()).toEqual([1, 3]);
    await release(0);
    // Client 0 is idle: the transaction has it (its BEGIN is in flight there).
    expect(inFlight()).toEqual([1, 3]);
    await release(0);
    expect(await tx).toEqual([{ client: 0 }]);
    for (let i = 0; i < 3; i++) await release(1);
    await Promise.all(load);
  });

  it('frees a client again when its statement fails', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1 });
    const failing = expect(
      db.transaction(async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await settle();
    await release(0);
    await failing;
    const next = db.query('a');
    await settle();
    expect(inFlight()).toEqual([1]);
    await release(0);
    await next;
  });

  it('gives one lane at most half the clients: another lane runs at once while the first waits', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 4 });
    const slow = [1, 2, 3].map(() => db.query('slow', [], 'org-a'));
    await settle();
    // Two clients, the third statement pipelined on one of them.
    expect(inFlight().filter((n) => n > 0)).toHaveLength(2);
    await sleep(60);
    const more = db.query('slow', [], 'org-a');
    const cheap = db.query('cheap', [], 'org-b');
    await settle();
    expect(inFlight().reduce((a, b) => a + b)).toBe(4);
    const cheapClient = clients.findIndex((c) => c.sent.some((s) => s.text === 'cheap'));
    expect(clients[cheapClient]!.sent).toHaveLength(1);
    await release(cheapClient);
    expect(await cheap).toEqual([{ client: cheapClient }]);
    for (const c of clients) while (c.pending.length > 0) await release(c.index);
    await Promise.all([...slow, more]);
  });

  it('serves waiting lanes in turn', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1 });
    const order: string[] = [];
    const run = (lane: string) => db.query(lane, [], lane).then(() => order.push(lane));
    const first = run('a');
    await settle();
    await sleep(60);
    const rest = [run('a'), run('a'), run('b'), run('c'), run('b')];
    for (let i = 0; i < 6; i++) await release(0);
    await Promise.all([first, ...rest]);
    expect(order).toEqual(['a', 'a', 'b', 'c', 'a', 'b']);
  });

  it('refuses a statement that waited longer than the queue timeout, and one past the queue length', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1, queueTimeoutMs: 30, queueMax: 1 });
    const running = db.query('a');
    await settle();
    await sleep(60);
    const waiting = db.query('b').catch((error: unknown) => error);
    await expect(db.query('c')).rejects.toThrow(/1 requests are already waiting/);
    const refused = await waiting;
    expect(refused).toBeInstanceOf(PoolBusy);
    expect((refused as Error).message).toMatch(/no connection became free within 30 ms/);
    // The refused statements never reached the database; the client is free for the next one.
    await release(0);
    await running;
    const next = db.query('d');
    await settle();
    await release(0);
    await next;
    expect(clients[0]!.sent.map((s) => s.text)).toEqual(['a', 'd']);
  });

  it('prepares a statement from its second use on', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1 });
    for (const text of ['a', 'b', 'a', 'a']) {
      const q = db.query(text);
      await settle();
      await release(0);
      await q;
    }
    expect(clients[0]!.sent).toEqual([
      { text: 'a', prepare: false },
      { text: 'b', prepare: false },
      { text: 'a', prepare: true },
      { text: 'a', prepare: true },
    ]);
  });

  it('replaces a client that has prepared MAX_PREPARED statements', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1 });
    const run = async (text: string) => {
      const q = db.query(text);
      await settle();
      await release(clients.length - 1);
      await q;
    };
    for (let i = 0; i <= MAX_PREPARED; i++) {
      await run(`s${i}`);
      await run(`s${i}`);
    }
    expect(clients).toHaveLength(2);
    expect(clients[0]!.ended).toBe(true);
    expect(clients[0]!.sent.filter((s) => s.prepare)).toHaveLength(MAX_PREPARED);
    // The statement past the limit ran unprepared on the old client; the new one prepares afresh.
    expect(clients[0]!.sent.at(-1)).toEqual({ text: `s${MAX_PREPARED}`, prepare: false });
    await run(`s${MAX_PREPARED}`);
    expect(clients[1]!.sent).toEqual([{ text: `s${MAX_PREPARED}`, prepare: true }]);
  });

  it('replaces a client whose connection broke before it serves another statement', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 1 });
    const q = db.query('a');
    await settle();
    // The driver rejects the statement in flight as a backend terminated while idle shows up.
    clients[0]!.pending.length = 0;
    const broken = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    clients[0]!.reject(broken);
    await expect(q).rejects.toBe(broken);
    expect(clients).toHaveLength(2);
    expect(clients[0]!.ended).toBe(true);
    const next = db.query('b');
    await settle();
    await release(1);
    expect(await next).toEqual([{ client: 1 }]);
  });

  it('gives up on a statement owed past the statement timeout and a margin, and replaces the client', async () => {
    vi.useFakeTimers();
    try {
      const db = connectPostgres('postgres://x/db', { poolSize: 1, statementTimeoutMs: 100 });
      const q = db.query('a').catch((error: unknown) => error);
      await vi.advanceTimersByTimeAsync(2099);
      expect(clients).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(await q).toMatchObject({
        code: 'STATEMENT_STALLED',
        message: 'the database gave no answer within 2100 ms',
      });
      expect(clients).toHaveLength(2);
      expect(clients[0]!.ended).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('ends every client on close', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 4 });
    await db.close();
    expect(clients.map((c) => c.ended)).toEqual([true, true, true, true]);
  });
});
