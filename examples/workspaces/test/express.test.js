// docs/embedding.md's Express server, over a real socket: the engine answers under /api, Express keeps the rest.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createEngine } from '@engage/engine';
import { engageApp } from '@engage/engine/hono';
import { apiKeyScope, registry } from '../app.js';
import { expressServer } from '../express.js';
import { setUp } from './helpers.js';

let t;
let server;
let base;
before(async () => {
  t = await setUp();
  const engine = createEngine({ registry, db: t.db });
  server = expressServer(engageApp({ engine, scope: apiKeyScope(t.db) })).listen(0);
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});
after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await t.tearDown();
});

it('serves the engine under /api and Express routes beside it', async () => {
  const headers = { 'X-Api-Key': t.a.key, 'Content-Type': 'application/json', Prefer: 'return=representation' };
  const created = await fetch(`${base}/api/project`, { method: 'POST', headers, body: '{"name":"Via Express"}' });
  assert.equal(created.status, 201, await created.clone().text());
  const list = await fetch(`${base}/api/project?select=name&name=eq.Via%20Express`, { headers });
  assert.deepEqual(await list.json(), [{ name: 'Via Express' }]);
  const doc = await (await fetch(`${base}/api/`, { headers })).json();
  assert.deepEqual(doc.servers, [{ url: '/api' }]);
  const bad = await fetch(`${base}/api/project?id=eq.x`, { headers });
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).request_id, bad.headers.get('request-id'));
  assert.equal((await fetch(`${base}/api/project`)).status, 401);
  assert.deepEqual(await (await fetch(`${base}/status`)).json(), { express: true });
});
