/**
 * docs/embedding.md is the example app's code: examples/run.sh runs that app from the packed engine in
 * CI, and this test holds the page's files to the app's, so the guide cannot drift from what is tested.
 * It then serves the app (its tables, registry, auth and mount) on a test database, sets it up as the
 * page does and makes the page's calls.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Database, Engine } from '@engage/engine';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeBlock, expectCalls, shellVariables } from './helpers/curl.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

const read = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const block = (marker: string) => codeBlock('embedding.md', `embedding: ${marker}`);
const EXAMPLE = 'examples/workspaces';

/** A module of the example, as its server imports it (the engine resolved to its source, as in every test). */
const example = (file: string): Promise<Record<string, unknown>> =>
  import(/* @vite-ignore */ new URL(`../${EXAMPLE}/${file}`, import.meta.url).href);

describe('the embedding guide', () => {
  it.each(['schema.js', 'app.js', 'server.js', 'express.js'])('shows %s as the tested example has it', (file) => {
    expect(`${block(`${EXAMPLE}/${file}`)}\n`).toBe(read(`${EXAMPLE}/${file}`));
  });

  it("packs and installs the engine as examples/run.sh does, beside the example's dependencies", () => {
    const page = read('docs/embedding.md');
    expect(page).toContain('npm pack --workspace engine');
    expect(read('examples/run.sh')).toContain('npm pack --workspace engine');
    const install = /^npm install \S+\.tgz (.*)$/m.exec(page)?.[1]?.split(' ');
    const { dependencies } = JSON.parse(read(`${EXAMPLE}/package.json`)) as { dependencies: object };
    expect(install?.sort()).toEqual(Object.keys(dependencies).sort());
  });
});

describe('the embedding guide, served', () => {
  let t: TestDatabase;
  let app: Hono;

  beforeAll(async () => {
    t = await createTestDatabase();
    await t.db.exec((await example('schema.js')).CREATE_TABLES as string);
    const createApp = (await example('app.js')).createApp as (db: Database) => { app: Hono; engine: Engine };
    const served = createApp(t.db);
    await served.engine.install();
    await t.db.exec(block('setup'));
    app = served.app;
  });
  afterAll(() => t?.drop());

  it('answers the calls of "Call it" as the page shows', async () => {
    const calls = block('calls');
    await expectCalls(calls, shellVariables(calls, {}), (path, init) => app.request(path, init));
  });

  it("keeps another workspace's key from Acme's rows (the calls above made them)", async () => {
    const [other] = await t.db.query<{ id: string }>("INSERT INTO workspace (name) VALUES ('B') RETURNING id::text");
    const key = randomUUID();
    await t.db.query('INSERT INTO api_key (key, workspace_id) VALUES ($1, $2::uuid)', [key, other!.id]);
    const projects = async (apiKey: string) =>
      (await app.request('/api/project?select=name', { headers: { 'X-Api-Key': apiKey } })).json();
    expect(await projects('acme-key')).toEqual([{ name: 'Apollo' }]);
    expect(await projects(key)).toEqual([]);
  });
});
