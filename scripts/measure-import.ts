/**
 * `npx tsx scripts/measure-import.ts`: times a 5 MiB batch import of contacts through the HTTP
 * app against PostgreSQL's own COPY of the same rows, in a fresh database (DATABASE_URL is the
 * admin connection; default the local server). Prints rows/s for both and their ratio.
 */
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { createEngine } from '../engine/index.ts';
import { importTargets } from '../engine/imports/batch.ts';
import { createRegistry } from '../engine/registry.ts';
import { createToken } from '../server/auth/tokens.ts';
import { createApp } from '../server/app.ts';
import { openDatabase } from '../server/database.ts';
import { imports } from '../schema/imports.ts';
import { resources } from '../schema/registry.ts';

const admin = process.env.DATABASE_URL ?? 'postgres://root@127.0.0.1:5432/postgres';
const name = `engage_measure_${Date.now()}`;
const sql = postgres(admin, { max: 1, onnotice: () => {} });
await sql.unsafe(`CREATE DATABASE ${name}`);
const url = new URL(admin);
url.pathname = `/${name}`;
const db = await openDatabase({ DATABASE_URL: url.toString(), DB_POOL_SIZE: 4 });
try {
  await db.migrate();
  const registry = createRegistry(resources);
  const engine = createEngine({ registry, db });
  const app = createApp({ engine, ping: async () => {}, versioned: { db, targets: importTargets(registry, imports), fileLimit: 1e9, wake: () => {} } });

  const item = (i: number) => ({
    external_id: `ext-${i}`,
    display_name: `Contact ${i}`,
    full_name: `Contact Number ${i}`,
    email: `contact${i}@example.com`,
    city: ['Zürich', 'Bern', 'Basel', 'Genève'][i % 4],
    country: 'CH',
    birthday: '1990-01-01',
    is_blocked: i % 10 === 0,
  });
  // As many items as fit in the 5 MiB limit.
  const LIMIT = 5 * 1024 * 1024;
  const items: unknown[] = [];
  let size = '{"items":[]}'.length;
  for (let i = 0; ; i++) {
    const next = Buffer.byteLength(JSON.stringify(item(i))) + 1;
    if (size + next > LIMIT) break;
    size += next;
    items.push(item(i));
  }
  const body = JSON.stringify({ items });

  const run = async (label: string, fn: () => Promise<void>) => {
    const start = performance.now();
    await fn();
    const ms = performance.now() - start;
    console.log(`${label}: ${items.length} rows in ${ms.toFixed(0)} ms = ${Math.round((items.length / ms) * 1000)} rows/s`);
    return ms;
  };
  const results: Record<string, number> = {};
  for (let round = 0; round < 3; round++) {
    const org = randomUUID();
    const { token } = await createToken(db, { organisationId: org });
    results.batch = Math.min(results.batch ?? Infinity, await run(`batch import (round ${round + 1})`, async () => {
      const res = await app.request('/v1/contacts/imports/batch', { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body });
      const out = (await res.json()) as { created: number };
      if (res.status !== 200 || out.created !== items.length) throw new Error(`batch failed: ${res.status}`);
    }));
    const copyOrg = randomUUID();
    await db.query('INSERT INTO organisation (id) VALUES ($1::uuid)', [copyOrg]);
    results.copy = Math.min(results.copy ?? Infinity, await run(`COPY (round ${round + 1})`, async () => {
      const columns = ['organisation_id', 'external_id', 'display_name', 'full_name', 'email', 'city', 'country', 'birthday', 'is_blocked'];
      const target = postgres(url.toString(), { max: 1 });
      const writable = await target.unsafe(`COPY contact (${columns.join(',')}) FROM STDIN`).writable();
      const lines = items.map((x) => {
        const r = x as Record<string, unknown>;
        return [copyOrg, r.external_id, r.display_name, r.full_name, r.email, r.city, r.country, r.birthday, r.is_blocked ? 't' : 'f'].join('\t');
      });
      await new Promise<void>((resolve, reject) => {
        writable.on('finish', resolve).on('error', reject);
        writable.end(`${lines.join('\n')}\n`);
      });
      await target.end();
    }));
  }
  console.log(`body ${body.length} bytes; best of 3: batch import ${Math.round((items.length / results.batch!) * 1000)} rows/s, COPY ${Math.round((items.length / results.copy!) * 1000)} rows/s, ratio ${(results.copy! / results.batch!).toFixed(2)}`);
} finally {
  await db.close();
  await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await sql.end();
}
