// Jest in ESM mode (client-node 2.x is ESM-only). Type-checking is done once by `tsc` in `npm test`,
// so ts-jest only transpiles (isolatedModules), which keeps the suite fast on 2 cores.
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
};
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform,
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
export default {
  // Integration tests wait on a real apiserver; unit tests are far below this anyway.
  testTimeout: 60000,
  // Unit suites are CPU-bound and independent: one worker per core (2 on the 2-core machines; Jest's default would
  // be cores - 1). Integration suites share cluster-wide state (the kube-system/kube-proxy profile, the operator's
  // Lease), so their project's runner is serial (test/support/serial-runner.js): one file at a time in Jest's main
  // process, before or after the unit files (never alongside), whatever this says.
  maxWorkers: '100%',
  // The 10 slowest suites, each project's sum and the wall time, at the end of every run (docs/development.md).
  reporters: ['default', '<rootDir>/test/support/slowest-suites-reporter.ts'],
  // `--coverage` (docs/development.md "Coverage"): V8's own counters, which need no instrumenting transform under ESM.
  coverageProvider: 'v8',
  collectCoverageFrom: ['src/**/*.ts'],
  coverageReporters: ['text-summary', 'text', 'html'],
  projects: [
    {
      ...common,
      displayName: 'unit',
      // Pure code and the CLB emulator through the real SDK: no kube-apiserver needed.
      testMatch: ['<rootDir>/test/unit/**/*.test.ts', '<rootDir>/test/emulator/**/*.test.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      // One real kube-apiserver + etcd per run, shared by every integration suite (a namespace each).
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      runner: '<rootDir>/test/support/serial-runner.js',
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
