import {
  buildOpenApi,
  createRegistry,
  defineResource,
  FIELD_KINDS,
  type FieldKind,
  type Registry,
  type Resource,
} from '@engage/engine';
import { pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { parsePreferences } from '../engine/parse/headers.ts';
import { parseRequest } from '../engine/parse/index.ts';
import { planRead } from '../engine/plan/read.ts';
import { AGGREGATES } from '../engine/request.ts';
import { registry, registryOptions, resources } from '../schema/registry.ts';
import { openapiOptions, withServerUrl } from '../server/openapi.ts';
import { apiOperations, versionedOperations } from './helpers/operations.ts';

type Json = Record<string, unknown>;

interface Parameter {
  readonly name: string;
  readonly in: string;
  readonly description?: string;
  readonly schema?: Json;
}

interface Operation {
  readonly operationId: string;
  readonly tags: readonly string[];
  readonly summary: string;
  readonly security?: unknown;
  readonly parameters?: readonly Json[];
  readonly requestBody?: Json;
  readonly responses: Record<string, Json>;
}

interface Document {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly servers: readonly { readonly url: string }[];
  readonly security: readonly Json[];
  readonly paths: Record<string, Record<string, Operation>>;
  readonly components: {
    readonly securitySchemes: Record<string, Json>;
    readonly schemas: Record<string, { readonly properties: Record<string, Json> } & Json>;
    readonly parameters: Record<string, Parameter>;
    readonly responses: Record<string, Json>;
  };
}

/** The API's document, as server/engine.ts has the engine build it. */
const build = (r: Registry = registry, serverUrl?: string) =>
  buildOpenApi(r, openapiOptions(serverUrl)) as unknown as Document;
const doc = build();

/** A test-only resource; its field "order" shares a name with a query-string keyword. */
const timestamptz = () => timestamp({ withTimezone: true, mode: 'string' });
const widget = pgTable(
  'widget',
  {
    id: uuid().notNull().defaultRandom(),
    created_at: timestamptz().notNull().defaultNow(),
    updated_at: timestamptz().notNull().defaultNow(),
    organisation_id: uuid().notNull(),
    label: text(),
    order: text(),
  },
  (t) => [primaryKey({ columns: [t.organisation_id, t.id] })],
);
const extended = createRegistry(
  [
    ...resources,
    defineResource({
      name: 'widget',
      table: widget,
      verbs: ['GET', 'DELETE'],
      orderable: ['label'],
      filterable: ['id', 'label', 'order'],
    }),
  ],
  registryOptions,
);
const withWidget = build(extended);

const METHODS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace'];

/** Follows a local `$ref` (a JSON pointer into the document); undefined when it leads nowhere. */
function follow(document: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

const deref = <T>(document: Document, node: Json): T =>
  (typeof node.$ref === 'string' ? follow(document, node.$ref) : node) as T;

const parametersOf = (document: Document, op: Operation): Parameter[] =>
  (op.parameters ?? []).map((p) => deref<Parameter>(document, p));

const parameter = (document: Document, path: string, method: string, name: string, location = 'query') =>
  parametersOf(document, document.paths[path]![method]!).find((p) => p.name === name && p.in === location);

function allRefs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) allRefs(item, found);
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') found.push(value);
      else allRefs(value, found);
    }
  }
  return found;
}

const operations = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, op]) => ({ path, method, op })),
  );

/** The text after `label` up to the closing period, split on ", " (and stripped of backticks). */
function listAfter(description: string | undefined, label: string): string[] {
  const match = new RegExp(`${label} ([^\\n]*)\\.$`, 'm').exec(description ?? '');
  if (!match?.[1]) throw new Error(`no "${label}" list in: ${description}`);
  return match[1].split(', ').map((s) => s.replace(/`/g, ''));
}

const planGet = (resource: Resource, query: string) =>
  planRead(resource, parseRequest({ method: 'GET', resource: resource.name, query, header: () => null }), 1000);

const errorOf = (fn: () => unknown): Error & { code?: string; hint?: string } => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected an error');
};

describe('buildOpenApi: document', () => {
  it('is OpenAPI 3.1.0 titled API, version 1.0.0', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'API', version: '1.0.0' });
  });

  it('names /api/v1 as its server unless given a URL', () => {
    expect(doc.servers).toEqual([{ url: '/api/v1' }]);
    expect(build(registry, 'http://127.0.0.1:3000/api/v1').servers).toEqual([{ url: 'http://127.0.0.1:3000/api/v1' }]);
  });

  it('declares bearer authentication for every operation', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.security).toEqual([{ bearerAuth: [] }]);
    for (const { op } of operations(doc)) expect(op.security).toBeUndefined();
  });

  it('offers exactly the operations the registry declares and the host serves, HEAD alongside each GET', () => {
    const listed = (document: Document) =>
      operations(document)
        .map(({ path, method }) => `${method.toUpperCase()} ${path}`)
        .sort();
    expect(listed(doc)).toEqual(apiOperations(registry));
    expect(listed(withWidget)).toEqual(apiOperations(extended));
    expect(listed(withWidget)).toEqual(expect.arrayContaining(['GET /widget', 'HEAD /widget', 'DELETE /widget']));
  });

  it("offers the spec's operations on the spec's resources, and the reads and webhooks beyond it", () => {
    const spec = [
      'GET /segment',
      'GET /appointment',
      'GET /appointment_details',
      'POST /appointment_type',
      'PATCH /appointment_type',
      'GET /appointment_custom_field',
      'GET /calendar',
      'POST /calendar',
      'PATCH /calendar',
      'DELETE /calendar',
      'GET /deal',
      'POST /deal',
      'PATCH /deal',
      'DELETE /deal',
      'PATCH /deal_details',
      'GET /contact',
      'POST /contact_note',
      'DELETE /contact_note',
      'GET /campaign',
      'DELETE /custom_field',
      'DELETE /custom_entity',
      // Beyond the spec's table, so that what is written can be read back.
      'GET /deal_details',
      'GET /contact_note',
      'GET /custom_field',
      'GET /custom_entity',
      // Beyond the spec: webhooks.
      'GET /webhook_endpoint',
      'POST /webhook_endpoint',
      'PATCH /webhook_endpoint',
      'DELETE /webhook_endpoint',
      'GET /webhook_delivery',
      'GET /webhook_attempt',
    ];
    // The versioned API: import files, batch and file imports of each collection, jobs, keyset pages.
    const collections = ['contacts', 'deals', 'appointments'];
    const versioned = [
      'POST /v1/files',
      'GET /v1/imports/{id}',
      ...collections.flatMap((c) => [`POST /v1/${c}/imports/batch`, `POST /v1/${c}/imports`]),
      'GET /v1/contacts',
      'POST /v1/webhook_deliveries/{id}/redeliver',
    ];
    // Only the resources and collections named here: one added beside them (docs/adding-a-resource.md) is
    // the registry's say, which the test above holds the document to.
    const named = new Set(spec.map((s) => s.slice(s.indexOf(' ') + 1)));
    const offered = apiOperations(registry).filter((o) => {
      const [method, path] = o.split(' ') as [string, string];
      if (path.startsWith('/v1/')) {
        const segment = path.split('/')[2]!;
        return !registry.collection(segment) || collections.includes(segment);
      }
      return method !== 'HEAD' && named.has(path);
    });
    expect(offered).toEqual([...spec, ...versioned].sort());
  });

  it('gives every operation a unique operationId, its resource as tag and a summary', () => {
    const ids = operations(doc).map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const { path, op } of operations(doc).filter((o) => o.path !== '/')) {
      if (path.startsWith('/v1/')) expect(op.tags).toEqual([expect.stringMatching(/^Versioned API: /)]);
      else expect(op.tags).toEqual([path.slice(1)]);
      expect(op.summary).toMatch(/\S/);
    }
  });

  it('describes GET / as the OpenAPI document', () => {
    const content = doc.paths['/']!.get!.responses['200']!.content as Json;
    expect(Object.keys(content)).toEqual(expect.arrayContaining(['application/openapi+json', 'application/json']));
  });
});

describe('buildOpenApi: schemas', () => {
  const props = (name: string) => doc.components.schemas[name]!.properties;

  it('has a schema with every field for every resource', () => {
    for (const resource of registry.resources) {
      expect(doc.components.schemas[resource.name]).toMatchObject({ type: 'object' });
      expect(Object.keys(props(resource.name))).toEqual(resource.fields.map((f) => f.name));
    }
  });

  it('types fields by kind, with formats and enums', () => {
    expect(props('deal').currency).toEqual({ type: ['string', 'null'], enum: ['EUR', 'CHF', 'USD', null] });
    expect(props('deal').value).toEqual({ type: ['number', 'null'] });
    expect(props('contact').birthday).toEqual({ type: ['string', 'null'], format: 'date' });
    expect(props('contact').is_blocked).toEqual({ type: ['boolean', 'null'] });
    expect(props('contact').number_of_marketing_opt_in_requests).toEqual({
      type: ['integer', 'null'],
      format: 'int32',
    });
    expect(props('contact').email_transactional_opt_in).toMatchObject({
      enum: ['legitimate_interest', 'contract_fulfillment', 'consent_granted', null],
    });
    expect(props('calendar').type).toEqual({ type: 'string', enum: ['virtual', 'provider'] });
    expect(props('appointment').start_time).toEqual({ type: ['string', 'null'], format: 'date-time' });
    expect(props('appointment_custom_field').string_list_value).toEqual({
      type: ['array', 'null'],
      items: { type: 'string' },
    });
    expect(props('custom_entity').data).toEqual({});
  });

  it('marks server-managed fields read-only, and only those', () => {
    expect(props('deal').id).toEqual({ type: 'string', format: 'uuid', readOnly: true });
    expect(props('deal').created_at).toMatchObject({ format: 'date-time', readOnly: true });
    expect(props('deal').organisation_id).toMatchObject({ readOnly: true });
    expect(props('deal').name).not.toHaveProperty('readOnly');
    // appointment_custom_field has no id of its own and its keys are written by clients.
    expect(props('appointment_custom_field').appointment_id).not.toHaveProperty('readOnly');
  });

  it('lets *_details resources carry custom-field values as extra properties', () => {
    for (const name of ['appointment_details', 'deal_details']) {
      const schema = doc.components.schemas[name]!;
      expect(schema.additionalProperties).toBe(true);
      expect(schema.description).toContain('custom_field.key');
      expect(schema.description).toContain('custom_field.type');
    }
    expect(doc.components.schemas.deal).not.toHaveProperty('additionalProperties');
  });

  it('describes the contract error body', () => {
    const error = doc.components.schemas.Error!;
    expect(error.required).toEqual([
      'name',
      'message',
      'code',
      'is_transient',
      'timestamp',
      'status_code',
      'contact_support',
      'request_id',
    ]);
    expect(Object.keys(error.properties)).toEqual([...(error.required as string[]), 'hint', 'context']);
    expect(error.properties.code).toMatchObject({ type: 'string' });
    expect(error.properties.status_code).toMatchObject({ type: 'integer' });
    for (const response of Object.values(doc.components.responses)) {
      expect(response).toMatchObject({
        content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
      });
    }
  });
});

describe('buildOpenApi: parameters', () => {
  it('has one string query parameter per filterable field on GET, explaining the operator syntax', () => {
    const contact = registry.get('contact')!;
    const params = parametersOf(doc, doc.paths['/contact']!.get!);
    const fieldNames = contact.fields.map((f) => f.name);
    expect(params.filter((p) => fieldNames.includes(p.name)).map((p) => p.name)).toEqual(fieldNames);
    for (const name of fieldNames) {
      const p = params.find((x) => x.name === name)!;
      expect(p).toMatchObject({ in: 'query', schema: { type: 'string' } });
      expect(p.description).toContain('`eq.value`');
      expect(p.description).toContain('`in.(a,b)`');
      expect(p.description).toContain('`is.null`');
    }
    expect(parameter(doc, '/deal', 'get', 'currency')?.description).toContain('EUR, CHF, USD');
  });

  it('documents filter operators the planner accepts for each field kind', () => {
    const sample: Partial<Record<FieldKind, string>> = {
      uuid: '00000000-0000-0000-0000-000000000000',
      text: 'x',
      boolean: 'true',
      integer: '1',
      numeric: '1.5',
      date: '2024-01-31',
      timestamptz: '2024-01-31T00:00:00Z',
      'text[]': '{a}',
      jsonb: '{}',
    };
    const seen = new Set<FieldKind>();
    for (const resource of registry.resources) {
      const op = Object.values(doc.paths[`/${resource.name}`]!)[0]!;
      for (const field of resource.fields.filter((f) => !seen.has(f.kind))) {
        seen.add(field.kind);
        const filter = parametersOf(doc, op).find((p) => p.name === field.name);
        const operators = listAfter(filter?.description, 'Operators:');
        for (const op of operators) {
          const value = op.startsWith('is.')
            ? op
            : op === 'in'
              ? `in.(${sample[field.kind]})`
              : `${op}.${sample[field.kind]}`;
          expect(
            () => planGet(resource, `${field.name}=${encodeURIComponent(value)}`),
            `${field.kind} ${value}`,
          ).not.toThrow();
        }
      }
    }
    expect(seen.size).toBe(9);
  });

  it('lists exactly the allowed order fields, as the planner enforces them', () => {
    const orderFields = (path: string) =>
      listAfter(parameter(doc, path, 'get', 'order')?.description, 'Allowed fields:').sort();
    // The spec's order fields, and every resource's key (clients such as react-admin sort by it).
    expect(orderFields('/contact')).toEqual(['created_at', 'display_name', 'id']);
    expect(orderFields('/calendar')).toEqual(['created_at', 'id', 'name', 'updated_at']);
    expect(orderFields('/appointment')).toEqual(['id', 'start_time']);
    expect(orderFields('/deal')).toEqual(['id', 'lost_at', 'won_at']);
    expect(orderFields('/segment')).toEqual(['id']);
    expect(orderFields('/campaign')).toEqual(['id']);
    expect(orderFields('/appointment_custom_field')).toEqual(['appointment_id', 'custom_field_id']);

    const contact = registry.get('contact')!;
    for (const field of orderFields('/contact'))
      expect(() => planGet(contact, `order=${field}.desc.nullslast`)).not.toThrow();
    expect(errorOf(() => planGet(contact, 'order=email')).code).toBe('UNKNOWN_FIELD');
  });

  it('documents in select exactly the casts the planner accepts', () => {
    const documented = listAfter(doc.components.parameters.select!.description, 'Casts:');
    const hint = errorOf(() => planGet(registry.get('deal')!, 'select=name::nocast')).hint;
    expect(documented).toEqual(listAfter(hint, 'Casts allowed in select:'));
    expect(doc.components.parameters.select!.description).toContain('Filtering Columns');
    for (const resource of registry.resources.filter((r) => r.verbs.has('GET'))) {
      const select = parameter(doc, `/${resource.name}`, 'get', 'select')!;
      expect(listAfter(select.description, 'Casts:'), resource.name).toEqual(documented);
      expect(select.description).toContain('Filtering Columns');
    }
  });

  it('documents only Prefer values the engine accepts under handling=strict', () => {
    const description = doc.components.parameters.Prefer!.description ?? '';
    const documented = [...description.matchAll(/`([a-z-]+)=([^`]+)`/g)].map(
      ([, name, values]) => [name!, values!.split('|')] as const,
    );
    expect(documented.map(([name]) => name)).toEqual(
      expect.arrayContaining(['count', 'return', 'resolution', 'missing', 'handling', 'tx', 'max-affected']),
    );
    for (const [name, values] of documented) {
      for (const value of values) {
        expect(() => parsePreferences(`handling=strict, ${name}=${value === 'N' ? '5' : value}`)).not.toThrow();
      }
    }
  });

  it('shares pagination, Prefer and version parameters as the contract names them', () => {
    const p = doc.components.parameters;
    expect(p.limit).toMatchObject({ name: 'limit', in: 'query', schema: { type: 'string' } });
    expect(p.offset).toMatchObject({ name: 'offset', in: 'query', schema: { type: 'string' } });
    expect(p.limit!.description).toContain('Limiting and Pagination');
    expect(p.Range).toMatchObject({ name: 'Range', in: 'header' });
    expect(p['Range-Unit']).toMatchObject({ name: 'Range-Unit', in: 'header', schema: { default: 'items' } });
    expect(p.Prefer).toMatchObject({ name: 'Prefer', in: 'header', schema: { type: 'string' } });
    expect(p['engage-version']).toMatchObject({
      in: 'header',
      required: false,
      schema: { type: 'string', enum: ['2026-11-01'] },
    });
    const get = parametersOf(doc, doc.paths['/segment']!.get!).map((x) => `${x.in}:${x.name}`);
    expect(get).toEqual(
      expect.arrayContaining([
        'query:select',
        'query:limit',
        'query:offset',
        'query:and',
        'query:or',
        'header:Range',
        'header:Range-Unit',
        'header:Prefer',
        'header:engage-version',
      ]),
    );
  });
});

describe('buildOpenApi: operations', () => {
  const names = (path: string, method: string) => parametersOf(doc, doc.paths[path]![method]!).map((p) => p.name);

  it('answers a list with an array, or one object for the pgrst object media type, and Content-Range', () => {
    const get = doc.paths['/deal']!.get!;
    expect(get.responses['200']).toMatchObject({
      headers: { 'Content-Range': { $ref: '#/components/headers/Content-Range' } },
      content: {
        'application/json': { schema: { type: 'array', items: { $ref: '#/components/schemas/deal' } } },
        'application/vnd.pgrst.object+json': { schema: { $ref: '#/components/schemas/deal' } },
      },
    });
    // Every resource read here is a stream of changes too: 410 for an expired position, 429 past a tenant's streams.
    expect(Object.keys(get.responses)).toEqual(['200', '206', '304', '400', '401', '406', '410', '416', '429']);
    // A record with a version: an ETag on a singular read, and If-None-Match to ask for it only once changed.
    expect(get.responses['200']).toMatchObject({ headers: { ETag: { $ref: '#/components/headers/ETag' } } });
    expect(names('/deal', 'get')).toContain('If-None-Match');
    // As a stream: Server-Sent Events from Last-Event-ID; every read tells its Change-Position.
    expect(get.responses['200']).toMatchObject({
      headers: { 'Change-Position': { $ref: '#/components/headers/Change-Position' } },
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    });
    expect(names('/deal', 'get')).toContain('Last-Event-ID');
    expect(names('/deal', 'head')).not.toContain('Last-Event-ID');
    expect(doc.paths['/deal']!.head!.responses['200']).not.toHaveProperty('content');
  });

  it('describes request bodies with the schemas the write path validates with', () => {
    const schemas = doc.components.schemas as Record<
      string,
      { properties: Record<string, unknown>; additionalProperties: boolean }
    >;
    const create = schemas['calendar.create']!;
    expect(Object.keys(create.properties)).toEqual(['id', 'name', 'type', 'external_id']);
    expect(create.additionalProperties).toBe(false);
    expect(Object.keys(schemas['calendar.update']!.properties)).not.toContain('id');
    expect(JSON.stringify(schemas['deal.create']!.properties.currency)).toContain('"EUR","CHF","USD"');
    expect(schemas['deal_details.update']!.additionalProperties).toBe(true);
    expect(schemas['segment.create']).toBeUndefined();
  });

  it('takes one object or an array on POST, with columns and on_conflict but no filters', () => {
    const post = doc.paths['/calendar']!.post!;
    expect(post.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              { $ref: '#/components/schemas/calendar.create' },
              { type: 'array', items: { $ref: '#/components/schemas/calendar.create' } },
            ],
          },
        },
      },
    });
    expect(names('/calendar', 'post')).toEqual([
      'select',
      'columns',
      'on_conflict',
      'Prefer',
      'Idempotency-Key',
      'engage-version',
    ]);
    expect(post.responses['201']).toMatchObject({
      content: { 'application/json': { schema: { type: 'array' } } },
      headers: { 'Idempotent-Replayed': { $ref: '#/components/headers/Idempotent-Replayed' } },
    });
    expect(Object.keys(post.responses)).toEqual(['200', '201', '204', '400', '401', '403', '409', '413', '415', '422']);
  });

  it('names Idempotency-Key and its answers only when the engine takes keys', () => {
    const off = buildOpenApi(registry, { ...openapiOptions(), idempotency: false }) as unknown as Document;
    for (const method of ['post', 'patch', 'delete']) {
      const op = off.paths['/deal']![method]!;
      expect(parametersOf(off, op).map((p) => p.name)).not.toContain('Idempotency-Key');
      expect(Object.keys(op.responses)).not.toContain('422');
      expect(names('/deal', method)).toContain('Idempotency-Key');
    }
  });

  it('selects the rows of PATCH and DELETE by filters, without pagination', () => {
    for (const method of ['patch', 'delete']) {
      expect(names('/deal', method)).toEqual(
        expect.arrayContaining(['id', 'currency', 'and', 'or', 'select', 'Prefer']),
      );
      expect(names('/deal', method)).not.toContain('limit');
      expect(names('/deal', method)).not.toContain('order');
    }
    expect(doc.paths['/deal_details']!.patch!.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/deal_details.update' } } },
    });
    expect(Object.keys(doc.paths['/deal']!.patch!.responses)).toEqual([
      '200',
      '204',
      '400',
      '401',
      '403',
      '409',
      '412',
      '413',
      '415',
      '422',
    ]);
    expect(Object.keys(doc.paths['/deal']!.delete!.responses)).toEqual([
      '200',
      '204',
      '400',
      '401',
      '409',
      '412',
      '422',
    ]);
    for (const method of ['patch', 'delete'])
      expect(names('/deal', method)).toEqual(expect.arrayContaining(['If-Match', 'Idempotency-Key']));
  });
});

describe('buildOpenApi: relations', () => {
  const readable = registry.resources.filter((r) => r.verbs.has('GET'));
  const selectOf = (document: Document, resource: Resource) =>
    parameter(document, `/${resource.name}`, 'get', 'select')?.description ?? '';
  const xRelations = (document: Document, name: string) =>
    document.components.schemas[name]!['x-relations'] as Json[] | undefined;

  it('has relations to describe', () => {
    // Embeds both ways: deal -> contact (to one) and contact -> deal (to many).
    expect(registry.get('deal')!.relations.map((r) => `${r.name}:${r.cardinality}`)).toContain('contact:one');
    expect(registry.get('contact')!.relations.map((r) => `${r.name}:${r.cardinality}`)).toContain('deal:many');
  });

  it('lists on the schema of each readable resource its relations as the registry derives them (x-relations)', () => {
    for (const resource of registry.resources) {
      const expected =
        resource.verbs.has('GET') && resource.relations.length > 0
          ? resource.relations.map((r) => ({
              name: r.name,
              target: r.target.name,
              cardinality: r.cardinality,
              foreign_key: r.foreignKey,
              field: r.parentFields.length === 1 ? r.parentFields[0] : r.parentFields,
              target_field: r.targetFields.length === 1 ? r.targetFields[0] : r.targetFields,
              ...(r.junction ? { junction: r.junction.table } : {}),
            }))
          : undefined;
      expect(xRelations(doc, resource.name), resource.name).toEqual(expected);
    }
  });

  it('leads each x-relation to a readable path and schema, joining fields both ends have', () => {
    for (const resource of readable) {
      for (const relation of xRelations(doc, resource.name) ?? []) {
        const target = String(relation.target);
        expect(doc.paths[`/${target}`]?.get, `${resource.name} -> ${target}`).toBeDefined();
        expect(doc.components.schemas[resource.name]!.properties).toHaveProperty(String(relation.field));
        expect(doc.components.schemas[target]!.properties).toHaveProperty(String(relation.target_field));
      }
    }
  });

  it("names in the select of each read the resource's relations, as the UNKNOWN_RELATION hint does", () => {
    for (const resource of readable) {
      const error = errorOf(() => planGet(resource, 'select=*,no_such_relation(*)'));
      expect(error.code).toBe('UNKNOWN_RELATION');
      expect(selectOf(doc, resource).split('\n'), resource.name).toContainEqual(expect.stringContaining(error.hint!));
    }
    expect(selectOf(doc, registry.get('deal')!)).toContain('Relations of deal: contact (to one, deal_contact_fkey).');
    expect(selectOf(doc, registry.get('segment')!)).toContain('segment has no relations to embed.');
  });

  it('describes only relations the planner embeds, by name, foreign key and alias, in every form', () => {
    for (const resource of readable) {
      for (const relation of resource.relations) {
        const embed = `${relation.name}!${relation.foreignKey}`;
        for (const select of [
          `*,${embed}(*)`,
          `*,x:${embed}!inner()`,
          `*,...${embed}(${relation.targetFields.join(',')})`,
        ]) {
          expect(() => planGet(resource, `select=${select}`), `${resource.name}?select=${select}`).not.toThrow();
        }
        expect(() => planGet(resource, `select=*,${embed}(*)&${relation.name}.limit=1`)).not.toThrow();
        expect(() => planGet(resource, `select=*,${embed}()&${relation.name}=not.is.null`)).not.toThrow();
      }
    }
  });

  it('documents embedding, spread, aggregates and embed parameters in the select of reads, not of writes', () => {
    const forms = ['rel(fields)', 'alias:rel(', '!inner', '!left', 'rel!fk(', 'rel()', '...rel(', 'count()'];
    const parameters = ['rel.field=op.value', 'rel.or=(', 'rel.order=', 'rel.limit=', 'rel.offset=', 'rel=is.null'];
    for (const resource of readable.filter((r) => r.relations.length > 0)) {
      const description = selectOf(doc, resource);
      for (const text of [...forms, ...parameters, 'NOT_EMBEDDED']) expect(description, resource.name).toContain(text);
    }
    // A resource with nothing to embed is not told about embedding, only aggregates.
    expect(selectOf(doc, registry.get('segment')!)).not.toContain('Resource embedding');
    expect(selectOf(doc, registry.get('segment')!)).toContain('count()');
    const writes = doc.components.parameters.select!.description!;
    expect(writes).toContain('embeds included');
    expect(writes).toContain('cannot aggregate');
    for (const method of ['post', 'patch', 'delete']) {
      expect(doc.paths['/deal']![method]!.parameters).toContainEqual({ $ref: '#/components/parameters/select' });
    }
    expect(doc.paths['/deal']!.get!.parameters).toContainEqual({ $ref: '#/components/parameters/select.deal' });
    // HEAD takes GET's parameters but Last-Event-ID, which only a stream reads.
    const stream = { $ref: '#/components/parameters/Last-Event-ID' };
    expect(doc.paths['/deal']!.get!.parameters).toContainEqual(stream);
    expect(doc.paths['/deal']!.head!.parameters).toEqual(
      doc.paths['/deal']!.get!.parameters!.filter((p) => (p as { $ref?: string }).$ref !== stream.$ref),
    );
  });

  it('documents for each aggregate exactly the field kinds the planner accepts', () => {
    const description = selectOf(doc, registry.get('deal')!);
    const fieldOfKind = new Map<FieldKind, [Resource, string]>();
    for (const resource of readable) {
      for (const field of resource.fields) {
        if (!fieldOfKind.has(field.kind)) fieldOfKind.set(field.kind, [resource, field.name]);
      }
    }
    for (const fn of AGGREGATES) {
      const match = new RegExp(`\`field\\.${fn}\\(\\)\` \\(([^)]*)\\)`).exec(description);
      expect(match, fn).not.toBeNull();
      const kinds = match![1] === 'any field' ? FIELD_KINDS : match![1]!.split(', ');
      for (const [kind, [resource, field]] of fieldOfKind) {
        const plan = () => planGet(resource, `select=${field}.${fn}()`);
        if (kinds.includes(kind)) expect(plan, `${field}.${fn}() (${kind})`).not.toThrow();
        else expect(errorOf(plan).code, `${field}.${fn}() (${kind})`).toBe('INVALID_AGGREGATE');
      }
    }
    expect(() => planGet(registry.get('deal')!, 'select=currency,count()')).not.toThrow();
  });

  it("offers ordering by each to-one relation's order fields, as the planner allows", () => {
    for (const resource of readable) {
      const description = parameter(doc, `/${resource.name}`, 'get', 'order')?.description ?? '';
      const toOne = resource.relations.filter((r) => r.cardinality === 'one');
      if (toOne.length === 0) {
        expect(description).not.toContain('to-one relation');
        continue;
      }
      const terms = listAfter(description, 'To-one relations and their fields:');
      expect(terms.map((t) => t.replace(/\(.*/, ''))).toEqual(toOne.map((r) => r.name));
      for (const term of terms) {
        const [, name, fields] = /^(\w+)\(([^)]*)\)$/.exec(term)!;
        const relation = toOne.find((r) => r.name === name)!;
        expect(fields!.split('|').sort()).toEqual(
          relation.target.fields
            .filter((f) => f.orderable)
            .map((f) => f.name)
            .sort(),
        );
        for (const field of fields!.split('|')) {
          const query = `select=*,${name}!${relation.foreignKey}(*)&order=${name}(${field}).desc`;
          expect(() => planGet(resource, query), `${resource.name}?${query}`).not.toThrow();
        }
      }
    }
    const contact = registry.get('contact')!;
    expect(errorOf(() => planGet(contact, 'select=*,deal(*)&order=deal(id)')).code).toBe('INVALID_QUERY');
  });

  it('shows a relation renamed or hidden by the registry, and aggregates turned off, as the registry has them', () => {
    const changed = createRegistry(
      resources.map((r) =>
        r.name === 'deal'
          ? { ...r, relations: { deal_contact_fkey: 'buyer' } }
          : r.name === 'contact'
            ? { ...r, relations: { appointment_contact_fkey: false }, aggregates: false }
            : r,
      ),
      registryOptions,
    );
    const document = build(changed);
    expect(xRelations(document, 'deal')?.map((r) => r.name)).toEqual(['buyer']);
    expect(selectOf(document, changed.get('deal')!)).toContain('Relations of deal: buyer (to one, deal_contact_fkey).');
    expect(parameter(document, '/deal', 'get', 'order')?.description).toContain('buyer(');
    const contactRelations = xRelations(document, 'contact')?.map((r) => r.name);
    expect(contactRelations).toContain('deal');
    expect(contactRelations).not.toContain('appointment');
    expect(contactRelations).not.toContain('appointment_details');
    expect(selectOf(document, changed.get('contact')!)).toContain('contact does not offer them');
    expect(errorOf(() => planGet(changed.get('contact')!, 'select=count()')).code).toBe('INVALID_AGGREGATE');
    expect(() => planGet(changed.get('deal')!, 'select=*,buyer(*)&order=buyer(display_name)')).not.toThrow();
  });
});

describe('buildOpenApi: generated from the registry', () => {
  it('shows a resource added to the registry with its path and schema', () => {
    expect(Object.keys(withWidget.paths['/widget']!)).toEqual(['get', 'head', 'delete']);
    expect(withWidget.components.schemas.widget!.properties.label).toEqual({ type: ['string', 'null'] });
    expect(withWidget.components.schemas.widget!.properties.created_at).toMatchObject({
      format: 'date-time',
      readOnly: true,
    });
    // The primary key is always orderable (the tiebreak of every page), beside what the definition lists.
    expect(listAfter(parameter(withWidget, '/widget', 'get', 'order')?.description, 'Allowed fields:')).toEqual([
      'id',
      'label',
    ]);
    expect(doc.paths['/widget']).toBeUndefined();
  });

  it('offers filters only on filterable fields, quoting names the query language reserves', () => {
    const params = parametersOf(withWidget, withWidget.paths['/widget']!.get!).map((p) => p.name);
    expect(params).toEqual(expect.arrayContaining(['id', 'label', '"order"', 'order']));
    expect(params).not.toContain('created_at');
    // The quoted name is how the engine reads a filter on a field called "order".
    const plan = planGet(extended.get('widget')!, `${encodeURIComponent('"order"')}=eq.x`);
    expect(plan.where).toHaveLength(1);
  });
});

describe('buildOpenApi: structure', () => {
  for (const [label, document] of [
    ['real registry', doc],
    ['extended registry', withWidget],
  ] as const) {
    it(`resolves every $ref inside the document (${label})`, () => {
      const refs = allRefs(document);
      expect(refs.length).toBeGreaterThan(0);
      const broken = refs.filter((ref) => follow(document, ref) === undefined);
      expect(broken).toEqual([]);
    });

    it(`gives every parameter a name, a location and a schema, once per operation (${label})`, () => {
      for (const { path, method, op } of operations(document)) {
        const params = parametersOf(document, op);
        for (const p of params) {
          expect(p, `${method} ${path}`).toMatchObject({
            name: expect.any(String),
            in: expect.stringMatching(/^(query|header|path|cookie)$/),
          });
          expect(p.schema, `${method} ${path} ${p.name}`).toBeDefined();
        }
        const keys = params.map((p) => `${p.in}:${p.name}`);
        expect(new Set(keys).size, `${method} ${path}`).toBe(keys.length);
        for (const response of Object.values(op.responses)) {
          expect(deref<Json>(document, response).description, `${method} ${path}`).toEqual(expect.any(String));
        }
      }
    });
  }

  it('notices a dangling $ref', () => {
    expect(follow(doc, '#/components/schemas/nope')).toBeUndefined();
    expect(follow(doc, '#/components/schemas/deal')).toBeDefined();
  });
});

describe('buildOpenApi: the versioned API (/v1)', () => {
  const v1 = operations(doc).filter((o) => o.path.startsWith('/v1/'));
  const paging = registry.resources.filter((r) => r.keyset);

  it('documents every route server/versioned.ts serves, for each collection offering it, and nothing else', () => {
    expect(v1.map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort()).toEqual(
      versionedOperations(registry),
    );
  });

  it('serves its paths from beside /api/v1, the server following the document server', () => {
    for (const path of Object.keys(doc.paths).filter((p) => p.startsWith('/v1/'))) {
      expect((doc.paths[path] as Json).servers, path).toEqual([{ url: '/', description: expect.any(String) }]);
    }
    const at = (serverUrl: string) =>
      (build(registry, serverUrl).paths['/v1/files'] as Json).servers as Array<{ url: string }>;
    expect(at('http://127.0.0.1:3000/api/v1')[0]!.url).toBe('http://127.0.0.1:3000');
    expect(at('/engage/api/v1/')[0]!.url).toBe('/engage');
  });

  it('takes the bearer token and the version header, and answers errors with the error body', () => {
    for (const { path, method, op } of v1) {
      expect(op.security, `${method} ${path}`).toBeUndefined();
      expect(parametersOf(doc, op).map((p) => p.name)).toContain('engage-version');
      expect(op.responses['401'], `${method} ${path}`).toEqual({ $ref: '#/components/responses/Unauthorized' });
      for (const [status, response] of Object.entries(op.responses).filter(([s]) => Number(s) >= 400)) {
        const content = deref<Json>(doc, response).content as Record<string, Json>;
        expect(content['application/json']!.schema, `${method} ${path} ${status}`).toEqual({
          $ref: '#/components/schemas/Error',
        });
      }
    }
  });

  it('uploads a file as CSV, JSON or NDJSON and answers 201 with the stored file', () => {
    const upload = doc.paths['/v1/files']!.post!;
    expect(Object.keys((upload.requestBody as { content: Json }).content).sort()).toEqual([
      'application/json',
      'application/x-ndjson',
      'text/csv',
    ]);
    expect(Object.keys(upload.responses).sort()).toEqual(['201', '400', '401', '404', '409', '413', '415', '422']);
    expect(doc.components.schemas.StoredFile!.required).toEqual(['id', 'size', 'content_type', 'sha256']);
  });

  it("imports items with the resource's fields, and custom-field keys where it has them", () => {
    for (const resource of registry.resources.filter((r) => r.imports)) {
      const item = doc.components.schemas[`${resource.collection}.import_item`]!;
      const writable = resource.fields.filter((f) => !f.serverManaged || f.name === 'id').map((f) => f.name);
      expect(Object.keys(item.properties).sort()).toEqual(writable.sort());
      expect(item.additionalProperties).toBe(resource.imports!.customFields !== undefined);
      const batch = doc.paths[`/v1/${resource.collection}/imports/batch`]!.post!;
      expect(batch.responses['200']).toMatchObject({
        content: { 'application/json': { schema: { $ref: '#/components/schemas/BatchResult' } } },
      });
      const start = doc.paths[`/v1/${resource.collection}/imports`]!.post!;
      expect(start.responses['202']).toMatchObject({
        content: { 'application/json': { schema: { $ref: '#/components/schemas/ImportJob' } } },
      });
    }
    const job = doc.components.schemas.ImportJob!;
    expect(job.properties.status).toEqual({ type: 'string', enum: ['queued', 'running', 'succeeded', 'failed'] });
    expect(parameter(doc, '/v1/imports/{id}', 'get', 'id', 'path')).toMatchObject({ required: true });
  });

  it('pages a keyset collection by limit and cursor into {data, next_cursor}', () => {
    for (const resource of paging) {
      const path = `/v1/${resource.collection}`;
      expect(parameter(doc, path, 'get', 'limit')?.schema).toMatchObject({ minimum: 1, maximum: 1000, default: 50 });
      expect(parameter(doc, path, 'get', 'cursor')).toBeDefined();
      const page = doc.components.schemas[`${resource.collection}.page`]!;
      expect(page.properties.data).toEqual({ type: 'array', items: { $ref: `#/components/schemas/${resource.name}` } });
      expect(page.properties.next_cursor).toMatchObject({ type: ['string', 'null'] });
    }
  });

  it('has no /v1 paths, schemas or parameters for a registry without collections or webhook deliveries', () => {
    const bare = build(
      createRegistry(
        resources
          .filter((r) => r.name !== 'webhook_delivery')
          .map(({ collection: _, keyset: __, imports: ___, ...r }) => r),
        registryOptions,
      ),
    );
    expect(Object.keys(bare.paths).filter((p) => p.startsWith('/v1'))).toEqual([]);
    expect(Object.keys(bare.components.schemas)).not.toContain('ImportJob');
    expect(Object.keys(bare.components.parameters)).not.toContain('page.limit');
    expect(Object.keys(bare.components.responses)).not.toContain('NotFound');
  });
});

describe('withServerUrl', () => {
  it('moves the server and the /v1 paths with it, leaving the rest', () => {
    const absolute = build(registry, 'http://10.0.0.1:3000/api/v1');
    const moved = withServerUrl(absolute as never, '/engage/api/v1', {
      description: 'This server',
    }) as never as Document;
    expect(moved.servers).toEqual([{ url: '/engage/api/v1', description: 'This server' }]);
    expect((moved.paths['/v1/files'] as Json).servers).toEqual([{ url: '/engage', description: expect.any(String) }]);
    expect(moved.paths['/deal']).toBe(absolute.paths['/deal']);
    expect(withServerUrl(absolute as never, '/api/v1').paths).toMatchObject({
      '/v1/contacts': { servers: [{ url: '/' }] },
    });
  });
});
