/**
 * `engage organisation list`: every organisation, a header line first, then one tab-separated line
 * each (id, name, created_at, active tokens). On the embedded database a running server holds, it
 * goes through the server's admin channel, as the token commands do.
 */
import { Command } from 'commander';
import { withAdmin } from '../server/cli.ts';

export function organisationCommand(): Command {
  const organisation = new Command('organisation').description('list organisations');
  organisation
    .command('list')
    .description('list every organisation: id, name, created_at and its active tokens, one a line after a header')
    .action(async () => {
      await withAdmin(async (admin) => {
        const organisations = await admin.listOrganisations();
        console.log('id\tname\tcreated_at\tactive_tokens');
        for (const o of organisations) console.log(`${o.id}\t${o.name ?? ''}\t${o.created_at}\t${o.active_tokens}`);
      });
    });
  return organisation;
}
