/**
 * `npm run types [-- --out FILE]`: the API's TypeScript types for postgrest-js and supabase-js
 * (`Database`), generated from the registry, to stdout or to FILE.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { typescriptTypes } from '@engage/engine';
import { registry as appRegistry } from '../schema/registry.ts';

const USAGE = `usage: npm run types [-- --out FILE]

Writes the TypeScript types of the API in the shape postgrest-js and supabase-js take
(createClient<Database>, new PostgrestClient<Database>) to stdout, or to FILE with --out.`;

const { values } = (() => {
  try {
    return parseArgs({ options: { out: { type: 'string', short: 'o' }, help: { type: 'boolean', short: 'h' } } });
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
})();

if (values.help) {
  console.log(USAGE);
} else {
  const text = typescriptTypes(appRegistry);
  if (values.out) {
    writeFileSync(values.out, text);
    console.error(`Wrote ${values.out}.`);
  } else {
    process.stdout.write(text);
  }
}
