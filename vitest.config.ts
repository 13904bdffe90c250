import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Run by tests/scale/run.sh, which starts the servers they need.
    exclude: ['tests/scale/**', 'node_modules/**'],
    // Each file opens its own database (a PGlite instance takes a few seconds to start).
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
