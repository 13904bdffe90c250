/**
 * The `engage` command (bin/engage.js; the npm scripts call it): serve, migrate, token,
 * organisation, seed, import, openapi. Usage errors exit 2, failures 1.
 */

import { buildOpenApi } from '@engage/engine';
import { Command, CommanderError } from 'commander';
import { registry as appRegistry } from '../schema/registry.ts';
import { localBase, serverUrl, whereabouts } from '../server/cli.ts';
import { openapiOptions } from '../server/openapi.ts';
import { exitWith } from '../server/problems.ts';
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
  .option('--server-url <url>', "the server URL the document names (default: HOST and PORT's /api/v1)", serverUrl)
  .action(({ serverUrl = `${localBase()}/api/v1` }: { serverUrl?: string }) => {
    console.log(JSON.stringify(buildOpenApi(appRegistry, openapiOptions(serverUrl)), null, 2));
  });

// Every subcommand created above inherits exitOverride; the added ones need it too.
const override = (command: Command) => {
  command.exitOverride();
  command.showHelpAfterError();
  for (const sub of command.commands) override(sub);
};
override(program);

/** The words of the command run (`token create`), as argv names them. */
function commandRun(): string[] {
  const words: string[] = [];
  let command: Command = program;
  for (const word of process.argv.slice(2)) {
    const sub = command.commands.find((c) => c.name() === word);
    if (!sub) break;
    words.push(word);
    command = sub;
  }
  return words;
}

// A reader that stops early (`engage openapi | head`) closes the pipe: the command's work is done.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Help and version exit 0; anything commander refused (unknown command, missing or invalid option) is a usage error.
  if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : 2);
  exitWith(error, whereabouts(), `engage ${commandRun().join(' ')} failed`);
}
