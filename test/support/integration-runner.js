// The integration project's Jest runner: Jest's own, on its own workers, each with its own control plane.
// Integration suites share cluster-wide state (the kube-system/kube-proxy profile, the operator's Lease in
// loopguard-system, the CRDs), so two of them may run at once only on two control planes: this runner starts one per
// worker before its workers and stops them after (test/support/harness.ts), and each worker takes its own
// (test/support/integration-environment.js). Most of an integration suite's time is waiting (drift intervals, TKE's
// grace period, CLB tasks, processes starting), about a quarter of a core each, so 5 workers fit the 2-core
// machines (docs/development.md "The test suite's time": 11.3 min with 5 against 12.3 with 4 on one machine, 13.5
// with 4 against 15.9 with 3 before); LOOPGUARD_TEST_INTEGRATION_WORKERS says otherwise. A run Jest makes serial (one file, --runInBand, -w 1)
// gets one control plane, in Jest's own process, as does LOOPGUARD_USE_EXISTING_CLUSTER=true.
// Jest runs one runner's files after the other's, so unit suites (mostly CPU-bound, on `maxWorkers`) never load the machine
// while integration suites measure intervals.
// JavaScript, not TypeScript: Jest loads runners natively; the harness comes through tsx, which resolves the
// project's `.js` imports of `.ts` files like tsc does. jest-runner's ESM build exports the class as its default.
import process from 'node:process';
import TestRunner from 'jest-runner';
import { tsImport } from 'tsx/esm/api';

const DEFAULT_WORKERS = 5;
/**
 * Jest's limit for an integration test or hook (the unit project keeps jest.config.js's 60 s). On these 2-core machines
 * a loaded `npm test` stretched setups and tests that wait on the apiserver, processes and CLB tasks past 60 s: two
 * in CI's run of 2026-11-30, two more in the next CI-like run here (docs/history.md, ninth session). Every wait inside
 * names what it waits for and ends first, with a message that says so; this limit is only the backstop for a test that
 * hangs.
 */
const TEST_TIMEOUT_MS = 180_000;

function configuredWorkers() {
  const raw = process.env.LOOPGUARD_TEST_INTEGRATION_WORKERS;
  if (raw === undefined || raw === '') return DEFAULT_WORKERS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`LOOPGUARD_TEST_INTEGRATION_WORKERS must be a whole number ≥ 1, not ${JSON.stringify(raw)}`);
  return n;
}

export default class IntegrationRunner extends TestRunner {
  async runTests(tests, watcher, options) {
    const existing = process.env.LOOPGUARD_USE_EXISTING_CLUSTER === 'true';
    const workers = options.serial || existing ? 1 : Math.min(configuredWorkers(), tests.length);
    // jest-runner sizes its worker pool and Jest's limits from the global config; this project's differ from the unit project's.
    this._globalConfig = { ...this._globalConfig, maxWorkers: workers, testTimeout: Math.max(this._globalConfig.testTimeout ?? 0, TEST_TIMEOUT_MS) };
    const harness = await tsImport('./harness.ts', import.meta.url);
    const planes = await harness.setup(workers);
    try {
      return await super.runTests(tests, watcher, { ...options, serial: workers === 1 });
    } finally {
      await harness.teardown(planes);
    }
  }
}
