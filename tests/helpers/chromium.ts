/**
 * Debian's `chromium` for browser tests (puppeteer-core drives it; no browser is ever downloaded).
 * On a machine without it (a fresh CI runner) it is installed with apt-get, once: the tests run as
 * root there. Allow the install a few minutes in the calling hook's timeout.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

/** Minutes an install may take (apt-get update and the package with its dependencies). */
export const CHROMIUM_INSTALL_TIMEOUT_MS = 15 * 60_000;

/** The browser's path, installing Debian's package first if it is missing. */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  // Another test process installing at the same time: apt-get waits for its lock rather than failing.
  const apt = 'apt-get -o DPkg::Lock::Timeout=600';
  execFileSync('sh', ['-c', `${apt} update && ${apt} install -y chromium`], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    timeout: CHROMIUM_INSTALL_TIMEOUT_MS,
  });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get install chromium did not provide ${CHROMIUM}`);
  return CHROMIUM;
}
