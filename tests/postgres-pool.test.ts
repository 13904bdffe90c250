/**
 * The postgres.js port spreads statements over single-connection clients: each goes to the client
 * with the fewest in flight, and a client holding a transaction is used only when all are.
 * postgres.js is replaced by a recorder so the choice can be watched without a server.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';

interface FakeClient {
  readonly index: number;
  readonly options: Record<string, unknown>;
  readonly pending: Array<() => void>;
  ended: boolean;
}

const clients: FakeClient[] = [];

vi.mock('postgres', () => ({
  default: (_url: string, options: Record<string, unknown>) => {
    const client: FakeClient = { index: clients.length, options, pending: [], ended: false };
    clients.push(client);
    // Every statement stays in flight until the test releases it.
    const hold = () =>
      new Promise<unknown[]>((resolve) => client.pending.push(() => resolve([{ client: client.index }])));
    return {
      unsafe: hold,
      begin: async (fn: (tx: { unsafe: typeof hold }) => Promise<unknown>) => {
        await new Promise<void>((resolve) => client.pending.push(resolve));
        return fn({ unsafe: async () => [{ client: client.index }] });
      },
      end: async () => {
        client.ended = true;
      },
    };
  },
}));

const { connectPostgres } = await import('../engine/db/postgres.ts');

const release = (index: number) => clients[index]!.pending.shift()!();
const inFlight = () => clients.map((c) => c.pending.length);

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
        connection: { TimeZone: 'UTC', statement_timeout: 250, application_name: 'engage' },
      });
    }
  });

  it('sends each statement to the client with the fewest in flight', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 3 });
    const first = [db.query('a'), db.query('b'), db.query('c')];
    expect(inFlight()).toEqual([1, 1, 1]);
    release(1);
    expect(await first[1]).toEqual([{ client: 1 }]);
    const next = db.query('d');
    expect(inFlight()).toEqual([1, 1, 1]);
    release(1);
    expect(await next).toEqual([{ client: 1 }]);
    release(0);
    release(2);
    await Promise.all(first);
  });

  it('keeps statements off a client whose transaction is open while another is free', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2 });
    const tx = db.transaction((q) => q.query('inside'));
    // Client 0 holds the transaction; three statements all go to client 1.
    const queries = [db.query('a'), db.query('b'), db.query('c')];
    expect(inFlight()).toEqual([1, 3]);
    release(0);
    expect(await tx).toEqual([{ client: 0 }]);
    for (let i = 0; i < 3; i++) release(1);
    expect(await Promise.all(queries)).toEqual([[{ client: 1 }], [{ client: 1 }], [{ client: 1 }]]);
    // With the transaction over, the next statement may use client 0 again.
    const after = db.query('d');
    expect(inFlight()).toEqual([1, 0]);
    release(0);
    await after;
  });

  it('frees a client again when its statement fails', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 2 });
    const failing = db.transaction(async () => {
      throw new Error('boom');
    });
    release(0);
    await expect(failing).rejects.toThrow('boom');
    const next = db.query('a');
    expect(inFlight()).toEqual([1, 0]);
    release(0);
    await next;
  });

  it('ends every client on close', async () => {
    const db = connectPostgres('postgres://x/db', { poolSize: 4 });
    await db.close();
    expect(clients.map((c) => c.ended)).toEqual([true, true, true, true]);
  });
});
