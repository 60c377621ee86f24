/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  // Examples import the package by name, as users do.
  moduleNameMapper: { '^holdfast$': '<rootDir>/lib/index.ts' },
  testMatch: ['**/*.spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json', 'lua'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
    '^.+\\.lua$': '<rootDir>/spec/helpers/lua-transform.js',
  },
  setupFilesAfterEnv: ['<rootDir>/spec/helpers/setup.ts'],
  globalTeardown: '<rootDir>/spec/helpers/global-teardown.ts',
  reporters: ['default', '<rootDir>/spec/helpers/summary-reporter.js'],
  testTimeout: 30000,
  maxWorkers: 2,
};
