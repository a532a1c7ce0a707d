import { availableParallelism } from 'node:os';
import { clientNodeBundle } from './test/support/client-node-bundle.js';

// Jest in ESM mode (client-node 2.x is ESM-only). Type-checking is done once by `tsc` in `npm test`,
// so ts-jest only transpiles (isolatedModules), which keeps the suite fast on 2 cores.
const transform = {
  '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }],
};
// client-node as one module (test/support/client-node-bundle.js says why): both ways loopguard imports it.
const clientNode = await clientNodeBundle();
const common = {
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    '^@kubernetes/client-node$': clientNode,
    '^@kubernetes/client-node/dist/gen/apis/exception\\.js$': clientNode,
  },
  transform,
  testEnvironment: 'node',
};

/** @type {import('jest').Config} */
export default {
  // Unit tests are far below this; the integration project's runner raises it to 180 s (integration-runner.js).
  testTimeout: 60000,
  // Unit suites are independent, and most are CPU-bound; a few mostly wait (the emulator's rate windows in
  // adaptive-rate, 42 s; processes they start). One worker more than cores fills those waits: the unit project took
  // 65 s instead of 86-90 s on the 2-core machines, the same CPU (two runs each, 2026-12-01). Integration suites mostly
  // wait, and share cluster-wide state: their project's runner (test/support/integration-runner.js) sizes its own
  // workers (5 unless LOOPGUARD_TEST_INTEGRATION_WORKERS says otherwise), each with its own control plane, before or
  // after the unit files (never alongside).
  maxWorkers: availableParallelism() + 1,
  // Longest suites first, also in a fresh clone whose Jest cache holds no times (test/support/sequencer.js).
  testSequencer: '<rootDir>/test/support/sequencer.js',
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
      // One real kube-apiserver + etcd per worker, shared by the suites that worker runs (a namespace each): the
      // runner starts them, the environment points each worker at its own.
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      runner: '<rootDir>/test/support/integration-runner.js',
      testEnvironment: '<rootDir>/test/support/integration-environment.js',
    },
  ],
};
