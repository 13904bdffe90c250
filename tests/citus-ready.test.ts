/**
 * Citus readiness (docs/scaling.md, "Citus"). Every tenant table is to be distributed by
 * `organisation_id` and co-located with the others; `organisation` and `api_token` are reference
 * tables (api_token is read by token hash before the organisation is known, so it cannot be
 * distributed by it). Two checks:
 *
 * 1. The drizzle schema: every tenant table's primary key, unique constraints and unique indexes
 *    lead with organisation_id, and every foreign key between tenant tables leads with it on both
 *    sides (Citus refuses unique constraints without the distribution column and foreign keys
 *    between distributed tables that do not include it; a foreign key from a distributed table to
 *    a reference table is allowed, one from a reference table to a distributed table is not).
 *
 * 2. The statements: a broad set of requests on every resource of the registry goes through the
 *    engine's public API (createEngine) under both kinds of scope, over a database that records
 *    each statement it is given. Each statement is then planned with EXPLAIN (FORMAT JSON, VERBOSE)
 *    and the plan walked: every scan of a tenant table must carry `organisation_id = <scope>` in
 *    its own Index Cond, Recheck Cond or Filter, where <scope> is an InitPlan that reads the
 *    `scope` (or `allowed`) CTE or the organisation's id itself (the count estimate's parameter,
 *    which EXPLAIN shows as a constant). Every INSERT into a tenant table must take organisation_id
 *    from the scope (the `allowed` CTE), or from rows this statement wrote. The plan rather than
 *    the SQL text, because the plan is what runs: it names every relation read after CTEs,
 *    subqueries, laterals and EXISTS are resolved, gives every alias a unique name, and shows the
 *    conditions the planner attached to each scan (including those it derived, such as
 *    `cf.organisation_id = $2` from `cf.organisation_id = v.organisation_id AND v.organisation_id =
 *    $2`). A text check would have to parse nested SQL. The plan formats of PostgreSQL 15/16
 *    (`$0`) and 17 (`(InitPlan 1).col1`, PGlite) are both read.
 */
import {
  type ApiError,
  type Database,
  type Engine,
  type Queryable,
  type Resource,
  type Scope,
  type SqlParam,
  tokenScope,
} from '@engage/engine';
import { is } from 'drizzle-orm';
import {
  foreignKey,
  getTableConfig,
  index,
  type PgTable,
  PgTable as PgTableClass,
  pgTable,
  primaryKey,
  text,
  unique,
  uuid,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as schema from '../schema/tables.ts';
import { engageEngine } from '../server/engine.ts';
import { createOrganisation, insertRows, type Organisation } from './helpers/app.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

/** Tables replicated to every node (create_reference_table); every other table is distributed. */
const REFERENCE_TABLES: ReadonlySet<string> = new Set(['organisation', 'api_token']);
const DISTRIBUTION_COLUMN = 'organisation_id';

const allTables = (Object.values(schema) as unknown[]).filter((value): value is PgTable => is(value, PgTableClass));
const tableName = (table: PgTable) => getTableConfig(table).name;
const tenantTables = allTables.map(tableName).filter((name) => !REFERENCE_TABLES.has(name));

interface Key {
  readonly kind: string;
  readonly name: string;
  readonly columns: readonly string[];
}

/** The keys a table declares: primary key, unique constraints (inline or not) and unique indexes. */
function keysOf(table: PgTable): Key[] {
  const config = getTableConfig(table);
  const keys: Key[] = [];
  for (const pk of config.primaryKeys) {
    keys.push({ kind: 'primary key', name: pk.getName(), columns: pk.columns.map((c) => c.name) });
  }
  for (const column of config.columns) {
    if (column.primary) keys.push({ kind: 'primary key', name: `${config.name}_pkey`, columns: [column.name] });
    if (column.isUnique) {
      const name = column.uniqueName ?? `${config.name}_${column.name}_unique`;
      keys.push({ kind: 'unique constraint', name, columns: [column.name] });
    }
  }
  for (const u of config.uniqueConstraints) {
    keys.push({ kind: 'unique constraint', name: u.getName() ?? '(unnamed)', columns: u.columns.map((c) => c.name) });
  }
  for (const i of config.indexes) {
    if (!i.config.unique) continue;
    const columns = i.config.columns.map((c) => (c && 'name' in c && typeof c.name === 'string' ? c.name : '(expr)'));
    keys.push({ kind: 'unique index', name: i.config.name ?? '(unnamed)', columns });
  }
  return keys;
}

/** Why `tables` could not be distributed by organisation_id as docs/scaling.md says: one line per problem. */
function citusProblems(tables: readonly PgTable[], reference: ReadonlySet<string> = REFERENCE_TABLES): string[] {
  const problems: string[] = [];
  const lead = (columns: readonly string[]) => columns[0] === DISTRIBUTION_COLUMN;
  for (const table of tables) {
    const config = getTableConfig(table);
    const name = config.name;
    const distributed = !reference.has(name);
    if (distributed && !config.columns.some((c) => c.name === DISTRIBUTION_COLUMN)) {
      problems.push(`${name}: no ${DISTRIBUTION_COLUMN} column, and not a reference table`);
      continue;
    }
    const keys = keysOf(table);
    if (distributed && !keys.some((k) => k.kind === 'primary key')) problems.push(`${name}: no primary key`);
    for (const key of keys) {
      if (distributed && !lead(key.columns)) {
        problems.push(
          `${name}: ${key.kind} ${key.name} (${key.columns.join(', ')}) does not lead with organisation_id`,
        );
      }
    }
    for (const fk of config.foreignKeys) {
      const ref = fk.reference();
      const target = tableName(ref.foreignTable);
      const local = ref.columns.map((c) => c.name);
      const foreign = ref.foreignColumns.map((c) => c.name);
      const shown = `foreign key ${fk.getName()} (${local.join(', ')}) -> ${target} (${foreign.join(', ')})`;
      if (!distributed) {
        // A reference table may reference reference tables only.
        if (!reference.has(target)) problems.push(`${name}: ${shown} points from a reference to a distributed table`);
        continue;
      }
      if (reference.has(target)) {
        // Distributed -> reference is allowed; setting the distribution column to NULL or its default is not.
        if (local.includes(DISTRIBUTION_COLUMN) && /set (null|default)/.test(fk.onDelete ?? '')) {
          problems.push(`${name}: ${shown} sets organisation_id on delete`);
        }
        continue;
      }
      if (!lead(local) || !lead(foreign)) problems.push(`${name}: ${shown} does not lead with organisation_id`);
    }
  }
  return problems;
}

describe('the schema is ready for Citus', () => {
  it('finds the tables: every table of schema/tables.ts, the reference tables among them', () => {
    const names = allTables.map(tableName);
    expect(names.length).toBeGreaterThan(10);
    // api_token is the engine's table (server/engine.ts), created by engine.install(), not a drizzle table.
    expect(names).toContain('organisation');
    expect(names).not.toContain('api_token');
    expect(tenantTables).toEqual(expect.arrayContaining(['contact', 'deal', 'contact_custom_field', 'file_chunk']));
  });

  it('leads every key and every foreign key between tenant tables with organisation_id', () => {
    expect(citusProblems(allTables)).toEqual([]);
  });

  it('rejects a table that is not (self-check)', () => {
    const bad = pgTable(
      'bad',
      {
        id: uuid().primaryKey(),
        organisation_id: uuid()
          .notNull()
          .references(() => schema.organisation.id, { onDelete: 'set null' }),
        contact_id: uuid(),
        code: text().unique('bad_code_key'),
      },
      (t) => [
        unique('bad_pair_key').on(t.code, t.organisation_id),
        index('bad_contact_idx').on(t.contact_id),
        foreignKey({ name: 'bad_contact_fkey', columns: [t.contact_id], foreignColumns: [schema.contact.id] }),
      ],
    );
    const good = pgTable(
      'good',
      { organisation_id: uuid().notNull(), id: uuid().notNull(), contact_id: uuid() },
      (t) => [
        primaryKey({ name: 'good_pkey', columns: [t.organisation_id, t.id] }),
        foreignKey({
          name: 'good_contact_fkey',
          columns: [t.organisation_id, t.contact_id],
          foreignColumns: [schema.contact.organisation_id, schema.contact.id],
        }),
      ],
    );
    const unkeyed = pgTable('unkeyed', { id: uuid().primaryKey() });
    const pointing = pgTable('pointing', { contact_id: uuid().references(() => schema.contact.id) });
    expect(citusProblems([good])).toEqual([]);
    expect(citusProblems([bad, unkeyed, pointing], new Set([...REFERENCE_TABLES, 'pointing']))).toEqual([
      'bad: primary key bad_pkey (id) does not lead with organisation_id',
      'bad: unique constraint bad_code_key (code) does not lead with organisation_id',
      'bad: unique constraint bad_pair_key (code, organisation_id) does not lead with organisation_id',
      'bad: foreign key bad_organisation_id_organisation_id_fk (organisation_id) -> organisation (id)' +
        ' sets organisation_id on delete',
      'bad: foreign key bad_contact_fkey (contact_id) -> contact (id) does not lead with organisation_id',
      'unkeyed: no organisation_id column, and not a reference table',
      'pointing: foreign key pointing_contact_id_contact_id_fk (contact_id) -> contact (id)' +
        ' points from a reference to a distributed table',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------
// Statements

interface Statement {
  readonly text: string;
  readonly params: readonly SqlParam[];
}

/** A database that records every statement it is given (by text: the values do not change the shape). */
function recording(db: Database, statements: Map<string, Statement>): Database {
  const record = (text: string, params: readonly SqlParam[] = []) => {
    if (!statements.has(text)) statements.set(text, { text, params });
  };
  const tx = (inner: Queryable): Queryable => ({
    query: (text, params) => {
      record(text, params);
      return inner.query(text, params);
    },
  });
  return {
    kind: db.kind,
    query: (text, params, lane) => {
      record(text, params);
      return db.query(text, params, lane);
    },
    transaction: (fn, lane) => db.transaction((inner) => fn(tx(inner)), lane),
    exec: (text) => db.exec(text),
    ping: () => db.ping(),
    close: async () => {},
  };
}

/** A value of each filterable kind, to filter by. */
const SAMPLE: Partial<Record<Resource['fields'][number]['kind'], string>> = {
  uuid: '00000000-0000-4000-8000-000000000009',
  text: 'x',
  boolean: 'true',
  integer: '1',
  numeric: '1.5',
  date: '2024-01-01',
  timestamptz: '2024-01-01T00:00:00Z',
};

/** GET query strings that reach every way the read compiler touches a table. */
function readQueries(resource: Resource): string[][] {
  const filterable = resource.fields.filter((f) => f.filterable && SAMPLE[f.kind] !== undefined);
  const [a, b, c] = filterable;
  const queries: string[][] = [
    ['select=*', 'count=exact'],
    ['', 'count=estimated'],
    ['limit=1', 'count=planned'],
  ];
  if (a && b && c) {
    const or = `or=(${a.name}.eq.${SAMPLE[a.kind]},not.and(${b.name}.is.null,${c.name}.neq.${SAMPLE[c.kind]}))`;
    const order = resource.fields.filter((f) => f.orderable).map((f) => `${f.name}.desc.nullslast`);
    queries.push([`${or}&order=${order.join(',')}&limit=5&offset=1`, 'count=exact']);
  }
  if (resource.aggregates && a) queries.push([`select=${a.name},count()`, 'count=exact']);
  for (const r of resource.relations) {
    const ref = `${r.name}!${r.foreignKey}`;
    queries.push([`select=*,${ref}(*)`, 'count=exact']);
    queries.push([`select=*,${ref}!inner(*)&${r.name}.limit=2`, 'count=exact']);
    queries.push([`select=*,${ref}()&${r.name}=is.null`, 'count=exact']);
    if (resource.aggregates && r.cardinality === 'one') queries.push([`select=count(),...${ref}(id)`, '']);
    // One level deeper: each relation of the embedded resource.
    const nested = r.target.relations.map((n) => `${n.name}!${n.foreignKey}(*)`);
    if (nested.length) queries.push([`select=*,${ref}(*,${nested.join(',')})`, '']);
  }
  return queries;
}

/** A text field a body may set with any text, for POST and PATCH. */
const writable = (resource: Resource) =>
  resource.fields.find(
    (f) =>
      f.kind === 'text' &&
      !f.serverManaged &&
      !f.enum &&
      f.name !== 'external_id' &&
      !resource.rules.some((r) => r.field === f.name),
  );

/** What a create of a resource must also give, where its rules ask for particular values. */
const REQUIRED: Readonly<Record<string, object>> = {
  webhook_endpoint: { url: 'https://example.com/hook', events: ['deal.created'] },
};

interface Call {
  readonly method: 'GET' | 'HEAD' | 'POST' | 'PATCH' | 'DELETE';
  readonly resource: string;
  readonly query: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
}

function calls(resource: Resource): Call[] {
  const list: Call[] = [];
  const name = resource.name;
  if (resource.verbs.has('GET')) {
    for (const [query, prefer] of readQueries(resource)) {
      list.push({ method: 'GET', resource: name, query: query!, headers: { prefer: prefer! } });
    }
    list.push({ method: 'HEAD', resource: name, query: '', headers: { prefer: 'count=exact' } });
    list.push({ method: 'GET', resource: name, query: 'limit=2', headers: { accept: 'text/csv' } });
  }
  const field = writable(resource);
  const embeds = resource.relations.map((r) => `${r.name}!${r.foreignKey}(*)`).join(',');
  const select = `select=*${embeds ? `,${embeds}` : ''}`;
  const represent = { prefer: 'return=representation' };
  const hasId = resource.field('id') !== undefined;
  const byId = hasId ? `id=eq.${SAMPLE.uuid}` : '';
  if (resource.verbs.has('POST') && field) {
    const required = REQUIRED[name] ?? {};
    const item = (value: string) => ({ ...required, [field.name]: value });
    list.push({ method: 'POST', resource: name, query: select, headers: represent, body: item('a') });
    list.push({ method: 'POST', resource: name, query: '', body: [item('b'), item('c')] });
    if (resource.field('external_id')) {
      for (const resolution of ['merge-duplicates', 'ignore-duplicates']) {
        list.push({
          method: 'POST',
          resource: name,
          query: `on_conflict=external_id&${select}`,
          headers: { prefer: `return=representation,resolution=${resolution}` },
          body: [{ external_id: 'e1', [field.name]: 'd' }],
        });
      }
    }
  }
  if (resource.verbs.has('PATCH')) {
    const body = resource.customFields
      ? { tier: 'gold', ...(field ? { [field.name]: 'p' } : {}) }
      : { [field!.name]: 'p' };
    list.push({ method: 'PATCH', resource: name, query: `${byId}&${select}`, headers: represent, body });
  }
  if (resource.verbs.has('DELETE')) {
    list.push({ method: 'DELETE', resource: name, query: `${byId}&${select}`, headers: represent });
    list.push({ method: 'DELETE', resource: name, query: byId, headers: { prefer: 'return=minimal' } });
  }
  return list;
}

/** A node of an EXPLAIN (FORMAT JSON) plan. */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Parent Relationship'?: string;
  readonly 'Subplan Name'?: string;
  readonly 'Relation Name'?: string;
  readonly 'CTE Name'?: string;
  readonly Alias?: string;
  readonly Operation?: string;
  readonly Output?: readonly string[];
  readonly 'Index Cond'?: string;
  readonly 'Recheck Cond'?: string;
  readonly Filter?: string;
  readonly Plans?: readonly PlanNode[];
}

function* nodes(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodes(child);
}

/** CTEs whose rows are the caller's organisation (`scope`, `allowed`) or were written in it (`written`). */
const SCOPE_CTES = new Set(['scope', 'allowed']);
const WRITTEN_CTES = new Set(['written']);

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * How a plan names the caller's organisation: the id, and (unless `routed`) each InitPlan reading
 * `scope`/`allowed` or giving the id. `routed`: the statement's organisation was known before it
 * ran, so every scan must compare with the id itself, as Citus needs to route it to one shard.
 */
function scopeTokens(plan: PlanNode, organisationId: string, routed: boolean): string[] {
  const tokens = [`'${organisationId}'::uuid`];
  if (routed) return tokens;
  for (const node of nodes(plan)) {
    const match = /^InitPlan (\d+)(?: \(returns (\$\d+)\))?$/.exec(node['Subplan Name'] ?? '');
    if (!match) continue;
    const readsScope = node['Node Type'] === 'CTE Scan' && SCOPE_CTES.has(node['CTE Name'] ?? '');
    // A scope CTE read once is inlined: `(SELECT $1::uuid)` is then a Result giving the organisation.
    const givesOrganisation = node['Node Type'] === 'Result' && node.Output?.join() === tokens[0];
    if (readsScope || givesOrganisation) tokens.push(match[2] ?? `(InitPlan ${match[1]}).col1`);
  }
  return tokens;
}

/**
 * Problems of one plan: tenant scans not filtered by the organisation, inserts not taking it from the
 * scope. A scan is filtered by the scope itself, or joined on organisation_id to a scan that is (an
 * embed on its parent: PostgreSQL keeps one condition of each set of equal ones, and a join on the
 * distribution column is what lets Citus join shard by shard).
 */
function planProblems(
  plan: PlanNode,
  organisationId: string,
  columns: ReadonlyMap<string, string[]>,
  seen: Set<string>,
  routed: boolean,
) {
  const tokens = scopeTokens(plan, organisationId, routed).map(literal).join('|');
  const problems: string[] = [];
  const aliases = new Map<string, string>();
  for (const node of nodes(plan)) if (node['CTE Name'] && node.Alias) aliases.set(node.Alias, node['CTE Name']);
  const scans: Array<{ node: PlanNode; relation: string; alias: string; conditions: string }> = [];
  for (const node of nodes(plan)) {
    const relation = node['Relation Name'];
    if (!relation || REFERENCE_TABLES.has(relation) || !tenantTables.includes(relation)) continue;
    seen.add(relation);
    if (node['Node Type'] === 'ModifyTable') {
      if (node.Operation !== 'Insert') continue; // UPDATE and DELETE: their scan below is checked
      const position = columns.get(relation)!.indexOf(DISTRIBUTION_COLUMN);
      const source = node.Plans?.find((p) => p['Parent Relationship'] === 'Outer')?.Output?.[position] ?? '';
      const from = /^(\w+)\.organisation_id$/.exec(source);
      const cte = from ? aliases.get(from[1]!) : undefined;
      const scoped = cte !== undefined && (SCOPE_CTES.has(cte) || WRITTEN_CTES.has(cte));
      if (!scoped && !new RegExp(`^(${tokens})$`).test(source)) {
        problems.push(`INSERT INTO ${relation} takes organisation_id from ${source || '(nothing)'}`);
      }
      continue;
    }
    const conditions = [node['Index Cond'], node['Recheck Cond'], node.Filter].filter(Boolean).join(' AND ');
    scans.push({ node, relation, alias: node.Alias ?? relation, conditions });
  }
  // Rows of the scope or written in it (their INSERT is checked above) are the organisation's too.
  const scoped = new Set(
    [...aliases].flatMap(([alias, cte]) => (SCOPE_CTES.has(cte) || WRITTEN_CTES.has(cte) ? [alias] : [])),
  );
  const equal = (alias: string, to: string) =>
    new RegExp(
      `\\b${literal(alias)}\\.organisation_id = (${to})(?![\\w$])|(${to}) = ${literal(alias)}\\.organisation_id\\b`,
    );
  for (const scan of scans) if (equal(scan.alias, tokens).test(scan.conditions)) scoped.add(scan.alias);
  for (let grew = true; grew; ) {
    grew = false;
    const joined = [...scoped].map((a) => `${literal(a)}\\.organisation_id`).join('|');
    for (const scan of scans) {
      if (scoped.has(scan.alias) || !joined || !equal(scan.alias, joined).test(scan.conditions)) continue;
      scoped.add(scan.alias);
      grew = true;
    }
  }
  for (const { node, relation, alias, conditions } of scans) {
    if (!scoped.has(alias))
      problems.push(`${node['Node Type']} on ${relation} ${alias}: ${conditions || 'no condition'}`);
  }
  return problems;
}

describe('every statement the engine compiles filters each tenant table by organisation_id', () => {
  let database: TestDatabase;
  let org: Organisation;
  let engine: Engine;
  const statements = new Map<string, Statement>();
  const failures: string[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    org = await createOrganisation(database);
    // Rows enough for a full page (a planned count then asks the planner) and a keyset cursor.
    await insertRows(database.db, 'contact', org.id, [{ display_name: 'a' }, { display_name: 'b' }]);
    await insertRows(database.db, 'custom_field', org.id, [{ key: 'tier', type: 'string', entity: 'deal' }]);
    engine = engageEngine(recording(database.db, statements), { readCacheSize: 0 });
    const scopes: Scope[] = [{ tenant: org.id }, tokenScope(org.token)!];
    for (const scope of scopes) {
      for (const resource of engine.registry.resources) {
        for (const call of calls(resource)) {
          const headers: Record<string, string> = { 'content-type': 'application/json', ...call.headers };
          const response = await engine
            .handle(
              {
                method: call.method,
                resource: call.resource,
                query: call.query,
                header: (name) => headers[name.toLowerCase()] ?? null,
                body: call.body === undefined ? null : JSON.stringify(call.body),
              },
              scope,
            )
            .catch((error: ApiError) => ({ status: error.status, body: error.message }));
          // An offset past the rows is refused after the statement ran: its statement is recorded.
          const refusedOffset = response.status === 416 && call.query.includes('offset=');
          if (response.status >= 400 && !refusedOffset) {
            failures.push(`${call.method} ${call.resource}?${call.query}: ${response.status} ${response.body}`);
          }
        }
      }
      for (const resource of engine.registry.resources) {
        if (!resource.keyset) continue;
        const first = JSON.parse(await engine.page(resource.collection!, { limit: '1' }, scope)) as {
          next_cursor: string | null;
        };
        expect(first.next_cursor).not.toBeNull();
        await engine.page(resource.collection!, { limit: '1', cursor: first.next_cursor! }, scope);
      }
    }
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('compiles every request of the set', () => {
    // A write that finds no row is fine; a request the engine refuses would leave its statement out.
    expect(failures).toEqual([]);
    expect(statements.size).toBeGreaterThan(100);
  });

  /** Each table's columns in their order, which an INSERT's plan gives its values in. */
  async function tableColumns(): Promise<Map<string, string[]>> {
    const columns = new Map<string, string[]>();
    const rows = await database.db.query<{ table_name: string; column_name: string }>(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'" +
        ' ORDER BY table_name, ordinal_position',
    );
    for (const row of rows) columns.set(row.table_name, [...(columns.get(row.table_name) ?? []), row.column_name]);
    return columns;
  }

  /**
   * The problems of one statement's plan. Only a token's first statement, whose scope reads the
   * token table for the organisation, may compare with the scope's row rather than the id.
   */
  async function check(statement: Statement, columns: Map<string, string[]>, seen = new Set<string>()) {
    // The count estimate is an EXPLAIN already: plan the statement inside it.
    const text = statement.text.replace(/^EXPLAIN \(FORMAT JSON\) /, '');
    const [row] = await database.db.query(`EXPLAIN (FORMAT JSON, VERBOSE) ${text}`, statement.params);
    const raw = row!['QUERY PLAN'];
    const [explained] = (typeof raw === 'string' ? JSON.parse(raw) : raw) as [{ Plan: PlanNode }];
    const routed = !text.startsWith('WITH scope AS (SELECT "organisation_id" FROM');
    return planProblems(explained.Plan, org.id, columns, seen, routed).map(
      (problem) => `${problem}\n  in ${text.slice(0, 300)}`,
    );
  }

  it('catches a statement that is not scoped (self-check)', async () => {
    const columns = await tableColumns();
    const scope = `WITH scope AS (SELECT $1::uuid AS organisation_id)`;
    const scoped = `${scope} SELECT * FROM contact t WHERE t.organisation_id = $1::uuid`;
    expect(await check({ text: scoped, params: [org.id] }, columns)).toEqual([]);
    // Through the scope's row: fine for a token's first statement, not for one whose tenant is known.
    const token = 'WITH scope AS (SELECT "organisation_id" FROM api_token WHERE token_hash = $1)';
    const throughRow =
      ' SELECT (SELECT count(*) FROM scope), * FROM contact t WHERE t.organisation_id = (SELECT organisation_id FROM scope)';
    expect(await check({ text: `${token}${throughRow}`, params: ['x'] }, columns)).toEqual([]);
    const [unrouted] = await check({ text: `${scope}${throughRow}`, params: [org.id] }, columns);
    expect(unrouted).toMatch(/^(Index|Seq|Bitmap Heap) Scan on contact t/);
    const [unscoped] = await check(
      { text: `${scope} SELECT * FROM scope, contact t WHERE t.id = $1`, params: [org.id] },
      columns,
    );
    expect(unscoped).toMatch(/^Index Scan on contact t|^Seq Scan on contact t/);
    const [joined] = await check(
      {
        text: `${scoped.replace('FROM contact t', 'FROM contact t JOIN deal d ON d.contact_id = t.id')}`,
        params: [org.id],
      },
      columns,
    );
    expect(joined).toMatch(/ on deal d: /);
    const insert = `${scope} INSERT INTO segment (organisation_id, name) SELECT $2::uuid, 'x' FROM scope`;
    const [inserted] = await check({ text: insert, params: [org.id, SAMPLE.uuid!] }, columns);
    expect(inserted).toMatch(/^INSERT INTO segment takes organisation_id from/);
  });

  it('plans every scan of a tenant table with organisation_id = the scope', async () => {
    const columns = await tableColumns();
    const seen = new Set<string>();
    const problems: string[] = [];
    for (const statement of statements.values()) problems.push(...(await check(statement, columns, seen)));
    expect(problems).toEqual([]);
    // Every table a resource reads was planned at least once: the check above was not vacuous.
    const served = new Set(engine.registry.resources.flatMap((r) => [r.table, r.customFields?.table ?? r.table]));
    for (const table of served) expect(seen, table).toContain(table);
  });
});
