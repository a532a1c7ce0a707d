// The chaos suite's judges are pure functions of the emulator's write log, the fault plan and the audit log:
// here they are shown to fail on the histories they must refuse.
import { describe, expect, it } from '@jest/globals';
import type { WriteLogEntry } from '../../sim/clb-emulator/index.js';
import { doubleWrites, effectiveWrites, interleavedWriters } from '../support/chaos-checks.js';
import { chaosFaultPlan, ChaosRng, chaosSeed } from '../support/chaos-world.js';
import { relistsAfterExpiry } from '../support/chaos-scenarios.js';

let seq = 0;
function write(caller: string, listenerId: string, changed: string[] = ['HealthCheck.SourceIpType'], status: WriteLogEntry['status'] = 'succeeded'): WriteLogEntry {
  seq++;
  return { seq, caller, action: 'ModifyListener', loadBalancerId: 'lb-1', listenerId, locationId: null, taskId: `t${seq}`, acceptedAtMs: seq, finishedAtMs: seq + 1, status, changed };
}
const loopguard = (c: string) => c.startsWith('loopguard');

describe('write-log judges', () => {
  it('counts only succeeded writes that changed a value as effective', () => {
    const log = [write('loopguard', 'l1'), write('loopguard', 'l1', []), write('loopguard', 'l1', ['HealthCheck.SourceIpType'], 'failed'), write('tke', 'l2')];
    expect(effectiveWrites(log)).toEqual(new Map([['lb-1/l1', 1], ['lb-1/l2', 1]]));
    expect(effectiveWrites(log, loopguard)).toEqual(new Map([['lb-1/l1', 1]]));
    expect(doubleWrites(log)).toEqual([]);
    expect(doubleWrites([...log, write('tke', 'l1')])).toEqual(['lb-1/l1: 2 effective writes']);
  });

  it('accepts a hand-over between replicas and refuses two replicas writing one listener in turn', () => {
    const handover = [write('loopguard', 'l1'), write('loopguard', 'l1', []), write('loopguard-b', 'l1', []), write('tke', 'l1'), write('loopguard-b', 'l1')];
    expect(interleavedWriters(handover, loopguard)).toEqual([]);
    const turns = [write('loopguard', 'l2', []), write('loopguard-b', 'l2', []), write('loopguard', 'l2', [], 'failed')];
    expect(interleavedWriters(turns, loopguard)).toEqual(['lb-1/l2: loopguard → loopguard-b → loopguard']);
  });
});

describe('fault plan and seed', () => {
  it('makes each action fail with the given rate in all, spread evenly over the kinds', () => {
    const plan = chaosFaultPlan(7, 0.2);
    expect(plan.seed).toBe(7);
    for (const action of ['DescribeListeners', 'ModifyListener']) {
      const rules = plan.rules.filter((r) => r.action === action);
      // P(no fault) = Π(1 − rate_i); each kind's unconditional share is rate/k.
      let none = 1;
      for (const r of rules) {
        expect(none * r.rate).toBeCloseTo(0.2 / rules.length, 10);
        none *= 1 - r.rate;
      }
      expect(1 - none).toBeCloseTo(0.2, 10);
    }
    expect(plan.rules.filter((r) => r.action === 'ModifyListener').map((r) => r.kind)).toEqual(['error', 'http5xx', 'reset', 'taskFailure']);
  });

  it('replays the same kill points from the same seed, and reads CHAOS_SEED', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, ((rng) => () => rng.int(1, 100))(new ChaosRng(seed)));
    expect(draw(42)).toEqual(draw(42));
    expect(draw(42)).not.toEqual(draw(43));
    expect(draw(42).every((k) => k >= 1 && k <= 100)).toBe(true);
    expect(chaosSeed('123')).toBe(123);
    expect(() => chaosSeed('x')).toThrow(/CHAOS_SEED/);
  });
});

describe('relists after an expired watch (audit log)', () => {
  const ev = (verb: string, resource: string, at: number, rv?: number) => ({
    stage: 'ResponseComplete',
    verb,
    requestURI: `/api/v1/${resource}?${verb === 'watch' ? `watch=true&resourceVersion=${rv ?? 0}` : 'limit=500'}`,
    user: { username: 'sa' },
    objectRef: { resource },
    responseStatus: { code: 200 },
    stageTimestamp: new Date(at).toISOString(),
  });

  it('pairs each watch below the compacted revision with a later list of its resource', () => {
    const events = [ev('watch', 'services', 1000, 90), ev('list', 'services', 2000), ev('watch', 'services', 3000, 150), ev('list', 'ingresses', 500), ev('watch', 'ingresses', 1000, 99)];
    expect(relistsAfterExpiry(events, 100)).toEqual({ expired: 2, relisted: ['services'], notRelisted: ['ingresses'] });
  });
});
