/**
 * `Accept: text/csv` (docs/contract.md section 11): PostgREST's CSV, built by PostgreSQL. Every
 * expected body below is written out by hand from the rules (record text output without its
 * parentheses, RFC 4180 quoting, NULL as nothing, "\n" between lines and none at the end), and
 * the quoting is also checked by reading the bodies back with csv-parse, an RFC 4180 reader.
 */
import { defineResource } from '@engage/engine';
import { parse } from 'csv-parse/sync';
import {
  boolean,
  date,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resources } from '../schema/registry.ts';
import { createOrganisation, createTestApp, insertRows, type Organisation, type TestApp } from './helpers/app.ts';

const timestamptz = () => timestamp({ withTimezone: true, mode: 'string' });

/** A table with a field of every kind, to see each printed. */
const sample = pgTable(
  'csv_sample',
  {
    id: uuid().notNull().defaultRandom(),
    created_at: timestamptz().notNull().defaultNow(),
    updated_at: timestamptz().notNull().defaultNow(),
    organisation_id: uuid().notNull(),
    position: integer(),
    label: text(),
    flag: boolean(),
    amount: numeric(),
    day: date({ mode: 'string' }),
    at: timestamptz(),
    tags: text().array(),
    data: jsonb(),
  },
  (t) => [primaryKey({ columns: [t.organisation_id, t.id] })],
);
const sampleResource = defineResource({
  name: 'csv_sample',
  table: sample,
  verbs: ['GET', 'POST', 'PATCH'],
  orderable: ['position'],
});

const CSV = { Accept: 'text/csv' };
const CSV_TYPE = 'text/csv; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';
const CREATED = '2026-01-01T00:00:00Z';
/** CREATED as PostgreSQL prints a timestamptz in UTC, quoted for its space. */
const CREATED_CELL = '"2026-01-01 00:00:00+00"';
const uuidOf = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

let t: TestApp;
let org: Organisation;
let other: Organisation;

/** Labels that need quoting, and some that do not, by position. */
const LABELS: Array<[number, string | null]> = [
  [1, 'plain'],
  [2, 'a,b'],
  [3, 'say "hi"'],
  [4, 'line1\nline2'],
  [5, ''],
  [6, '  lead'],
  [7, 'trail '],
  [8, null],
  [9, 'back\\slash'],
  [10, '(paren)'],
  [11, 'tab\there'],
  [12, 'Zürich'],
  [13, 'cr\rlf'],
];

beforeAll(async () => {
  t = await createTestApp({ resources: [...resources, sampleResource] });
  await t.db.exec(`CREATE TABLE csv_sample (
    id uuid NOT NULL DEFAULT gen_random_uuid(), created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(), organisation_id uuid NOT NULL REFERENCES organisation(id),
    position integer, label text, flag boolean, amount numeric, day date, at timestamptz, tags text[], data jsonb,
    PRIMARY KEY (organisation_id, id))`);
  [org, other] = [await createOrganisation(t), await createOrganisation(t)];
  await insertRows(
    t.db,
    'csv_sample',
    org.id,
    LABELS.map(([position, label]) => ({
      id: uuidOf(position),
      created_at: CREATED,
      updated_at: CREATED,
      position,
      label,
    })),
  );
  const typed = [
    {
      flag: true,
      amount: 1000.5,
      day: '2026-01-31',
      at: '2026-12-01T09:00:00Z',
      tags: ['a', 'b'],
      data: { k: 'v', n: 1 },
    },
    { flag: false, amount: -0.25, day: '0099-12-31', at: '2026-06-15T23:59:59.5+02:00', tags: [], data: [1, 2] },
    { flag: null, amount: 100, day: null, at: null, tags: ['x y', 'q"z', 'back\\slash'], data: 'str' },
  ];
  for (const [i, values] of typed.entries()) {
    await t.db.query(
      // Text parameters cast in SQL: postgres.js would re-serialise booleans and JSON otherwise.
      'UPDATE csv_sample SET flag = $1::text::boolean, amount = $2::text::numeric, day = $3::text::date,' +
        ' at = $4::text::timestamptz, tags = $5::text::text[], data = $6::text::jsonb WHERE id = $7::text::uuid',
      [
        values.flag === null ? null : String(values.flag),
        String(values.amount),
        values.day,
        values.at,
        `{${values.tags.map((tag) => `"${tag.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(',')}}`,
        JSON.stringify(values.data),
        uuidOf(i + 1),
      ],
    );
  }
  // Another organisation's rows match every filter below; they must never appear.
  await insertRows(t.db, 'csv_sample', other.id, [
    { position: 1, label: 'other-org' },
    { position: 2, label: 'other-org' },
  ]);
});
afterAll(() => t?.drop());

const get = async (path: string, headers: Record<string, string> = CSV, token = org.token) => {
  const res = await t.call(path, token, { headers });
  return { res, status: res.status, type: res.headers.get('content-type'), body: await res.text() };
};

/** An RFC 4180 reader's view of a body: rows of cells. */
const read = (body: string): string[][] => parse(body, { relax_column_count: true });

describe('GET with Accept: text/csv', () => {
  it('answers a header line and one line per row, text/csv, no newline at the end', async () => {
    const { status, type, body, res } = await get('/csv_sample?select=position,label&position=lte.2&order=position');
    expect(status).toBe(200);
    expect(type).toBe(CSV_TYPE);
    expect(body).toBe('position,label\n1,plain\n2,"a,b"');
    expect(res.headers.get('content-range')).toBe('0-1/*');
    expect(res.headers.get('vary')).toBe('Accept, Prefer, Range');
  });

  it('quotes values holding commas, quotes, line breaks, spaces, parentheses or nothing; NULL is empty', async () => {
    const { body } = await get('/csv_sample?select=position,label&order=position');
    expect(body).toBe(
      [
        'position,label',
        '1,plain',
        '2,"a,b"',
        '3,"say ""hi"""',
        '4,"line1\nline2"',
        '5,""',
        '6,"  lead"',
        '7,"trail "',
        '8,',
        '9,"back\\slash"',
        '10,"(paren)"',
        '11,"tab\there"',
        '12,Zürich',
        '13,"cr\rlf"',
      ].join('\n'),
    );
    // Read back by an RFC 4180 reader, every value is the stored one (NULL and "" both read as "").
    const rows = read(body);
    expect(rows[0]).toEqual(['position', 'label']);
    expect(rows.slice(1)).toEqual(LABELS.map(([position, label]) => [String(position), label ?? '']));
  });

  it('prints booleans, numbers, dates, timestamps, arrays and JSON as PostgreSQL prints a record', async () => {
    const { body } = await get(
      '/csv_sample?select=position,flag,amount,day,at,tags,data&position=lte.3&order=position',
    );
    expect(body).toBe(
      [
        'position,flag,amount,day,at,tags,data',
        '1,t,1000.5,2026-01-31,"2026-12-01 09:00:00+00","{a,b}","{""k"": ""v"", ""n"": 1}"',
        '2,f,-0.25,0099-12-31,"2026-06-15 21:59:59.5+00",{},"[1, 2]"',
        '3,,100,,,"{""x y"",""q\\""z"",""back\\\\slash""}","""str"""',
      ].join('\n'),
    );
    // The array cell is PostgreSQL's array literal: a backslash escapes inside it, as in the database.
    expect(read(body)[3]![5]).toBe('{"x y","q\\"z","back\\\\slash"}');
    expect(read(body)[1]![6]).toBe('{"k": "v", "n": 1}');
  });

  it('select=* gives every field in the table order', async () => {
    const { body } = await get('/csv_sample?position=eq.1');
    expect(body).toBe(
      'id,created_at,updated_at,organisation_id,position,label,flag,amount,day,at,tags,data\n' +
        `${uuidOf(1)},${CREATED_CELL},${CREATED_CELL},${org.id},1,plain,t,1000.5,2026-01-31,` +
        '"2026-12-01 09:00:00+00","{a,b}","{""k"": ""v"", ""n"": 1}"',
    );
  });

  it('aliases name the header cells and casts print as their type', async () => {
    const { body } = await get(
      '/csv_sample?select=pos:position,flag_text:flag::text,whole:amount::int4,day::text,fine%20amount:amount' +
        '&position=lte.2&order=position',
    );
    expect(body).toBe(
      ['pos,flag_text,whole,day,fine amount', '1,true,1001,2026-01-31,1000.5', '2,false,0,0099-12-31,-0.25'].join('\n'),
    );
  });

  it('JSON paths: -> prints JSON, ->> prints the text', async () => {
    const { body } = await get('/csv_sample?select=position,k:data->k,text:data->>k&position=eq.1');
    expect(body).toBe('position,k,text\n1,"""v""",v');
  });

  it('filters, order, limit and offset with Content-Range and 206', async () => {
    const { status, body, res } = await get(
      '/csv_sample?select=position&position=gte.3&order=position.desc&limit=3&offset=1',
      {
        ...CSV,
        Prefer: 'count=exact',
      },
    );
    expect(status).toBe(206);
    expect(res.headers.get('content-range')).toBe('1-3/11');
    expect(res.headers.get('preference-applied')).toBe('count=exact');
    expect(body).toBe('position\n12\n11\n10');
  });

  it('logic trees and the Range header', async () => {
    const { body, res } = await get('/csv_sample?select=label&or=(label.eq.plain,label.like.*lead)&order=position', {
      ...CSV,
      Range: '1-5',
    });
    expect(body).toBe('label\n"  lead"');
    expect(res.headers.get('content-range')).toBe('1-1/*');
  });

  it('an empty result is the header line alone', async () => {
    const { status, type, body, res } = await get('/csv_sample?select=position,label&position=gt.100', {
      ...CSV,
      Prefer: 'count=exact',
    });
    expect(status).toBe(200);
    expect(type).toBe(CSV_TYPE);
    expect(res.headers.get('content-range')).toBe('*/0');
    expect(body).toBe('position,label');
    const star = await get('/csv_sample?position=gt.100');
    expect(star.body).toBe('id,created_at,updated_at,organisation_id,position,label,flag,amount,day,at,tags,data');
  });

  it('HEAD: the same status and headers, no body', async () => {
    const res = await t.call('/csv_sample?position=lte.5', org.token, {
      method: 'HEAD',
      headers: { ...CSV, Prefer: 'count=exact', Range: '0-1' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(CSV_TYPE);
    expect(res.headers.get('content-range')).toBe('0-4/5');
    expect(await res.text()).toBe('');
  });

  it('Accept with q-values: CSV when it is preferred, JSON otherwise', async () => {
    const path = '/csv_sample?select=position&position=eq.1';
    for (const accept of ['application/json;q=0.5, text/csv', 'text/html, text/csv;q=0.9, */*;q=0.1', 'TEXT/CSV']) {
      const res = await get(path, { Accept: accept });
      expect([res.type, res.body], accept).toEqual([CSV_TYPE, 'position\n1']);
    }
    for (const accept of ['text/csv;q=0.2, application/json', 'application/*, text/csv', 'text/csv;q=0, */*']) {
      const res = await get(path, { Accept: accept });
      expect([res.type, res.body], accept).toEqual([JSON_TYPE, '[{"position":1}]']);
    }
    const object = await get(path, { Accept: 'text/csv;q=0.5, application/vnd.pgrst.object+json' });
    expect(object.body).toBe('{"position":1}');
  });

  it('errors stay JSON', async () => {
    const { status, type, body } = await get('/csv_sample?nope=eq.1');
    expect(status).toBe(400);
    expect(type).toBe(JSON_TYPE);
    expect(JSON.parse(body).code).toBe('UNKNOWN_FIELD');
  });

  it("another organisation's rows never appear", async () => {
    const mine = await get('/csv_sample?select=label&position=lte.2&order=position');
    expect(mine.body).toBe('label\nplain\n"a,b"');
    const theirs = await get('/csv_sample?select=label&order=position', CSV, other.token);
    expect(theirs.body).toBe('label\nother-org\nother-org');
    const all = await get('/csv_sample?select=label', CSV);
    expect(all.body).not.toContain('other-org');
  });
});

describe('*_details as CSV', () => {
  const appointment = (n: number) => uuidOf(100 + n);
  /** The appointment fields after the four common ones, for a row with only a name and a start. */
  const row = (n: number, name: string, start: string) =>
    [
      appointment(n),
      CREATED_CELL,
      CREATED_CELL,
      org.id,
      name,
      '', // description
      '', // external_id
      '', // status_key
      '', // type_key
      '', // assignee_id
      '', // contact_id
      start,
      '', // end_time
      '', // confirmed_at
      '', // cancelled_at
      '', // location_id
    ].join(',');
  const HEADER =
    'id,created_at,updated_at,organisation_id,name,description,external_id,status_key,type_key,' +
    'assignee_id,contact_id,start_time,end_time,confirmed_at,cancelled_at,location_id';

  beforeAll(async () => {
    const at = (day: number) => `2026-12-0${day}T09:00:00Z`;
    await insertRows(
      t.db,
      'appointment',
      org.id,
      ['First', 'Second, too', 'Third'].map((name, i) => ({
        id: appointment(i + 1),
        name,
        start_time: at(i + 1),
        created_at: CREATED,
        updated_at: CREATED,
      })),
    );
    const definitions = [
      ['room', 'string'],
      ['size', 'number'],
      ['tags', 'string_list'],
      ['vip', 'boolean'],
      ['met', 'datetime'],
      ['born', 'date'],
      ['floor plan', 'string'],
      ['Zone', 'string'],
    ] as const;
    const ids = await insertRows(
      t.db,
      'custom_field',
      org.id,
      definitions.map(([key, type]) => ({ name: key, key, type, entity: 'appointment' })),
    );
    const field = Object.fromEntries(definitions.map(([key], i) => [key, ids[i]!]));
    const value = (n: number, key: string, column: string, v: unknown) => ({
      appointment_id: appointment(n),
      custom_field_id: field[key],
      key,
      [column]: v,
    });
    await insertRows(t.db, 'appointment_custom_field', org.id, [
      value(1, 'room', 'string_value', 'A1'),
      value(1, 'size', 'number_value', 12.5),
      value(1, 'tags', 'string_list_value', ['x', 'y z']),
      value(1, 'vip', 'boolean_value', true),
      value(1, 'met', 'datetime_value', '2026-12-01T10:00:00Z'),
      value(1, 'born', 'date_value', '2000-02-29'),
      value(2, 'floor plan', 'string_value', 'open, bright'),
      value(2, 'Zone', 'string_value', ''),
      // A cleared value: its key is there, its cell empty.
      value(2, 'room', 'string_value', null),
    ]);
    // Another organisation's custom field and value on its own appointment: never seen.
    const [theirs] = await insertRows(t.db, 'appointment', other.id, [{ name: 'Theirs' }]);
    const [secret] = await insertRows(t.db, 'custom_field', other.id, [
      { name: 'Secret', key: 'secret', type: 'string', entity: 'appointment' },
    ]);
    await insertRows(t.db, 'appointment_custom_field', other.id, [
      { appointment_id: theirs, custom_field_id: secret, key: 'secret', string_value: 'hidden' },
    ]);
  });

  it("the header is the fields, then the union of the page's custom-field keys in byte order", async () => {
    const { type, body } = await get('/appointment_details?order=start_time');
    expect(type).toBe(CSV_TYPE);
    // Byte order: upper case before lower case; a key with a space is quoted like a value.
    expect(body).toBe(
      [
        `${HEADER},Zone,born,"floor plan",met,room,size,tags,vip`,
        `${row(1, 'First', '"2026-12-01 09:00:00+00"')},,2000-02-29,,"2026-12-01 10:00:00+00",A1,12.5,"{x,""y z""}",t`,
        `${row(2, '"Second, too"', '"2026-12-02 09:00:00+00"')},"",,"open, bright",,,,,`,
        `${row(3, 'Third', '"2026-12-03 09:00:00+00"')},,,,,,,,`,
      ].join('\n'),
    );
    const rows = read(body);
    expect(rows[0]!.slice(-8)).toEqual(['Zone', 'born', 'floor plan', 'met', 'room', 'size', 'tags', 'vip']);
    expect(rows.map((r) => r.length)).toEqual([24, 24, 24, 24]);
  });

  it("the keys are those of the page's rows only", async () => {
    const third = await get('/appointment_details?order=start_time&offset=2');
    expect(third.body).toBe(`${HEADER}\n${row(3, 'Third', '"2026-12-03 09:00:00+00"')}`);
    const second = await get(`/appointment_details?id=eq.${appointment(2)}`);
    expect(second.body).toBe(
      `${HEADER},Zone,"floor plan",room\n${row(2, '"Second, too"', '"2026-12-02 09:00:00+00"')},"","open, bright",`,
    );
  });

  it('an empty page is the fields alone; a select without * has no custom fields', async () => {
    expect((await get('/appointment_details?name=eq.Nobody')).body).toBe(HEADER);
    const named = await get('/appointment_details?select=name,start_time&order=start_time&limit=2');
    expect(named.body).toBe('name,start_time\nFirst,"2026-12-01 09:00:00+00"\n"Second, too","2026-12-02 09:00:00+00"');
  });

  it('the same rows as JSON keep their typed values', async () => {
    const { body } = await get(`/appointment_details?id=eq.${appointment(1)}`, {});
    expect(JSON.parse(body)[0]).toMatchObject({ room: 'A1', size: 12.5, tags: ['x', 'y z'], vip: true });
  });
});

describe('writes with Accept: text/csv', () => {
  const REP = { ...CSV, Prefer: 'return=representation', 'Content-Type': 'application/json' };

  it('POST: the representation as CSV; return=minimal has no body', async () => {
    const res = await t.call('/csv_sample?select=position,label,flag,tags', org.token, {
      method: 'POST',
      headers: REP,
      body: JSON.stringify([
        { position: 50, label: 'new, one', flag: true, tags: ['p'] },
        { position: 51, label: null, flag: false, tags: null },
      ]),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe(CSV_TYPE);
    expect(await res.text()).toBe('position,label,flag,tags\n50,"new, one",t,{p}\n51,,f,');
    const minimal = await t.call('/csv_sample', org.token, {
      method: 'POST',
      headers: { ...CSV, 'Content-Type': 'application/json' },
      body: JSON.stringify({ position: 52 }),
    });
    expect(minimal.status).toBe(201);
    expect(minimal.headers.get('content-type')).toBeNull();
    expect(await minimal.text()).toBe('');
  });

  it('PATCH on *_details: stored custom values overlaid with those written, printed like their columns', async () => {
    const deal = uuidOf(300);
    await insertRows(t.db, 'deal', org.id, [
      { id: deal, name: 'Deal', value: 10, currency: 'CHF', created_at: CREATED, updated_at: CREATED },
    ]);
    const keys = [
      ['source', 'string'],
      ['hot', 'boolean'],
      ['score', 'number'],
      ['closing', 'datetime'],
      ['labels', 'string_list'],
    ] as const;
    const ids = await insertRows(
      t.db,
      'custom_field',
      org.id,
      keys.map(([key, type]) => ({ name: key, key, type, entity: 'deal' })),
    );
    await insertRows(t.db, 'deal_custom_field', org.id, [
      { deal_id: deal, custom_field_id: ids[0], key: 'source', string_value: 'crm' },
      { deal_id: deal, custom_field_id: ids[2], key: 'score', number_value: 7 },
    ]);
    const res = await t.call(`/deal_details?id=eq.${deal}`, org.token, {
      method: 'PATCH',
      headers: REP,
      body: JSON.stringify({
        name: 'Renamed',
        source: 'web, direct',
        hot: true,
        closing: '2026-12-24T12:00:00+01:00',
        labels: ['a', 'b c'],
      }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(CSV_TYPE);
    const [stored] = await t.db.query<{ updated_at: string }>('SELECT updated_at::text FROM deal WHERE id = $1', [
      deal,
    ]);
    expect(await res.text()).toBe(
      'id,created_at,updated_at,organisation_id,contact_id,name,external_id,type_key,status_key,assignee_id,' +
        'value,currency,won_at,lost_at,closing,hot,labels,score,source\n' +
        `${deal},${CREATED_CELL},"${stored!.updated_at}",${org.id},,Renamed,,,,,10,CHF,,,` +
        '"2026-12-24 11:00:00+00",t,"{a,""b c""}",7,"web, direct"',
    );
    // A value that does not fit its type is refused as with JSON, and nothing is written.
    const bad = await t.call(`/deal_details?id=eq.${deal}`, org.token, {
      method: 'PATCH',
      headers: REP,
      body: JSON.stringify({ name: 'Bad', closing: 'not a date', hot: 'yes' }),
    });
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toBe(JSON_TYPE);
    const error = await bad.json();
    expect(error.code).toBe('VALIDATION_FAILED');
    const [name] = await t.db.query<{ name: string }>('SELECT name FROM deal WHERE id = $1::text::uuid', [deal]);
    expect(name!.name).toBe('Renamed');
  });
});
