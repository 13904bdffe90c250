/**
 * The package's README (its reference, shipped in the tarball) says what the code does: its table
 * of column types is the one the kinds' records (field-kinds.ts) make, and it names every export of
 * every entry point.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { columnTypesOf, FIELD_KINDS, KINDS } from '../field-kinds.ts';
import { OPERATORS_BY_KIND } from '../operators.ts';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

/** A row of the table of types, as the records make it. */
function typeRow(kind: (typeof FIELD_KINDS)[number]): string {
  const spec = KINDS[kind];
  const types = columnTypesOf(kind).join(', ') || (kind === 'enum' ? 'an enum (`pgEnum`)' : 'any other');
  const order = kind === 'other' ? 'as PostgreSQL orders it' : spec.ordered ? 'yes' : 'no';
  const aggregates = ['count', ...(spec.summable ? ['sum', 'avg'] : []), ...(spec.extremes ? ['min', 'max'] : [])];
  const value = spec.described.replaceAll('\\', '\\\\');
  return `| ${kind} | ${types} | ${value} | ${OPERATORS_BY_KIND[kind].join(' ')} | ${order} | ${aggregates.join(' ')} |`;
}

it('the table of column types has a row for each kind, as its record makes it', () => {
  const rows = FIELD_KINDS.filter((kind) => !kind.endsWith('[]')).map(typeRow);
  for (const row of rows) expect(README).toContain(`${row}\n`);
});

/** The package's entry points (package.json `exports`), by the file each is built from. */
const ENTRY_POINTS = ['index.ts', 'hono/index.ts', 'postgres.ts', 'pglite.ts'];

/** A module's text without its comments, whose examples may show export statements. */
const withoutComments = (source: string) => source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');

/**
 * The names a module exports, read from its text: `export { a, type B, c as d } from '...'`,
 * `export type { X } from '...'` and export lists over several lines (the name after `as` when
 * there is one), and `export const|function|class|type|interface|enum <name>` declarations.
 */
function exportedNames(source: string): string[] {
  const code = withoutComments(source);
  const names: string[] = [];
  for (const [, list = ''] of code.matchAll(/\bexport\s+(?:type\s+)?\{([^}]*)\}/g)) {
    for (const item of list.split(',')) {
      const name = item
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop()!
        .trim();
      if (name) names.push(name);
    }
  }
  const declaration =
    /\bexport\s+(?:declare\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|type|interface|enum)\s+([\w$]+)/g;
  for (const [, name] of code.matchAll(declaration)) names.push(name!);
  return names;
}

it('the README documents every name each entry point exports', () => {
  const sample = "export { a, type B, c as d } from './x.ts';\nexport type {\n  X,\n  Y as Z,\n} from './y.ts';\n";
  expect(exportedNames(`/** export { hidden } */\n${sample}export const e = 1;`)).toEqual([
    'a',
    'B',
    'd',
    'X',
    'Z',
    'e',
  ]);
  const missing: string[] = [];
  for (const entry of ENTRY_POINTS) {
    const source = readFileSync(new URL(`../${entry}`, import.meta.url), 'utf8');
    // `export *` names nothing this test could check: each export is listed by name.
    expect(withoutComments(source), `${entry} re-exports with export *`).not.toMatch(/\bexport\s+\*/);
    const names = exportedNames(source);
    expect(names.length, `${entry} exports nothing this test can read`).toBeGreaterThan(0);
    for (const name of names) if (!README.includes(`\`${name}\``)) missing.push(`${entry}: ${name}`);
  }
  expect(missing).toEqual([]);
});
