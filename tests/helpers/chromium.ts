/**
 * Debian's `chromium` for browser tests (puppeteer-core drives it; no browser is ever downloaded).
 * Without it the browser tests skip and say how to get it, except under CI (`CI` set), where a
 * missing browser is a failure: `.ci/run` installs it before the tests.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

/** The browser's path; undefined (after saying so) when it is missing outside CI. */
export function findChromium(): string | undefined {
  if (existsSync(CHROMIUM)) return CHROMIUM;
  const install = `install Debian's package (apt-get install chromium) to run them`;
  if (process.env.CI) throw new Error(`CI requires ${CHROMIUM} for the browser tests: ${install}`);
  console.warn(`Skipping the browser tests: ${CHROMIUM} is missing; ${install}.`);
  return undefined;
}
