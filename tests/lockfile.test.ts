/**
 * The lockfile matches the manifests, so `npm install` on a fresh clone leaves it as it is and
 * `npm ci` installs what package.json says: each workspace's entry in package-lock.json repeats
 * the fields npm copies from its package.json.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => JSON.parse(readFileSync(new URL(`../${path}`, import.meta.url), 'utf8'));
const lock = read('package-lock.json') as { packages: Record<string, Record<string, unknown>> };

/** The fields npm copies from a manifest into the lockfile's entry for it. */
const COPIED = [
  'name',
  'version',
  'bin',
  'engines',
  'workspaces',
  'dependencies',
  'devDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'optionalDependencies',
] as const;

describe('package-lock.json', () => {
  it.each([
    ['', 'package.json'],
    ['engine', 'engine/package.json'],
  ])('its entry "%s" matches %s', (entry, manifest) => {
    const pkg = read(manifest);
    const locked = lock.packages[entry]!;
    for (const field of COPIED) expect(locked[field], `${field} of ${manifest}`).toEqual(pkg[field]);
  });
});
