/**
 * One meaning of every custom-field type (engine/custom-fields.ts): a value is judged alike by
 * `customValueProblem` (bodies, imports) and by the check a PATCH on `*_details` runs inside its
 * statement (compile/custom-fields.ts), for every type and a spread of awkward values.
 */
import type { CustomFieldType } from '@engage/engine';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customValueFits } from '../engine/compile/custom-fields.ts';
import { Params } from '../engine/compile/sql.ts';
import { CUSTOM_FIELD_TYPES, customValueProblem } from '../engine/custom-fields.ts';
import { createTestDatabase, type TestDatabase } from './helpers/db.ts';

const VALUES: unknown[] = [
  null,
  'text',
  '',
  12,
  -0.5,
  true,
  false,
  ['a', 'b'],
  [],
  ['a', 1],
  { a: 1 },
  '2026-12-01',
  '2026-02-30',
  '0050-06-01',
  '2026-12-01T09:00:00Z',
  '2026-12-01 09:00:00+01:00',
  '2026-12-01T09:00:00.123456-05:30',
  '2026-12-01T09:00',
  '2026-12-01T24:00:00Z',
  '2026-12-01T09:00:00',
  '2026-12-01T09:00:00+16:00',
  'tomorrow',
  '12',
  'true',
];

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(() => t?.drop());

async function fitsInSql(type: CustomFieldType, value: unknown): Promise<boolean> {
  const params = new Params();
  const json = params.add(JSON.stringify(value), 'jsonb');
  const fits = customValueFits(json, params.add(type, 'text'), params);
  const [row] = await t.db.query<{ fits: boolean }>(`SELECT ${fits} AS fits`, params.values);
  return row!.fits;
}

describe('custom-field values are judged alike in TypeScript and in SQL', () => {
  const cases = (Object.keys(CUSTOM_FIELD_TYPES) as CustomFieldType[]).flatMap((type) =>
    VALUES.map((value) => [type, JSON.stringify(value), value] as const),
  );
  it.each(cases)('%s %s', async (type, _shown, value) => {
    expect(await fitsInSql(type, value)).toBe(customValueProblem(type, value) === null);
  });

  it('takes what each type means and refuses the rest', () => {
    expect(customValueProblem('date', '2026-12-01')).toBeNull();
    expect(customValueProblem('date', '2026-02-30')).toBe('must be a date (YYYY-MM-DD)');
    expect(customValueProblem('datetime', '2026-12-01T09:00:00')).toBe('must be an ISO 8601 timestamp with an offset');
    expect(customValueProblem('string_list', ['a', 1])).toBe('must be an array of strings');
    expect(customValueProblem('number', '12')).toBe('must be a number');
    expect(customValueProblem('string', 'nul\u0000')).toBe('must not contain NUL characters or unpaired surrogates');
    expect(customValueProblem('boolean', null)).toBeNull();
  });
});
