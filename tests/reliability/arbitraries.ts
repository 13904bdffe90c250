/**
 * Generators of requests for the reliability suite: query strings that follow PostgREST's grammar
 * (every operator of engine/operators.ts, `not.`, `(any)`/`(all)`, logic trees, select, order,
 * paging) mixed with junk, headers, and bodies, over every resource of schema/registry.ts and some
 * that do not exist. Well-formed parts are common enough that requests reach the planner, the
 * compiler and the database, not only the parser.
 */
import type { Field, Resource } from '@engage/engine';
import fc from 'fast-check';
import type { FieldKind as EngineKind } from '../../engine/field-kinds.ts';
import { IS_VALUES, OPERATORS, SCALAR_KINDS } from '../../engine/operators.ts';

/** The kinds of the application's fields, which the values below are written for. */
type FieldKind = Extract<
  EngineKind,
  'uuid' | 'text' | 'boolean' | 'integer' | 'numeric' | 'date' | 'timestamptz' | 'text[]' | 'jsonb'
>;
type AppKind = FieldKind;
/** A field's kind, one of the application's. */
const appKind = (kind: EngineKind): FieldKind => kind as FieldKind;

/** PostgREST's range operators, which no field of the application takes. */
const RANGE_OPERATORS = ['sl', 'sr', 'nxr', 'nxl', 'adj'] as const;

import { registry as appRegistry } from '../../schema/registry.ts';
import { CUSTOM_FIELDS, type Req, SEEDED } from './harness.ts';

type Arb<T> = fc.Arbitrary<T>;

const REGISTRY = appRegistry;
const RESOURCES = REGISTRY.resources;
const resourceNamed = (name: string) => REGISTRY.get(name)!;
const UNKNOWN_RESOURCES = [
  'nope',
  'contacts',
  'Contact',
  'contact_details',
  'organisation',
  'api_token',
  'file',
  'import_job',
  'deal_custom_field',
  'pg_catalog.pg_class',
  'contact%2Fnote',
  '%00',
  '%E2%80%AE',
  'ünïcode',
  'contact.json',
  'rpc',
  "contact'",
  'a'.repeat(300),
];

/** Weighted oneof: `[weight, arbitrary]` pairs. */
const pick = <T>(...options: Array<readonly [number, Arb<T>]>): Arb<T> =>
  fc.oneof(...options.map(([weight, arbitrary]) => ({ weight, arbitrary })));
/** `arb` or null, in the ratio `present` to `absent`. */
const opt = <T>(arb: Arb<T>, present = 1, absent = 1): Arb<T | null> =>
  pick<T | null>([present, arb], [absent, fc.constant(null)]);

/** encodeURIComponent that also takes lone surrogates (a URL cannot carry them: they become U+FFFD). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return encodeURIComponent(text.toWellFormed());
  }
}

// ---------------------------------------------------------------------------------------------
// Text

/** Characters the grammars give meaning to, and some that only break things. */
const SPECIAL = [
  ',',
  '.',
  '(',
  ')',
  '"',
  '\\',
  '*',
  '%',
  '{',
  '}',
  ':',
  '->',
  '->>',
  '::',
  '&',
  '=',
  '+',
  '#',
  '?',
  ' ',
  "'",
  ';',
  '!',
  '[',
  ']',
  '\t',
  '\n',
  '\u0000',
  'é',
  '日本',
  '🎉',
  '\ud800',
  '\u202e',
  '%zz',
  '%C3',
  "'; DROP TABLE contact; --",
];
const special = fc.constantFrom(...SPECIAL);

/**
 * Any code point, lone surrogates included: what `unit: 'binary'` gives, without the 2.5 s that
 * fast-check spends building its reverse map of 1.1 million code points when the arbitrary is made.
 */
const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .map((c) => (c >= 0xd800 && c <= 0xdfff ? String.fromCharCode(c) : String.fromCodePoint(c)));

const junk: Arb<string> = pick(
  [3, fc.string({ maxLength: 12 })],
  [2, fc.string({ unit: 'grapheme', maxLength: 8 })],
  [1, fc.string({ unit: anyCodePoint, maxLength: 6 })],
  [3, fc.array(fc.oneof(special, fc.string({ maxLength: 3 })), { maxLength: 6 }).map((parts) => parts.join(''))],
);

/** A piece repeated to a length between 300 and 20,000 characters. */
const long: Arb<string> = fc
  .tuple(fc.oneof(special, fc.constantFrom('a', 'x1', '日', '(', ')', 'a,')), fc.integer({ min: 300, max: 20_000 }))
  .map(([piece, n]) => piece.repeat(Math.ceil(n / piece.length)));

// ---------------------------------------------------------------------------------------------
// Values as a query string writes them, by field kind: `VALID` fits the kind, `TEXT` mostly does

const ALL_SEEDED = Object.values(SEEDED).flat();
const someDate = fc.date({
  noInvalidDate: true,
  min: new Date(-62_000_000_000_000),
  max: new Date(300_000_000_000_000),
});
const ordinaryDate = fc.date({ noInvalidDate: true, min: new Date('0001-01-01'), max: new Date('9999-12-31') });
const plainText = fc.constantFrom('Ada', 'ada@example.com', 'Zürich', 'web', 'gold', 'Front desk', 'x', 'Big', '日本');

const VALID: Record<AppKind, Arb<string>> = {
  uuid: pick([3, fc.constantFrom(...ALL_SEEDED)], [1, fc.uuid()]),
  text: pick([3, plainText], [1, fc.constantFrom('*a*', 'A*', '*', '%', '_', '')], [1, fc.string({ maxLength: 8 })]),
  boolean: fc.constantFrom('true', 'false'),
  integer: fc.integer({ min: -1000, max: 1_000_000 }).map(String),
  numeric: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }).map(String),
  date: ordinaryDate.map((d) => d.toISOString().slice(0, 10)),
  timestamptz: ordinaryDate.map((d) => d.toISOString()),
  'text[]': fc.array(plainText, { maxLength: 3 }).map((items) => `{${items.join(',')}}`),
  jsonb: pick(
    [3, fc.constantFrom('{"name":"Rex"}', '["a"]', '{"nested":{"n":1}}', '1', '"a"')],
    [1, fc.json({ maxDepth: 2 })],
  ),
};

const TEXT: Record<AppKind, Arb<string>> = {
  uuid: pick(
    [3, VALID.uuid],
    [
      1,
      fc.constantFrom(
        '{{org}}',
        '00000000-0000-0000-0000-000000000000',
        'abc',
        `${SEEDED.deal[0]}0`,
        SEEDED.deal[0].toUpperCase(),
      ),
    ],
  ),
  text: pick([3, VALID.text], [2, junk]),
  boolean: pick([3, VALID.boolean], [1, fc.constantFrom('TRUE', 't', 'yes', '1', '0', 'null', 'unknown', 'maybe')]),
  integer: pick(
    [3, fc.integer().map(String)],
    [1, fc.constantFrom('2147483648', '-2147483649', '99999999999999999999', '1.5', '1e3', '-0', 'NaN', ' 7 ', '0x10')],
  ),
  numeric: pick(
    [3, fc.double().map(String)],
    [1, fc.constantFrom('1e1000', '1e-400', '-1e308', 'NaN', 'Infinity', '-Infinity', '12.50', '.5', '5.', '1_000')],
  ),
  date: pick(
    [3, someDate.map((d) => d.toISOString().slice(0, 10))],
    [
      1,
      fc.constantFrom(
        '2026-02-30',
        '0000-01-01',
        '99999-01-01',
        'infinity',
        'epoch',
        'today',
        '2026-13-01',
        '2026-1-1',
      ),
    ],
  ),
  timestamptz: pick(
    [3, someDate.map((d) => d.toISOString())],
    [
      1,
      fc.constantFrom(
        '2026-12-01 09:00:00+01',
        'now',
        'infinity',
        '2026-12-01T25:00:00Z',
        '2026-12-01',
        '2026-12-01T09:00:00+99:00',
        '294277-01-01T00:00:00Z',
        '4714-11-24 00:00:00+00 BC',
        'allballs',
      ),
    ],
  ),
  'text[]': pick(
    [2, VALID['text[]']],
    [1, fc.constantFrom('{}', '{"a,b",c}', '{NULL}', '{', '{{a}}', 'a', '{a,{b}}', '["a"]', '{"\\"}')],
    [1, fc.array(junk, { maxLength: 3 }).map((items) => `{${items.join(',')}}`)],
  ),
  jsonb: pick([2, VALID.jsonb], [1, fc.constantFrom('{', '{"a":', 'nope', "{'a':1}", '1e999')]),
};
const anyText = fc.oneof(...Object.values(TEXT));

/** A value for a field: clean, one that fits; messy, mostly of its kind, else another kind, junk or very long. */
const valueFor = (kind: FieldKind | null, clean: boolean): Arb<string> =>
  clean && kind ? VALID[kind] : pick([kind ? 8 : 0, TEXT[kind ?? 'text']], [2, anyText], [2, junk], [1, long]);

// ---------------------------------------------------------------------------------------------
// Field references: names (known, unknown, quoted) and JSON paths

const UNKNOWN_FIELDS = [
  'nope',
  'ID',
  'Id',
  'id ',
  ' id',
  '$',
  '-',
  '"id"',
  '"a,b"',
  'ünï',
  'organisation',
  'x'.repeat(100),
];
const cleanKey = fc.constantFrom('name', 'tags', 'nested', 'n', 'list', '0', '1');
const jsonKey = pick(
  [3, cleanKey],
  [1, fc.constantFrom('-1', '99999999999', '-', '"quoted key"', '"a,b"', '""', 'a b')],
  [1, junk],
);
const pathOf = (key: Arb<string>, max: number) =>
  fc
    .array(fc.tuple(fc.constantFrom('->', '->>'), key), { minLength: 1, maxLength: max })
    .map((steps) => steps.map(([arrow, k]) => arrow + k).join(''));

interface Ref {
  readonly text: string;
  /** The kind of value it holds (`->>` gives text, `->` jsonb); null for a name that is not a field. */
  readonly kind: FieldKind | null;
}

type Use = 'filter' | 'select' | 'order';
const refCache = new Map<string, Arb<Ref>>();

/**
 * A field of the resource for a use. Clean: one the use allows, JSON paths only on jsonb fields.
 * Messy: any field, quoted or not, paths anywhere, or a name the resource does not have.
 */
function fieldRef(resource: Resource | undefined, use: Use, clean: boolean): Arb<Ref> {
  const key = `${resource?.name}/${use}/${clean}`;
  const cached = refCache.get(key);
  if (cached) return cached;
  const all: readonly Field[] = resource?.fields ?? REGISTRY.get('contact')!.fields;
  const allowed = all.filter((f) => (use === 'filter' ? f.filterable : use === 'order' ? f.orderable : true));
  const fields = clean && allowed.length > 0 ? allowed : all;
  const withPath = (f: Field, key: Arb<string>, max: number) =>
    pathOf(key, max).map((path): Ref => ({ text: f.name + path, kind: /->>[^>]*$/.test(path) ? 'text' : 'jsonb' }));
  const known = fc
    .constantFrom(...fields)
    .chain((f) =>
      clean
        ? f.kind === 'jsonb' && use !== 'order'
          ? pick<Ref>([1, fc.constant({ text: f.name, kind: appKind(f.kind) })], [2, withPath(f, cleanKey, 2)])
          : fc.constant<Ref>({ text: f.name, kind: appKind(f.kind) })
        : pick<Ref>(
            [8, fc.constant({ text: f.name, kind: appKind(f.kind) })],
            [1, fc.constant({ text: `"${f.name}"`, kind: appKind(f.kind) })],
            [f.kind === 'jsonb' ? 6 : 1, withPath(f, jsonKey, 4)],
          ),
    );
  const unknown = fc.oneof(fc.constantFrom(...UNKNOWN_FIELDS), junk).map((text): Ref => ({ text, kind: null }));
  const arb = clean ? known : pick([9, known], [1, unknown]);
  refCache.set(key, arb);
  return arb;
}

// ---------------------------------------------------------------------------------------------
// Operations: what follows `field=` (or `field.` inside a tree)

/** A value inside a logic tree: quoted when it holds what would end it (messy: sometimes not). */
const treeQuote = (value: Arb<string>, clean: boolean): Arb<string> =>
  fc
    .tuple(value, fc.integer({ min: 0, max: 9 }))
    .map(([v, roll]) => (/[,()"\\]/.test(v) && (clean || roll > 1) ? `"${v.replace(/["\\]/g, (c) => `\\${c}`)}"` : v));

/** Elements of `{a,b}` and `(a,b)`: quoted where they hold `,`, `"`, `{}` or `()`. */
const listOf = (value: Arb<string>, clean: boolean) => fc.array(treeQuote(value, clean), { maxLength: 4 });

const SEARCH_CONFIGS = [
  'english',
  'simple',
  'german',
  'pg_catalog.english',
  'nope',
  'nope.english',
  '1bad',
  'a.b.c',
  '',
];
const cleanTsQuery = fc.constantFrom('ada', 'ada & lovelace', 'a | !b', "'x'", 'a:*', 'fat <-> rat', 'Zürich', 'or');
const tsQuery = pick([3, cleanTsQuery], [2, junk]);
const OPERATOR_NAMES = Object.keys(OPERATORS) as Array<keyof typeof OPERATORS>;
const JUNK_OPERATORS = ['foo', 'EQ', 'eq ', '', 'not', 'ilike(any', 'in(any)', 'fts(', 'is_'];
const SCALAR = new Set<EngineKind | null>(SCALAR_KINDS);

/**
 * `[not.]op[(any)|(all)|(config)].value` for a field of a kind. Clean: an operator that applies to
 * the kind (engine/operators.ts) with a value that fits; messy: any operator, odd modifiers, junk.
 */
function operation(kind: FieldKind | null, inTree: boolean, clean: boolean): Arb<string> {
  const fits = (op: keyof typeof OPERATORS) => (OPERATORS[op].kinds as readonly string[]).includes(kind ?? '');
  const ops = clean && kind ? OPERATOR_NAMES.filter(fits) : OPERATOR_NAMES;
  const raw = valueFor(kind, clean);
  const plain = inTree ? treeQuote(raw, clean) : raw;
  const known = fc.constantFrom(...ops).chain((op): Arb<string> => {
    switch (OPERATORS[op].grammar) {
      case 'quantifiable': {
        const quantified = fc
          .tuple(fc.constantFrom('any', 'all'), listOf(raw, true))
          .map(([q, vs]) => `${op}(${q}).{${vs.join(',')}}`);
        if (clean)
          return SCALAR.has(kind)
            ? pick([3, plain.map((v) => `${op}.${v}`)], [1, quantified])
            : plain.map((v) => `${op}.${v}`);
        return pick(
          [5, plain.map((v) => `${op}.${v}`)],
          [2, quantified],
          [1, fc.tuple(fc.constantFrom('any', 'all', 'some', ''), plain).map(([q, v]) => `${op}(${q}).${v}`)],
        );
      }
      case 'list': {
        const list = listOf(raw, clean).map((vs) => `${op}.(${vs.join(',')})`);
        if (clean) return list;
        return pick(
          [5, list],
          [1, fc.constantFrom('in.()', 'in.( )', 'in.("")', 'in.(a', 'in.a,b', 'in.((a))', 'in.("a)', 'in.(,)')],
        );
      }
      case 'is': {
        const values = Object.entries(IS_VALUES)
          .filter(([, kinds]) => !clean || (kinds as readonly string[]).includes(kind ?? ''))
          .map(([value]) => value);
        const value = clean
          ? fc.constantFrom(...values)
          : pick([5, fc.constantFrom(...values)], [1, fc.constantFrom('NULL', ' true ', 'nil', '')]);
        return value.map((v) => `${op}.${v}`);
      }
      case 'search': {
        const config = clean
          ? fc.constantFrom('english', 'simple', 'pg_catalog.english')
          : fc.constantFrom(...SEARCH_CONFIGS);
        const q = clean ? cleanTsQuery : tsQuery;
        return fc
          .tuple(opt(config), inTree ? treeQuote(q, clean) : q)
          .map(([c, text]) => `${op}${c === null ? '' : `(${c})`}.${text}`);
      }
      default:
        return plain.map((v) => `${op}.${v}`);
    }
  });
  if (clean) return fc.tuple(fc.constantFrom('', '', '', 'not.'), known).map(([not, rest]) => not + rest);
  const odd = pick(
    [2, fc.tuple(fc.constantFrom(...RANGE_OPERATORS), plain).map(([op, v]) => `${op}.${v}`)],
    [3, fc.tuple(fc.constantFrom(...JUNK_OPERATORS), plain).map(([op, v]) => `${op}.${v}`)],
    [1, plain],
  );
  const negation = fc.constantFrom('', '', '', 'not.', 'not.not.', 'NOT.');
  return fc.tuple(negation, pick([12, known], [1, odd])).map(([not, rest]) => not + rest);
}

// ---------------------------------------------------------------------------------------------
// Query parameters

type Param = readonly [string, string];

const filterParam = (resource: Resource | undefined, clean: boolean): Arb<Param> =>
  fieldRef(resource, 'filter', clean).chain((ref) =>
    operation(ref.kind, false, clean).map((op): Param => [ref.text, op]),
  );

const itemsCache = new Map<string, Arb<string[]>>();
/** `[not.]and|or(...)` items, nesting up to `depth`. */
function treeItems(resource: Resource | undefined, depth: number, clean: boolean): Arb<string[]> {
  const key = `${resource?.name}/${depth}/${clean}`;
  const cached = itemsCache.get(key);
  if (cached) return cached;
  const leaf = fieldRef(resource, 'filter', clean).chain((ref) =>
    operation(ref.kind, true, clean).map((op) => `${ref.text}.${op}`),
  );
  const item: Arb<string> =
    depth <= 0
      ? leaf
      : pick(
          [3, leaf],
          [
            1,
            fc
              .tuple(fc.constantFrom('', 'not.'), fc.constantFrom('and', 'or'), treeItems(resource, depth - 1, clean))
              .map(([not, op, items]) => `${not}${op}(${items.join(',')})`),
          ],
        );
  const arb = fc.array(item, { minLength: 1, maxLength: 3 });
  itemsCache.set(key, arb);
  return arb;
}

/** Parentheses nested past any sane depth, balanced or not. */
const deepParens: Arb<string> = fc
  .tuple(
    fc.integer({ min: 1, max: 5000 }),
    fc.integer({ min: 0, max: 5000 }),
    fc.constantFrom('(', 'and(', 'or(', 'not.and(', '(('),
  )
  .map(([open, close, unit]) => `(${unit.repeat(open)}id.eq.1${')'.repeat(close)})`);

const treeParam = (resource: Resource | undefined, clean: boolean, maxDepth = 3): Arb<Param> => {
  const items = treeItems(resource, maxDepth, clean).map((list) => `(${list.join(',')})`);
  if (clean) return fc.tuple(fc.constantFrom('or', 'and', 'not.or', 'not.and'), items);
  return fc.tuple(
    fc.constantFrom('or', 'and', 'not.or', 'not.and', 'x.or', 'OR'),
    pick([8, items], [1, deepParens], [1, junk]),
  );
};

const CASTS = [
  'text',
  'uuid',
  'int4',
  'integer',
  'int8',
  'bigint',
  'numeric',
  'float8',
  'float4',
  'boolean',
  'date',
  'timestamptz',
  'timestamp',
  'json',
  'jsonb',
];
const ODD_CASTS = ['regclass', 'int4[]', 'xml', 'money', 'pg_catalog.text', 'TEXT', 'varchar(3)', '"text"', ''];
const ALIASES = ['a', 'name', 'id', '"quoted alias"', 'ünï', '日本', '"a:b"', 'x'.repeat(70), '$', 'a b'];
const EMBEDS = [
  'contact(*)',
  'contact!inner(id)',
  '...contact(*)',
  'count()',
  'id.count()',
  'deal(*,contact(*))',
  '*,*',
];

/** Embeds of the resource's own relations, in each form `select` offers. */
const relationEmbed = (resource: Resource | undefined): Arb<string> => {
  const forms = (resource?.relations ?? []).flatMap((r) => [
    `${r.name}(*)`,
    `${r.name}!inner(id)`,
    `x:${r.name}!${r.foreignKey}(id)`,
    `...${r.name}(id)`,
    `${r.name}(count)`,
    `${r.name}()`,
  ]);
  return forms.length ? fc.constantFrom(...forms) : fc.constant('*');
};

function selectItem(resource: Resource | undefined, clean: boolean): Arb<string> {
  const ref = fieldRef(resource, 'select', clean).map((r) => r.text);
  const cast = clean ? fc.constantFrom(...CASTS) : fc.constantFrom(...CASTS, ...ODD_CASTS);
  const alias = clean ? fc.constantFrom('a', 'name', 'ünï', '"quoted alias"') : fc.constantFrom(...ALIASES);
  return pick(
    [2, fc.constant('*')],
    [6, ref],
    [2, fc.tuple(alias, ref).map(([a, field]) => `${a}:${field}`)],
    [2, fc.tuple(ref, cast).map(([field, c]) => `${field}::${c}`)],
    [1, fc.tuple(alias, ref, cast).map(([a, field, c]) => `${a}:${field}::${c}`)],
    [1, relationEmbed(resource)],
    [clean ? 0 : 1, fc.constantFrom(...EMBEDS)],
    [clean ? 0 : 1, junk],
  );
}
const selectParam = (resource: Resource | undefined, clean: boolean): Arb<Param> =>
  fc
    .tuple(fc.array(selectItem(resource, clean), { minLength: 1, maxLength: 5 }), fc.constantFrom(',', ', ', ' ,'))
    .map(([items, sep]): Param => ['select', items.join(sep)]);

const orderParam = (resource: Resource | undefined, clean: boolean): Arb<Param> => {
  const term = fc
    .tuple(
      fieldRef(resource, 'order', clean),
      clean ? fc.constantFrom('', '.asc', '.desc') : fc.constantFrom('', '.asc', '.desc', '.ASC', '.up'),
      clean
        ? fc.constantFrom('', '', '.nullsfirst', '.nullslast')
        : fc.constantFrom('', '', '.nullsfirst', '.nullslast', '.nullslasttt'),
    )
    .map(([ref, dir, nulls]) => ref.text + dir + nulls);
  const terms = fc.array(term, { minLength: 1, maxLength: 3 }).map((list) => list.join(','));
  return (clean ? terms : pick([6, terms], [1, junk])).map((value): Param => ['order', value]);
};

const cleanCount = fc.nat({ max: 50 }).map(String);
const countText = pick(
  [4, cleanCount],
  [
    2,
    fc.constantFrom('0', '1000', '1001', '999999999999999', '9999999999999999', '-1', '1.5', '1e2', ' 3 ', '', 'all'),
  ],
  [1, junk],
);
const pagingParams = (clean: boolean): Arb<Param[]> =>
  fc
    .tuple(opt(clean ? cleanCount : countText), opt(clean ? cleanCount : countText))
    .map(([limit, offset]) => [
      ...(limit === null ? [] : [['limit', limit] as const]),
      ...(offset === null ? [] : [['offset', offset] as const]),
    ]);

const nameList = (resource: Resource | undefined, clean: boolean) =>
  fc
    .array(
      clean
        ? fc.constantFrom(...(resource?.fields ?? []).map((f) => f.name), 'id')
        : pick(
            [4, fieldRef(resource, 'select', false).map((r) => r.text)],
            [1, fc.constantFrom('external_id', 'id', 'key')],
          ),
      { maxLength: 3 },
    )
    .map((names) => names.join(','));

const junkParam: Arb<Param> = pick(
  [3, fc.tuple(junk, junk)],
  [
    1,
    fc.constantFrom<Param>(
      ['select', ''],
      ['', 'x'],
      ['limit', ''],
      ['order', ''],
      ['columns', ''],
      ['on_conflict', ''],
      ['id', ''],
      ['id', 'eq'],
      ['id.eq.1', ''],
      ['contact.order', 'id'],
      ['embedded.limit', '1'],
      ['not.or', 'id.eq.1'],
    ),
  ],
  [1, fc.tuple(fc.constantFrom('q', 'email', 'name', 'data'), long)],
);

type Encoding = 'uri' | 'form' | 'raw' | 'light';
/** How a client might write a parameter: encodeURIComponent, forms (`+` for space), as is, or only `&#%+` escaped. */
function encodeParam([key, value]: Param, how: Encoding): string {
  switch (how) {
    case 'uri':
      return `${encode(key)}=${encode(value)}`;
    case 'form':
      return `${encode(key).replace(/%20/g, '+')}=${encode(value).replace(/%20/g, '+')}`;
    case 'raw':
      return `${key}=${value}`;
    case 'light': {
      const light = (s: string) => s.replace(/[%&#+ ]/g, (c) => encode(c));
      return `${light(key)}=${light(value)}`;
    }
  }
}

function queryString(params: readonly Param[], how: Encoding, extra: readonly string[] = []): string {
  const parts = [...params.map((p) => encodeParam(p, how)), ...extra];
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}
const encoding = fc.constantFrom<Encoding>('uri', 'uri', 'uri', 'form', 'light', 'raw');
const cleanEncoding = fc.constantFrom<Encoding>('uri', 'form', 'light');
/** Parts of a query string that are not `key=value`: ignored or refused. */
const rawExtras = fc.array(fc.constantFrom('', 'flag', '&', '=', '==', '%', '%zz', 'a=%E0%A4%A', '?x=1', '#frag'), {
  maxLength: 2,
});

interface QueryOptions {
  /** Filters and trees only matter where rows are read or written. */
  readonly filters?: boolean;
  /** `columns=` and `on_conflict=`. */
  readonly writes?: boolean;
  /** Well-formed parts only, fitting the resource, so requests reach the database. */
  readonly clean?: boolean;
}

/** A grammar-aware query string for a resource: filters, a tree, select, order, paging, and (messy) junk. */
function query(resource: Resource | undefined, options: QueryOptions = {}): Arb<string> {
  const filters = options.filters ?? true;
  const clean = options.clean ?? false;
  return fc
    .tuple(
      fc.array(filterParam(resource, clean), { maxLength: filters ? 3 : 0 }),
      opt(treeParam(resource, clean), filters ? 1 : 0, 2),
      opt(selectParam(resource, clean)),
      opt(orderParam(resource, clean), 1, 2),
      pagingParams(clean),
      options.writes
        ? fc
            .tuple(opt(nameList(resource, clean), 1, 3), opt(nameList(resource, clean), 1, 3))
            .map(([columns, onConflict]) => [
              ...(columns === null ? [] : [['columns', columns] as const]),
              ...(onConflict === null ? [] : [['on_conflict', onConflict] as const]),
            ])
        : fc.constant([]),
      fc.array(junkParam, { maxLength: clean ? 0 : 1 }),
      clean ? cleanEncoding : encoding,
      opt(rawExtras, clean ? 0 : 1, 5),
      // Messy: one parameter given twice (select, limit, order, a filter...).
      opt(fc.nat(), clean ? 0 : 1, 5),
    )
    .map(([fs, tree, select, order, paging, writes, junks, how, extras, twice]) => {
      const params = [
        ...fs,
        ...(tree ? [tree] : []),
        ...(select ? [select] : []),
        ...(order ? [order] : []),
        ...paging,
        ...writes,
        ...junks,
      ];
      if (twice !== null && params.length > 0) params.push(params[twice % params.length]!);
      return queryString(params, how, extras ?? []);
    });
}

/** A query string with no grammar at all: arbitrary, unicode, percent junk, very long, deep parentheses. */
const arbitraryQuery: Arb<string> = pick(
  [3, fc.string({ maxLength: 60 }).map((s) => `?${s}`)],
  [2, fc.string({ unit: 'grapheme', maxLength: 30 }).map((s) => `?${encode(s)}`)],
  [2, fc.array(fc.tuple(junk, junk), { maxLength: 4 }).map((ps) => queryString(ps, 'uri'))],
  [1, fc.array(fc.tuple(junk, junk), { maxLength: 4 }).map((ps) => queryString(ps, 'raw'))],
  [1, fc.stringMatching(/^(%[0-9A-Fa-fzZ]{0,2}|[a-z=&.(),])*$/).map((s) => `?${s.slice(0, 200)}`)],
  [
    1,
    fc
      .tuple(fc.constantFrom('id', 'or', 'select', 'order', 'email'), long)
      .map(([k, v]) => queryString([[k, v]], 'uri')),
  ],
  [1, deepParens.map((v) => queryString([['or', v]], 'uri'))],
);

// ---------------------------------------------------------------------------------------------
// Headers

const headerChar = (min: number, max: number) => fc.integer({ min, max }).map((c) => String.fromCharCode(c));
/** Printable ASCII and Latin-1: what a header value may hold (no CR, LF or NUL). */
const headerText = pick(
  [4, fc.string({ unit: headerChar(0x20, 0x7e), maxLength: 40 })],
  [1, fc.string({ unit: headerChar(0xa0, 0xff), maxLength: 10 })],
);

const PREFERENCES = [
  'count=exact',
  'count=planned',
  'count=estimated',
  'count=none',
  'return=minimal',
  'return=headers-only',
  'return=representation',
  'return=all',
  'resolution=merge-duplicates',
  'resolution=ignore-duplicates',
  'resolution=nope',
  'missing=default',
  'missing=null',
  'handling=strict',
  'handling=lenient',
  'tx=commit',
  'tx=rollback',
  'max-affected=0',
  'max-affected=1',
  'max-affected=1000',
  'max-affected=-1',
  'max-affected=abc',
  'max-affected=99999999999999999999',
  'params=single-object',
  'timezone=UTC',
  'timezone=Nope/Where',
  'count',
  '=',
  'return = representation',
  'RETURN=REPRESENTATION',
];
const prefer = pick(
  [5, fc.array(fc.constantFrom(...PREFERENCES), { minLength: 1, maxLength: 4 }).map((p) => p.join(', '))],
  [1, fc.array(fc.oneof(fc.constantFrom(...PREFERENCES), headerText), { maxLength: 4 }).map((p) => p.join(','))],
);
const range = pick(
  [4, fc.tuple(fc.nat({ max: 30 }), opt(fc.nat({ max: 60 }))).map(([from, to]) => `${from}-${to ?? ''}`)],
  [
    2,
    fc.constantFrom(
      'items=0-9',
      '10-5',
      '-5',
      'abc',
      '0-999999999999999',
      '999999999999999-',
      '9999999999999999-',
      '0-24, 30-40',
      '',
      ' 0-0 ',
      'bytes=0-1',
    ),
  ],
  [1, headerText],
);
const rangeUnit = pick(
  [4, fc.constantFrom('items', 'ITEMS', ' items ')],
  [1, fc.constantFrom('bytes', 'rows', '')],
  [1, headerText],
);
const ACCEPTS = [
  'application/json',
  'application/vnd.pgrst.object+json',
  'application/vnd.pgrst.object',
  'application/vnd.pgrst.object+json;nulls=stripped',
  'application/openapi+json',
  '*/*',
  'application/*',
  'text/csv',
  'text/html',
  'application/geo+json',
  'text/html;q=0.9, application/json;q=0.1',
  'application/json;q=0',
  'application/json;q=abc',
  'application/vnd.pgrst.object+json;q=0.5, application/json',
  '',
];
const accept = pick([5, fc.constantFrom(...ACCEPTS)], [1, headerText]);
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/vnd.pgrst.object+json',
  'application/merge-patch+json',
  'text/plain',
  'text/csv',
  'application/x-ndjson',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/json; charset=latin1',
  '',
];
const contentType = pick([6, fc.constant('application/json')], [3, fc.constantFrom(...CONTENT_TYPES)], [1, headerText]);
const version = pick(
  [5, fc.constantFrom('2026-11-01', ' 2026-11-01 ')],
  [1, fc.constantFrom('2025-01-01', '2026-11-02', 'latest', '', '2026-11-01,2026-11-01')],
  [1, headerText],
);
const requestId = pick(
  [3, fc.stringMatching(/^[\w=-]{1,40}$/)],
  [1, fc.constantFrom('a'.repeat(255), 'a'.repeat(256), 'has space', 'semi;colon', 'ünï', '')],
  [1, headerText],
  [1, fc.integer({ min: 256, max: 8000 }).map((n) => 'r'.repeat(n))],
);

/** Authorization: the seeded organisation's token mostly, the other's, an unknown one, none, and malformed ones. */
const auth: Arb<string | null> = pick<string | null>(
  [14, fc.constant('Bearer %T')],
  [2, fc.constant(null)],
  [2, fc.constant('Bearer %U')],
  [1, fc.constant('Bearer %B')],
  [
    2,
    fc.constantFrom(
      'bearer   %T',
      'BEARER %T  ',
      'Bearer %T extra',
      'Basic %T',
      'Bearer',
      'Bearer ',
      '%T',
      'Bearer engage_',
      'Bearer engage_short',
      `Bearer ${'x'.repeat(5000)}`,
      'Bearer %T%T',
      'Bearer "%T"',
      'Token %T',
      '',
      'Bearer\t%T',
      'Bearer %U, Bearer %T',
    ),
  ],
  [1, headerText.map((s) => `Bearer ${s}`)],
);

/** The seeded organisation's token nearly always: requests that should get past authentication. */
const validAuth: Arb<string | null> = pick<string | null>(
  [30, fc.constant('Bearer %T')],
  [1, fc.constantFrom('Bearer %U', 'Bearer %B', 'bearer   %T')],
  [1, fc.constant(null)],
);

type Headers = Record<string, string>;
/** Headers a well-behaved client sends, or none. */
const lightHeaders: Arb<Headers> = pick(
  [6, fc.constant({})],
  [
    4,
    fc.record(
      {
        Prefer: fc.constantFrom('count=exact', 'count=estimated', 'count=planned', 'return=representation'),
        Accept: fc.constantFrom('application/json', 'application/vnd.pgrst.object+json', '*/*'),
        Range: fc.tuple(fc.nat({ max: 5 }), fc.nat({ max: 10 })).map(([a, b]) => `${a}-${a + b}`),
      },
      { requiredKeys: [] },
    ),
  ],
);
/** Every header the API reads, each present or not, valid or junk. */
const anyHeaders: Arb<Headers> = fc.record(
  {
    Prefer: prefer,
    Range: range,
    'Range-Unit': rangeUnit,
    Accept: accept,
    'Content-Type': contentType,
    'engage-version': version,
    'Request-Id': requestId,
    // Only declared: the body sent is what it is. Over a limit is a 413 before reading.
    'Content-Length': fc.constantFrom('0', '2', 'abc', '-1', '1e12', ' 10 ', '1048577', '5242881', '99999999999'),
  },
  { requiredKeys: [] },
);
/** Headers writes read: Prefer and Accept mostly, sometimes anything. */
const writeHeaders: Arb<Headers> = pick(
  [4, fc.record({ Prefer: prefer, Accept: accept }, { requiredKeys: [] })],
  [1, anyHeaders],
);

// ---------------------------------------------------------------------------------------------
// Bodies: JSON text built from fragments, so keys may repeat and `__proto__` stays a key

const object = (entries: ReadonlyArray<readonly [string, string]>) =>
  `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
const jsonOf = (value: unknown) => JSON.stringify(value);
const smallJson = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null');

/** JSON that fits a kind. */
const JSON_VALID: Record<AppKind, Arb<string>> = {
  uuid: pick([2, fc.constantFrom(...ALL_SEEDED)], [1, fc.uuid()]).map(jsonOf),
  text: pick([3, plainText], [1, fc.string({ maxLength: 12 })]).map(jsonOf),
  boolean: fc.constantFrom('true', 'false'),
  integer: fc.integer({ min: -1000, max: 1_000_000 }).map(String),
  numeric: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e12, max: 1e12 }).map(jsonOf),
  date: VALID.date.map(jsonOf),
  timestamptz: VALID.timestamptz.map(jsonOf),
  'text[]': fc.array(plainText, { maxLength: 3 }).map(jsonOf),
  jsonb: fc.json({ maxDepth: 2 }),
};
/** JSON for a kind, mostly fitting, with the edges of each type. */
const JSON_TEXT: Record<AppKind, Arb<string>> = {
  uuid: pick([3, JSON_VALID.uuid], [1, TEXT.uuid.map(jsonOf)]),
  text: pick(
    [4, JSON_VALID.text],
    [1, junk.map(jsonOf)],
    [1, long.map(jsonOf)],
    [1, fc.constantFrom('"a\\u0000b"', '"\\ud800"', '"\\udc00x"', '""')],
  ),
  boolean: pick([3, JSON_VALID.boolean], [1, fc.constantFrom('"true"', '0', '1')]),
  integer: pick(
    [3, fc.integer().map(String)],
    [1, fc.constantFrom('2147483648', '-2147483649', '1.5', '1e20', '1e400', '-0', '"7"')],
  ),
  numeric: pick(
    [3, fc.double({ noNaN: true, noDefaultInfinity: true }).map(jsonOf)],
    [1, fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890.5', '"12.5"', '-0')],
  ),
  date: TEXT.date.map(jsonOf),
  timestamptz: TEXT.timestamptz.map(jsonOf),
  'text[]': pick(
    [3, fc.array(fc.oneof(plainText, junk), { maxLength: 4 }).map(jsonOf)],
    [1, fc.constantFrom('[]', '[null]', '[1,2]', '[["a"]]', '"{a,b}"', '["\\u0000"]')],
  ),
  jsonb: pick([3, fc.json({ maxDepth: 3 })], [1, fc.constantFrom('{"name":"Rex"}', '"string"', '[]', 'null')]),
};

/** Values nested `depth` levels deep in arrays, objects or both. */
const deepJson: Arb<string> = fc
  .tuple(
    pick(
      // Around the 100-level bound of the contract (section 6), then far past it.
      [3, fc.integer({ min: 95, max: 105 })],
      [6, fc.integer({ min: 1, max: 200 })],
      [2, fc.integer({ min: 200, max: 3000 })],
      [1, fc.integer({ min: 3000, max: 20_000 })],
    ),
    fc.constantFrom('array', 'object', 'mixed'),
  )
  .map(([depth, shape]) => {
    if (shape === 'array') return `${'['.repeat(depth)}1${']'.repeat(depth)}`;
    if (shape === 'object') return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    return `${'[{"a":'.repeat(depth)}1${'}]'.repeat(depth)}`;
  });

/** A value for a field: clean, one that fits (enums from the enum); messy, also wrong types, null, deep. */
function jsonFor(field: Field, clean: boolean): Arb<string> {
  const enumValues = field.enum;
  if (clean) return enumValues ? fc.constantFrom(...enumValues).map(jsonOf) : JSON_VALID[appKind(field.kind)];
  return pick(
    [8, JSON_TEXT[appKind(field.kind)]],
    [enumValues ? 4 : 0, fc.constantFrom(...(enumValues ?? ['']), 'VIRTUAL', '').map(jsonOf)],
    [2, smallJson],
    [1, fc.constant('null')],
    [1, deepJson],
  );
}

/** JSON for a custom field of a type: clean, fitting; messy, also not fitting, absurd or deep. */
function customJson(type: string, clean: boolean): Arb<string> {
  const kinds: Record<string, FieldKind> = {
    string: 'text',
    string_list: 'text[]',
    number: 'numeric',
    date: 'date',
    boolean: 'boolean',
    datetime: 'timestamptz',
  };
  const kind = kinds[type] ?? 'text';
  if (clean) return pick([8, JSON_VALID[kind]], [1, fc.constant('null')]);
  return pick([6, JSON_TEXT[kind]], [2, smallJson], [1, fc.constant('null')], [1, deepJson]);
}

const UNKNOWN_KEYS = [
  'nope',
  '',
  'ID',
  '__proto__',
  'constructor',
  'toString',
  'a.b',
  'display_name ',
  'ünï',
  'x'.repeat(300),
];
const ORGANISATION = fc.constantFrom('"{{org}}"', jsonOf(SEEDED.deal[0]), 'null', '1');

/**
 * An object shaped like a resource's rows, plus custom-field keys. Clean: fields the server does
 * not manage, each once, with fitting values. Messy: any field (organisation_id too), unknown keys,
 * repeated keys, wrong values.
 */
function shapedObject(
  fields: readonly Field[],
  customKeys: Readonly<Record<string, string>>,
  clean: boolean,
): Arb<string> {
  const usable = clean ? fields.filter((f) => !f.serverManaged || f.name === 'id') : fields;
  const fieldEntry = fc
    .constantFrom(...usable)
    .chain((f) => (f.name === 'organisation_id' ? ORGANISATION : jsonFor(f, clean)).map((v) => [f.name, v] as const));
  const custom = Object.entries(customKeys);
  const customEntry =
    custom.length === 0
      ? fieldEntry
      : fc.constantFrom(...custom).chain(([key, type]) => customJson(type, clean).map((v) => [key, v] as const));
  const unknownEntry = fc.tuple(fc.oneof(fc.constantFrom(...UNKNOWN_KEYS), junk), smallJson);
  const entries = fc.array(pick([8, fieldEntry], [custom.length ? 5 : 0, customEntry], [clean ? 0 : 1, unknownEntry]), {
    maxLength: 6,
  });
  return (clean ? entries.map((list) => [...new Map(list)]) : entries).map(object);
}

const INVALID_JSON = [
  '{',
  '{"a":}',
  "{'a':1}",
  'nul',
  '[1,]',
  '{"a":1}x',
  '\ufeff{"name":"bom"}',
  '\u0000',
  '{"a":1,}',
  '[',
  ']',
  '"unterminated',
  '{"a":"\\x"}',
  'NaN',
  '{"name":"a"}{"name":"b"}',
  '<xml/>',
  'name=a&type=virtual',
];
const EMPTY_BODIES = ['', ' ', '\n', 'null', '[]', '{}', '[{}]', '[[]]', '"x"', '0', 'true', '[null]', '[1]'];
/** Byte sequences that are not UTF-8 (truncated, overlong, a surrogate, past U+10FFFF), a BOM and a NUL. */
const BAD_UTF8 = [
  [0xff],
  [0xfe, 0xff],
  [0xc3],
  [0xed, 0xa0, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xc0, 0xaf],
  [0xef, 0xbb, 0xbf],
  [0],
];
/** A text's UTF-8 with bytes that are not UTF-8 spliced in somewhere. */
const notUtf8 = (text: Arb<string>): Arb<Uint8Array<ArrayBuffer>> =>
  fc.tuple(text, fc.constantFrom(...BAD_UTF8), fc.nat()).map(([t, bad, at]) => {
    const bytes = Buffer.from(t);
    const i = at % (bytes.length + 1);
    return Uint8Array.from([...bytes.subarray(0, i), ...bad, ...bytes.subarray(i)]);
  });

/** Built once: over the 1 MiB limit, a 200 KB value, a value past an index's limit, many items. */
const BIG_BODIES = [
  `${' '.repeat(1024 * 1024)}{}`,
  `{"name":"${'x'.repeat(1024 * 1024)}"}`,
  `{"name":"${'x'.repeat(200_000)}"}`,
  `{"external_id":"${'e'.repeat(10_000)}"}`,
  `[${Array.from({ length: 300 }, (_, i) => `{"name":"bulk ${i}"}`).join(',')}]`,
  `[${'{},'.repeat(500)}{}]`,
];

/** A body for a resource. Clean: shaped objects or arrays of them. Messy: also any JSON, invalid, empty, deep, huge. */
function body(
  resource: Resource,
  customKeys: Readonly<Record<string, string>>,
  clean: boolean,
): Arb<string | Uint8Array<ArrayBuffer>> {
  const shaped = shapedObject(resource.fields, customKeys, clean);
  const array = fc.array(shaped, { minLength: clean ? 1 : 0, maxLength: 4 }).map((items) => `[${items.join(',')}]`);
  if (clean) return pick([3, shaped], [1, array]);
  return pick<string | Uint8Array<ArrayBuffer>>(
    [10, shaped],
    [4, array],
    [2, fc.json({ maxDepth: 4 })],
    [1, fc.constantFrom(...INVALID_JSON)],
    [1, fc.constantFrom(...EMPTY_BODIES)],
    [1, deepJson],
    [1, fc.tuple(fc.constantFrom(...resource.fields.map((f) => f.name)), deepJson).map(([k, v]) => object([[k, v]]))],
    [1, fc.constantFrom(...BIG_BODIES)],
    [1, notUtf8(shaped)],
  );
}

// ---------------------------------------------------------------------------------------------
// Requests

const METHODS = ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE', 'OPTIONS'];
// `get` is normalised to GET by fetch, `Patch` is not (only six methods are).
const ODD_METHODS = ['PUT', 'Patch', 'PURGE', 'QUERY', 'get'];
const method = pick([12, fc.constantFrom(...METHODS)], [1, fc.constantFrom(...ODD_METHODS)]);
const withBody = (m: string) => m !== 'GET' && m !== 'HEAD' && m !== 'get';

const offering = (verb: string) => RESOURCES.filter((r) => (r.verbs as ReadonlySet<string>).has(verb));
const knownResource = fc.constantFrom(...RESOURCES);
const resourcePath = pick<{ path: string; resource: Resource | undefined }>(
  [12, knownResource.map((r) => ({ path: `/api/v1/${r.name}`, resource: r }))],
  [1, fc.constantFrom(...UNKNOWN_RESOURCES).map((name) => ({ path: `/api/v1/${name}`, resource: undefined }))],
  [
    1,
    fc
      .constantFrom(
        '/api/v1',
        '/api/v1/',
        '/api/v1/contact/',
        '/api/v1/contact/x',
        '/api/v2/contact',
        '/health',
        '/ready',
      )
      .map((path) => ({ path, resource: resourceNamed('contact') })),
  ],
);

/** Reads with well-formed query strings on resources that offer GET, as the seeded organisation. */
const cleanRead: Arb<Req> = fc
  .tuple(fc.constantFrom(...offering('GET')), fc.constantFrom('GET', 'GET', 'GET', 'HEAD'), validAuth, lightHeaders)
  .chain(([resource, m, a, headers]) =>
    query(resource, { clean: true }).map(
      (q): Req => ({ method: m, path: `/api/v1/${resource.name}${q}`, auth: a, headers }),
    ),
  );
/** Reads with query strings that are mostly grammar and partly junk, on any path. */
const messyRead: Arb<Req> = fc
  .tuple(resourcePath, pick([10, fc.constantFrom('GET', 'GET', 'HEAD')], [1, method]), validAuth, lightHeaders)
  .chain(([{ path, resource }, m, a, headers]) =>
    query(resource).map((q): Req => ({ method: m, path: path + q, auth: a, headers })),
  );
/** Reads: grammar-aware filters, trees, select, order and paging. */
export const readRequest: Arb<Req> = pick([1, cleanRead], [1, messyRead]);

/** Logic trees alone, nested deeper than usual, on reads, PATCH and DELETE. */
export const treeRequest: Arb<Req> = fc
  .tuple(fc.constantFrom('GET', 'GET', 'HEAD', 'DELETE', 'PATCH'), fc.boolean(), validAuth, cleanEncoding)
  .chain(([m, clean, a, how]) =>
    fc.constantFrom(...offering(m === 'HEAD' ? 'GET' : m)).chain((resource) =>
      fc.array(treeParam(resource, clean, 6), { minLength: 1, maxLength: 2 }).map(
        (params): Req => ({
          method: m,
          path: `/api/v1/${resource.name}${queryString(params, how)}`,
          auth: a,
          // Writes roll back, so trees that match every row leave the seed in place.
          headers: m === 'DELETE' || m === 'PATCH' ? { Prefer: 'tx=rollback', 'Content-Type': 'application/json' } : {},
          body: m === 'PATCH' ? '{}' : undefined,
        }),
      ),
    ),
  );

/** Any method, any path, arbitrary query strings, any headers. */
export const arbitraryRequest: Arb<Req> = fc
  .tuple(
    pick([6, resourcePath.map((p) => p.path)], [1, fc.constantFrom('/', '/v1', '/v1/', '/api', '/api/v1//contact')]),
    method,
    arbitraryQuery,
    auth,
    pick([2, fc.constant({})], [1, anyHeaders]),
    opt(pick([2, fc.json({ maxDepth: 2 })], [1, fc.constantFrom(...INVALID_JSON, ...EMPTY_BODIES)]), 2, 1),
  )
  .map(([path, m, q, a, headers, b]) => ({
    method: m,
    path: path + q,
    auth: a,
    headers,
    body: withBody(m) && b !== null ? b : undefined,
  }));

/** Every header the API reads, on every method, with a well-formed query. */
export const headerRequest: Arb<Req> = fc
  .tuple(resourcePath, method, auth, anyHeaders, opt(fc.constantFrom('{"name":"h"}', '[{"name":"h"}]', '{')))
  .chain(([{ path, resource }, m, a, headers, b]) =>
    query(resource, { filters: m !== 'POST', clean: true }).map(
      (q): Req => ({ method: m, path: path + q, auth: a, headers, body: withBody(m) && b !== null ? b : undefined }),
    ),
  );

const cleanWriteHeaders: Arb<Record<string, string>> = fc
  .tuple(
    fc.subarray([
      'return=representation',
      'missing=default',
      'resolution=merge-duplicates',
      'count=exact',
      'tx=rollback',
    ]),
    // A single object is asked for now and then: most writes touch zero or several rows, a 406.
    pick(
      [6, fc.constant(null)],
      [1, fc.constant('application/json')],
      [1, fc.constant('application/vnd.pgrst.object+json')],
    ),
  )
  .map(([prefs, accept]) => ({
    ...(prefs.length > 0 ? { Prefer: prefs.join(', ') } : {}),
    ...(accept ? { Accept: accept } : {}),
  }));

/** POST, PATCH and DELETE on resources that offer them, with well-formed queries and bodies that fit. */
const cleanWrite: Arb<Req> = fc
  .constantFrom('POST', 'PATCH', 'DELETE')
  .chain((m) => fc.tuple(fc.constant(m), fc.constantFrom(...offering(m)), validAuth, cleanWriteHeaders))
  .chain(([m, resource, a, headers]) =>
    fc
      .tuple(
        query(resource, { filters: m !== 'POST', writes: m === 'POST', clean: true }),
        m === 'DELETE' ? fc.constant(undefined) : body(resource, {}, true),
      )
      .map(
        ([q, b]): Req => ({
          method: m,
          path: `/api/v1/${resource.name}${q}`,
          auth: a,
          headers: { ...headers, 'Content-Type': 'application/json' },
          body: b,
        }),
      ),
  );

/** Writes on any resource, with bodies shaped like its rows and worse, and any write headers. */
const messyWrite: Arb<Req> = fc
  .tuple(knownResource, pick([4, fc.constantFrom('POST', 'PATCH')], [1, fc.constantFrom('DELETE', 'PUT')]), auth)
  .chain(([resource, m, a]) =>
    fc
      .tuple(
        query(resource, { filters: m !== 'POST', writes: true }),
        writeHeaders,
        pick([12, fc.constant('application/json')], [1, contentType]),
        opt(body(resource, {}, false), m === 'DELETE' || m === 'PUT' ? 1 : 29, 1),
      )
      .map(
        ([q, headers, type, b]): Req => ({
          method: m,
          path: `/api/v1/${resource.name}${q}`,
          auth: a,
          headers: { ...headers, 'Content-Type': type },
          body: b ?? undefined,
        }),
      ),
  );

/** Writes: bodies on POST, PATCH and DELETE of every resource. */
export const writeRequest: Arb<Req> = pick([1, cleanWrite], [1, messyWrite]);

const dealDetails = resourceNamed('deal_details');
const dealFilter = pick(
  [6, fc.constantFrom(...SEEDED.deal).map((d) => `?id=eq.${d}`)],
  [2, fc.constantFrom('?id=not.is.null', '?name=eq.Big', '?value=gt.0', `?id=in.(${SEEDED.deal.join(',')})`)],
  [1, query(dealDetails, { clean: true })],
  [1, query(dealDetails)],
);
/** Keys that look like the seeded custom fields, and other entities' custom fields. */
const LOOKALIKES = {
  Source: 'string',
  source_: 'string',
  'source ': 'string',
  labels2: 'string_list',
  tier: 'string',
  tags: 'string_list',
};

/** PATCH /deal_details: deal fields and custom-field keys (seeded, unknown, like-named), right and wrong values. */
export const dealDetailsRequest: Arb<Req> = fc
  .tuple(dealFilter, validAuth, pick([3, cleanWriteHeaders], [1, writeHeaders]), fc.boolean())
  .chain(([q, a, headers, clean]) =>
    pick(
      [6, shapedObject(dealDetails.fields, CUSTOM_FIELDS.deal, clean)],
      [clean ? 0 : 3, shapedObject(dealDetails.fields, { ...CUSTOM_FIELDS.deal, ...LOOKALIKES }, false)],
      [clean ? 0 : 1, body(dealDetails, CUSTOM_FIELDS.deal, false)],
    ).map(
      (b): Req => ({
        method: 'PATCH',
        path: `/api/v1/deal_details${q}`,
        auth: a,
        headers: { ...headers, 'Content-Type': 'application/json' },
        body: b,
      }),
    ),
  );

// The versioned API

const COLLECTIONS = ['contacts', 'deals', 'appointments'] as const;
type Collection = (typeof COLLECTIONS)[number];
const COLLECTION_RESOURCE = { contacts: 'contact', deals: 'deal', appointments: 'appointment' } as const;
const collectionName = pick<string>(
  [8, fc.constantFrom(...COLLECTIONS)],
  [1, fc.constantFrom('calendars', 'nope', 'contact', 'CONTACTS', '%00', 'files', 'imports')],
);
const isCollection = (name: string): name is Collection => (COLLECTIONS as readonly string[]).includes(name);

/** Items for a collection's batch: its fields and custom fields, matched on seeded external ids sometimes. */
const batchItem = (collection: string): Arb<string> => {
  const known = isCollection(collection) ? collection : 'contacts';
  const resource = resourceNamed(COLLECTION_RESOURCE[known]);
  const custom = CUSTOM_FIELDS[COLLECTION_RESOURCE[known]];
  const shaped = fc.boolean().chain((clean) => shapedObject(resource.fields, custom, clean));
  return pick(
    [6, shaped],
    [
      2,
      fc
        .tuple(fc.constantFrom('crm-3', 'deal-1', 'ap-1', 'new-1', ''), shaped)
        .map(([ext, rest]) =>
          rest === '{}' ? `{"external_id":"${ext}"}` : `{"external_id":"${ext}",${rest.slice(1)}`,
        ),
    ],
    [1, smallJson],
  );
};
const BIG_BATCHES = [
  `{"items":[${'{"display_name":"x"},'.repeat(300)}{}]}`,
  `{"items":"${'x'.repeat(5 * 1024 * 1024)}"}`,
];
const batchBody = (collection: string): Arb<string | Uint8Array<ArrayBuffer>> =>
  pick<string | Uint8Array<ArrayBuffer>>(
    [20, fc.array(batchItem(collection), { maxLength: 5 }).map((items) => `{"items":[${items.join(',')}]}`)],
    [
      4,
      fc.constantFrom(
        '{"items":{}}',
        '{"items":null}',
        '{"items":[],"x":1}',
        '{"items":[[]]}',
        '{"items":[null]}',
        '[]',
        '{"ITEMS":[]}',
        '{"items":[{"__proto__":{"x":1}}]}',
      ),
    ],
    [4, fc.json({ maxDepth: 3 })],
    [2, fc.constantFrom(...INVALID_JSON, ...EMPTY_BODIES)],
    [2, deepJson.map((deep) => `{"items":[{"display_name":${deep}}]}`)],
    [2, deepJson],
    [1, notUtf8(batchItem(collection).map((item) => `{"items":[${item}]}`))],
    // Rare: a 5 MiB body and 300 inserts cost tens of milliseconds each.
    [1, fc.constantFrom(...BIG_BATCHES)],
  );

const cursor = pick(
  [2, fc.constant('{{cursor}}')],
  [
    3,
    fc
      .array(fc.oneof(TEXT.timestamptz, TEXT.uuid, junk), { maxLength: 3 })
      .map((key) => Buffer.from(JSON.stringify(key)).toString('base64url')),
  ],
  [1, fc.constantFrom('', 'x', '====', '%%', 'W10', 'bnVsbA', Buffer.from('["a",1]').toString('base64url'))],
  [1, junk],
);
const jobId = pick([3, fc.constantFrom('{{job}}', '{{file}}', SEEDED.deal[0])], [2, fc.uuid()], [1, junk.map(encode)]);
const fileBody = pick<readonly [string, string | Uint8Array<ArrayBuffer>]>(
  [
    3,
    fc.constantFrom<readonly [string, string | Uint8Array<ArrayBuffer>]>(
      ['text/csv', 'display_name\nA\n'],
      ['text/csv', ''],
      ['application/json', '[{"display_name":"J"}]'],
      ['application/x-ndjson', '{"display_name":"N"}\n{'],
      ['text/csv', '\u0000\ud800'],
    ),
  ],
  [1, fc.tuple(contentType, fc.oneof(junk, fc.json({ maxDepth: 2 })))],
  [
    1,
    fc.tuple(
      fc.constantFrom('text/csv', 'application/json', 'application/x-ndjson'),
      notUtf8(fc.constantFrom('display_name\nA\n', '[{"display_name":"J"}]', '{"display_name":"N"}\n')),
    ),
  ],
);

/** The versioned API: batch imports, import jobs, files, contact pages, and verbs they do not offer. */
export const v1Request: Arb<Req> = fc
  .tuple(
    fc.constantFrom('batch', 'batch', 'batch', 'page', 'page', 'job', 'start', 'file', 'other'),
    collectionName,
    validAuth,
    pick([6, fc.constant({})], [1, anyHeaders]),
  )
  .chain(([kind, collection, a, headers]): Arb<Req> => {
    const base = { auth: a, headers: { 'Content-Type': 'application/json', ...headers } };
    switch (kind) {
      case 'batch':
        return batchBody(collection).map((b) => ({
          ...base,
          method: 'POST',
          path: `/v1/${collection}/imports/batch`,
          body: b,
        }));
      case 'page':
        // Only contacts has keyset pages; other collections are a 404 quickly.
        return fc
          .tuple(opt(countText), opt(cursor), encoding, pick([4, fc.constant('contacts')], [1, collectionName]))
          .map(([limit, c, how, pages]) => {
            const params: Param[] = [];
            if (limit !== null) params.push(['limit', limit]);
            if (c !== null) params.push(['cursor', c]);
            return { ...base, method: 'GET', path: `/v1/${pages}${queryString(params, how)}` };
          });
      case 'job':
        return jobId.map((id) => ({ ...base, method: 'GET', path: `/v1/imports/${id}` }));
      case 'start':
        return pick(
          [3, fc.constantFrom('{"file_id":"{{file}}"}', '{"file_id":"{{job}}"}', `{"file_id":"${SEEDED.deal[0]}"}`)],
          [2, shapedObject(resourceNamed('contact').fields, {}, false)],
          [1, fc.json({ maxDepth: 2 })],
          [1, fc.constantFrom(...INVALID_JSON, ...EMPTY_BODIES)],
        ).map((b) => ({ ...base, method: 'POST', path: `/v1/${collection}/imports`, body: b }));
      case 'file':
        return fileBody.map(([type, b]) => ({
          ...base,
          headers: { ...headers, 'Content-Type': type },
          method: 'POST',
          path: '/v1/files',
          body: b,
        }));
      default:
        return fc
          .tuple(
            fc.constantFrom('PUT', 'DELETE', 'PATCH', 'GET', 'OPTIONS', 'HEAD'),
            fc.constantFrom(
              `/v1/${collection}/imports/batch`,
              `/v1/${collection}/imports`,
              '/v1/files',
              '/v1/imports/',
              '/v1/imports',
              `/v1/${collection}/x`,
              '/v1/',
            ),
          )
          .map(([m, path]) => ({ ...base, method: m, path, body: withBody(m) ? '{}' : undefined }));
    }
  });
