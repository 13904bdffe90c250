/**
 * `engage token` (`npm run token -- <command>`): API tokens (docs/operations.md, "Tokens and organisations").
 *   create --organisation <uuid> [--name NAME] [--expires-in DAYS]   prints the token alone on the last line
 *   list [--organisation <uuid>]
 *   revoke <token-id>
 * On the embedded database a running server holds, the commands go through its admin channel.
 */

import { UUID } from '@engage/engine';
import { Command, InvalidArgumentError } from 'commander';
import { withAdmin } from '../server/cli.ts';

const uuid = (what: string) => (value: string) => {
  if (!UUID.test(value)) throw new InvalidArgumentError(`${what} must be a uuid.`);
  return value.toLowerCase();
};

const days = (value: string) => {
  if (!/^[1-9]\d{0,5}$/.test(value))
    throw new InvalidArgumentError('must be a whole number of days, at least 1 (leave it out for no expiry).');
  return Number(value);
};

export function tokenCommand(): Command {
  const token = new Command('token').description('create, list and revoke API tokens');
  token
    .command('create')
    .description('create a token (and its organisation if new); prints the token alone on the last line')
    .requiredOption('--organisation <uuid>', 'the organisation the token acts for', uuid('--organisation'))
    .option('--name <name>', 'a name to recognise the token by in `token list`')
    .option('--expires-in <days>', 'days until the token expires (a whole number, at least 1)', days)
    .action(async (options: { organisation: string; name?: string; expiresIn?: number }) => {
      const { organisation: organisationId, name, expiresIn } = options;
      await withAdmin(async (admin) => {
        const created = await admin.createToken({ organisationId, name, expiresInDays: expiresIn });
        const { id, token: secret } = created;
        // The contract creates an unknown organisation: say so, as a mistyped id would go unseen.
        if (created.organisationCreated)
          console.error(
            `Organisation ${organisationId} did not exist, so it was created, without a name ` +
              '(npx engage organisation list shows those there are).',
          );
        const expiry = expiresIn ? `, expiring in ${expiresIn} ${expiresIn === 1 ? 'day' : 'days'}` : '';
        console.log(`Created token ${id} for organisation ${organisationId}${expiry}. It is shown once:`);
        console.log(secret);
      });
    });
  token
    .command('list')
    .description(
      "list an organisation's tokens, or every organisation's (never the tokens themselves): " +
        'id, name, created, state (and organisation, without --organisation)',
    )
    .option('--organisation <uuid>', 'only the tokens of this organisation', uuid('--organisation'))
    .action(async ({ organisation }: { organisation?: string }) => {
      await withAdmin(async (admin) => {
        const tokens = await admin.listTokens(organisation);
        if (tokens.length === 0)
          console.log(organisation ? `No tokens for organisation ${organisation}.` : 'No tokens.');
        for (const t of tokens) {
          const expiry = t.expires_at && `${t.active ? 'expires' : 'expired'} ${t.expires_at}`;
          const state = t.revoked_at ? `revoked ${t.revoked_at}` : (expiry ?? 'active');
          const owner = organisation ? '' : `\torganisation ${t.tenant}`;
          console.log(`${t.id}\t${t.name ?? ''}\tcreated ${t.created_at}\t${state}${owner}`);
        }
      });
    });
  token
    .command('revoke')
    .description('revoke a token at once, by the id create and list show')
    .argument('<token-id>', 'the token id (a uuid)', uuid('the token id'))
    .action(async (tokenId: string) => {
      await withAdmin(async (admin) => {
        if (!(await admin.revokeToken(tokenId))) {
          console.error(`No active token ${tokenId}.`);
          process.exitCode = 1;
          return;
        }
        console.log(`Revoked token ${tokenId}.`);
      });
    });
  return token;
}
