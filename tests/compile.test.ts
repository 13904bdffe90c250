/** The compile stage: one parameterized statement per read, tenant-scoped, with no value in its text. */
import type { Scope } from '@engage/engine';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRead } from '../engine/compile/read.ts';
import { parseRequest } from '../engine/parse/index.ts';
import { planRead } from '../engine/plan/read.ts';
import { registry } from '../schema/registry.ts';
import { SCOPING } from './helpers/scoping.ts';

const ORG = '00000000-0000-4000-8000-000000000001';
/** What each table is compared with when the host gives the organisation: its parameter. */
const SCOPED = '$1::text::uuid';

function compile(
  resource: string,
  query: string,
  headers: Record<string, string> = {},
  scope: Scope = { tenant: ORG },
  nodeJson = false,
) {
  const request = parseRequest({ method: 'GET', resource, query, header: (name) => headers[name] });
  return compileRead(planRead(registry.get(resource)!, request, 1000), scope, SCOPING, { nodeJson });
}

describe('compileRead', () => {
  it('scopes every statement to the organisation: its parameter, or the scope row of a token', () => {
    const { text, params } = compile('contact', 'select=id');
    expect(text).toMatch(/^WITH scope AS \(SELECT \$1::text::uuid AS "organisation_id"\)/);
    expect(text).toContain(`t."organisation_id" = ${SCOPED}`);
    expect(params[0]).toBe(ORG);
    const byToken = compile('contact', 'select=id,deal(id)', {}, { tokenHash: 'abc' }).text;
    expect(byToken).toContain('t."organisation_id" = (SELECT "organisation_id" FROM scope)');
    expect(byToken).not.toContain('::uuid');
  });

  it('resolves a bearer token inside the statement, checking revocation and expiry', () => {
    const { text, params } = compile('contact', '', {}, { tokenHash: 'abc' });
    expect(text).toContain(
      'FROM "api_token" WHERE "token_hash" = $1::text AND "revoked_at" IS NULL' +
        ' AND ("expires_at" IS NULL OR "expires_at" > now())',
    );
    expect(params[0]).toBe('abc');
  });

  it('compiles filters, trees, order and the page with every value a parameter', () => {
    const { text, params } = compile(
      'contact',
      'select=name:display_name,birthday::text&city=in.(Bern,"Zürich, CH")' +
        '&or=(email.ilike.*@x.com,not.and(is_blocked.is.true,number_of_marketing_opt_in_requests.gte.2))' +
        '&order=display_name.desc.nullslast&limit=5&offset=10',
    );
    expect(text).toContain('t."city" = ANY($2::text::text[])');
    expect(text).toContain(
      '(t."email" ILIKE $3::text' +
        ' OR NOT (t."is_blocked" IS TRUE AND t."number_of_marketing_opt_in_requests" >= $4::text::int4))',
    );
    expect(text).toContain('t."display_name" AS "name", CAST(t."birthday" AS text) AS "birthday"');
    expect(text).toContain('ORDER BY t."display_name" DESC NULLS LAST LIMIT $5::text::int8 OFFSET $6::text::int8');
    expect(params).toEqual([ORG, '{"Bern","Zürich, CH"}', '%@x.com', '2', '5', '10']);
  });

  it('adds an exact count over the same filters only when asked', () => {
    expect(compile('deal', 'currency=eq.CHF').text).toContain('NULL::int8');
    const counted = compile('deal', 'currency=eq.CHF', { prefer: 'count=exact' }).text;
    expect(counted).toContain(
      `(SELECT count(*) FROM "deal" t WHERE t."organisation_id" = ${SCOPED} AND t."currency" = $2::text)`,
    );
  });

  it('builds JSON in PostgreSQL by default: an array, a single object, or nothing for HEAD', () => {
    expect(compile('segment', '').text).toContain(`coalesce(json_agg(_t), '[]')::text AS body`);
    expect(compile('segment', '', { accept: 'application/vnd.pgrst.object+json' }).text).toContain(
      '(json_agg(_t) -> 0)::text AS body',
    );
  });

  it('selects a page of plain rows as text for Node to build its JSON, in order after one row of the rest', () => {
    for (const accept of ['application/json', 'application/vnd.pgrst.object+json']) {
      const { text, rows } = compile('segment', 'select=id,name,created_at', { accept }, { tenant: ORG }, true);
      expect(rows?.columns.map((c) => c.key)).toEqual(['id', 'name', 'created_at']);
      expect(text).toContain('(t."id")::text AS c0, (t."name")::text AS c1, to_json(t."created_at")::text AS c2');
      expect(text).toContain('LEFT JOIN LATERAL (SELECT row_number() OVER () AS "n", _r.*');
      expect(text).toMatch(/ON true ORDER BY r\."n"$/);
      expect(text).not.toContain('json_agg');
    }
  });

  it('builds JSON in PostgreSQL for embeds, aggregates, casts, custom fields and CSV even so', () => {
    const cases: Array<[string, string, Record<string, string>]> = [
      ['deal', 'select=id,contact(id)', {}],
      ['deal', 'select=status_key,count()', {}],
      ['contact', 'select=birthday::text', {}],
      ['appointment_details', '', {}],
      ['segment', '', { accept: 'text/csv' }],
    ];
    for (const [resource, query, headers] of cases) {
      const { text, rows } = compile(resource, query, headers, { tenant: ORG }, true);
      expect(rows, `${resource}?${query}`).toBeUndefined();
      expect(text).toMatch(/ AS body,/);
    }
    expect(compile('segment', '', {}, { tenant: ORG }, true).text).not.toContain('json_agg');
  });

  it("merges custom-field values into *_details rows, never shadowing the resource's own fields", () => {
    const { text } = compile('appointment_details', '');
    expect(text).toContain('FROM "appointment_custom_field" v JOIN "custom_field" cf');
    expect(text).toContain('cf."key" <> ALL(');
    expect(compile('appointment_details', 'select=name').text).not.toContain('appointment_custom_field');
  });

  it('never puts a filter value into the SQL text', () => {
    const marker = fc.string({ minLength: 1, maxLength: 30 }).map((s) => `Zq${s}`);
    fc.assert(
      fc.property(
        marker,
        fc.constantFrom('eq', 'neq', 'like', 'ilike', 'gt', 'match', 'isdistinct', 'fts', 'wfts'),
        (value, op) => {
          const { text, params } = compile('contact', `email=${op}.${encodeURIComponent(value)}`);
          expect(text).not.toContain('Zq');
          expect(params.some((p) => p?.includes('Zq'))).toBe(true);
        },
      ),
      { numRuns: 200, seed: 42 },
    );
  });

  it('puts JSON path keys in parameters too', () => {
    // custom_entity has a jsonb field but no GET; compile it directly to check the path.
    const resource = registry.get('custom_entity')!;
    const request = parseRequest({
      method: 'GET',
      resource: 'custom_entity',
      query: "select=data->owner->>name&data->>'x=eq.1",
      header: () => undefined,
    });
    const { text, params } = compileRead(planRead(resource, request, 1000), { tenant: ORG }, SCOPING);
    expect(text).toContain('(t."data"->>$2::text) = $3::text');
    expect(text).toContain('(t."data"->$4::text->>$5::text) AS "name"');
    expect(params.slice(1, 5)).toEqual(["'x", '1', 'owner', 'name']);
  });
});

describe('compileRead with embeds', () => {
  /** Every table the statement reads, with its alias: `FROM "contact" t1`. */
  const tablesRead = (text: string) => [...text.matchAll(/FROM "(\w+)" (\w+)/g)].map((m) => [m[1]!, m[2]!] as const);

  it('filters every level, of every nesting, by the organisation', () => {
    const { text } = compile(
      'appointment',
      'select=*,contact!inner(*,deal(name,value.sum()),appointment_details(*))&contact.deal.value=gt.1' +
        '&order=contact(display_name)&contact.or=(city.eq.Bern,deal.not.is.null)',
    );
    const tables = tablesRead(text);
    expect(new Set(tables.map(([table]) => table))).toEqual(
      new Set(['appointment', 'contact', 'deal', 'appointment_custom_field']),
    );
    for (const [table, alias] of tables) {
      // custom-field values are read through their own scoped subquery (custom-fields.ts)
      const column = table === 'appointment_custom_field' ? 'v."organisation_id"' : `${alias}."organisation_id"`;
      expect(text, `${table} ${alias}`).toContain(`${column} = ${SCOPED}`);
    }
  });

  it('joins each embed on its relation and organisation_id: to one on the parent field, to many on the target', () => {
    const scopedTo = (field: string, parentField: string) =>
      new RegExp(
        `(t\\d)\\."organisation_id" = \\$1::text::uuid` +
          ` AND \\1\\."organisation_id" = t\\."organisation_id" AND \\1\\."${field}" = t\\."${parentField}"`,
      );
    const toOne = compile('deal', 'select=id,contact(id)').text;
    expect(toOne).toMatch(scopedTo('id', 'contact_id'));
    const toMany = compile('contact', 'select=id,deal(id)').text;
    expect(toMany).toMatch(scopedTo('contact_id', 'id'));
    expect(toMany).toContain('json_agg(_t)');
    expect(toMany).toMatch(/coalesce\(e\d\."v", '\[\]'::json\) AS "deal"/);
  });

  it('builds embeds over the page: the laterals follow the limited subquery', () => {
    const { text } = compile('deal', 'select=id,contact(id)&order=won_at&limit=5');
    const page = text.indexOf('LIMIT $');
    const lateral = text.indexOf('LEFT JOIN LATERAL');
    expect(page).toBeGreaterThan(0);
    expect(lateral).toBeGreaterThan(page);
  });

  it('tests !inner and embed null checks with EXISTS, in the page and in the count', () => {
    const { text } = compile('contact', 'select=id,deal!inner(id),appointment()&appointment=is.null', {
      prefer: 'count=exact',
    });
    // Once in the page's WHERE and once in the count's.
    expect(text.match(/NOT EXISTS \(SELECT 1 FROM "appointment"/g)).toHaveLength(2);
    expect(text.match(/ EXISTS \(SELECT 1 FROM "deal"/g)).toHaveLength(2);
    // The count repeats the page's WHERE, the same text with the same parameters.
    expect(text).toMatch(/\(SELECT count\(\*\) FROM "contact" t WHERE .*EXISTS/);
    expect(text).not.toContain('JOIN LATERAL (SELECT 1');
  });

  it('groups by the selected fields and the to-one spread fields beside an aggregate', () => {
    const { text } = compile('deal', 'select=currency,total:value.sum()::int,count(),...contact(city)');
    expect(text).toContain('CAST(sum(t."value") AS int4) AS "total", count(*) AS "count"');
    expect(text).toContain('GROUP BY t."currency", e1."city"');
  });

  it('puts every value of every level in a parameter', () => {
    const hostile = "x'); DROP TABLE contact; --";
    const { text, params } = compile(
      'contact',
      `select=id,deal(name)&deal.name=eq.${encodeURIComponent(hostile)}&deal.limit=3&deal.offset=2` +
        `&deal.or=(name.like.${encodeURIComponent('*a*')},value.gt.7)`,
    );
    expect(text).not.toContain('DROP');
    expect(text).not.toMatch(/LIMIT 3|OFFSET 2|> 7/);
    expect(params).toEqual(expect.arrayContaining([hostile, '3', '2', '%a%', '7']));
  });
});
