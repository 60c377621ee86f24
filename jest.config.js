// The behaviour specs that make the lock's connection through spec/helpers/clients.ts
// run once per client kind: the 'ioredis' project runs every spec (ioredis is the
// default kind), the 'node-redis' project runs only these again with HOLDFAST_CLIENT set.
const MATRIX = ['lock', 'fair', 'waiting', 'watchdog', 'inspect', 'cluster', 'quorum', 'semaphore', 'read-write-lock'];

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  // Examples import the package by name, as users do.
  // lib/ writes ESM-ready relative imports ('./client.js'); jest resolves them to .ts.
  moduleNameMapper: { '^holdfast$': '<rootDir>/lib/index.ts', '^holdfast/otel$': '<rootDir>/lib/otel/index.ts', '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFilesAfterEnv: ['<rootDir>/spec/helpers/setup.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    { ...common, displayName: 'ioredis', testMatch: ['**/*.spec.ts'] },
    {
      ...common,
      displayName: 'node-redis',
      testMatch: MATRIX.map((f) => `**/spec/${f}.spec.ts`),
      setupFiles: ['<rootDir>/spec/helpers/node-redis-env.js'],
    },
  ],
  globalTeardown: '<rootDir>/spec/helpers/global-teardown.ts',
  reporters: ['default', '<rootDir>/spec/helpers/summary-reporter.js'],
  testTimeout: 30000,
  maxWorkers: 2,
};
