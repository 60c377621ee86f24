/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  // Examples import the package by name, as users do.
  // lib/ writes ESM-ready relative imports ('./client.js'); jest resolves them to .ts.
  moduleNameMapper: { '^holdfast$': '<rootDir>/lib/index.ts', '^holdfast/otel$': '<rootDir>/lib/otel/index.ts', '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['**/*.spec.ts'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFilesAfterEnv: ['<rootDir>/spec/helpers/setup.ts'],
  globalTeardown: '<rootDir>/spec/helpers/global-teardown.ts',
  reporters: ['default', '<rootDir>/spec/helpers/summary-reporter.js'],
  testTimeout: 30000,
  maxWorkers: 2,
};
