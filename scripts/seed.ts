/**
 * `npm run seed`: migrates the configured database and, when it has no organisation yet, creates
 * the demo organisation `npm start` creates on a fresh embedded database, printing its token
 * alone on the last line.
 */
import { withDatabase } from '../server/cli.ts';
import { seedDemo } from '../server/demo.ts';

await withDatabase(async (db) => {
  const demo = await seedDemo(db);
  if (!demo) {
    console.error('The database already has organisations; the demo is only created on an empty one.');
    process.exitCode = 1;
    return;
  }
  console.log(`Created the demo organisation ${demo.organisationId}. Its API token, shown once:`);
  console.log(demo.token);
});
