/**
 * Every validation message a client can get is a sentence in our words that names the field: no
 * valibot default ("Invalid format: Expected /^.../"), no regular expression, no PostgreSQL text.
 * Walks every field kind and custom-field type with wrong values: in bodies (POST, PATCH, PATCH of
 * deal_details, /v1 batch imports) and in filters (a comparison, `in`, a quantified list, a logic
 * tree). The tables are typed by kind and type, so a new one must be added here.
 */

import { randomUUID } from 'node:crypto';
import { type CustomFieldType, defineResource, type FieldKind } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALAR_KINDS } from '../engine/operators.ts';
import { resources } from '../schema/registry.ts';
import { contact, custom_entity } from '../schema/tables.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

/** valibot's default messages, regular expressions, and PostgreSQL's own words. */
const RAW = [
  /Invalid \w+:/,
  /Expected /,
  /[Rr]eceived /,
  /\/\^|\$\/|\(\?:|\\d|\\s/,
  /invalid input syntax|malformed|out of range for type|overflows|byte sequence|syntax error|\berror\b/i,
];

// biome-ignore lint/suspicious/noExplicitAny: error bodies are checked key by key
type Json = any;

/** The message, details, hint and context messages of an error body are sentences of ours, naming `field`. */
function expectPlain(body: Json, field: string, where: string) {
  const context = Array.isArray(body.context) ? body.context.map((p: Json) => p.message) : [];
  const texts = [body.message, body.details, body.hint, ...context].filter((t) => typeof t === 'string');
  for (const text of texts) for (const raw of RAW) expect(text, where).not.toMatch(raw);
  expect(body.message, where).toContain(field);
}

/** A field of each kind, a resource that has it, and wrong values for it: JSON texts for bodies, filter values. */
interface Wrong {
  readonly resource: string;
  readonly field: string;
  readonly body: readonly string[];
  readonly filter: readonly string[];
}

/** Words PostgreSQL reads as dates and times, which the API refuses with a hint. */
const DATE_WORDS = ['now', 'today', 'tomorrow', 'yesterday', 'epoch', 'infinity', '-infinity', 'allballs', 'NOW'];

const WRONG: Partial<Record<FieldKind, Wrong>> = {
  uuid: { resource: 'deal', field: 'contact_id', body: ['"abc"', '5', '"{}"'], filter: ['abc', '1234'] },
  text: { resource: 'deal', field: 'name', body: ['5', 'true', '"a\\u0000b"', '"\\ud800"'], filter: ['a\u0000b'] },
  boolean: { resource: 'contact_rw', field: 'is_blocked', body: ['"yes"', '1'], filter: ['maybe', '2'] },
  integer: {
    resource: 'contact_rw',
    field: 'number_of_marketing_opt_in_requests',
    body: ['1.5', '"three"', '2147483648', '-2147483649'],
    filter: ['1.5', 'x', '99999999999'],
  },
  numeric: {
    resource: 'deal',
    field: 'value',
    body: ['"abc"', '"1,5"', '"1e5000"', '1e400', 'true', '[1]'],
    filter: ['abc', '1,5', '1e999999'],
  },
  date: {
    resource: 'contact_rw',
    field: 'birthday',
    body: ['"tomorrow"', '"2026-02-30"', '"01/02/2026"', '"9999999-01-01"', '20260101'],
    filter: [...DATE_WORDS, '01/02/2026', '2026-02-30', '9999999-01-01', '2026-11-26T07:00:00.000Z', 'J2451187'],
  },
  timestamptz: {
    resource: 'deal',
    field: 'won_at',
    body: ['"now"', '"2026-12-01T09:00:00"', '"2026-12-01"', '"2026-02-30T00:00:00Z"', '"294277-01-01T00:00:00Z"'],
    filter: [...DATE_WORDS, '01/02/2026', '2026-12-01T25:00:00', '2026-02-30', '294277-01-01', 'Dec 1 2026 09:00'],
  },
  'text[]': {
    resource: 'webhook_endpoint',
    field: 'events',
    body: ['"a"', '[1]', '["a\\u0000"]'],
    filter: ['{unclosed', 'a,b', '{"a}', '{a,}', '{{a}}'],
  },
  jsonb: {
    resource: 'custom_entity_rw',
    field: 'data',
    body: ['{"a":"\\u0000"}', '{"\\ud800":1}'],
    filter: ['{bad', "{'a':1}", '', '{"a":"\\u0000"}'],
  },
};

/** Wrong values of each custom-field type, as JSON texts. */
const WRONG_CUSTOM: Record<CustomFieldType, readonly string[]> = {
  string: ['5', '["a"]', '"a\\u0000"', '{"a\\u0000":1}'],
  datetime: ['"tomorrow"', '"2026-12-01"', '"2026-12-01T09:00:00"', '5'],
  boolean: ['"yes"', '1'],
  number: ['"abc"', '"5"', '1e400'],
  date: ['"tomorrow"', '"2026-02-30"', '"01/02/2026"'],
  string_list: ['"a"', '[1]'],
};

let t: TestApp;
let org: Organisation;
/** Custom fields of deals, one per type, by type. */
const customKeys = {} as Record<CustomFieldType, string>;
let dealId: string;

beforeAll(async () => {
  // Contacts and custom entities are read-only in the API: these write them, for the kinds only they have.
  const writable = [
    defineResource({ name: 'contact_rw', table: contact, verbs: ['GET', 'POST', 'PATCH'] }),
    defineResource({ name: 'custom_entity_rw', table: custom_entity, verbs: ['GET', 'POST', 'PATCH'] }),
  ];
  t = await createTestApp({ resources: [...resources, ...writable] });
  org = await createOrganisation(t);
  for (const type of Object.keys(WRONG_CUSTOM) as CustomFieldType[]) {
    customKeys[type] = `plain_${type}`;
    await insertRows(t.db, 'custom_field', org.id, [{ name: type, key: customKeys[type], type, entity: 'deal' }]);
  }
  [dealId] = (await insertRows(t.db, 'deal', org.id, [{ name: 'Deal' }])) as [string];
});
afterAll(() => t?.drop());

const send = async (method: string, path: string, body?: string) => {
  const res = await t.call(path, org.token, {
    method,
    headers: { 'Content-Type': 'application/json', Prefer: 'return=representation' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Json };
};

const bodyCases = Object.entries(WRONG).flatMap(([kind, w]) =>
  w.body.map((value) => [kind, w.resource, w.field, value] as const),
);

describe('bodies: every kind with wrong values is 400 VALIDATION_FAILED in plain words naming the field', () => {
  it.each(bodyCases)('%s: %s.%s = %s', async (_kind, resource, field, value) => {
    const body = `{"${field}":${value}}`;
    for (const [method, path] of [
      ['POST', `/${resource}`],
      ['PATCH', `/${resource}?id=eq.${randomUUID()}`],
    ] as const) {
      const res = await send(method, path, body);
      const where = `${method} ${path} ${body}: ${JSON.stringify(res.body)}`;
      expect(res.status, where).toBe(400);
      expect(res.body.code, where).toBe('VALIDATION_FAILED');
      expectPlain(res.body, field, where);
      expect(res.body.context.map((p: Json) => p.field)).toEqual([field]);
    }
  });

  const customCases = Object.entries(WRONG_CUSTOM).flatMap(([type, values]) =>
    values.map((value) => [type as CustomFieldType, value] as const),
  );
  it.each(customCases)('custom field of type %s = %s, in PATCH /deal_details', async (type, value) => {
    const key = customKeys[type];
    const res = await send('PATCH', `/deal_details?id=eq.${dealId}`, `{"${key}":${value}}`);
    const where = `${key} = ${value}: ${JSON.stringify(res.body)}`;
    expect(res.status, where).toBe(400);
    expect(res.body.code, where).toBe('VALIDATION_FAILED');
    expectPlain(res.body, key, where);
  });

  it.each(customCases)('custom field of type %s = %s, in a /v1 batch import', async (type, value) => {
    const key = customKeys[type];
    const results = await batch('deals', `[{"name":"x","${key}":${value}}]`);
    expect(results[0].error.code).toBe('VALIDATION_FAILED');
    expectPlain(results[0].error, key, `${key} = ${value}: ${JSON.stringify(results[0])}`);
  });

  const importCases = bodyCases.filter(([, resource]) => resource === 'deal' || resource === 'contact_rw');
  it.each(importCases)('%s: %s.%s = %s, in a /v1 batch import', async (_kind, resource, field, value) => {
    const results = await batch(resource === 'deal' ? 'deals' : 'contacts', `[{"${field}":${value}}]`);
    expect(results[0].error.code).toBe('VALIDATION_FAILED');
    expectPlain(results[0].error, field, `${field} = ${value}: ${JSON.stringify(results[0])}`);
  });
});

/** The results of a /v1 batch import of `items` (a JSON text). */
async function batch(collection: string, items: string): Promise<Json[]> {
  const res = await t.app.request(`/v1/${collection}/imports/batch`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${org.token}`, 'Content-Type': 'application/json' },
    body: `{"items":${items}}`,
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as Json).results;
}

/** A value quoted for a logic tree, an `in` list or an array literal. */
const quoted = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;

/** The filters that carry `value` on `field` of kind `kind`, as query strings. */
function filters(kind: FieldKind, field: string, value: string): string[] {
  const e = encodeURIComponent;
  const written = [
    `${field}=eq.${e(value)}`,
    `${field}=not.gt.${e(value)}`,
    `or=(${e(`${field}.eq.${quoted(value)}`)})`,
  ];
  if (SCALAR_KINDS.includes(kind)) {
    written.push(`${field}=in.(${e(quoted(value))})`, `${field}=gte(any).${e(`{${quoted(value)}}`)}`);
  }
  if (kind === 'text') written.push(`${field}=fts.${e(value)}`, `${field}=like(any).${e(`{${quoted(value)}}`)}`);
  return written;
}

describe('filters: every kind with wrong values is 400 INVALID_QUERY in plain words naming the field', () => {
  const cases = Object.entries(WRONG).flatMap(([kind, w]) =>
    w.filter.map((value) => [kind as FieldKind, w.resource, w.field, value] as const),
  );
  it.each(cases)('%s: %s.%s = %j', async (kind, resource, field, value) => {
    for (const query of filters(kind, field, value)) {
      const res = await send('GET', `/${resource}?${query}`);
      const where = `${resource}?${query}: ${JSON.stringify(res.body)}`;
      expect(res.status, where).toBe(400);
      expect(res.body.code, where).toBe('INVALID_QUERY');
      expectPlain(res.body, field, where);
    }
  });

  it.each(DATE_WORDS)(
    '"%s" on a date or timestamp field hints at an ISO 8601 value computed on the client',
    async (word) => {
      for (const path of [`/contact?birthday=gte.${word}`, `/deal?won_at=lt.${word}`, `/deal?or=(won_at.gt.${word})`]) {
        const res = await send('GET', path);
        expect(res.status, path).toBe(400);
        expect(res.body.message).toContain(`"${word}" is not`);
        expect(res.body.hint, path).toContain('send an ISO 8601 value instead, computed on the client');
      }
    },
  );

  it('a list literal that is not one is refused naming the field', async () => {
    for (const query of ['won_at=gt(any).{a,}', 'won_at=gt(any).{{2026-01-01}}', 'name=like(any).{"a}']) {
      const res = await send('GET', `/deal?${query}`);
      expect(res.status, query).toBe(400);
      expectPlain(res.body, query.slice(0, query.indexOf('=')), query);
      expect(res.body.message).toContain('takes a list literal such as {a,b}');
    }
  });
});

describe('filters still take every ISO 8601 form bodies take, a day on a timestamp, and lists of them', () => {
  it.each([
    'birthday=eq.2000-02-29',
    'birthday=in.(2000-01-01,"1999-12-31")',
    'birthday=gte(any).{2000-01-01,NULL}',
    `birthday=lt.${encodeURIComponent(' 2000-01-01 ')}`,
    'created_at=gte.2026-12-01',
    'created_at=lt.2026-11-26T07:00:00.000Z',
    `created_at=lt.${encodeURIComponent('2026-12-01 09:00:00+02')}`,
    `created_at=lt.${encodeURIComponent('2026-12-01T09:00:00.123456+05:30')}`,
    'created_at=lt.2026-12-01T09:00:00.1234567Z',
    `created_at=gt(all).${encodeURIComponent('{"2026-01-01 00:00:00+00",2025-01-01}')}`,
    `or=(created_at.gte.2026-11-26T07:00:00.000Z,birthday.is.null)`,
    'value=gte.1e1000',
  ])('%s', async (query) => {
    const res = await send('GET', `/${query.startsWith('value') ? 'deal' : 'contact'}?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  });
});
