// `node server.js`: the example on DATABASE_URL, at http://localhost:$PORT/api/.
import { connectPostgres } from '@engage/engine/postgres';
import { serve } from '@hono/node-server';
import { createApp } from './app.js';
import { CREATE_TABLES } from './schema.js';

const db = connectPostgres(process.env.DATABASE_URL ?? 'postgres://localhost/example');
await db.exec(CREATE_TABLES);
const { app, engine } = createApp(db);
await engine.install();
serve({ fetch: app.fetch, port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`listening on http://localhost:${info.port}/api/`);
});
