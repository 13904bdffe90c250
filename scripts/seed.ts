/**
 * `npm run seed`: migrates the configured database and, when it has no organisation yet, creates
 * the demo organisation `npm start` creates on a fresh embedded database, printing its token
 * alone on the last line.
 */
import { loadConfig } from '../server/config.ts';
import { openDatabase } from '../server/database.ts';
import { seedDemo } from '../server/demo.ts';
import { embeddedHolder } from '../server/embedded-lock.ts';

const config = loadConfig();
if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
  console.error(`The embedded database in ${config.PGLITE_DIR} is in use by a running server; stop it first.`);
  process.exit(1);
}
const db = await openDatabase(config);
try {
  await db.migrate();
  const demo = await seedDemo(db);
  if (!demo) {
    console.error('The database already has organisations; the demo is only created on an empty one.');
    process.exitCode = 1;
  } else {
    console.log(`Created the demo organisation ${demo.organisationId}. Its API token, shown once:`);
    console.log(demo.token);
  }
} finally {
  await db.close();
}
