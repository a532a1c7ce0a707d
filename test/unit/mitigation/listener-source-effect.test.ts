// The listener-source write sends the listener's whole HealthCheck back (CLB's reset model): from the observer's
// struct only when it was read just now, else from a fresh DescribeListeners, so an old struct never undoes a
// health-check edit made after it was read.
import { describe, expect, it } from '@jest/globals';
import type { RawListener } from '../../../src/cloud/clb-observer.js';
import { setListenerHealthCheckSource } from '../../../src/mitigation/steps/set-listener-health-check-source.js';
import { FRESH_BEFORE_WRITE_MS, type EffectDeps } from '../../../src/mitigation/steps/effect.js';
import type { SetListenerHealthCheckSourceStep } from '../../../src/plan/steps/set-listener-health-check-source.js';

const LB = 'lb-abcd1234';
const CACHED: RawListener = { listenerId: 'lbl-tcp', healthCheck: { HealthSwitch: 1, IntervalTime: 5, SourceIpType: 0 } };
/** What the CLB says now: a user changed the interval after the observer's read. */
const NOW_ON_CLB: RawListener = { listenerId: 'lbl-tcp', healthCheck: { HealthSwitch: 1, IntervalTime: 30, SourceIpType: 0 } };
const STEP: SetListenerHealthCheckSourceStep = { kind: 'SetListenerHealthCheckSource', loadBalancerId: LB, listenerId: 'lbl-tcp', protocol: 'TCP', port: 80, to: 1 };

function deps(observedAgoMs: number, writeFails?: Error) {
  const sent: unknown[] = [];
  const invalidated: string[] = [];
  let reads = 0;
  const d = {
    clb: {
      describeListeners: async () => {
        reads++;
        return [NOW_ON_CLB];
      },
      modifyListenerHealthCheck: async (_lb: string, _l: string, hc: unknown) => {
        sent.push(hc);
        if (writeFails) throw writeFails;
      },
      modifyLoadBalancerPassToTarget: async () => undefined,
    },
    observer: {
      rawListeners: () => [CACHED],
      observedAt: () => Date.now() - observedAgoMs,
      invalidate: (id: string) => void invalidated.push(id),
      listenerSourceWritten: () => undefined,
      passToTargetWritten: () => undefined,
    },
    capabilities: { learn: () => undefined, forget: () => false },
  } as unknown as EffectDeps;
  return { d, sent, invalidated, reads: () => reads };
}

describe('SetListenerHealthCheckSource: the struct it sends back', () => {
  it.each([
    ['read just now: the observer’s struct, no read', 1_000, 0, 5],
    ['read longer ago than the fresh bound: read again, the CLB’s struct now', FRESH_BEFORE_WRITE_MS + 5_000, 1, 30],
  ])('%s', async (_name, agoMs, reads, interval) => {
    const { d, sent, reads: count } = deps(agoMs);
    expect(await setListenerHealthCheckSource.apply(d, 'ns/p', { kind: 'Service', namespace: 'ns', name: 'web' }, STEP, new AbortController().signal)).toEqual({ status: 'done' });
    expect(count()).toBe(reads);
    expect(sent).toEqual([expect.objectContaining({ IntervalTime: interval, SourceIpType: 1 })]);
  });

  it('a failed write makes the observer forget the CLB: the task may have landed, so the next round reads, not re-plans', async () => {
    const throttledOut = new Error('DescribeTaskStatus throttled out (the write itself was accepted)');
    const { d, sent, invalidated } = deps(1_000, throttledOut);
    await expect(setListenerHealthCheckSource.apply(d, 'ns/p', { kind: 'Service', namespace: 'ns', name: 'web' }, STEP, new AbortController().signal)).rejects.toBe(throttledOut);
    expect(sent).toHaveLength(1);
    expect(invalidated).toEqual([LB]);
    // A write that succeeded keeps the observation (patched by listenerSourceWritten).
    const ok = deps(1_000);
    await setListenerHealthCheckSource.apply(ok.d, 'ns/p', { kind: 'Service', namespace: 'ns', name: 'web' }, STEP, new AbortController().signal);
    expect(ok.invalidated).toEqual([]);
  });
});
