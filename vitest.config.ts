import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/** `@engage/engine` and its entry points from source, as tsconfig.json's `paths` have them. */
const entry = (path: string) => fileURLToPath(new URL(`./engine/${path}`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^@engage\/engine$/, replacement: entry('index.ts') },
      { find: /^@engage\/engine\/postgres$/, replacement: entry('postgres.ts') },
      { find: /^@engage\/engine\/pglite$/, replacement: entry('pglite.ts') },
      { find: /^@engage\/engine\/hono$/, replacement: entry('hono/index.ts') },
    ],
  },
  test: {
    include: ['tests/**/*.test.ts'],
    // Run by tests/scale/run.sh, which starts the servers they need.
    exclude: ['tests/scale/**', 'node_modules/**'],
    // Each file opens its own database: on PGlite a copy of one migrated data directory.
    globalSetup: ['tests/helpers/pglite-template.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
