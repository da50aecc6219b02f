import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['schemas/**/*.test.ts', 'platform/**/*.test.ts', 'services/**/*.test.ts', 'pipelines/**/*.test.ts', 'test/**/*.test.ts', 'clients/**/*.test.ts', 'console/web/src/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Two cores: more workers than that only adds contention with the database.
    maxWorkers: 2,
  },
});
