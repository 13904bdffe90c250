// The example app: its own schema served by the engine under /api, behind its own API keys.
import { createEngine, createRegistry, defineResource, unauthorized } from '@engage/engine';
import { engageApp } from '@engage/engine/hono';
import { Hono } from 'hono';
import { country, project, task } from './schema.js';

export const registry = createRegistry(
  [
    defineResource({ name: 'project', table: project, verbs: ['GET', 'POST', 'PATCH', 'DELETE'], orderable: ['name'] }),
    // Tasks are also a stream of their changes: GET /api/task with Accept: text/event-stream.
    defineResource({
      name: 'task',
      table: task,
      verbs: ['GET', 'POST', 'PATCH', 'DELETE'],
      orderable: ['title'],
      changes: true,
    }),
    defineResource({ name: 'country', table: country, verbs: ['GET'], tenant: false, orderable: ['name'] }),
  ],
  { tenant: 'workspace_id' },
);

/** The app's own auth: the workspace an `X-Api-Key` header names, or a 401 in the engine's error body. */
export const apiKeyScope = (db) => async (c) => {
  const key = c.req.header('x-api-key');
  const [row] = key ? await db.query('SELECT workspace_id::text AS id FROM api_key WHERE key = $1', [key]) : [];
  if (!row) throw unauthorized();
  return { tenant: row.id };
};

/** The host: a health route of its own, and the engine mounted under /api. */
export function createApp(db) {
  const engine = createEngine({ registry, db });
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  app.route('/api', engageApp({ engine, scope: apiKeyScope(db) }));
  return { app, engine };
}
