import { defineConfig } from 'vitest/config';

/** The package's own tests: PGlite in memory by default, PostgreSQL with DATABASE_URL (test/database.ts). */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
