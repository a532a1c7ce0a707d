// A read that was sent before loopguard's own write to the CLB took effect, and is answered after the write's task
// succeeded and was patched into the cache (listenerSourceWritten), holds the value from before the write. Stored, it
// put the VIP source back in the cache with a fresh read time, and the next plan, whose record already says
// "applied", called it drift (docs/history.md "Landed on 2026-12-01, sixteenth session"). It is not stored: the cache
// keeps the written value and its read time, so the CLB stays due and the next drift check reads it again.
import { describe, expect, it } from '@jest/globals';
import type { ClbReader, ListenerInfo, LoadBalancerInfo } from '../../src/cloud/index.js';
import { ClbObserver } from '../../src/cloud/clb-observer.js';

const LB: LoadBalancerInfo = {
  loadBalancerId: 'lb-abcd1234',
  name: 'svc',
  type: 'INTERNAL',
  ipVersion: 'IPv4',
  addressIpVersion: 'IPV4',
  vips: ['10.0.0.8'],
  status: 1,
  forward: 1,
  tags: {},
  passToTarget: false,
  clusterIds: [],
};

function sourceOf(o: ReturnType<ClbObserver['cached']>): number | undefined {
  return o?.state === 'Found' ? o.clb.listeners[0]?.healthCheck?.sourceIpType : undefined;
}

/** The CLB's one listener on `source`; after `hold()` the next DescribeListeners answers now but returns on `release()`. */
function world() {
  let source = 0;
  let holdNext = false;
  let release: () => void = () => undefined;
  const listener = (): ListenerInfo => ({ listenerId: 'lbl-1', name: 'tcp', protocol: 'TCP', port: 80, healthCheck: { HealthSwitch: 1, SourceIpType: source }, rules: [] });
  const reader: ClbReader = {
    describeLoadBalancers: async (ids) => [LB].filter((lb) => ids.includes(lb.loadBalancerId)),
    describeListeners: async () => {
      const answer = [listener()]; // answered by the CLB now
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return answer;
    },
    describeTargetHealth: async () => [],
  };
  return {
    reader,
    setSource: (s: number) => (source = s),
    hold: () => (holdNext = true),
    release: () => release(),
  };
}

describe('ClbObserver: a read sent before loopguard wrote the CLB', () => {
  it('does not overwrite the written value when it is answered after the write was patched in', async () => {
    const w = world();
    let now = 1_000;
    const o = new ClbObserver(w.reader, () => now);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    await o.observe([id], 60_000);
    expect(sourceOf(o.cached(id))).toBe(0);

    // A drift check's read goes out while loopguard's ModifyListener task still runs: the CLB answers the VIP (0).
    now = 2_000;
    w.hold();
    const drift = o.reread([id]);
    await new Promise((r) => setImmediate(r));
    // The task succeeds; the executor patches the cache (set-listener-health-check-source.ts).
    w.setSource(1);
    o.listenerSourceWritten(id, 'lbl-1', 1);
    // The old answer arrives only now.
    now = 3_000;
    w.release();
    await drift;

    expect(sourceOf(o.cached(id))).toBe(1);
    expect(o.rawListeners(id)?.[0]?.healthCheck?.SourceIpType).toBe(1);
    // Nobody is told of a change that was loopguard's own, and the CLB keeps its last trusted read time (still due).
    expect(changes).toEqual([]);
    expect(o.observedAt(id)).toBe(1_000);

    // A read sent after the write is stored as always, and one that finds the VIP back then is news (real drift).
    await o.reread([id]);
    expect(o.observedAt(id)).toBe(3_000);
    expect(changes).toEqual([]);
    w.setSource(0);
    await o.reread([id]);
    expect(sourceOf(o.cached(id))).toBe(0);
    expect(changes).toEqual([id]);
  });

  it('does not overwrite a newer read with an older one answered after it', async () => {
    const w = world();
    let now = 1_000;
    const o = new ClbObserver(w.reader, () => now);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    await o.observe([id], 60_000);

    // Read A answers the VIP (0) and is held; the source then changes outside loopguard and read B, sent later, sees it.
    now = 2_000;
    w.hold();
    const older = o.reread([id]);
    await new Promise((r) => setImmediate(r));
    w.setSource(1);
    now = 3_000;
    await o.reread([id]);
    expect(sourceOf(o.cached(id))).toBe(1);
    expect(changes).toEqual([id]);

    now = 4_000;
    w.release();
    await older;
    expect(sourceOf(o.cached(id))).toBe(1);
    expect(o.observedAt(id)).toBe(3_000);
    expect(changes).toEqual([id]);
  });
});
