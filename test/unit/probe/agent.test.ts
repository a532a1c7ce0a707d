// The agent's loop over fake timers, with loopguard's own wire interface faked (no socket, no apiserver): a plan
// that cannot be read is refused whole and the last good one keeps running; a new plan takes effect at the next
// window, never in the middle of one; one report per window, with exact counts.
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Writable } from 'node:stream';
import type { ProbeReport, ProbeTarget } from '../../../src/api/probe.js';
import { ProbeAgent } from '../../../src/probe/agent.js';
import type { Measured } from '../../../src/probe/measure.js';
import { allowedRanges } from '../../../src/probe/plan.js';
import { createLogger } from '../../../src/runtime/logger.js';

const allowed = allowedRanges([]);
if ('error' in allowed) throw new Error(allowed.error);
const ranges = allowed.ranges;
const plan = (targets: object[]) => JSON.stringify({ version: 1, windowSeconds: 2, timeoutMs: 1000, targets });
const A = { id: 'a', vip: '10.0.0.1', port: 80, protocol: 'TCP' };
const B = { id: 'b', vip: '10.0.0.2', port: 80, protocol: 'TCP' };

function harness() {
  const lines: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _e, cb) => (lines.push((JSON.parse(chunk.toString()) as { message: string }).message), cb()) });
  const reports: ProbeReport[] = [];
  const sent: string[] = [];
  const agent = new ProbeAgent({
    node: 'node-1',
    pod: { name: 'p', uid: 'u' },
    namespace: 'loopguard-system',
    rules: { ranges, minWindowSeconds: 1 },
    ratePerSecond: 5,
    minIntervalSeconds: 1,
    logger: createLogger({ stream }),
    write: async (r) => void reports.push(r),
    probe: async (t: ProbeTarget): Promise<Measured> => {
      sent.push(t.id);
      return t.id === 'b' ? { end: { error: 'ECONNREFUSED' }, ms: 1 } : { end: {}, ms: 2 };
    },
  });
  return { agent, reports, sent, lines };
}

afterEach(() => {
  jest.useRealTimers();
});

describe('the probe agent loop', () => {
  it('keeps the last good plan when a bad one comes, and switches plans only between windows', async () => {
    jest.useFakeTimers({ now: 1_000_000 });
    const { agent, reports, sent, lines } = harness();
    agent.onPlan({ text: plan([A, B]), version: '1' });
    const running = agent.run();
    await jest.advanceTimersByTimeAsync(500);
    agent.onPlan({ text: '{ not json', version: '2' });
    expect(lines).toContainEqual(expect.stringMatching(/^Probe plan 2 refused, still running plan 1: not JSON: /));
    await jest.advanceTimersByTimeAsync(1600); // past the first window's end (2 s)
    expect(reports).toHaveLength(1);
    // 2 s × 5/s = 10 probes for 2 targets, capped at one per target per second: 2 each.
    expect(reports[0]!.spec.planVersion).toBe('1');
    expect(reports[0]!.spec.targets.map(({ id, probes, failures }) => ({ id, probes, failures }))).toEqual([
      { id: 'a', probes: 2, failures: 0 },
      { id: 'b', probes: 2, failures: 2 },
    ]);
    // A new plan in the middle of window 2: window 2 still runs plan 1, window 3 runs plan 3.
    await jest.advanceTimersByTimeAsync(1000);
    agent.onPlan({ text: plan([B]), version: '3' });
    await jest.advanceTimersByTimeAsync(1100);
    expect(reports.map((r) => r.spec.planVersion)).toEqual(['1', '1']);
    await jest.advanceTimersByTimeAsync(2000);
    expect(reports.map((r) => r.spec.planVersion)).toEqual(['1', '1', '3']);
    expect(reports[2]!.spec.targets.map((t) => [t.id, t.probes])).toEqual([['b', 2]]);
    expect(sent.filter((id) => id === 'a')).toHaveLength(4);
    agent.stop();
    await running;
  });

  it('waits for a plan, refusing an unreadable first one, and stops at once when told', async () => {
    jest.useFakeTimers({ now: 0 });
    const { agent, reports, lines } = harness();
    agent.onPlan({ text: JSON.stringify({ version: 2 }), version: '7' });
    expect(lines).toEqual(['Probe plan 7 refused, nothing to run: version 2: this agent reads version 1']);
    const running = agent.run();
    await jest.advanceTimersByTimeAsync(10_000);
    expect(reports).toEqual([]);
    agent.stop();
    await running;
  });

  it('a refused plan deleted says nothing; a running plan deleted is said once, its window finished and nothing more sent', async () => {
    jest.useFakeTimers({ now: 0 });
    const { agent, reports, sent, lines } = harness();
    // The informer (src/probe/kube.ts) reports the deletion of any plan it saw, also one the agent refused.
    agent.onPlan({ text: 'not a plan', version: '1' });
    agent.onPlan(undefined);
    expect(lines.filter((l) => l.startsWith('The probe plan was deleted'))).toEqual([]);
    agent.onPlan({ text: plan([A]), version: '2' });
    const running = agent.run();
    await jest.advanceTimersByTimeAsync(1000);
    agent.onPlan(undefined);
    await jest.advanceTimersByTimeAsync(10_000);
    expect(lines.filter((l) => l.startsWith('The probe plan was deleted'))).toEqual(['The probe plan was deleted: probing stops after this window']);
    expect({ reports: reports.length, sent: sent.length }).toEqual({ reports: 1, sent: 2 });
    agent.stop();
    await running;
  });
});
