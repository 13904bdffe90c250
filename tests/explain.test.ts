/**
 * Every common query shape the API produces can be served by an index led by organisation_id:
 * with sequential scans priced out (as every connection has them: PLANNER_SETTINGS in
 * engine/db/port.ts), no plan reads a whole tenant table. A shape that needed a missing index fails here.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileRead } from '../engine/compile/read.ts';
import { compileWrite } from '../engine/compile/write.ts';
import { parseRequest } from '../engine/parse/index.ts';
import { bodySchemas } from '../engine/plan/body.ts';
import { planRead } from '../engine/plan/read.ts';
import { planDelete, planUpdate } from '../engine/plan/write.ts';
import { hashToken } from '../engine/tokens.ts';
import { registry } from '../schema/registry.ts';
import { createOrganisation, createTestApp, type Organisation, type TestApp } from './helpers/app.ts';
import { SCOPING } from './helpers/scoping.ts';

const TENANT_TABLES = [
  'contact',
  'deal',
  'appointment',
  'calendar',
  'segment',
  'campaign',
  'appointment_custom_field',
  'deal_custom_field',
  'custom_field',
  'contact_note',
];
const ID = '00000000-0000-4000-8000-000000000001';

let t: TestApp;
let org: Organisation;
beforeAll(async () => {
  t = await createTestApp();
  org = await createOrganisation(t);
});
afterAll(() => t?.drop());

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  Plans?: PlanNode[];
}

const seqScans = (node: PlanNode): string[] => [
  ...(node['Node Type'] === 'Seq Scan' && node['Relation Name'] && TENANT_TABLES.includes(node['Relation Name'])
    ? [node['Relation Name']]
    : []),
  ...(node.Plans ?? []).flatMap(seqScans),
];

async function scans(text: string, params: readonly (string | null)[]): Promise<string[]> {
  const [row] = await t.db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${text}`, params);
  const plan = row!['QUERY PLAN'];
  const parsed = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{ Plan: PlanNode }>;
  return seqScans(parsed[0]!.Plan);
}

const read = (resource: string, query: string, headers: Record<string, string> = {}) => {
  const request = parseRequest({ method: 'GET', resource, query, header: (name) => headers[name] });
  return compileRead(planRead(registry.get(resource)!, request, 1000), { tokenHash: hashToken(org.token) }, SCOPING);
};

describe('query shapes use indexes led by organisation_id', () => {
  it.each([
    ['contact', 'city=eq.Bern&is_blocked=is.false&order=display_name&limit=25'],
    ['contact', `id=eq.${ID}`],
    ['contact', 'order=created_at.desc&limit=25'],
    ['contact', `external_id=eq.crm-1`],
    ['contact', 'email=eq.a@example.com'],
    ['deal', 'order=won_at.desc.nullslast&limit=25'],
    ['deal', 'order=lost_at&limit=25'],
    ['deal', `contact_id=eq.${ID}`],
    ['appointment', 'order=start_time&limit=25'],
    ['appointment_details', 'order=start_time&limit=25'],
    ['appointment_custom_field', `appointment_id=eq.${ID}`],
    ['calendar', 'order=name&limit=25'],
    ['calendar', 'order=updated_at.desc&limit=25'],
    ['segment', 'limit=25'],
    ['campaign', 'limit=25'],
  ])('GET %s?%s', async (resource, query) => {
    const { text, params } = read(resource, query);
    expect(await scans(text, params)).toEqual([]);
  });

  it('counts with count=exact on the same index', async () => {
    const { text, params } = read('contact', 'limit=25', { prefer: 'count=exact' });
    expect(await scans(text, params)).toEqual([]);
  });

  it('PATCH and DELETE by id', async () => {
    const deal = registry.get('deal')!;
    const patch = parseRequest({ method: 'PATCH', resource: 'deal', query: `id=eq.${ID}`, header: () => undefined });
    const update = compileWrite(
      planUpdate(deal, bodySchemas(deal), patch, { status_key: 'won' }, 1000),
      { tokenHash: hashToken(org.token) },
      SCOPING,
    );
    expect(await scans(update.text, update.params)).toEqual([]);
    const del = parseRequest({ method: 'DELETE', resource: 'deal', query: `id=eq.${ID}`, header: () => undefined });
    const remove = compileWrite(planDelete(deal, del, 1000), { tokenHash: hashToken(org.token) }, SCOPING);
    expect(await scans(remove.text, remove.params)).toEqual([]);
  });

  it('would notice a shape without an index', async () => {
    // A filter on a table no index serves: the check itself must be able to fail.
    expect(await scans('SELECT * FROM contact_note WHERE text = $1', ['x'])).toEqual(['contact_note']);
  });
});
