// A fresh database per test file on the local PostgreSQL (PG_ADMIN_URL), dropped afterwards,
// with two workspaces, a key for each and some shared countries.
import { randomUUID } from 'node:crypto';
import { connectPostgres } from '@engage/engine/postgres';
import postgres from 'postgres';
import { createApp } from '../app.js';
import { CREATE_TABLES } from '../schema.js';

const ADMIN_URL = process.env.PG_ADMIN_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

export async function setUp() {
  const name = `engage_example_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const db = connectPostgres(url.toString());
  await db.exec(CREATE_TABLES);
  const { app, engine } = createApp(db);
  await engine.install();
  await db.exec("INSERT INTO country (code, name) VALUES ('CH', 'Switzerland'), ('DE', 'Germany'), ('FR', 'France')");
  const workspace = async (name) => {
    const [row] = await db.query('INSERT INTO workspace (name) VALUES ($1) RETURNING id::text AS id', [name]);
    const key = randomUUID();
    await db.query('INSERT INTO api_key (key, workspace_id) VALUES ($1, $2)', [key, row.id]);
    return { id: row.id, key };
  };
  return {
    app,
    db,
    a: await workspace('A'),
    b: await workspace('B'),
    engine,
    async tearDown() {
      engine.close();
      await db.close();
      await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** A request to the app with a workspace's key; JSON bodies sent as JSON. */
export async function call(app, who, path, init = {}) {
  const headers = { ...(who ? { 'X-Api-Key': who.key } : {}), ...init.headers };
  let body = init.body;
  if (body !== undefined && typeof body !== 'string') {
    body = JSON.stringify(body);
    headers['Content-Type'] = 'application/json';
  }
  const res = await app.request(path, { ...init, headers, body });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
