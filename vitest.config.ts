import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // CLI tests spawn the built binary; give them room on a 2-core CI machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
});
