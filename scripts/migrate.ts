/** `engage migrate` (`npm run migrate`): applies pending migrations to the configured database. */
import { Command } from 'commander';
import { withDatabase } from '../server/cli.ts';

export const migrateCommand = () =>
  new Command('migrate')
    .description('apply pending migrations to the configured database (DATABASE_URL or PGLITE_DIR)')
    .action(async () => {
      await withDatabase(async (db) => console.log(`Migrations applied (${db.kind}).`));
    });
