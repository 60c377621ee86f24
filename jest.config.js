/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  testMatch: ['**/*.spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json', 'lua'],
  transform: {
    '^.+\\.ts$': ['ts-jest', { isolatedModules: true, tsconfig: 'tsconfig.json' }],
    '^.+\\.lua$': '<rootDir>/spec/helpers/lua-transform.js',
  },
  setupFilesAfterEnv: ['<rootDir>/spec/helpers/setup.ts'],
  globalTeardown: '<rootDir>/spec/helpers/global-teardown.ts',
  testTimeout: 30000,
  maxWorkers: 2,
};
