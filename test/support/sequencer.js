// Jest's order of suites, with one change: Jest starts the suites that took longest last time first, so that on
// several workers the long ones do not start last and leave the others idle at the end. Those times live in Jest's
// cache, keyed by the checkout's path, so a fresh clone (CI's) has none and Jest falls back to file size, which
// would start `worlds` or `shared-clb` (about 5 min each) in the middle. Without a cached time a suite here takes
// its time from LAST_MEASURED (seconds, serial, from the last CI log with the reporter; docs/development.md
// "The test suite's time"); a wrong figure costs only a worse order. Failed suites still go first.
import TestSequencer from '@jest/test-sequencer';
import { relative } from 'node:path';

const LAST_MEASURED = {
  'test/integration/shared-clb.test.ts': 281,
  'test/integration/worlds.test.ts': 280,
  'test/integration/chaos.test.ts': 145,
  'test/integration/heavy-throttling.test.ts': 121,
  'test/integration/tke-waits.test.ts': 117,
  // The two Gateway suites merged (2026-12-01): about their two times together, less one CRD install.
  'test/integration/gateways.test.ts': 100,
  'test/integration/execution.test.ts': 96,
  'test/integration/release.test.ts': 78,
  'test/integration/admission-warnings.test.ts': 51,
  'test/integration/l4-enforce.test.ts': 46,
  'test/emulator/adaptive-rate.test.ts': 42,
};

export default class Sequencer extends TestSequencer {
  time(test) {
    const cached = super.time(test);
    if (cached !== undefined) return cached;
    const seconds = LAST_MEASURED[relative(test.context.config.rootDir, test.path)];
    return seconds === undefined ? undefined : seconds * 1000;
  }

  sort(tests) {
    for (const test of tests) test.duration = this.time(test);
    const size = (test) => test.context.hasteFS.getSize(test.path) ?? 0;
    // Failed first; then longest first; suites with no time at all after those with one, largest file first.
    return tests.sort((a, b) => {
      const failed = Number(this.hasFailed(b)) - Number(this.hasFailed(a));
      if (failed !== 0) return failed;
      if ((a.duration === undefined) !== (b.duration === undefined)) return a.duration === undefined ? 1 : -1;
      if (a.duration !== undefined && b.duration !== undefined) return b.duration - a.duration;
      return size(b) - size(a);
    });
  }
}
