/** `npm run migrate`: applies pending migrations to the configured database. */
import { loadConfig } from '../server/config.ts';
import { openDatabase } from '../server/database.ts';
import { embeddedHolder } from '../server/embedded-lock.ts';

const config = loadConfig();
if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
  console.error(`The embedded database in ${config.PGLITE_DIR} is in use by a running server; stop it first.`);
  process.exit(1);
}
const db = await openDatabase(config);
try {
  await db.migrate();
  console.log(`Migrations applied (${db.kind}).`);
} finally {
  await db.close();
}
