/**
 * `engage seed` (`npm run seed`): migrates the configured database and, when it has no demo
 * organisation yet, creates the one `npm start` creates on a fresh embedded database, printing its
 * token alone on the last line. `--contacts N` then adds N generated contacts to the demo
 * organisation (or `--organisation`), in batches, with a progress bar: a database at scale.
 */
import { randomBytes } from 'node:crypto';
import type { Queryable } from '@engage/engine';
import { UUID } from '@engage/engine';
import { Command, InvalidArgumentError } from 'commander';
import { withDatabase } from '../server/cli.ts';
import { createDemo, findDemo } from '../server/demo.ts';
import { engageEngine } from '../server/engine.ts';
import { progress } from './progress.ts';

const BATCH = 5000;
const FIRST = ['Ada', 'Grace', 'Alan', 'Edsger', 'Barbara', 'Donald', 'Margaret', 'Ken', 'Frances', 'John', 'Radia'];
const LAST = [
  'Lovelace',
  'Hopper',
  'Turing',
  'Dijkstra',
  'Liskov',
  'Knuth',
  'Hamilton',
  'Thompson',
  'Allen',
  'Perlman',
];
const CITIES: Array<[string, string]> = [
  ['Zürich', 'CH'],
  ['Bern', 'CH'],
  ['Berlin', 'DE'],
  ['London', 'GB'],
  ['Amsterdam', 'NL'],
  ['New York', 'US'],
  ['Boston', 'US'],
  ['Paris', 'FR'],
];

/** One statement per batch: the rows travel as one JSON parameter. */
async function insertContacts(db: Queryable, organisationId: string, run: string, from: number, count: number) {
  const rows = Array.from({ length: count }, (_, k) => {
    const i = from + k;
    const name = `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}`;
    const [city, country] = CITIES[i % CITIES.length]!;
    return {
      name,
      email: `${name.toLowerCase().replace(' ', '.')}.${run}.${i}@example.com`,
      city,
      country,
      external_id: `seed-${run}-${i}`,
      opt_in: i % 3 === 0,
    };
  });
  await db.query(
    `INSERT INTO contact (organisation_id, full_name, display_name, email, city, country, external_id,
       email_marketing_opt_in)
     SELECT $1::uuid, r.name, r.name, r.email, r.city, r.country, r.external_id, r.opt_in
     FROM json_to_recordset($2::text::json)
       AS r(name text, email text, city text, country text, external_id text, opt_in boolean)`,
    [organisationId, JSON.stringify(rows)],
  );
}

const count = (value: string) => {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError('must be a whole number.');
  return Number(value);
};

const uuid = (value: string) => {
  if (!UUID.test(value)) throw new InvalidArgumentError('must be a uuid.');
  return value.toLowerCase();
};

export const seedCommand = () =>
  new Command('seed')
    .description(
      'create the demo organisation unless the database has it (its token alone on the last line); ' +
        'with --contacts, add that many generated contacts',
    )
    .option('--contacts <n>', 'generated contacts to add, in batches, with progress', count)
    .option('--organisation <uuid>', 'the organisation to add them to (default: the demo organisation)', uuid)
    .action(async (options: { contacts?: number; organisation?: string }) => {
      await withDatabase(async (db) => {
        const existing = await findDemo(db);
        if (existing && options.contacts === undefined) {
          console.error(
            `The database has the demo organisation already (${existing.id}); ` +
              `a token for it: npx engage token create --organisation ${existing.id}`,
          );
          process.exitCode = 1;
          return;
        }
        // The demo, unless it exists or the contacts go to another organisation.
        const demo = existing || options.organisation ? null : await createDemo(db, engageEngine(db));
        if (options.contacts !== undefined) {
          const organisationId = (options.organisation ?? demo?.organisationId ?? existing?.id)!;
          await db.query('INSERT INTO organisation (id) VALUES ($1::uuid) ON CONFLICT (id) DO NOTHING', [
            organisationId,
          ]);
          const total = options.contacts;
          const run = randomBytes(4).toString('hex');
          const bar = progress(total, 'contacts');
          for (let done = 0; done < total; done += BATCH) {
            await insertContacts(db, organisationId, run, done, Math.min(BATCH, total - done));
            bar.update(Math.min(done + BATCH, total));
          }
          bar.stop();
          console.log(
            `Added ${total} contacts to organisation ${organisationId} in ${bar.seconds().toFixed(1)} s ` +
              `(${Math.round(bar.rate())} rows/s).`,
          );
        }
        if (demo) {
          console.log(`Created the demo organisation ${demo.organisationId}. Its API token, shown once:`);
          console.log(demo.token);
        }
      });
    });
