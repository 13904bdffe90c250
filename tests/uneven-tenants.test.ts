/**
 * Organisations of very uneven size in one database: a large one and a small one (a few thousand
 * contacts), plus a tiny one and an empty one for counts.
 *
 * Plans: statements are prepared with the generic plan (engine/db/port.ts), which knows the
 * organisation only as "one of them" and once priced a sequential scan of every organisation's
 * rows below the index led by organisation_id. Every filter operator on every field kind of every
 * resource served is compiled as the engine compiles it and explained as it runs (prepared, on the
 * pool's own connections and settings): each tenant table must be read through an index led by
 * organisation_id with it in the index condition (api_token, which the scope reads, by its token
 * hash), and no plan may be parallel.
 *
 * Counts: count=planned and count=estimated answer the planner's estimate for the caller's
 * organisation, and nothing about the size of the others.
 */
import type { Field, FieldKind, Queryable } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileKeysetPage } from '../engine/compile/keyset.ts';
import { compileRead } from '../engine/compile/read.ts';
import type { CompiledStatement } from '../engine/compile/sql.ts';
import { compileWrite } from '../engine/compile/write.ts';
import { IS_VALUES, OPERATORS, type Operator, SCALAR_KINDS } from '../engine/operators.ts';
import { parseRequest } from '../engine/parse/index.ts';
import { planRead } from '../engine/plan/read.ts';
import { planDelete } from '../engine/plan/write.ts';
import { hashToken } from '../engine/tokens.ts';
import { registry } from '../schema/registry.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';
import { SCOPING } from './helpers/scoping.ts';

// Contacts of each organisation; PGlite gets fewer, the plans' shape does not depend on it.
const ON_POSTGRES = process.env.DATABASE_URL !== undefined;
const LARGE = ON_POSTGRES ? 120_000 : 20_000;
const SMALL = ON_POSTGRES ? 3_000 : 2_000;
const TINY = 10;
const SLOW = 120_000;

let t: TestApp;
let large: Organisation;
let small: Organisation;
let tiny: Organisation;
let empty: Organisation;
/** Tables with an organisation_id column, and the first column of every index. */
let tenantTables: Set<string>;
let leadingColumn: Map<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  [large, small, tiny, empty] = [
    await createOrganisation(t),
    await createOrganisation(t),
    await createOrganisation(t),
    await createOrganisation(t),
  ];
  // One contact in five has a deal, another one in five an appointment with two custom-field values.
  await t.db.query(
    `INSERT INTO contact (organisation_id, created_at, display_name, full_name, email, city, is_blocked, birthday,
       number_of_marketing_opt_in_requests, email_marketing_opt_in, external_id)
     SELECT o.id, now() - make_interval(mins => g), 'Contact ' || g, 'Full Name ' || g,
            'contact' || g || '@example.com',
       (ARRAY['Zürich', 'Bern', 'Basel', 'Genève'])[1 + g % 4], g % 13 = 0, date '1950-01-01' + g % 20000, g % 5,
       g % 2 = 0, 'ext-' || g
     FROM (VALUES ($1::uuid, $2::int4), ($3::uuid, $4::int4), ($5::uuid, $6::int4)) o(id, n)
     CROSS JOIN LATERAL generate_series(1, o.n) g`,
    [large.id, String(LARGE), small.id, String(SMALL), tiny.id, String(TINY)],
  );
  await t.db.exec(`
    INSERT INTO deal (organisation_id, contact_id, name, value, currency, status_key, won_at, external_id)
    SELECT organisation_id, id, 'Deal ' || external_id, abs(hashtext(external_id)) % 1000 * 10.5,
      (ARRAY['EUR', 'CHF', 'USD'])[1 + abs(hashtext(external_id)) % 3], 'open', created_at, external_id
    FROM contact WHERE abs(hashtext(external_id)) % 5 = 0;
    INSERT INTO appointment (organisation_id, contact_id, name, status_key, start_time, end_time, external_id)
    SELECT organisation_id, id, 'Appointment ' || external_id, 'confirmed', created_at, created_at, external_id
    FROM contact WHERE abs(hashtext(external_id)) % 5 = 1;
    INSERT INTO custom_field (organisation_id, name, key, type, entity)
    SELECT id, f.key, f.key, f.type, 'appointment' FROM organisation
    CROSS JOIN (VALUES ('room', 'string'), ('tags', 'string_list')) f(key, type);
    INSERT INTO appointment_custom_field (organisation_id, appointment_id, custom_field_id, key, value, string_value,
      string_list_value)
    SELECT a.organisation_id, a.id, f.id, f.key, 'x', 'Room 1', ARRAY['a', 'b']
    FROM appointment a JOIN custom_field f ON f.organisation_id = a.organisation_id;
    INSERT INTO calendar (organisation_id, name) SELECT id, 'Desk' FROM organisation;
    INSERT INTO segment (organisation_id, name) SELECT id, 'All' FROM organisation;
    INSERT INTO campaign (organisation_id, name) SELECT id, 'Winter' FROM organisation;
  `);
  await t.db.exec('VACUUM ANALYZE');
  const columns = await t.db.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.columns' +
      " WHERE table_schema = 'public' AND column_name = 'organisation_id'",
  );
  tenantTables = new Set(columns.map((c) => c.table_name));
  const indexes = await t.db.query<{ index: string; leading: string }>(
    `SELECT i.indexrelid::regclass::text AS index, a.attname AS leading FROM pg_index i
     JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0]`,
  );
  leadingColumn = new Map(indexes.map((i) => [i.index, i.leading]));
}, SLOW);
afterAll(() => t?.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Parallel Aware'?: boolean;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** The plan of a prepared statement's execution on `tx`, as the pool's connections plan it. */
async function explainPrepared(tx: Queryable, statement: CompiledStatement, analyze = false): Promise<PlanNode> {
  await tx.query(`PREPARE uneven(${statement.params.map(() => 'text').join(', ')}) AS ${statement.text}`);
  // EXECUTE takes no parameters of its own: the server quotes the values into its text.
  const [{ explain }] = (await tx.query(
    `SELECT format('EXPLAIN (FORMAT JSON${analyze ? ', ANALYZE' : ''}) EXECUTE uneven(%s)',` +
      ' string_agg(quote_nullable(v), $2::text ORDER BY n)) AS explain' +
      ' FROM json_array_elements_text($1::text::json) WITH ORDINALITY a(v, n)',
    [JSON.stringify(statement.params), ', '],
  )) as [{ explain: string }];
  const [row] = await tx.query<{ 'QUERY PLAN': unknown }>(explain);
  await tx.query('DEALLOCATE uneven');
  const plan = row!['QUERY PLAN'];
  return ((typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: PlanNode }>)[0]!.Plan;
}

/** The same on one connection of the pool, with its settings alone. */
const preparedPlan = (statement: CompiledStatement, analyze = false) =>
  t.db.transaction((tx) => explainPrepared(tx, statement, analyze));

/** A scan's table; a Bitmap Index Scan names only its index, so it takes its heap scan's. */
const nodes = (node: PlanNode, table?: string): Array<{ node: PlanNode; table: string | undefined }> => [
  { node, table: node['Relation Name'] ?? table },
  ...(node.Plans ?? []).flatMap((child) =>
    nodes(child, node['Node Type'].startsWith('Bitmap') ? (node['Relation Name'] ?? table) : undefined),
  ),
];

/**
 * What in a plan reads a tenant table other than through an index led by organisation_id with
 * organisation_id in its condition (api_token: by token_hash, which the scope looks up), or runs in
 * parallel.
 */
function faults(plan: PlanNode): string[] {
  return nodes(plan).flatMap(({ node, table }) => {
    const type = node['Node Type'];
    const found: string[] = [];
    if (node['Parallel Aware'] || type === 'Gather' || type === 'Gather Merge') found.push(`parallel ${type}`);
    if (!table || !tenantTables.has(table) || !type.endsWith('Scan') || type === 'Bitmap Heap Scan') return found;
    const key = table === 'api_token' ? 'token_hash' : 'organisation_id';
    const index = node['Index Name'];
    const scoped =
      index !== undefined && leadingColumn.get(index) === key && (node['Index Cond'] ?? '').includes(`(${key} = `);
    if (!scoped)
      found.push(`${type} on ${table}${index ? ` using ${index} (${node['Index Cond'] ?? 'no condition'})` : ''}`);
    return found;
  });
}

/** Faults of each statement, as `label: fault`. */
async function faultsOf(statements: ReadonlyArray<[string, CompiledStatement]>): Promise<string[]> {
  const found: string[] = [];
  for (const [label, statement] of statements) {
    for (const fault of new Set(faults(await preparedPlan(statement)))) found.push(`${label}: ${fault}`);
  }
  return found;
}

const scope = () => ({ tokenHash: hashToken(small.token) });

const read = (resource: string, query: string, prefer?: string) => {
  const request = parseRequest({
    method: 'GET',
    resource,
    query,
    header: (h) => (h === 'prefer' ? prefer : undefined),
  });
  return compileRead(planRead(registry.get(resource)!, request, 1000), scope(), SCOPING);
};

/** A value of each kind, for filters. */
const SAMPLE: Partial<Record<FieldKind, string>> = {
  uuid: '11111111-1111-4111-8111-111111111111',
  text: 'foo',
  boolean: 'true',
  integer: '5',
  numeric: '2.5',
  date: '2026-01-02',
  timestamptz: '2026-01-02T03:04:05Z',
  'text[]': '{a,b}',
  jsonb: '{"a":1}',
};

/** Every filter on a field: each operator that applies to its kind, every `is` value, and `any` lists. */
function filtersOn(field: Field): string[] {
  const value = field.enum?.[0] ?? SAMPLE[field.kind]!;
  return (Object.keys(OPERATORS) as Operator[]).flatMap((op) => {
    const spec = OPERATORS[op];
    if (!(spec.kinds as readonly FieldKind[]).includes(field.kind)) return [];
    if (op === 'is') {
      return Object.entries(IS_VALUES).flatMap(([is, kinds]) =>
        (kinds as readonly FieldKind[]).includes(field.kind) ? [`is.${is}`] : [],
      );
    }
    if (op === 'in') return [`in.(${value},${value})`];
    if (spec.grammar === 'search') return [`${op}.foo`];
    const operand = 'starWildcard' in spec ? '*foo*' : value;
    const single = `${op}.${encodeURIComponent(operand)}`;
    return spec.grammar === 'quantifiable' && SCALAR_KINDS.includes(field.kind)
      ? [single, `${op}(any).${encodeURIComponent(`{${operand},${operand}}`)}`]
      : [single];
  });
}

describe('no plan reads another organisation’s rows first', () => {
  const readable = registry.resources.filter((r) => r.verbs.has('GET'));

  it.each(readable.map((r) => r.name))(
    'GET %s: every filter operator on every field, counted exactly, and every order',
    async (name) => {
      const resource = registry.get(name)!;
      const statements: Array<[string, CompiledStatement]> = [];
      for (const field of resource.fields.filter((f) => f.filterable)) {
        for (const filter of filtersOn(field)) {
          const query = `${field.name}=${filter}`;
          statements.push([`${name}?${query}`, read(name, query, 'count=exact')]);
        }
      }
      for (const field of resource.fields.filter((f) => f.orderable)) {
        statements.push([`${name}?order=${field.name}`, read(name, `order=${field.name}.desc&limit=25`)]);
      }
      for (const count of ['estimated', 'planned']) {
        statements.push([`${name} count=${count}`, read(name, 'limit=25', `count=${count}`)]);
      }
      expect(await faultsOf(statements)).toEqual([]);
    },
    SLOW,
  );

  it('DELETE on every resource that offers it, filtered on every field', async () => {
    const statements: Array<[string, CompiledStatement]> = [];
    for (const resource of registry.resources.filter((r) => r.verbs.has('DELETE'))) {
      for (const field of resource.fields.filter((f) => f.filterable)) {
        const query = `${field.name}=not.is.null`;
        const request = parseRequest({ method: 'DELETE', resource: resource.name, query, header: () => undefined });
        statements.push([
          `DELETE ${resource.name}?${query}`,
          compileWrite(planDelete(resource, request, 1000), scope(), SCOPING),
        ]);
      }
    }
    expect(await faultsOf(statements)).toEqual([]);
  });

  it('keyset pages', async () => {
    const statements = registry.resources.flatMap(
      (r): Array<[string, CompiledStatement]> =>
        r.keyset ? [[`/v1/${r.collection}`, compileKeysetPage(r, scope(), SCOPING, 50, null)]] : [],
    );
    expect(statements.length).toBeGreaterThan(0);
    expect(await faultsOf(statements)).toEqual([]);
  });

  it('the small organisation’s ilike reads only its own rows', async () => {
    const plan = await preparedPlan(read('contact', 'email=ilike.*foo*'), true);
    const contactRows = nodes(plan)
      .filter(({ node, table }) => table === 'contact' && node['Node Type'] !== 'Bitmap Index Scan')
      .reduce(
        (sum, { node }) =>
          sum +
          (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1) +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0),
        0,
      );
    expect(contactRows).toBeLessThanOrEqual(SMALL);
  });

  it('would notice a sequential scan, a parallel plan and an index not led by organisation_id', async () => {
    const faultsWith = (text: string, settings: string[]) =>
      t.db.transaction(async (tx) => {
        for (const setting of settings) await tx.query(setting);
        return faults(await explainPrepared(tx, { text, params: [small.id] }));
      });
    const everyEmail = 'SELECT count(*) FROM contact WHERE email <> $1::text';
    expect(await faultsWith(everyEmail, ['SET LOCAL enable_seqscan = on'])).toContain('Seq Scan on contact');
    // PGlite has no parallel workers.
    if (ON_POSTGRES) {
      const parallel = ['max_parallel_workers_per_gather = 2', 'parallel_setup_cost = 0', 'parallel_tuple_cost = 0'];
      const settings = ['SET LOCAL enable_seqscan = on', ...parallel.map((p) => `SET LOCAL ${p}`)];
      expect(await faultsWith(everyEmail, settings)).toContain('parallel Gather');
    }
    const queued = "SELECT * FROM import_job WHERE status = 'queued' AND organisation_id::text <> $1::text";
    expect(await faultsWith(queued, ['SET LOCAL enable_seqscan = off'])).toEqual([
      expect.stringMatching(/^(Index|Bitmap Index) Scan on import_job /),
    ]);
  });
});

/** The scans of `table` in a plan, as `type using index (condition)`. */
const scansOf = (plan: PlanNode, table: string): string[] =>
  nodes(plan)
    .filter(({ node, table: t }) => t === table && node['Node Type'].endsWith('Scan'))
    .filter(({ node }) => node['Node Type'] !== 'Bitmap Heap Scan')
    .map(({ node }) => `${node['Node Type']} using ${node['Index Name'] ?? '-'} (${node['Index Cond'] ?? ''})`);

describe('every embed is served by an index led by organisation_id (issue 11)', () => {
  // [request, embedded table, how the embedded table must be reached besides: an index, a column in the
  // index condition, or (null) any index led by organisation_id with it in the condition]
  const EMBEDS: Array<[string, string, { index: string } | { cond: string } | null]> = [
    // The contact of each deal: one lookup by contact's key (organisation_id, id).
    ['deal?select=*,contact(*)', 'contact', { index: 'contact_pkey' }],
    ['contact?select=*,deal(*)', 'deal', { cond: 'contact_id = ' }],
    ['contact?select=*,appointment(*)', 'appointment', { cond: 'contact_id = ' }],
    // !inner with an embedded filter: an EXISTS on deal, which the planner may make a semi join walking
    // the organisation's contacts and deals in id / contact_id order (no per-contact condition), beside
    // the embed's own per-contact lookup.
    ['contact?select=id,deal!inner(id)&deal.value=gt.1', 'deal', null],
    // The parent ordered by its contact's name: a lookup by contact's key per deal.
    ['deal?select=name,contact()&order=contact(display_name)', 'contact', { index: 'contact_pkey' }],
    ['contact?select=id,deal(count)', 'deal', { cond: 'contact_id = ' }],
    ['appointment?select=*,appointment_custom_field(*)', 'appointment_custom_field', { cond: 'appointment_id = ' }],
  ];

  it('the relations explained here exist', () => {
    const names = (resource: string) => registry.get(resource)!.relations.map((r) => r.name);
    expect(names('deal')).toContain('contact');
    expect(names('contact')).toEqual(expect.arrayContaining(['deal', 'appointment']));
    expect(names('appointment')).toContain('appointment_custom_field');
  });

  it.each(EMBEDS)(
    'GET %s reads %s through an index led by organisation_id',
    async (request, table, reach) => {
      const [resource, query] = request.split('?') as [string, string];
      const statements: Array<[string, CompiledStatement]> = [
        [request, read(resource, query)],
        [`${request} (a page of 25, counted)`, read(resource, `${query}&limit=25`, 'count=exact')],
      ];
      expect(await faultsOf(statements)).toEqual([]);
      for (const [label, statement] of statements) {
        const plan = await preparedPlan(statement);
        const scans = scansOf(plan, table);
        const shown = `${label}: ${JSON.stringify(scans)}`;
        expect(scans.length, shown).toBeGreaterThan(0);
        for (const scan of scans) {
          expect(scan, shown).toMatch(/^(Index|Index Only|Bitmap Index) Scan using \S+ \(.*organisation_id = /);
          const index = scan.split(' using ')[1]!.split(' ')[0]!;
          expect(leadingColumn.get(index), shown).toBe('organisation_id');
          if (reach && 'index' in reach) expect(index, shown).toBe(reach.index);
          else if (reach) expect(scan, shown).toContain(reach.cond);
        }
      }
    },
    SLOW,
  );
});

describe('count=planned and count=estimated are the caller’s organisation’s', () => {
  const total = async (org: Organisation, query: string, prefer: string) => {
    const res = await t.call(`/contact?${query}`, org.token, { headers: { Prefer: prefer } });
    expect(res.status).toBeLessThan(300);
    const range = res.headers.get('content-range')!;
    expect(range).toMatch(/\/\d+$/);
    return Number(range.split('/')[1]);
  };
  const within = (estimate: number, truth: number) => {
    expect(estimate).toBeGreaterThanOrEqual(truth / 2);
    expect(estimate).toBeLessThanOrEqual(truth * 2);
  };

  it.each(['count=planned', 'count=estimated'])(
    '%s of the small organisation next to the large one',
    async (prefer) => {
      within(await total(small, 'limit=25', prefer), SMALL);
      // Past MAX_ROWS (1000) counted, estimated asks the planner too.
      expect(await total(small, 'limit=25', prefer)).toBeGreaterThan(prefer === 'count=estimated' ? 1000 : 25);
      within(await total(large, 'limit=25', prefer), LARGE);
    },
  );

  it('the estimate applies the filters', async () => {
    // A quarter of the contacts live in Bern.
    within(await total(small, 'city=eq.Bern&limit=25', 'count=planned'), SMALL / 4);
    within(await total(small, 'city=in.(Bern,Basel)&limit=25', 'count=planned'), SMALL / 2);
  });

  it('a page that is not full is the exact total, with nothing of other organisations', async () => {
    expect(await total(empty, '', 'count=planned')).toBe(0);
    expect(await total(tiny, '', 'count=planned')).toBe(TINY);
    expect(await total(tiny, 'offset=4&limit=25', 'count=planned')).toBe(TINY);
    expect(await total(small, `offset=${SMALL - 10}&limit=25`, 'count=planned')).toBe(SMALL);
  });

  it('a full page of a tiny organisation estimates its own few rows', async () => {
    const estimate = await total(tiny, 'limit=5', 'count=planned');
    expect(estimate).toBeGreaterThanOrEqual(5);
    expect(estimate).toBeLessThan(100);
  });
});
