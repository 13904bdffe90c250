import { defineConfig } from 'vitest/config';

/** The package's own tests: PGlite by default, PostgreSQL with DATABASE_URL (test/database.ts). */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // On PGlite each file copies one initialised data directory.
    globalSetup: ['test/pglite-template.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
