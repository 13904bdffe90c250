/**
 * Hand-written endpoints for the benchmark's scenarios, as a developer would write them on Hono
 * and postgres.js: `stringify` fetches rows and sends them through JSON.stringify; `passthrough`
 * has PostgreSQL build the JSON and sends the text (the floor for Engage's design). Run as
 * `tsx bench/baselines.ts <stringify|passthrough>[-token] <port> <database-url>`. Without `-token`
 * the organisation comes in the `x-organisation` header (no token check, which favours the
 * baselines); with it, as Engage does it: the SHA-256 of the bearer token, checked in the
 * statement against the token table (not revoked, not expired), which gives the organisation.
 * `DATABASE_PREPARE=0` sends every statement unnamed, as through PgBouncer 1.18 Engage does too.
 *
 * postgres.js 3.4.9 is loaded with its pool's queue fixed (QUEUE_FIX): the baselines measure
 * hand-written code, not that defect, which Engage's pool (one client per connection) never meets.
 */
import { createHash } from 'node:crypto';
import { register } from 'node:module';
import { serve } from '@hono/node-server';
import { type Context, Hono } from 'hono';

/**
 * postgres.js's pool moves a connection between queues with `Queue.remove`, whose `indexOf` scans
 * every slot the queue has ever shifted out (left `undefined` until the queue empties). While every
 * connection is busy (statements pipelined, as here with 32 requests on 4 connections) the busy
 * queue never empties, so each statement scans all those served before it: on the bench's by-id
 * requests 126 µs of Node CPU a request in the first 10 s and 220 µs in the fourth, against 64 µs
 * with the scan starting at the queue's head (`index`, the next to shift), which finds the same element:
 * every slot before it is empty (docs/performance.md).
 */
const QUEUE_FIX = `
const FIXES = [
  ['remove: (x) => {', 'remove: (x, head = index) => {'],
  ['const index = xs.indexOf(x)', 'const index = xs.indexOf(x, head)'],
];
export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (!url.endsWith('/postgres/src/queue.js')) return loaded;
  let source = typeof loaded.source === 'string' ? loaded.source : new TextDecoder().decode(loaded.source);
  for (const [from, to] of FIXES) {
    if (!source.includes(from)) throw new Error('postgres.js queue.js is not the one bench/baselines.ts fixes');
    source = source.replace(from, to);
  }
  return { ...loaded, source };
}`;
register(`data:text/javascript,${encodeURIComponent(QUEUE_FIX)}`);
const { default: postgres } = await import('postgres');

const [given, port, url] = process.argv.slice(2);
const mode = given?.replace(/-token$/, '');
const checked = given?.endsWith('-token') ?? false;
if ((mode !== 'stringify' && mode !== 'passthrough') || !port || !url) {
  console.error('usage: tsx bench/baselines.ts <stringify|passthrough>[-token] <port> <database-url>');
  process.exit(2);
}
const db = postgres(url, { max: 4, onnotice: () => {}, connection: { TimeZone: 'UTC' } });
const PREPARE = process.env.DATABASE_PREPARE !== '0';

/** The organisation in a statement: `$1`, or with `-token` the one the token in `$1` stands for. */
const ORGANISATION =
  '(SELECT organisation_id FROM api_token WHERE token_hash = $1 AND revoked_at IS NULL' +
  ' AND (expires_at IS NULL OR expires_at > now()))';
const texts = new Map<string, string>();
/** Each statement's `$1` is the organisation: with `-token`, the token check stands for it. */
const sql = {
  unsafe: (text: string, params: readonly unknown[], options: { prepare: boolean }) => {
    let scoped = texts.get(text);
    if (scoped === undefined) {
      scoped = checked ? text.replace(/\$1(?!\d)/g, () => ORGANISATION) : text;
      texts.set(text, scoped);
    }
    return db.unsafe(scoped, params as never[], { prepare: options.prepare && PREPARE });
  },
};
/** The statements' `$1`: the organisation's id, or the SHA-256 of the bearer token. */
const who = (c: Context): string => {
  if (!checked) return c.req.header('x-organisation') as string;
  const token = (c.req.header('authorization') ?? '').replace(/^Bearer /, '');
  return createHash('sha256').update(token).digest('hex');
};

/** A query's rows as the response: through JSON.stringify, or as PostgreSQL's JSON text. */
async function answer(text: string, params: unknown[]): Promise<Response> {
  if (mode === 'stringify') {
    const rows = await sql.unsafe(text, params as never[], { prepare: true });
    return new Response(JSON.stringify(rows), { headers: { 'Content-Type': 'application/json' } });
  }
  const [row] = await sql.unsafe(
    `SELECT coalesce(json_agg(t), '[]')::text AS body FROM (${text}) t`,
    params as never[],
    { prepare: true },
  );
  return new Response(row!.body as string, { headers: { 'Content-Type': 'application/json' } });
}

const CONTACT = `SELECT * FROM contact WHERE organisation_id = $1`;
const app = new Hono();
app.get('/list', (c) =>
  answer(`${CONTACT} AND city = $2 AND is_blocked = false ORDER BY display_name LIMIT 25`, [
    who(c),
    c.req.query('city'),
  ]),
);
app.get('/by-id', (c) => answer(`${CONTACT} AND id = $2`, [who(c), c.req.query('id')]));
// Custom-field values become properties of each appointment, as Engage's appointment_details has them.
const CUSTOM_VALUES =
  "SELECT jsonb_object_agg(f.key, CASE f.type WHEN 'string' THEN to_jsonb(v.string_value)" +
  ` WHEN 'number' THEN to_jsonb(v.number_value)
    WHEN 'boolean' THEN to_jsonb(v.boolean_value) WHEN 'date' THEN to_jsonb(v.date_value)` +
  ` WHEN 'datetime' THEN to_jsonb(v.datetime_value)
    WHEN 'string_list' THEN to_jsonb(v.string_list_value) END)
  FROM appointment_custom_field v JOIN custom_field f ON f.organisation_id = v.organisation_id` +
  ` AND f.id = v.custom_field_id AND f.entity = 'appointment'
  WHERE v.organisation_id = a.organisation_id AND v.appointment_id = a.id`;
const DETAILS = 'FROM appointment a WHERE a.organisation_id = $1 ORDER BY a.start_time LIMIT 25';
app.get('/details', async (c) => {
  const org = who(c);
  if (mode === 'stringify') {
    const rows = await sql.unsafe(`SELECT a.*, (${CUSTOM_VALUES}) AS __custom ${DETAILS}`, [org], { prepare: true });
    const merged = rows.map(({ __custom, ...row }) => ({ ...row, ...(__custom as object | null) }));
    return new Response(JSON.stringify(merged), { headers: { 'Content-Type': 'application/json' } });
  }
  const [row] = await sql.unsafe(
    "SELECT coalesce(json_agg(d.x), '[]')::text AS body" +
      ` FROM (SELECT to_jsonb(a) || coalesce((${CUSTOM_VALUES}), '{}') AS x ${DETAILS}) d`,
    [org],
    {
      prepare: true,
    },
  );
  return new Response(row!.body as string, { headers: { 'Content-Type': 'application/json' } });
});
app.get('/count', async (c) => {
  const org = who(c);
  const [{ total }] = (await sql.unsafe(
    'SELECT count(*)::int AS total FROM contact WHERE organisation_id = $1',
    [org as string],
    { prepare: true },
  )) as unknown as [{ total: number }];
  const res = await answer(`${CONTACT} LIMIT 25`, [org]);
  res.headers.set('Content-Range', `0-24/${total}`);
  return res;
});
// Embedding. Passthrough: one statement, each embed a correlated subquery over the page built by
// PostgreSQL (to_json of the contact, json_agg of the deals). Stringify: as an ORM's `include` does
// it, the page, then the related rows of the page in one more query, stitched together in Node.
const DEALS_PAGE = 'SELECT * FROM deal d WHERE d.organisation_id = $1 ORDER BY d.won_at LIMIT 25';
const CONTACTS_PAGE = 'SELECT * FROM contact c WHERE c.organisation_id = $1 ORDER BY c.created_at DESC LIMIT 25';
/** `{a,b}`: the page's keys as one uuid[] parameter. */
const uuids = (ids: Iterable<unknown>) => `{${[...new Set(ids)].filter((id) => id !== null).join(',')}}`;
const json = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
app.get('/deals-with-contact', async (c) => {
  const org = who(c);
  if (mode === 'passthrough') {
    return answer(
      'SELECT d.*, (SELECT to_json(c) FROM contact c WHERE c.organisation_id = $1 AND c.id = d.contact_id)' +
        ' AS contact FROM deal d WHERE d.organisation_id = $1 ORDER BY d.won_at LIMIT 25',
      [org],
    );
  }
  const deals = await sql.unsafe(DEALS_PAGE, [org], { prepare: true });
  const contacts = await sql.unsafe(
    'SELECT * FROM contact WHERE organisation_id = $1 AND id = ANY($2::uuid[])',
    [org, uuids(deals.map((d) => d.contact_id))],
    { prepare: true },
  );
  const byId = new Map(contacts.map((row) => [row.id, row]));
  return json(deals.map((d) => ({ ...d, contact: byId.get(d.contact_id) ?? null })));
});
app.get('/contacts-with-deals', async (c) => {
  const org = who(c);
  if (mode === 'passthrough') {
    return answer(
      'SELECT c.*, coalesce((SELECT json_agg(d) FROM deal d WHERE d.organisation_id = $1 AND d.contact_id = c.id),' +
        " '[]') AS deal FROM contact c WHERE c.organisation_id = $1 ORDER BY c.created_at DESC LIMIT 25",
      [org],
    );
  }
  const contacts = await sql.unsafe(CONTACTS_PAGE, [org], { prepare: true });
  const deals = await sql.unsafe(
    'SELECT * FROM deal WHERE organisation_id = $1 AND contact_id = ANY($2::uuid[])',
    [org, uuids(contacts.map((row) => row.id))],
    { prepare: true },
  );
  const byContact = new Map<unknown, unknown[]>();
  for (const d of deals) {
    const list = byContact.get(d.contact_id);
    if (list) list.push(d);
    else byContact.set(d.contact_id, [d]);
  }
  return json(contacts.map((row) => ({ ...row, deal: byContact.get(row.id) ?? [] })));
});
app.patch('/deal', async (c) => {
  const body = await c.req.json<{ status_key: string }>();
  await sql.unsafe(
    'UPDATE deal SET status_key = $3, updated_at = now() WHERE organisation_id = $1 AND id = $2',
    [who(c), c.req.query('id'), body.status_key] as never[],
    {
      prepare: true,
    },
  );
  return c.body(null, 204);
});
app.post('/calendars', async (c) => {
  const rows = await c.req.json<Array<{ name: string }>>();
  await sql.unsafe(
    "INSERT INTO calendar (organisation_id, name, type) SELECT $1, b.name, 'virtual'" +
      ' FROM json_to_recordset($2::text::json) AS b(name text)',
    [who(c), JSON.stringify(rows)] as never[],
    { prepare: true },
  );
  return c.body(null, 201);
});

serve({ fetch: app.fetch, port: Number(port), hostname: '127.0.0.1' }, () =>
  console.log(`baseline ${mode} on ${port}`),
);
