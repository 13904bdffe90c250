/**
 * The `engage` command (bin/engage.js; the npm scripts call it): serve, migrate, token,
 * organisation, seed, import, openapi. Usage errors exit 2, failures 1.
 */

import { buildOpenApi } from '@engage/engine';
import { Command, CommanderError } from 'commander';
import { registry as appRegistry } from '../schema/registry.ts';
import { poolerHint } from '../server/database.ts';
import { openapiOptions } from '../server/openapi.ts';
import { importCommand } from './import.ts';
import { migrateCommand } from './migrate.ts';
import { organisationCommand } from './organisation.ts';
import { seedCommand } from './seed.ts';
import { tokenCommand } from './token.ts';

const program = new Command('engage')
  .description('Engage: a PostgREST-style query engine and customer-engagement REST API')
  .exitOverride()
  .showHelpAfterError();

program
  .command('serve')
  .description('serve the API on HOST:PORT (migrates; seeds a demo on an empty embedded database)')
  .action(async () => {
    await import('../server/main.ts');
  });
program.addCommand(migrateCommand());
program.addCommand(tokenCommand());
program.addCommand(organisationCommand());
program.addCommand(seedCommand());
program.addCommand(importCommand());
program
  .command('openapi')
  .description('print the OpenAPI 3.1 document of /api/v1 (JSON) on stdout')
  .option('--server-url <url>', 'the server URL the document names', 'http://127.0.0.1:3000/api/v1')
  .action(({ serverUrl }: { serverUrl: string }) => {
    console.log(JSON.stringify(buildOpenApi(appRegistry, openapiOptions(serverUrl)), null, 2));
  });

// Every subcommand created above inherits exitOverride; the added ones need it too.
const override = (command: Command) => {
  command.exitOverride();
  command.showHelpAfterError();
  for (const sub of command.commands) override(sub);
};
override(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  const hint = poolerHint(error);
  if (hint !== undefined) {
    console.error(hint);
    process.exit(1);
  }
  if (!(error instanceof CommanderError)) throw error;
  // Help and version exit 0; anything commander refused (unknown command, missing or invalid option) is a usage error.
  process.exit(error.exitCode === 0 ? 0 : 2);
}
