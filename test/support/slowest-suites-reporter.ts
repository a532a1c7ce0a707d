// A Jest reporter (jest.config.js `reporters`) that ends every run with the 10 slowest suites, each project's sum of
// suite times and the run's wall time: where a slow `npm test` spends its time is in every log, CI's included, with
// nothing to add to the command line. Jest imports reporters natively (Node strips the types, nothing is transpiled),
// so this file imports nothing of the project's and only types of Jest's.
import type { AggregatedResult, Test, TestResult } from '@jest/test-result';

const SHOWN = 10;

interface SuiteTime {
  path: string;
  project: string;
  ms: number;
  tests: number;
  failed: boolean;
}

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

export default class SlowestSuitesReporter {
  private readonly suites: SuiteTime[] = [];
  private readonly rootDir: string;

  constructor(globalConfig: { rootDir: string }) {
    this.rootDir = globalConfig.rootDir;
  }

  onTestResult(test: Test, result: TestResult): void {
    const path = result.testFilePath.startsWith(`${this.rootDir}/`) ? result.testFilePath.slice(this.rootDir.length + 1) : result.testFilePath;
    this.suites.push({
      path,
      project: test.context.config.displayName?.name ?? '',
      // What Jest itself prints after a slow suite's name: from the suite's start to its end in its worker.
      ms: result.perfStats.runtime,
      tests: result.numPassingTests + result.numFailingTests + result.numPendingTests + result.numTodoTests,
      failed: result.numFailingTests > 0 || result.testExecError !== undefined,
    });
  }

  onRunComplete(_contexts: unknown, results: AggregatedResult): void {
    if (this.suites.length === 0) return;
    const lines: string[] = [];
    const byProject = new Map<string, { ms: number; suites: number }>();
    for (const s of this.suites) {
      const p = byProject.get(s.project) ?? { ms: 0, suites: 0 };
      byProject.set(s.project, { ms: p.ms + s.ms, suites: p.suites + 1 });
    }
    const slowest = [...this.suites].sort((a, b) => b.ms - a.ms).slice(0, SHOWN);
    const width = Math.max(...slowest.map((s) => s.project.length));
    lines.push('', `Slowest ${slowest.length} of ${this.suites.length} suites:`);
    for (const s of slowest) {
      lines.push(`  ${seconds(s.ms).padStart(8)}  ${s.project.padEnd(width)}  ${s.path} (${count(s.tests, 'test')}${s.failed ? ', FAILED' : ''})`);
    }
    const projects = [...byProject].map(([name, p]) => `${name || '(no project)'} ${seconds(p.ms)} in ${count(p.suites, 'suite')}`);
    lines.push(`Sum of suite times: ${projects.join(', ')}.`);
    // This runs in Jest's main process: its uptime includes the global setup (the control plane) before the tests.
    lines.push(`Jest wall time: ${seconds(process.uptime() * 1000)} (tests ${seconds(Date.now() - results.startTime)}).`);
    // `npm test` exports its start (epoch seconds), so the total includes the typecheck and lint before Jest.
    const startedAt = Number(process.env['LOOPGUARD_TEST_STARTED_AT']);
    if (Number.isFinite(startedAt) && startedAt > 0) {
      const ms = Date.now() - startedAt * 1000;
      lines.push(`Total wall time (typecheck, lint, Jest): ${seconds(ms)} (${(ms / 60_000).toFixed(1)} min).`);
    }
    // stderr, where Jest's own reporters write: `--json` keeps stdout to itself.
    process.stderr.write(`${lines.join('\n')}\n`);
  }
}
