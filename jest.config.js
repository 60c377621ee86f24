// The client matrix (spec/helpers/clients.ts): the behaviour specs make the lock's
// connections of the kind the project names. 'ioredis' (ioredis 5, the default kind)
// runs every spec; 'node-redis' (node-redis 6, the other adapter) runs every behaviour
// spec again. The other kinds share an adapter with one of those two and differ only in
// the library's version, so they run the core (locking, waits) and not the whole
// matrix again: that would add a minute of CI per kind for code paths already covered.
// 'glide' (Valkey GLIDE, an adapter of its own) runs the whole matrix like node-redis.
const MATRIX = ['lock', 'fair', 'waiting', 'watchdog', 'inspect', 'cluster', 'quorum', 'multi-lock-one-call', 'semaphore', 'read-write-lock', 'missing-commands', 'preload', 'revoke'];
const CORE = ['lock', 'waiting'];

/** @type {import('jest').Config} */
const common = {
  testEnvironment: 'node',
  roots: ['<rootDir>/spec'],
  // Examples import the package by name, as users do.
  // lib/ writes ESM-ready relative imports ('./client.js'); jest resolves them to .ts.
  moduleNameMapper: { '^holdfast$': '<rootDir>/lib/index.ts', '^holdfast/otel$': '<rootDir>/lib/otel/index.ts', '^holdfast/nest$': '<rootDir>/lib/nest/index.ts', '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }],
  },
  setupFilesAfterEnv: ['<rootDir>/spec/helpers/setup.ts'],
};

/** A project that runs `specs` with the lock's connections of `kind`. */
const kind = (kind, specs) => ({ ...common, displayName: kind, testMatch: specs.map((f) => `**/spec/integration/${f}.spec.ts`), globals: { HOLDFAST_CLIENT: kind } });

/** @type {import('jest').Config} */
module.exports = {
  projects: [
    { ...common, displayName: 'ioredis', testMatch: ['**/*.spec.ts'] },
    kind('node-redis', MATRIX),
    kind('glide', MATRIX),
    kind('ioredis6', CORE),
    kind('iovalkey', CORE),
    kind('node-redis5', CORE),
  ],
  globalTeardown: '<rootDir>/spec/helpers/global-teardown.ts',
  reporters: ['default', '<rootDir>/spec/helpers/summary-reporter.js'],
  testTimeout: 30000,
  maxWorkers: 2,
};
