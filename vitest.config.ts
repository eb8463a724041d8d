import { defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import 'statecraft' and 'statecraft/testing' like users do; this condition maps
  // those specifiers to the TypeScript sources instead of dist/ (see package.json exports).
  resolve: { conditions: ['statecraft-source'] },
  ssr: { resolve: { conditions: ['statecraft-source'] } },
  test: {
    include: ['test/**/*.test.ts'],
    // Sized for a busy 2-core machine: the generated path suites take 3–5 s a test alone, and
    // twice that beside other suites. Tests that start processes or servers set their own.
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The JSON report is what .ci/run counts passed and failed tests from.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
    // Restate's SDK logs every invocation at INFO; the Restate tests' workers run thousands.
    env: { RESTATE_LOGGING: 'ERROR' },
  },
});
