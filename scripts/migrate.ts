/** `npm run migrate`: applies pending migrations to the configured database. */
import { withDatabase } from '../server/cli.ts';

await withDatabase(async (db) => console.log(`Migrations applied (${db.kind}).`));
