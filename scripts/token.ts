/**
 * `npm run token -- <command>`: API tokens (the README's "Tokens").
 *   create --organisation <uuid> [--name NAME] [--expires-in DAYS]   prints the token alone on the last line
 *   list --organisation <uuid>
 *   revoke <token-id>
 */
import { parseArgs } from 'node:util';
import { UUID } from '../engine/formats.ts';
import { createToken, listTokens, revokeToken } from '../server/auth/tokens.ts';
import { loadConfig } from '../server/config.ts';
import { openDatabase } from '../server/database.ts';
import { embeddedHolder } from '../server/embedded-lock.ts';

const USAGE = `usage:
  npm run token -- create --organisation <uuid> [--name NAME] [--expires-in DAYS]
  npm run token -- list --organisation <uuid>
  npm run token -- revoke <token-id>`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

const { positionals, values } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { organisation: { type: 'string' }, name: { type: 'string' }, 'expires-in': { type: 'string' } },
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

const [command, ...rest] = positionals;
const organisation = values.organisation;
const needOrganisation = (): string => {
  if (!organisation || !UUID.test(organisation)) fail('--organisation must be a uuid');
  return organisation;
};

let run: (db: Awaited<ReturnType<typeof openDatabase>>) => Promise<void>;
switch (command) {
  case 'create': {
    const organisationId = needOrganisation();
    const days = values['expires-in'];
    if (days !== undefined && !/^[1-9]\d{0,5}$/.test(days)) fail('--expires-in must be a whole number of days');
    run = async (db) => {
      const { id, token } = await createToken(db, {
        organisationId,
        name: values.name,
        expiresInDays: days === undefined ? undefined : Number(days),
      });
      console.log(
        `Created token ${id} for organisation ${organisationId}${days ? `, expiring in ${days} days` : ''}. It is shown once:`,
      );
      console.log(token);
    };
    break;
  }
  case 'list': {
    const organisationId = needOrganisation();
    run = async (db) => {
      const tokens = await listTokens(db, organisationId);
      if (tokens.length === 0) console.log(`No tokens for organisation ${organisationId}.`);
      for (const t of tokens) {
        const state = t.revoked_at ? `revoked ${t.revoked_at}` : t.expires_at ? `expires ${t.expires_at}` : 'active';
        console.log(`${t.id}\t${t.name ?? ''}\tcreated ${t.created_at}\t${state}`);
      }
    };
    break;
  }
  case 'revoke': {
    const [tokenId] = rest;
    if (!tokenId || !UUID.test(tokenId)) fail('revoke takes the token id (a uuid) shown by create and list');
    run = async (db) => {
      if (!(await revokeToken(db, tokenId))) {
        console.error(`No active token ${tokenId}.`);
        process.exitCode = 1;
        return;
      }
      console.log(`Revoked token ${tokenId}.`);
    };
    break;
  }
  default:
    fail(command ? `unknown command "${command}"` : 'a command is needed');
}

const config = loadConfig();
if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
  console.error(
    `The embedded database in ${config.PGLITE_DIR} is in use by a running server; stop it first (PGlite serves one process), or run against PostgreSQL with DATABASE_URL.`,
  );
  process.exit(1);
}
const db = await openDatabase(config);
try {
  await db.migrate();
  await run(db);
} finally {
  await db.close();
}
