/**
 * The package's README (its reference, shipped in the tarball) says what the code does: its table
 * of column types is the one the kinds' records (field-kinds.ts) make.
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
