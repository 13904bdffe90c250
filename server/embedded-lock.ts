/**
 * PGlite is one process's database: two processes opening the same directory would corrupt it.
 * The server holds a pid file in the directory while it runs; the CLI then goes through the
 * server's admin channel (server/admin-socket.ts) or refuses, and a second server exits.
 */
import { accessSync, constants, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Problem } from './problems.ts';

const lockFile = (dir: string) => join(dir, 'engage-server.pid');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pid of a live server holding the directory, if any. */
export function embeddedHolder(dir: string): number | null {
  const file = lockFile(dir);
  if (!existsSync(file)) return null;
  const pid = Number(readFileSync(file, 'utf8').trim());
  return Number.isInteger(pid) && pid !== process.pid && alive(pid) ? pid : null;
}

/** The one line a second server or a CLI command prints when a server holds the directory. */
export const inUseMessage = (dir: string, pid: number, what: string) =>
  `The embedded database in ${dir} is in use by a running server (pid ${pid}); ${what}`;

/** Takes the directory for this server; exits with one line (no stack trace) when another server holds it. */
export function holdEmbedded(dir: string): () => void {
  const holder = embeddedHolder(dir);
  if (holder !== null) {
    console.error(
      inUseMessage(
        dir,
        holder,
        'stop it first, or start this one with another PGLITE_DIR (PGlite serves one process).',
      ),
    );
    process.exit(1);
  }
  embeddedDirectory(dir);
  writeFileSync(lockFile(dir), String(process.pid));
  return () => rmSync(lockFile(dir), { force: true });
}

/** Creates the embedded database's directory if need be; a Problem when this user cannot write there. */
export function embeddedDirectory(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (error) {
    throw new Problem(
      `The embedded database cannot be kept in ${dir} (${(error as NodeJS.ErrnoException).code ?? 'not usable'}): ` +
        'set PGLITE_DIR to a directory this user may write, or DATABASE_URL to use PostgreSQL.',
    );
  }
}
