import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts'],
    // Each file opens its own database (a PGlite instance takes a few seconds to start).
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
