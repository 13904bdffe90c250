// The engine inside an Express server, through @hono/node-server's getRequestListener: Express
// keeps its own routes, and hands /api to the adapter with the path it was mounted at stripped.
import { getRequestListener } from '@hono/node-server';
import express from 'express';
import { Hono } from 'hono';

export function expressServer(engageHono) {
  const api = new Hono().route('/api', engageHono);
  const server = express();
  server.get('/status', (_req, res) => res.json({ express: true }));
  // Express strips the mount path from req.url; put it back, so the adapter's routes and OpenAPI servers match.
  const listener = getRequestListener(api.fetch);
  server.use('/api', (req, res) => {
    req.url = req.originalUrl;
    return listener(req, res);
  });
  return server;
}
