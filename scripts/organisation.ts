/**
 * `engage organisation`: `create --name <name> [--json]` makes an organisation and prints its id
 * alone on the last line (or the organisation as JSON); `list` prints every organisation, a header
 * line first, then one tab-separated line each (id, name, created_at, active tokens). On the
 * embedded database a running server holds, both go through the server's admin channel, as the
 * token commands do.
 */
import { Command, InvalidArgumentError } from 'commander';
import { withAdmin } from '../server/cli.ts';

/** An organisation's name: what `organisation list` shows, so not blank. */
const name = (value: string) => {
  const trimmed = value.trim();
  if (trimmed === '') throw new InvalidArgumentError('must not be blank.');
  if (trimmed.length > 200) throw new InvalidArgumentError('must have at most 200 characters.');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: they are what is refused
  if (/[\u0000-\u001f\u007f]/.test(trimmed))
    throw new InvalidArgumentError('must not hold tabs, line breaks or other control characters.');
  return trimmed;
};

export function organisationCommand(): Command {
  const organisation = new Command('organisation').description('create and list organisations');
  organisation
    .command('create')
    .description('create an organisation; prints its id alone on the last line (--json: the organisation)')
    .requiredOption('--name <name>', 'its name, as `organisation list` shows it', name)
    .option('--json', 'print the organisation as one JSON object (id, name, created_at) instead')
    .action(async (options: { name: string; json?: boolean }) => {
      await withAdmin(async (admin) => {
        const created = await admin.createOrganisation(options.name);
        if (options.json) {
          console.log(JSON.stringify(created));
          return;
        }
        console.log(
          `Created organisation ${JSON.stringify(created.name)}. ` +
            `A token for it: npx engage token create --organisation ${created.id} --name admin`,
        );
        console.log(created.id);
      });
    });
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
