/**
 * docs/adding-a-resource.md, followed on a copy of schema/: the page's code blocks added where it says,
 * its `npm run generate` commands run there (drizzle-kit), the migrations they write applied to a fresh
 * database as the server applies them, and its calls made with the answers it shows. Then the checks
 * every resource gets: served, filtered, ordered, embedded both ways, validated, described in OpenAPI
 * and kept to its organisation. A page whose code stops working fails here.
 */
import { exec } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { PGlite } from '@electric-sql/pglite';
import type { Registry, Resource, ResourceDefinition } from '@engage/engine';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resources as shipped } from '../schema/registry.ts';
import { createDemo } from '../server/demo.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';
import { codeBlock, expectCalls, shellVariables } from './helpers/curl.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';
import { apiOperations } from './helpers/operations.ts';

const ROOT = resolve(import.meta.dirname, '..');
const block = (marker: string) => codeBlock('adding-a-resource.md', `adding-a-resource: ${marker}`);
/** What the page's migrations must say, whitespace aside. */
const squash = (sql: string) => sql.replace(/\s+/g, ' ').trim();

/** A copy of what `npm run generate` reads, in a directory of its own beside the repository's modules. */
function copyProject(): string {
  const dir = mkdtempSync(join(tmpdir(), 'engage-adding-a-resource-'));
  for (const entry of ['package.json', 'tsconfig.json', 'drizzle.config.ts', 'schema', 'drizzle'])
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  // Resolved from the copy as from the repository: the dependencies, and the engine's source (tsconfig paths).
  for (const entry of ['node_modules', 'engine']) symlinkSync(join(ROOT, entry), join(dir, entry));
  return dir;
}

const edit = (file: string, change: (text: string) => string) => {
  const before = readFileSync(file, 'utf8');
  const after = change(before);
  if (after === before) throw new Error(`the page's change left ${file} as it was`);
  writeFileSync(file, after);
};

/** The page's `npm run generate` commands, run in the copy; the SQL of the migration the last one wrote. */
async function generate(dir: string, text: string): Promise<string> {
  for (const line of text.split('\n').filter((l) => l.trim() && !l.startsWith('#'))) {
    await promisify(exec)(line, { cwd: dir, timeout: 60_000 });
  }
  const journal = JSON.parse(readFileSync(join(dir, 'drizzle/meta/_journal.json'), 'utf8')) as {
    entries: Array<{ tag: string }>;
  };
  return readFileSync(join(dir, `drizzle/${journal.entries.at(-1)!.tag}.sql`), 'utf8');
}

/** What the server does on start (server/database.ts): drizzle's migrator over the migrations folder. */
async function migrate(t: TestApp, folder: string) {
  if (!t.url) {
    await migratePglite(drizzlePglite((t.db as unknown as { pg: PGlite }).pg), { migrationsFolder: folder });
    return;
  }
  const client = postgres(t.url, { max: 1, onnotice: () => {} });
  try {
    await migratePostgres(drizzlePostgres(client), { migrationsFolder: folder });
  } finally {
    await client.end({ timeout: 5 });
  }
}

let database: Promise<TestDatabase> | undefined;
let dir: string | undefined;
let sql: { table: string; relation: string };
let registry: Registry;
let added: Resource;
let t: TestApp;
let demo: Organisation;
let other: Organisation;

beforeAll(async () => {
  // Started first: PGlite starts in this process while drizzle-kit runs in its own.
  database = createTestDatabase();
  database.catch(() => {}); // awaited below; a failure to start fails the hook there
  dir = copyProject();
  // 1-3: the table, the registry entry, the migration.
  edit(join(dir, 'schema/tables.ts'), (text) => `${text}\n${block('table')}\n`);
  edit(join(dir, 'schema/registry.ts'), (text) => {
    const end = text.indexOf('\n];\n', text.indexOf('export const resources'));
    return `${text.slice(0, end)}\n${block('registry')}${text.slice(end)}`;
  });
  const table = await generate(dir, block('generate'));
  // The relation: the table's declaration replaced by the page's, and its migration.
  const relation = block('relation table');
  const declared = /^export const (\w+) = /m.exec(relation)![0];
  edit(join(dir, 'schema/tables.ts'), (text) => {
    const start = text.indexOf(declared);
    return text.slice(0, start) + relation + text.slice(text.indexOf('\n);', start) + 3);
  });
  sql = { table, relation: await generate(dir, block('relation generate')) };

  const copied = (await import(/* @vite-ignore */ pathToFileURL(join(dir, 'schema/registry.ts')).href)) as {
    registry: Registry;
    resources: readonly ResourceDefinition[];
  };
  registry = copied.registry;
  [added] = registry.resources.filter((r) => !shipped.some((s) => s.name === r.name)) as [Resource];
  t = await createTestApp({ resources: copied.resources, database: await database });
  // 4: applied as on the server's start.
  await migrate(t, join(dir, 'drizzle'));
  const created = await createDemo(t.db, t.engine);
  demo = { id: created.organisationId, token: created.token };
  other = await createOrganisation(t);
}, 120_000);
afterAll(async () => {
  await (t ?? (await database?.catch(() => undefined)))?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('docs/adding-a-resource.md, step by step', () => {
  /** The variables of "Before you start", with the demo organisation's token. */
  const vars = () => shellVariables(block('before'), { TOKEN: demo.token });

  it('adds one resource, and npm run generate writes the migrations the page shows', () => {
    expect(registry.resources.map((r) => r.name)).toEqual([...shipped.map((r) => r.name), 'ticket']);
    expect(squash(sql.table)).toBe(squash(block('table sql')));
    expect(squash(sql.relation)).toBe(squash(block('relation sql')));
  });

  it('answers the calls of "Call it" as the page shows', async () => {
    await expectCalls(block('calls'), vars(), (path, init) => t.app.request(path, init));
  });

  it('answers the calls of "Adding a relation" as the page shows', async () => {
    await expectCalls(block('relation calls'), vars(), (path, init) => t.app.request(path, init));
  });
});

describe('the added resource gets what every resource gets', () => {
  const path = () => `/${added.name}`;
  const json = { 'Content-Type': 'application/json' };
  const names = (rows: Array<{ subject: string }>) => rows.map((r) => r.subject);

  it('is served: listed, filtered and ordered by its orderable field, both ways', async () => {
    const [orderable] = added.fields.filter((f) => f.orderable && !added.key.includes(f));
    expect(orderable?.name).toBe('priority');
    const list = async (query: string) => {
      const res = await t.call(`${path()}?select=subject${query}`, demo.token);
      expect(res.status, query).toBe(200);
      return names(await res.json());
    };
    // Priorities 1, 2 and 3, the page's calls made; the one closed, the one with a contact.
    expect(await list('&order=priority.desc')).toEqual(['Password reset', 'Invoice question', 'Printer on fire']);
    expect(await list('&order=priority.asc')).toEqual(['Printer on fire', 'Invoice question', 'Password reset']);
    expect(await list('&priority=lte.2&order=priority')).toEqual(['Printer on fire', 'Invoice question']);
    expect(await list('&subject=ilike.*PRINTER*')).toEqual(['Printer on fire']);
    expect(await list('&or=(state.eq.closed,contact_id.not.is.null)&order=priority')).toEqual([
      'Invoice question',
      'Password reset',
    ]);
  });

  it('embeds through its relation both ways', async () => {
    const relations = (r: Resource) => r.relations.map((x) => `${x.name}:${x.cardinality}`);
    expect(relations(added)).toEqual(['contact:one']);
    expect(relations(registry.get('contact')!)).toContain(`${added.name}:many`);
    const toOne = await t.call(`${path()}?select=subject,contact(external_id)&order=priority`, demo.token);
    expect(await toOne.json()).toEqual([
      { subject: 'Printer on fire', contact: null },
      { subject: 'Invoice question', contact: { external_id: 'crm-2' } },
      { subject: 'Password reset', contact: null },
    ]);
    const toMany = await t.call(
      `/contact?select=external_id,${added.name}(subject)&external_id=in.(crm-1,crm-2)&order=display_name`,
      demo.token,
    );
    expect(await toMany.json()).toEqual([
      { external_id: 'crm-1', ticket: [] },
      { external_id: 'crm-2', ticket: [{ subject: 'Invoice question' }] },
    ]);
    const inner = await t.call(`/contact?select=external_id,${added.name}!inner(subject)`, demo.token);
    expect(await inner.json()).toEqual([{ external_id: 'crm-2', ticket: [{ subject: 'Invoice question' }] }]);
  });

  it('is validated: a bad body is 400 with every problem, an unknown field 400, and nothing is written', async () => {
    const post = (body: unknown) =>
      t.call(path(), demo.token, { method: 'POST', headers: json, body: JSON.stringify(body) });
    const bad = await post([{ subject: 'Fine' }, { subject: 7, priority: 1.5 }]);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      code: 'VALIDATION_FAILED',
      context: [expect.objectContaining({ field: 'subject' }), expect.objectContaining({ field: 'priority' })],
    });
    const unknown = await post({ subject: 'Fine', severity: 'high' });
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).code).toBe('UNKNOWN_FIELD');
    const fine = await t.call(`${path()}?subject=eq.Fine`, demo.token);
    expect(await fine.json()).toEqual([]);
  });

  it("is described in OpenAPI: its verbs, and the document's operations are the registry's", async () => {
    const res = await t.call('/', demo.token);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Object.keys(doc.paths[path()]!).sort()).toEqual(['delete', 'get', 'head', 'patch', 'post']);
    const listed = Object.entries(doc.paths).flatMap(([at, item]) =>
      Object.keys(item)
        .filter((k) => ['get', 'head', 'post', 'patch', 'delete', 'put'].includes(k))
        .map((m) => `${m.toUpperCase()} ${at}`),
    );
    expect(listed.sort()).toEqual(apiOperations(registry));
  });

  it("keeps each organisation to its own rows, and refuses a reference to another's", async () => {
    const mine = await t.call(path(), other.token);
    expect(await mine.json()).toEqual([]);
    const created = await t.call(path(), other.token, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ subject: 'Theirs' }),
    });
    expect(created.status).toBe(201);
    expect(await (await t.call(`${path()}?subject=eq.Theirs`, demo.token)).json()).toEqual([]);
    expect(names(await (await t.call(`${path()}?select=subject`, other.token)).json())).toEqual(['Theirs']);

    const [grace] = (await (await t.call('/contact?external_id=eq.crm-2&select=id', demo.token)).json()) as [
      { id: string },
    ];
    const crossing = await t.call(path(), other.token, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ subject: 'Not my contact', contact_id: grace.id }),
    });
    expect(crossing.status).toBe(409);
    expect((await crossing.json()).code).toBe('REFERENCE_NOT_FOUND');
    const embedded = await t.call(`/contact?select=external_id,${added.name}(subject)`, other.token);
    expect(await embedded.json()).toEqual([]);
  });
});
