/**
 * Webhooks: an organisation registers endpoints (`webhook_endpoint`, whose signing secret only the
 * create shows); every write of a resource with events records one event per row written, in the
 * write's own statement, for each enabled endpoint that names its type; the worker posts each as a
 * Standard Webhooks message (verified here with the `standardwebhooks` package), retries until
 * the receiver accepts it, logs every try, turns off an endpoint whose delivery runs out of
 * retries, and sends a delivery again on request. Private addresses are refused unless allowed.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refused } from '../webhooks/address.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';
import { freePort } from './helpers/ports.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A local receiver: records every post, and answers with the status `answer` gives for its path. */
async function startReceiver() {
  const received: Received[] = [];
  const failures = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body });
      const left = failures.get(path) ?? 0;
      if (left > 0) failures.set(path, left - 1);
      res.writeHead(path.startsWith('/down') || left > 0 ? 500 : 204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    received,
    /** The next `n` posts to `path` fail with 500. */
    failNext: (path: string, n: number) => failures.set(path, n),
    at: (path: string) => received.filter((r) => r.path === path),
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

/** Waits until `check` holds (it may throw meanwhile), for up to 10 s. */
async function eventually<T>(check: () => Promise<T> | T): Promise<T> {
  for (const deadline = Date.now() + 10_000; ; await sleep(25)) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
    }
  }
}

describe('webhooks', () => {
  let t: TestApp;
  let org: Organisation;
  let other: Organisation;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    t = await createTestApp({ worker: true, webhooks: { allowPrivate: true, retrySeconds: [0, 0], timeoutMs: 2000 } });
    org = await createOrganisation(t);
    other = await createOrganisation(t);
  });
  afterAll(async () => {
    await t?.drop();
    await receiver?.close();
  });

  const json = (method: string, path: string, body: unknown, who = org, prefer = 'return=representation') =>
    t.call(path, who.token, {
      method,
      headers: { 'Content-Type': 'application/json', Prefer: prefer },
      body: JSON.stringify(body),
    });
  async function endpoint(path: string, events: string[], who = org) {
    const res = await json('POST', '/webhook_endpoint', { url: `${receiver.base}${path}`, events }, who);
    expect(res.status).toBe(201);
    const [created] = (await res.json()) as Array<{ id: string; secret: string }>;
    return created!;
  }
  const verified = (secret: string, message: Received) =>
    new Webhook(secret).verify(message.body, message.headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };

  it('an endpoint’s secret is shown by its create only: never read, selected, filtered or written', async () => {
    const created = await endpoint('/secret', ['deal.created']);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{40,}={0,2}$/);
    const read = (await (await t.call(`/webhook_endpoint?id=eq.${created.id}`, org.token)).json()) as object[];
    expect(read).toHaveLength(1);
    expect(read[0]).not.toHaveProperty('secret');
    for (const path of [`/webhook_endpoint?select=secret`, `/webhook_endpoint?secret=eq.${created.secret}`]) {
      const res = await t.call(path, org.token);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('UNKNOWN_FIELD');
    }
    const patched = await json('PATCH', `/webhook_endpoint?id=eq.${created.id}`, { secret: 'whsec_mine' });
    expect(patched.status).toBe(400);
    const updated = await json('PATCH', `/webhook_endpoint?id=eq.${created.id}`, { enabled: false });
    expect(await updated.json()).toEqual([expect.not.objectContaining({ secret: expect.anything() })]);
    // Another organisation sees none of it.
    expect(await (await t.call(`/webhook_endpoint?id=eq.${created.id}`, other.token)).json()).toEqual([]);
  });

  it('refuses a URL that is not http(s) and event types that do not exist', async () => {
    for (const body of [
      { url: 'ftp://example.com/hook', events: ['deal.created'] },
      { url: 'https://user:pw@example.com/hook', events: ['deal.created'] },
      { url: 'https://example.com/hook', events: ['deal.exploded'] },
      { url: 'https://example.com/hook', events: [] },
    ]) {
      const res = await json('POST', '/webhook_endpoint', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
    }
  });

  it('a write posts one signed delivery per subscribed endpoint, verified by standardwebhooks', async () => {
    const a = await endpoint('/a', ['deal.created', 'deal.updated']);
    const b = await endpoint('/b', ['deal.created']);
    await endpoint('/c', ['deal.deleted']);
    const res = await json('POST', '/deal', { name: 'Hooked', value: 12 });
    const [deal] = (await res.json()) as Array<{ id: string }>;
    const [toA] = await eventually(() => {
      const got = receiver.at('/a');
      expect(got).toHaveLength(1);
      expect(receiver.at('/b')).toHaveLength(1);
      return got;
    });
    const message = verified(a.secret, toA!);
    expect(message.type).toBe('deal.created');
    expect(message.data).toMatchObject({ id: deal!.id, name: 'Hooked', organisation_id: org.id });
    expect(message.data).not.toHaveProperty('__inserted');
    expect(Number.isNaN(Date.parse(message.timestamp))).toBe(false);
    expect(verified(b.secret, receiver.at('/b')[0]!).data).toMatchObject({ id: deal!.id });
    // Signed with a's secret, it does not verify as b's.
    expect(() => verified(b.secret, toA!)).toThrow();
    expect(receiver.at('/c')).toHaveLength(0);

    // One event per row: a bulk PATCH of two deals is two deliveries to /a, none to /b.
    await json('POST', '/deal', [{ name: 'Bulk 1' }, { name: 'Bulk 2' }], org, 'return=minimal');
    await eventually(() => expect(receiver.at('/a')).toHaveLength(3));
    await json('PATCH', '/deal?name=like.Bulk*', { value: 7 }, org, 'return=minimal');
    const updates = await eventually(() => {
      const got = receiver.at('/a').slice(3);
      expect(got).toHaveLength(2);
      return got;
    });
    expect(updates.map((m) => verified(a.secret, m).type)).toEqual(['deal.updated', 'deal.updated']);
    expect(receiver.at('/b')).toHaveLength(3);
  });

  it('a rolled-back or failed write sends nothing; another organisation’s writes reach only its endpoints', async () => {
    const quiet = await endpoint('/quiet', ['deal.created', 'contact_note.created']);
    await json('POST', '/deal', { name: 'Dry' }, org, 'tx=rollback');
    expect((await json('POST', '/deal', { name: 'Bad', value: 'x' })).status).toBe(400);
    expect((await json('POST', '/contact_note', { contact_id: crypto.randomUUID(), text: 'x' })).status).toBe(409);
    await json('POST', '/deal', { name: 'Theirs' }, other);
    // A later write's delivery arrives: the earlier ones would have come before it.
    await json('POST', '/deal', { name: 'Marker' });
    await eventually(() => expect(receiver.at('/quiet')).toHaveLength(1));
    expect(JSON.parse(receiver.at('/quiet')[0]!.body)).toMatchObject({ data: { name: 'Marker' } });
    const deliveries = await t.call(`/webhook_delivery?endpoint_id=eq.${quiet.id}&select=type`, org.token);
    expect(await deliveries.json()).toEqual([{ type: 'deal.created' }]);
  });

  it('retries until the receiver accepts, logging every try', async () => {
    const hook = await endpoint('/flaky', ['calendar.created']);
    receiver.failNext('/flaky', 2);
    await json('POST', '/calendar', { name: 'Retried' });
    await eventually(() => expect(receiver.at('/flaky')).toHaveLength(3));
    const ids = new Set(receiver.at('/flaky').map((m) => m.headers['webhook-id']));
    expect(ids.size).toBe(1);
    const log = await eventually(async () => {
      const res = await t.call(
        `/webhook_delivery?endpoint_id=eq.${hook.id}&select=id,type,status,attempts,webhook_attempt(status_code)` +
          '&webhook_attempt.order=created_at',
        org.token,
      );
      const rows = (await res.json()) as Array<{ status: string; attempts: number; webhook_attempt: object[] }>;
      expect(rows[0]).toMatchObject({ status: 'succeeded', attempts: 3 });
      return rows;
    });
    expect(log[0]!.webhook_attempt).toEqual([{ status_code: 500 }, { status_code: 500 }, { status_code: 204 }]);
  });

  it('turns an endpoint off once a delivery runs out of retries; a redelivery sends it again', async () => {
    const hook = await endpoint('/down', ['calendar.deleted']);
    const [calendar] = (await (await json('POST', '/calendar', { name: 'Doomed' })).json()) as Array<{ id: string }>;
    await json('DELETE', `/calendar?id=eq.${calendar!.id}`, undefined);
    await eventually(async () => {
      const [row] = (await (await t.call(`/webhook_endpoint?id=eq.${hook.id}`, org.token)).json()) as Array<{
        enabled: boolean;
        disabled_reason: string | null;
      }>;
      expect(row).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('status 500') });
    });
    expect(receiver.at('/down')).toHaveLength(3);
    const [delivery] = (await (
      await t.call(`/webhook_delivery?endpoint_id=eq.${hook.id}`, org.token)
    ).json()) as Array<{
      id: string;
      status: string;
    }>;
    expect(delivery!.status).toBe('failed');

    await json('PATCH', `/webhook_endpoint?id=eq.${hook.id}`, { enabled: true, url: `${receiver.base}/up` });
    const again = await t.app.request(`/v1/webhook_deliveries/${delivery!.id}/redeliver`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.token}` },
    });
    expect(again.status).toBe(202);
    expect(await again.json()).toMatchObject({ id: delivery!.id, status: 'pending', attempts: 0 });
    await eventually(() => expect(receiver.at('/up')).toHaveLength(1));
    expect(receiver.at('/up')[0]!.headers['webhook-id']).toBe(delivery!.id);
    const missing = await t.app.request(`/v1/webhook_deliveries/${crypto.randomUUID()}/redeliver`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${other.token}` },
    });
    expect(missing.status).toBe(404);
  });

  it('the receiver of docs/webhooks.md accepts what is posted, and refuses a forged message', async () => {
    const doc = readFileSync(new URL('../docs/webhooks.md', import.meta.url), 'utf8');
    const code = /```js\n([\s\S]*?)```/.exec(doc)![1]!;
    const port = await freePort();
    const hook = await endpoint('/unused', ['deal.created']);
    await json('PATCH', `/webhook_endpoint?id=eq.${hook.id}`, { url: `http://127.0.0.1:${port}/` });
    const child = spawn(
      process.execPath,
      ['--input-type=module', '-e', code.replace('listen(4000)', `listen(${port})`)],
      {
        env: { ...process.env, WEBHOOK_SECRET: hook.secret },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let printed = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (printed += chunk));
    try {
      await eventually(() => fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{}' }));
      const forged = await fetch(`http://127.0.0.1:${port}/`, {
        method: 'POST',
        headers: {
          'webhook-id': 'x',
          'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
          'webhook-signature': 'v1,AAAA',
        },
        body: '{"type":"deal.created","data":{"id":"forged"}}',
      });
      expect(forged.status).toBe(401);
      const [deal] = (await (await json('POST', '/deal', { name: 'For the docs' })).json()) as Array<{ id: string }>;
      await eventually(() => expect(printed).toContain(`deal.created ${deal!.id}`));
      expect(printed).not.toContain('forged');
    } finally {
      child.kill();
    }
  });

  it('imports record contact events and import.succeeded', async () => {
    const hook = await endpoint('/imports', ['contact.created', 'contact.updated', 'import.succeeded']);
    const v1 = (path: string, body: string, type = 'application/json') =>
      t.app.request(`/v1${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${org.token}`, 'Content-Type': type },
        body,
      });
    const batch = JSON.stringify({ items: [{ external_id: 'wh-1', display_name: 'Imported' }] });
    expect((await v1('/contacts/imports/batch', batch)).status).toBe(200);
    expect((await v1('/contacts/imports/batch', batch)).status).toBe(200);
    const file = (await (await v1('/files', 'external_id,display_name\nwh-2,From file\n', 'text/csv')).json()) as {
      id: string;
    };
    expect((await v1('/contacts/imports', JSON.stringify({ file_id: file.id }))).status).toBe(202);
    const types = await eventually(() => {
      const got = receiver.at('/imports').map((m) => verified(hook.secret, m));
      expect(got).toHaveLength(4);
      return got;
    });
    // Deliveries are posted side by side: they may arrive in any order.
    expect(types.map((m) => m.type).sort()).toEqual([
      'contact.created',
      'contact.created',
      'contact.updated',
      'import.succeeded',
    ]);
    expect(types.find((m) => m.type === 'import.succeeded')!.data).toMatchObject({ status: 'succeeded', created: 1 });
    // The events carry the rows as written, though the import's statements return only keys.
    const data = (type: string) => types.filter((m) => m.type === type).map((m) => m.data);
    expect(data('contact.updated')).toEqual([
      expect.objectContaining({ external_id: 'wh-1', display_name: 'Imported', id: expect.any(String) }),
    ]);
    expect(data('contact.created')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ external_id: 'wh-1', display_name: 'Imported' }),
        expect.objectContaining({ external_id: 'wh-2', display_name: 'From file' }),
      ]),
    );
  });
});

describe('webhooks to private addresses', () => {
  it('refuses private, loopback, link-local and reserved addresses, IPv4 inside IPv6 too', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '224.0.0.1',
      '::1',
      '::',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a9fe:a9fe',
    ]) {
      expect(refused(address), address).toBe(true);
    }
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8']) {
      expect(refused(address), address).toBe(false);
    }
  });

  it('does not post to a receiver on this machine, by address or by a name resolving to it', async () => {
    const receiver = await startReceiver();
    const t = await createTestApp({ worker: true, webhooks: { retrySeconds: [] } });
    try {
      const org = await createOrganisation(t);
      const port = new URL(receiver.base).port;
      for (const url of [`${receiver.base}/by-address`, `http://localhost:${port}/by-name`]) {
        const res = await t.call('/webhook_endpoint', org.token, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ url, events: ['deal.created'] }),
        });
        expect(res.status).toBe(201);
      }
      await t.call('/deal', org.token, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'Not for you' }),
      });
      const errors = await eventually(async () => {
        const res = await t.call('/webhook_attempt?select=error', org.token);
        const rows = (await res.json()) as Array<{ error: string }>;
        expect(rows).toHaveLength(2);
        return rows.map((r) => r.error).sort();
      });
      expect(errors).toEqual([
        expect.stringMatching(/^refused: 127\.0\.0\.1 is a private/),
        expect.stringMatching(/^refused: localhost resolves to (127\.0\.0\.1|::1), a private/),
      ]);
      expect(receiver.received).toHaveLength(0);
    } finally {
      await t.drop();
      await receiver.close();
    }
  });
});
