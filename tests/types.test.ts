/**
 * Typed clients: the types `npm run types` generates from the registry make postgrest-js infer
 * the rows of a typed query, and the types openapi-typescript generates from the OpenAPI document
 * describe its responses. Both are compiled with the repository's compiler options, with snippets
 * that must compile and snippets that must not (so a type that silently became `any` fails).
 */

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildOpenApi, typescriptTypes } from '@engage/engine';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registry } from '../schema/registry.ts';
import { openapiOptions } from '../server/openapi.ts';

const ROOT = resolve(import.meta.dirname, '..');

/** Compiles the files of `dir` together; the diagnostics of each file, by its name. */
function compile(dir: string, names: readonly string[]): Record<string, string[]> {
  const config = ts.readConfigFile(join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const program = ts.createProgram(
    names.map((name) => join(dir, name)),
    { ...options, noEmit: true },
  );
  const found: Record<string, string[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName ?? '';
    const name = names.find((n) => file === join(dir, n)) ?? (file || '(global)');
    const line = diagnostic.file?.getLineAndCharacterOfPosition(diagnostic.start ?? 0).line;
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    found[name] = [...(found[name] ?? []), `${line === undefined ? '' : `${line + 1}: `}${message}`];
  }
  return found;
}

const CHECKS = `
type IsAny<T> = 0 extends 1 & T ? true : false;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
export const assert = <T extends true>(_: T) => {};
export type { Equal, IsAny };
`;

const CLIENT = `
import { PostgrestClient } from '@supabase/postgrest-js';
import type { BatchOperation, BatchResults, Database, Json, Tables, TablesInsert } from './types.ts';
import { assert, type Equal, type IsAny } from './checks.ts';

export const client = new PostgrestClient<Database>('http://127.0.0.1:3000/api/v1', {
  headers: { Authorization: 'Bearer token' },
});

const deals = client.from('deal').select('name, value, contact(display_name)');
type Deals = Awaited<typeof deals>['data'];
assert<IsAny<Deals> extends false ? true : false>(true);
assert<
  Equal<Deals, { name: string | null; value: number | null; contact: { display_name: string | null } | null }[] | null>
>(true);
export const check: NonNullable<Deals>[number]['contact'] = { display_name: 'Ada' };

// To many, back along a reference; jsonb as Json; enums as unions.
const contacts = client.from('contact').select('id, deal(name, currency), custom_entity(data)').eq('city', 'Bern');
type Contact = NonNullable<Awaited<typeof contacts>['data']>[number];
assert<
  Equal<
    Contact,
    {
      id: string;
      deal: { name: string | null; currency: 'EUR' | 'CHF' | 'USD' | null }[];
      custom_entity: { data: Json | null }[];
    }
  >
>(true);

// Many to many, through the junction table appointment_custom_field.
const appointments = client.from('appointment').select('id, custom_field(key, type)');
type Appointment = NonNullable<Awaited<typeof appointments>['data']>[number];
assert<
  Equal<
    Appointment,
    {
      id: string;
      custom_field: { key: string; type: 'string' | 'datetime' | 'boolean' | 'number' | 'date' | 'string_list' }[];
    }
  >
>(true);

// Writes as the verbs allow: optional what has a default, is nullable or is the server's.
client.from('deal').insert({ name: 'Renewal', currency: 'EUR', value: 1200 });
client.from('deal').insert([{ name: 'a' }, { name: 'b' }]).select('id');
client.from('deal').update({ value: 3 }).eq('id', '00000000-0000-0000-0000-000000000000');
client.from('calendar').insert({ name: 'Team' });
client.from('contact_note').delete().eq('contact_id', '00000000-0000-0000-0000-000000000000');

export const row: Tables<'contact'> | undefined = undefined;
export const insert: TablesInsert<'calendar'> = { name: 'Team', type: 'virtual' };

// A batch's operations name the API's resources; its answer is one result per operation.
export const operations: BatchOperation[] = [
  { ref: 'd', method: 'POST', path: '/deal', body: { name: 'Pilot' } },
  { method: 'GET', path: '/deal?id=eq.@{d.id}', headers: { Accept: 'text/csv' } },
];
export const statuses = (answer: BatchResults): number[] => answer.results.map((r) => r.status);
`;

/** Each must fail to compile: the client would send what the API refuses, or read what it does not return. */
const WRONG: Record<string, readonly [snippet: string, error: string]> = {
  'wrong-column.ts': [
    `const q = client.from('deal').select('name, nope');
export const rows: { name: string | null; nope: string }[] | null = (await q).data;`,
    "column 'nope' does not exist on 'deal'",
  ],
  'wrong-type.ts': [
    `client.from('deal').insert({ value: 'a lot' });`,
    "Type 'string' is not assignable to type 'number'",
  ],
  'wrong-enum.ts': [`client.from('deal').insert({ currency: 'GBP' });`, `Type '"GBP"' is not assignable`],
  'no-post.ts': [`client.from('contact').insert({ display_name: 'Ada' });`, "'display_name' does not exist"],
  'batch-unknown-resource.ts': [
    `export const op: BatchOperation = { method: 'POST', path: '/nope', body: {} };`,
    'is not assignable to type',
  ],
  'no-patch.ts': [`client.from('contact_note').update({ text: 'changed' });`, "parameter of type 'never'"],
  'id-unchangeable.ts': [`client.from('deal').update({ id: 'a' });`, "'id' does not exist"],
  'wrong-resource.ts': [`client.from('nope').select('*');`, 'No overload matches this call'],
  'wrong-relation.ts': [
    `const q = client.from('segment').select('name, deal(name)');
export const rows: { name: string | null; deal: { name: string | null }[] }[] | null = (await q).data;`,
    'could not find the relation between segment and deal',
  ],
};

const OPENAPI_CLIENT = `
import type { components, paths } from './openapi.ts';
import { assert, type Equal, type IsAny } from './checks.ts';

type Contacts = paths['/contact']['get']['responses']['200']['content']['application/json'];
assert<IsAny<Contacts> extends false ? true : false>(true);
export const contacts: Contacts = [{ id: '00000000-0000-0000-0000-000000000000', display_name: 'Ada', city: null }];
export const name: string | null | undefined = contacts[0]?.display_name;

type NewDeal = paths['/deal']['post']['requestBody']['content']['application/json'];
export const deal: NewDeal = { name: 'Renewal', currency: 'CHF' };

type Page = paths['/v1/contacts']['get']['responses']['200']['content']['application/json'];
export const page: Page = { data: contacts, next_cursor: null };
type Query = NonNullable<paths['/v1/contacts']['get']['parameters']['query']>;
export const query: Query = { limit: 100, cursor: 'abc' };

type Job = paths['/v1/imports/{id}']['get']['responses']['200']['content']['application/json'];
assert<Equal<Job['status'], 'queued' | 'running' | 'succeeded' | 'failed'>>(true);
assert<Equal<Job, components['schemas']['ImportJob']>>(true);
type Batch = paths['/v1/contacts/imports/batch']['post'];
export const batch: Batch['requestBody']['content']['application/json'] = {
  items: [{ external_id: 'crm-7', display_name: 'Ada', tier: 'gold' }],
};
export const result: Batch['responses']['200']['content']['application/json']['results'][number]['status'] = 'created';
type Failure = paths['/v1/files']['post']['responses']['413']['content']['application/json'];
export const failure: Failure['code'] = 'PAYLOAD_TOO_LARGE';
`;

const OPENAPI_WRONG: Record<string, readonly [snippet: string, error: string]> = {
  'openapi-wrong-type.ts': [
    'export const contacts: Contacts = [{ display_name: 5 }];',
    "Type 'number' is not assignable to type 'string'",
  ],
  'openapi-wrong-path.ts': ["export type Nope = paths['/v1/nope']['get'];", "Property '/v1/nope' does not exist"],
  'openapi-wrong-enum.ts': ["export const deal: NewDeal = { currency: 'GBP' };", `Type '"GBP"' is not assignable`],
  'openapi-no-post.ts': [
    "export type Post = paths['/contact']['post']['requestBody'];",
    "Property 'requestBody' does not exist",
  ],
};

const FILES = ['types.ts', 'checks.ts', 'client.ts'];
const OPENAPI_FILES = ['openapi.ts', 'checks.ts', 'client.ts'];

describe('npm run types: postgrest-js Database types from the registry', () => {
  let dir: string;
  let diagnostics: Record<string, string[]>;
  const text = typescriptTypes(registry);

  beforeAll(() => {
    dir = mkdtempSync(join(ROOT, 'tests', '.tmp-types-'));
    writeFileSync(join(dir, 'types.ts'), text);
    writeFileSync(join(dir, 'checks.ts'), CHECKS);
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    const head = CLIENT.slice(0, CLIENT.indexOf('const deals'));
    for (const [name, [body]] of Object.entries(WRONG)) writeFileSync(join(dir, name), `${head}\n${body}\n`);
    diagnostics = compile(dir, [...FILES, ...Object.keys(WRONG)]);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles, and a typed query infers its rows, embeds included', () => {
    expect(diagnostics['types.ts']).toEqual([]);
    expect(diagnostics['client.ts']).toEqual([]);
    // Nothing outside the files compiled (a library, the options) complains either.
    expect(Object.keys(diagnostics).filter((name) => !FILES.includes(name) && !(name in WRONG))).toEqual([]);
  });

  for (const [name, [snippet, error]] of Object.entries(WRONG)) {
    it(`refuses what the API refuses (${name})`, () => {
      expect(diagnostics[name]?.join('\n'), snippet).toContain(error);
    });
  }

  it('has every resource as a table, with its fields typed by kind, nullability and enum', () => {
    for (const resource of registry.resources) expect(text).toContain(`\n      ${resource.name}: {`);
    expect(text).toContain("currency: 'EUR' | 'CHF' | 'USD' | null;");
    expect(text).toContain('data: Json | null;');
    expect(text).toContain('number_of_marketing_opt_in_requests: number | null;');
    expect(text).toContain("__InternalSupabase: { PostgrestVersion: '13' };");
  });

  it('writes to stdout or to --out with the CLI', () => {
    const out = join(dir, 'cli.ts');
    const run = (...args: string[]) =>
      execFileSync(process.execPath, ['--import', 'tsx', 'scripts/types.ts', ...args], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    expect(run()).toBe(text);
    run('--out', out);
    expect(readFileSync(out, 'utf8')).toBe(text);
  }, 60_000);
});

describe('openapi-typescript: types from the OpenAPI document', () => {
  let dir: string;
  let diagnostics: Record<string, string[]>;

  beforeAll(async () => {
    const document = buildOpenApi(registry, openapiOptions()) as unknown as OpenAPI3;
    const text = astToString(await openapiTS(document, { silent: true }));
    dir = mkdtempSync(join(ROOT, 'tests', '.tmp-types-'));
    writeFileSync(join(dir, 'openapi.ts'), text);
    writeFileSync(join(dir, 'checks.ts'), CHECKS);
    writeFileSync(join(dir, 'client.ts'), OPENAPI_CLIENT);
    const head = OPENAPI_CLIENT.replace(/\nexport const [^;]*;/gs, '').replace(/\nassert<[^;]*;/gs, '');
    for (const [name, [body]] of Object.entries(OPENAPI_WRONG)) writeFileSync(join(dir, name), `${head}\n${body}\n`);
    diagnostics = compile(dir, [...OPENAPI_FILES, ...Object.keys(OPENAPI_WRONG)]);
  }, 120_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('compiles against a client snippet, /api/v1 and /v1 alike', () => {
    expect(diagnostics['openapi.ts']).toEqual([]);
    expect(diagnostics['client.ts']).toEqual([]);
    expect(
      Object.keys(diagnostics).filter((name) => !OPENAPI_FILES.includes(name) && !(name in OPENAPI_WRONG)),
    ).toEqual([]);
  });

  for (const [name, [snippet, error]] of Object.entries(OPENAPI_WRONG)) {
    it(`refuses what the document does not allow (${name})`, () => {
      expect(diagnostics[name]?.join('\n'), snippet).toContain(error);
    });
  }
});
