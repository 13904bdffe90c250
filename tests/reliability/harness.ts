/**
 * The reliability suite's plumbing: one app over a seeded database, a `send` that pushes a generated
 * request through `app.request` and checks the response against the contract (docs/contract.md
 * section 5), and the count of requests sent. Generators live in arbitraries.ts.
 */
import type { Queryable } from '@engage/engine';
import fc from 'fast-check';
import {
  createOrganisation,
  createTestApp,
  ERROR_KEYS,
  OPTIONAL_ERROR_KEYS,
  type Organisation,
  type TestApp,
} from '../helpers/app.ts';

/** A generated request. `{{name}}` in path and body, and `%T`/`%B`/`%U` in `auth`, are filled in at send time. */
export interface Req {
  readonly method: string;
  /** Path and query string as written, e.g. `/api/v1/contact?id=eq.x`. */
  readonly path: string;
  /** Authorization: `%T` the seeded organisation's token, `%B` another's, `%U` an unknown one; null: none. */
  readonly auth: string | null;
  readonly headers: Readonly<Record<string, string>>;
  /** Text is sent as UTF-8; bytes as they are (bodies that are not UTF-8). */
  readonly body?: string | Uint8Array<ArrayBuffer> | undefined;
}

/** Ids of the seeded rows: fixed, so generators can name them before the database exists. */
const id = (table: number, n: number) =>
  `${String(table).padStart(8, '0')}-0000-4000-8000-${String(n).padStart(12, '0')}`;
export const SEEDED = {
  contact: [id(1, 1), id(1, 2), id(1, 3)],
  deal: [id(2, 1), id(2, 2)],
  appointment: [id(3, 1), id(3, 2)],
  calendar: [id(4, 1), id(4, 2)],
  segment: [id(5, 1)],
  campaign: [id(6, 1)],
  contact_note: [id(7, 1)],
  appointment_type: [id(8, 1)],
  custom_field: [id(9, 1), id(9, 2), id(9, 3), id(9, 4), id(9, 5), id(9, 6), id(9, 7), id(9, 8), id(9, 9)],
  custom_entity_definition: [id(10, 1)],
  custom_entity: [id(11, 1)],
} as const;

/** Custom fields of the seeded organisation, by entity: key and type. */
export const CUSTOM_FIELDS = {
  deal: {
    source: 'string',
    labels: 'string_list',
    amount: 'number',
    closed: 'date',
    vip: 'boolean',
    met_at: 'datetime',
  },
  contact: { tier: 'string', score: 'number' },
  appointment: { tags: 'string_list' },
} as const;

const [c1, c2, c3] = SEEDED.contact;
const [d1, d2] = SEEDED.deal;
const [a1, a2] = SEEDED.appointment;
const customFieldRows = Object.entries(CUSTOM_FIELDS).flatMap(([entity, fields]) =>
  Object.entries(fields).map(([key, type]) => ({ entity, key, type, name: key })),
);

/** Rows in dependency order; values as PostgreSQL reads them from JSON. */
const SEED_ROWS: ReadonlyArray<readonly [string, ReadonlyArray<Record<string, unknown>>]> = [
  [
    'contact',
    [
      { id: c1, display_name: 'Ada', full_name: 'Ada Lovelace', email: 'ada@example.com', city: 'Zürich' },
      { id: c2, display_name: 'Bob', email: 'bob@example.com', birthday: '1990-02-28', is_blocked: true },
      { id: c3, display_name: '日本 "quoted", (paren)', external_id: 'crm-3', number_of_marketing_opt_in_requests: 7 },
    ],
  ],
  ['segment', [{ id: SEEDED.segment[0], name: 'All', is_default: true }]],
  ['campaign', [{ id: SEEDED.campaign[0], name: 'Spring' }]],
  [
    'calendar',
    [
      { id: SEEDED.calendar[0], name: 'Front desk', type: 'virtual', external_id: 'cal-1' },
      { id: SEEDED.calendar[1], name: 'Dr. Meier', type: 'provider', external_id: 'cal-2' },
    ],
  ],
  ['appointment_type', [{ id: SEEDED.appointment_type[0], name: 'Visit', key: 'visit', external_id: 'at-1' }]],
  [
    'appointment',
    [
      { id: a1, name: 'First', contact_id: c1, start_time: '2026-12-01T09:00:00Z', external_id: 'ap-1' },
      { id: a2, name: 'Second', start_time: '2026-12-02T10:30:00+01:00' },
    ],
  ],
  [
    'deal',
    [
      { id: d1, name: 'Big', contact_id: c1, value: 5000, currency: 'CHF', external_id: 'deal-1' },
      { id: d2, name: 'Won', value: 12.5, currency: 'USD', won_at: '2026-11-01T00:00:00Z' },
    ],
  ],
  ['contact_note', [{ id: SEEDED.contact_note[0], contact_id: c1, text: 'Prefers mornings.' }]],
  ['custom_field', customFieldRows.map((row, i) => ({ id: SEEDED.custom_field[i], ...row }))],
  ['custom_entity_definition', [{ id: SEEDED.custom_entity_definition[0], name: 'Pet', key: 'pet', schema: {} }]],
  [
    'custom_entity',
    [
      {
        id: SEEDED.custom_entity[0],
        custom_entity_definition_id: SEEDED.custom_entity_definition[0],
        contact_id: c1,
        data: { name: 'Rex', tags: ['a', 'b'], nested: { n: 1, list: [1, 2, { x: null }] } },
      },
    ],
  ],
];

const fieldId = (entity: string, key: string) =>
  SEEDED.custom_field[customFieldRows.findIndex((r) => r.entity === entity && r.key === key)]!;
const VALUE_ROWS: ReadonlyArray<readonly [string, ReadonlyArray<Record<string, unknown>>]> = [
  [
    'deal_custom_field',
    [
      { deal_id: d1, custom_field_id: fieldId('deal', 'source'), key: 'source', string_value: 'web' },
      { deal_id: d1, custom_field_id: fieldId('deal', 'labels'), key: 'labels', string_list_value: ['a', 'b,c'] },
      { deal_id: d2, custom_field_id: fieldId('deal', 'amount'), key: 'amount', number_value: 3.25 },
    ],
  ],
  [
    'appointment_custom_field',
    [{ appointment_id: a1, custom_field_id: fieldId('appointment', 'tags'), key: 'tags', string_list_value: ['x'] }],
  ],
  [
    'contact_custom_field',
    [{ contact_id: c1, custom_field_id: fieldId('contact', 'tier'), key: 'tier', string_value: 'gold' }],
  ],
];

/** Tables rows may be written to through the API, children first: reset deletes their unseeded rows. */
const WRITTEN = [
  'import_job',
  'file',
  'custom_entity',
  'contact_note',
  'deal',
  'appointment',
  'calendar',
  'appointment_type',
  'custom_field',
  'contact',
] as const;

export interface Fixture {
  readonly t: TestApp;
  readonly org: Organisation;
  readonly other: Organisation;
  /** Values for `{{name}}` placeholders: org, file, job, cursor. */
  readonly fill: Readonly<Record<string, string>>;
}

let fixture: Fixture | undefined;
let sent = 0;

/** The number of generated requests sent so far in this file. */
export const requestCount = () => sent;

/** Builds the app, two organisations (the second has no rows), the seed, an import file and a job. */
export async function setUp(): Promise<Fixture> {
  const t = await createTestApp();
  const org = await createOrganisation(t);
  const other = await createOrganisation(t);
  await seed(t.db, org.id);
  const auth = { Authorization: `Bearer ${org.token}` };
  const file = await json(
    t.app.request('/v1/files', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'text/csv' },
      body: 'display_name,tier\nCsv,gold\n',
    }),
  );
  const job = await json(
    t.app.request('/v1/contacts/imports', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ file_id: file.id }),
    }),
  );
  const page = await json(t.app.request('/v1/contacts?limit=1', { headers: auth }));
  fixture = { t, org, other, fill: { org: org.id, file: file.id, job: job.id, cursor: page.next_cursor } };
  return fixture;
}

async function json(response: Promise<Response> | Response) {
  const res = await response;
  const text = await res.text();
  if (res.status >= 300) throw new Error(`setup request failed: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function seed(db: Queryable, organisationId: string) {
  for (const [table, rows] of [...SEED_ROWS, ...VALUE_ROWS]) {
    for (const row of rows) {
      const columns = ['organisation_id', ...Object.keys(row)].map((c) => `"${c}"`).join(', ');
      await db.query(
        `INSERT INTO "${table}" (${columns})` +
          ` SELECT ${columns} FROM json_populate_record(NULL::"${table}", $1::text::json) ON CONFLICT DO NOTHING`,
        [JSON.stringify({ organisation_id: organisationId, ...row })],
      );
    }
  }
}

/**
 * Puts the seeded organisation back as seeded (rows the generated writes added deleted, deleted
 * ones restored), so reads keep returning data and tables stay small. Updated values stay.
 */
export async function reset(): Promise<void> {
  const { t, org, fill } = fixture!;
  const keep: Record<string, readonly string[]> = { ...SEEDED, file: [fill.file!], import_job: [fill.job!] };
  // A seeded deal or appointment may have been pointed at a contact that is about to go.
  for (const table of ['deal', 'appointment']) {
    await t.db.query(
      `UPDATE "${table}" SET contact_id = NULL WHERE organisation_id = $1::uuid AND NOT (contact_id = ANY($2::uuid[]))`,
      [org.id, `{${SEEDED.contact.join(',')}}`],
    );
  }
  for (const table of WRITTEN) {
    await t.db.query(`DELETE FROM "${table}" WHERE organisation_id = $1::uuid AND NOT (id = ANY($2::uuid[]))`, [
      org.id,
      `{${(keep[table] ?? []).join(',')}}`,
    ]);
  }
  await seed(t.db, org.id);
}

/** How often (in requests) the seed is put back. */
const RESET_EVERY = 500;

/** SQL the engine builds, and PostgreSQL's wording about it: none may reach a caller unless the caller wrote it. */
const SQL_TEXT = [
  /\bSELECT\s+[\w"*(]/,
  /\bFROM\s+(?:"\w+"|scope|api_token)\b/,
  /\bINSERT INTO\b/,
  /\bDELETE FROM\b/,
  /\bUPDATE\s+"?\w+"?\s+SET\b/,
  /\bRETURNING\b/,
  /\bWITH\s+\w+\s+AS\s*\(/,
  /\bWHERE\s+\w+\.\w+/,
  /\$\d+::\w+/,
  /::(?:regconfig|uuid\[\]|text\[\]|int4|int8|jsonb|tsquery)\b/,
  /\borganisation_id\s*=/,
  /\btoken_hash\b/,
  /\bapi_token\b/,
  /\bengage_fail\b/,
  /\bjsonb?_(?:agg|build_object|populate_record(?:set)?)\s*\(/,
  /\b(?:plain|phrase|websearch_)?to_tsquery\s*\(/,
  /\bsyntax error at or near\b/,
  /\bLINE \d+:/,
  /\b(?:column|relation)\s+"?[\w.]+"?\s+does not exist/,
  /\bfunction\s+[\w.]+\([^)]*\)\s+does not exist/,
  /\boperator does not exist\b/,
];
/** A stack trace or a JavaScript failure's own message. */
const STACK_TEXT = [
  /\n\s+at\s/,
  /\bat\s+(?:async\s+)?[\w.$<>]+\s+\([^)]*:\d+:\d+\)/,
  /\bnode:internal\b/,
  // No leading character class: on a long echoed value that would backtrack quadratically.
  /\.(?:ts|js|mjs|cjs):\d+:\d+/,
  /\bMaximum call stack size exceeded\b/,
  /\bCannot read propert/,
  /\bis not a function\b/,
  /\bis not iterable\b/,
  /\b(?:TypeError|ReferenceError|RangeError):/,
];

/**
 * Leaks in a text, ignoring any that the request itself contains (messages quote what the caller
 * sent). `sent` is the request's text, lower-cased, asked for only when a pattern matches.
 */
function leaks(text: string, sent: () => string): string[] {
  const found: string[] = [];
  for (const pattern of [...SQL_TEXT, ...STACK_TEXT]) {
    const match = pattern.exec(text);
    if (match && !sent().includes(match[0].toLowerCase())) found.push(`${pattern} matched "${match[0]}"`);
  }
  return found;
}

const fillIn = (text: string, values: Readonly<Record<string, string>>) =>
  text.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole);

const UNKNOWN_TOKEN = `engage_${'Q'.repeat(43)}`;
const SANE_REQUEST_ID = /^[\w\-=]{1,255}$/;
const API_PATH = /^\/(?:api\/)?v1(?:\/|$)/;

/** Sends one generated request and throws, with a reproduction, unless the response keeps the contract. */
export async function send(req: Req): Promise<void> {
  const { t, org, other, fill } = fixture!;
  if (++sent % RESET_EVERY === 0) await reset();
  const path = fillIn(req.path, fill);
  const body = typeof req.body === 'string' ? fillIn(req.body, fill) : req.body;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) headers.append(name, value);
  if (req.auth !== null) {
    headers.set(
      'Authorization',
      req.auth.replaceAll('%T', org.token).replaceAll('%B', other.token).replaceAll('%U', UNKNOWN_TOKEN),
    );
  }
  const request = new Request(`http://localhost${path}`, { method: req.method, headers, body });
  const res = await t.app.request(request);
  const text = await res.text();
  const problems = check(req, request, res, text, body);
  if (problems.length > 0) throw new Error(reproduction(req, request, body, res, text, problems));
}

function check(req: Req, request: Request, res: Response, text: string, body: Req['body']): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`status ${res.status}`);
  const requestId = res.headers.get('request-id');
  if (!requestId) problems.push('no Request-Id header');
  const incoming = request.headers.get('request-id');
  if (incoming !== null && SANE_REQUEST_ID.test(incoming) && requestId !== incoming)
    problems.push(`a sane Request-Id "${incoming}" was not kept`);
  const url = new URL(request.url);
  if (API_PATH.test(url.pathname) && !res.headers.get('engage-version')) problems.push('no engage-version header');
  const media = res.headers.get('content-type') ?? '';
  if (res.status < 400) {
    if (/json/.test(media) && text !== '' && !parses(text)) problems.push('a success body that is not JSON');
    return problems;
  }
  if (media !== 'application/json; charset=utf-8') problems.push(`error Content-Type "${media}"`);
  if (req.method === 'HEAD') return problems;
  let error: Record<string, unknown>;
  try {
    error = JSON.parse(text);
  } catch {
    return [...problems, 'an error body that is not JSON'];
  }
  if (typeof error !== 'object' || error === null || Array.isArray(error))
    return [...problems, 'an error body that is not an object'];
  const keys = Object.keys(error);
  const missing = ERROR_KEYS.filter((k) => !keys.includes(k));
  const extra = keys.filter((k) => !ERROR_KEYS.includes(k) && !OPTIONAL_ERROR_KEYS.includes(k));
  if (missing.length) problems.push(`error body lacks ${missing.join(', ')}`);
  if (extra.length) problems.push(`error body has extra keys ${extra.join(', ')}`);
  if (error.name !== 'APIError') problems.push(`name ${JSON.stringify(error.name)}`);
  if (typeof error.message !== 'string' || error.message === '') problems.push('message is not a non-empty string');
  if (typeof error.code !== 'string' || !/^[A-Z_]+$/.test(error.code)) problems.push('code is not a CODE');
  if (error.status_code !== res.status) problems.push(`status_code ${error.status_code} for HTTP ${res.status}`);
  if (typeof error.is_transient !== 'boolean') problems.push('is_transient is not a boolean');
  if (typeof error.contact_support !== 'boolean') problems.push('contact_support is not a boolean');
  if (error.request_id !== requestId) problems.push(`request_id ${error.request_id} is not the header's ${requestId}`);
  const timestamp = error.timestamp;
  if (typeof timestamp !== 'string' || Number.isNaN(Date.parse(timestamp))) problems.push('timestamp is not a date');
  for (const key of ['details', 'hint'] as const) {
    if (error[key] !== null && typeof error[key] !== 'string') problems.push(`${key} is neither null nor a string`);
  }
  let sentText: string | undefined;
  const sent = () => (sentText ??= sentTextOf(request.url, body, request.headers).toLowerCase());
  for (const key of ['message', 'details', 'hint', 'context'] as const) {
    const value = error[key];
    if (value === undefined || value === null) continue;
    for (const leak of leaks(typeof value === 'string' ? value : JSON.stringify(value), sent))
      problems.push(`${key} leaks: ${leak}`);
  }
  return problems;
}

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Everything the caller wrote, decoded where it decodes, so quoted input is not taken for a leak. */
function sentTextOf(url: string, body: Req['body'], headers: Headers): string {
  // Runs of %XX decoded one run at a time: a malformed escape elsewhere must not stop the rest.
  const decoded = url.replace(/\+/g, ' ').replace(/(?:%[0-9A-Fa-f]{2})+/g, (run) => {
    try {
      return decodeURIComponent(run);
    } catch {
      return run;
    }
  });
  const text = typeof body === 'string' ? body : body ? new TextDecoder().decode(body) : '';
  return [url, decoded, text, ...headers.values()].join('\n');
}

const clip = (text: string, max = 600) => (text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text);

function reproduction(
  req: Req,
  request: Request,
  body: Req['body'],
  res: Response,
  text: string,
  problems: string[],
): string {
  const url = new URL(request.url);
  const headers = Object.entries(req.headers).map(([k, v]) => `  ${k}: ${clip(v, 200)}`);
  if (req.auth !== null)
    headers.push(`  Authorization: ${clip(req.auth, 200)}   (%T valid token, %U unknown, %B other org)`);
  return [
    `contract broken: ${problems.join('; ')}`,
    `request: ${req.method} ${clip(url.pathname + url.search, 1000)}`,
    ...headers,
    body === undefined
      ? '  (no body)'
      : typeof body === 'string'
        ? `  body: ${clip(body, 1000)}`
        : `  body bytes (as Latin-1): ${clip(JSON.stringify(Buffer.from(body).toString('latin1')), 1000)}`,
    `response: ${res.status} ${clip(text, 1000)}`,
  ].join('\n');
}

/** Runs a property of `numRuns` generated requests from a fixed seed, after putting the seed back. */
export async function property(arb: fc.Arbitrary<Req>, seed: number, numRuns: number): Promise<void> {
  await reset();
  await fc.assert(fc.asyncProperty(arb, send), { seed, numRuns, includeErrorInReport: true });
}
