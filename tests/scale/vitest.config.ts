// The scale tests need servers tests/scale/run.sh starts (a PgBouncer, a primary and its replica).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/scale/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // They pause and resume one replica: one file at a time.
    fileParallelism: false,
  },
});
