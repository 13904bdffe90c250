/**
 * `engage token` (`npm run token -- <command>`): API tokens (the README's "Tokens").
 *   create --organisation <uuid> [--name NAME] [--expires-in DAYS]   prints the token alone on the last line
 *   list --organisation <uuid>
 *   revoke <token-id>
 * On the embedded database a running server holds, the commands go through its admin channel.
 */

import { type TokenInfo, UUID } from '@engage/engine';
import { Command, InvalidArgumentError } from 'commander';
import { adminTokens } from '../server/admin-socket.ts';
import { withDatabase } from '../server/cli.ts';
import { loadConfig } from '../server/config.ts';
import { embeddedHolder } from '../server/embedded-lock.ts';
import { createOrganisationToken, engageEngine, type OrganisationTokenOptions } from '../server/engine.ts';

interface TokenStore {
  create(input: OrganisationTokenOptions): Promise<{ id: string; token: string }>;
  list(organisationId: string): Promise<TokenInfo[]>;
  revoke(tokenId: string): Promise<boolean>;
}

/** The running embedded server's admin channel, or the database itself. */
async function withTokens(run: (store: TokenStore) => Promise<void>): Promise<void> {
  const config = loadConfig();
  if (!config.DATABASE_URL && embeddedHolder(config.PGLITE_DIR) !== null) {
    try {
      await run(adminTokens(config.PGLITE_DIR));
    } catch (error) {
      console.error(`The server holding ${config.PGLITE_DIR} did not do it: ${(error as Error).message}`);
      process.exitCode = 1;
    }
    return;
  }
  await withDatabase((db) => {
    const engine = engageEngine(db);
    return run({
      create: (input) => createOrganisationToken(engine, db, input),
      list: (organisationId) => engine.tokens!.list(organisationId),
      revoke: (tokenId) => engine.tokens!.revoke(tokenId),
    });
  });
}

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
      await withTokens(async (store) => {
        const { id, token: secret } = await store.create({ organisationId, name, expiresInDays: expiresIn });
        const expiry = expiresIn ? `, expiring in ${expiresIn} ${expiresIn === 1 ? 'day' : 'days'}` : '';
        console.log(`Created token ${id} for organisation ${organisationId}${expiry}. It is shown once:`);
        console.log(secret);
      });
    });
  token
    .command('list')
    .description("list an organisation's tokens (never the tokens themselves)")
    .requiredOption('--organisation <uuid>', 'the organisation', uuid('--organisation'))
    .action(async ({ organisation }: { organisation: string }) => {
      await withTokens(async (store) => {
        const tokens = await store.list(organisation);
        if (tokens.length === 0) console.log(`No tokens for organisation ${organisation}.`);
        for (const t of tokens) {
          const state = t.revoked_at ? `revoked ${t.revoked_at}` : t.expires_at ? `expires ${t.expires_at}` : 'active';
          console.log(`${t.id}\t${t.name ?? ''}\tcreated ${t.created_at}\t${state}`);
        }
      });
    });
  token
    .command('revoke')
    .description('revoke a token at once, by the id create and list show')
    .argument('<token-id>', 'the token id (a uuid)', uuid('the token id'))
    .action(async (tokenId: string) => {
      await withTokens(async (store) => {
        if (!(await store.revoke(tokenId))) {
          console.error(`No active token ${tokenId}.`);
          process.exitCode = 1;
          return;
        }
        console.log(`Revoked token ${tokenId}.`);
      });
    });
  return token;
}
