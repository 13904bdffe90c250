// The scale tests need servers tests/scale/run.sh starts (a PgBouncer, a primary and its replica).
import { defineConfig } from 'vitest/config';
import root from '../../vitest.config.ts';

export default defineConfig({
  // `@engage/engine` from source, as for the other tests (not the package's last build).
  resolve: root.resolve,
  test: {
    include: ['tests/scale/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // They pause and resume one replica: one file at a time.
    fileParallelism: false,
  },
});
