/**
 * PGlite is one process's database: two processes opening the same directory would corrupt it.
 * The server holds a pid file in the directory while it runs; the CLI refuses to open it then.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

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

export function holdEmbedded(dir: string): () => void {
  const holder = embeddedHolder(dir);
  if (holder !== null) throw new Error(`the embedded database in ${dir} is in use by another server (pid ${holder})`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(lockFile(dir), String(process.pid));
  return () => rmSync(lockFile(dir), { force: true });
}
