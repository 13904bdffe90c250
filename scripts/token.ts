/**
 * `npm run token -- <command>`: API tokens (the README's "Tokens").
 *   create --organisation <uuid> [--name NAME] [--expires-in DAYS]   prints the token alone on the last line
 *   list --organisation <uuid>
 *   revoke <token-id>
 */
import { parseArgs } from 'node:util';
import { UUID } from '../engine/index.ts';
import { createToken, listTokens, revokeToken } from '../server/auth/tokens.ts';
import { withDatabase } from '../server/cli.ts';
import type { OpenDatabase } from '../server/database.ts';

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

let run: (db: OpenDatabase) => Promise<void>;
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
        `Created token ${id} for organisation ${organisationId}` +
          `${days ? `, expiring in ${days} days` : ''}. It is shown once:`,
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

await withDatabase(run);
