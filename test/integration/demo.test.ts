// The README's main job, `npm run demo` (here `-- --once`, so it ends), run as a user runs it: bash from a copy of
// the checkout with nothing in the environment but PATH and HOME. It starts its own local TKE, diagnoses in Audit,
// switches to Enforce, deletes the policy, and checks itself that every target is back as it was; this test holds it
// to the exit status and to what it prints, and the transcripts the README ("Two commands") and docs/demo.md show to
// this run's output (ids, ages and the messages they shorten with `(…)` aside). (A revert that waits for kube-proxy once broke its last read:
// scripts/demo.ts kubectlAsync.)
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rmSync } from 'node:fs';
import { bash, copyCheckout, groups, type Run } from '../support/checkout.js';
import { markdownSection, missingFromOutput, textBlock } from '../support/readme.js';

const TIMEOUT_MS = 5 * 60_000;

describe('README: npm run demo', () => {
  let checkout: string;
  let run: Run;

  beforeAll(async () => {
    checkout = copyCheckout();
    run = await bash('npm run demo -- --once', checkout, TIMEOUT_MS);
  }, TIMEOUT_MS + 30_000);

  afterAll(() => {
    for (const pgid of run?.code === 0 ? [] : groups) {
      try {
        process.kill(-pgid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (checkout) rmSync(checkout, { recursive: true, force: true });
  });

  it('exits 0 after Audit, Enforce and the revert', () => {
    expect({ code: run.code, tail: run.code === 0 ? '' : run.output.slice(-3000) }).toEqual({ code: 0, tail: '' });
  });

  it('shows the diagnosis, the fix and the revert of the sample workload', () => {
    expect(run.output).toMatch(/per-target verdicts \(Audit: diagnosed, nothing changed\):/);
    expect(run.output).toMatch(/Service\/orders +AtRisk +PodSourceNotMasqueraded/);
    expect(run.output).toMatch(/Service\/orders +AtRisk → Mitigated \(LoopbackPrevented\)/);
    // Both at-risk targets restored exactly; the stack is stopped.
    expect(run.output.match(/restored: as before Enforce/g)).toHaveLength(2);
    expect(run.output).not.toMatch(/NOT restored/);
    expect(run.output).toContain('stopped: tke-simulator, clb-emulator, control plane');
  });

  it.each([
    ['the README', () => textBlock(markdownSection('## Two commands'))],
    ['docs/demo.md', () => textBlock(markdownSection('# The demo: `npm run demo`', 'docs/demo.md'))],
  ])('prints the transcript %s shows', (_where, documented) => {
    expect(missingFromOutput(documented(), run.output)).toEqual([]);
  });
});
