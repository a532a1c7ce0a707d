// The observer tells who works on a CLB that a read found it changed (onChange, routing.ts), never when a read finds
// what was cached (as a plan reads it), nor for a first read, loopguard's own writes, a drop or a seed.
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

/** The CLB's one listener on `source`; after `hold()` the next DescribeListeners answers now but returns on `release()`. */
function world() {
  let source = 0;
  let exists = true;
  let healthy = true;
  let holdNext = false;
  let release: () => void = () => undefined;
  const listener = (): ListenerInfo => ({ listenerId: 'lbl-1', name: 'tcp', protocol: 'TCP', port: 80, healthCheck: { HealthSwitch: 1, SourceIpType: source }, rules: [] });
  const reader: ClbReader = {
    describeLoadBalancers: async (ids) => (exists ? [LB].filter((lb) => ids.includes(lb.loadBalancerId)) : []),
    describeListeners: async () => {
      const answer = [listener()]; // answered by the CLB now
      if (holdNext) {
        holdNext = false;
        await new Promise<void>((resolve) => (release = resolve));
      }
      return answer;
    },
    describeTargetHealth: async (ids) =>
      ids.map((loadBalancerId) => ({
        loadBalancerId,
        listeners: [{ listenerId: 'lbl-1', protocol: 'TCP', port: 80, rules: [{ locationId: 'loc-1', targets: [{ ip: '10.0.0.1', port: 30080, healthy, status: healthy ? 'Alive' : 'Dead' }] }] }],
      })),
  };
  return {
    reader,
    setSource: (s: number) => (source = s),
    setHealthy: (h: boolean) => (healthy = h),
    remove: () => (exists = false),
    hold: () => (holdNext = true),
    release: () => release(),
  };
}

function sourceOf(o: ReturnType<ClbObserver['cached']>): number | undefined {
  return o?.state === 'Found' ? o.clb.listeners[0]?.healthCheck?.sourceIpType : undefined;
}

describe('ClbObserver.onChange', () => {
  it('on a changed read or a CLB gone; not on a first read, a read that finds the same, a write, a drop or a seed', async () => {
    const w = world();
    const o = new ClbObserver(w.reader);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    // A first read: whoever planned the CLB's targets before planned them without it, and they stay pending.
    await o.observe([id], 60_000);
    expect(changes).toEqual([]);
    await o.reread([id]);
    expect(changes).toEqual([]);
    w.setSource(1);
    await o.reread([id]);
    expect(changes).toEqual([id]);
    // loopguard's own write: the round that made it planned on it.
    o.listenerSourceWritten(id, 'lbl-1', 0);
    expect(changes).toHaveLength(1);
    // Read back as written: nothing new.
    w.setSource(0);
    await o.reread([id]);
    expect(changes).toHaveLength(1);
    w.remove();
    await o.reread([id]);
    expect(o.cached(id)).toEqual({ state: 'NotFound', loadBalancerId: id });
    expect(changes).toEqual([id, id]);
    o.invalidate(id);
    expect(o.seed([{ id, at: 1, observation: { state: 'NotFound', loadBalancerId: id } }])).toBe(1);
    expect(changes).toHaveLength(2);
  });

  it("backend health: news behind a VIP source (a bound VIP shows so), not behind 100.64's (no plan reads it)", async () => {
    const w = world();
    const o = new ClbObserver(w.reader);
    const changes: string[] = [];
    o.onChange = (id) => void changes.push(id);
    const id = LB.loadBalancerId;
    await o.reread([id]);
    expect(o.cached(id)).toMatchObject({ clb: { listeners: [{ health: { alive: 1, dead: 0 } }] } });
    w.setHealthy(false);
    await o.reread([id]);
    expect(changes).toEqual([id]);
    w.setSource(1);
    await o.reread([id]);
    expect(changes).toEqual([id, id]);
    w.setHealthy(true);
    await o.reread([id]);
    expect(changes).toHaveLength(2);
    expect(o.cached(id)).toMatchObject({ clb: { listeners: [{ health: { alive: 1, dead: 0 } }] } });
  });
});

describe('ClbObserver.observe after a seed', () => {
  it("trusts a seeded read for the checkpoint's full cycle, a read of its own for the caller's bound", async () => {
    const w = world();
    let reads = 0;
    const counting: ClbReader = { ...w.reader, describeListeners: async (...a) => (reads++, w.reader.describeListeners(...a)) };
    const MIN = 60_000;
    let now = 100 * MIN;
    const o = new ClbObserver(counting, () => now);
    const id = LB.loadBalancerId;
    const found = await (async () => {
      const probe = new ClbObserver(w.reader, () => 0);
      await probe.observe([id], MIN);
      return probe.cached(id)!;
    })();
    // Read 20 minutes ago by the previous leader; the checkpoint of its 3,000 CLBs trusts reads for 25 minutes.
    o.seed([{ id, at: now - 20 * MIN, observation: found }], 25 * MIN);
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(0);
    // Past the checkpoint's cycle: read again.
    now += 6 * MIN;
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(1);
    // Its own read is held to the caller's bound.
    now += 6 * MIN;
    await o.observe([id], 5 * MIN);
    expect(reads).toBe(2);
  });
});

// A read that was sent before loopguard's own write to the CLB took effect, and is answered after the write's task
// succeeded and was patched into the cache (listenerSourceWritten), holds the value from before the write. Stored, it
// put the VIP source back in the cache with a fresh read time, and the next plan, whose record already says
// "applied", called it drift (docs/history.md "Landed on 2026-12-01, sixteenth session"). It is not stored: the cache
// keeps the written value and its read time, so the CLB stays due and the next drift check reads it again.
describe('ClbObserver: a read sent before loopguard wrote the CLB', () => {
  const id = LB.loadBalancerId;
  /** The CLB read once at t = 1,000 ms (source 0); `clock.now` moves the observer's clock. */
  async function observedAt1000() {
    const w = world();
    const clock = { now: 1_000 };
    const o = new ClbObserver(w.reader, () => clock.now);
    const changes: string[] = [];
    o.onChange = (changed) => void changes.push(changed);
    await o.observe([id], 60_000);
    /** At t = 2,000 ms a re-read goes out; its DescribeListeners answers now (source 0) and returns on `w.release()`. */
    const heldRead = async (): Promise<{ done: Promise<void> }> => {
      clock.now = 2_000;
      w.hold();
      const done = o.reread([id]);
      await new Promise((r) => setImmediate(r));
      return { done };
    };
    return { w, o, changes, clock, heldRead };
  }

  it('does not overwrite the written value when it is answered after the write was patched in', async () => {
    const { w, o, changes, clock, heldRead } = await observedAt1000();
    expect(sourceOf(o.cached(id))).toBe(0);

    // A drift check's read goes out while loopguard's ModifyListener task still runs: the CLB answers the VIP (0).
    const drift = await heldRead();
    // The task succeeds; the executor patches the cache (set-listener-health-check-source.ts).
    w.setSource(1);
    o.listenerSourceWritten(id, 'lbl-1', 1);
    // The old answer arrives only now.
    clock.now = 3_000;
    w.release();
    await drift.done;

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
    const { w, o, changes, clock, heldRead } = await observedAt1000();

    // Read A answers the VIP (0) and is held; the source then changes outside loopguard and read B, sent later, sees it.
    const older = await heldRead();
    w.setSource(1);
    clock.now = 3_000;
    await o.reread([id]);
    expect(sourceOf(o.cached(id))).toBe(1);
    expect(changes).toEqual([id]);

    clock.now = 4_000;
    w.release();
    await older.done;
    expect(sourceOf(o.cached(id))).toBe(1);
    expect(o.observedAt(id)).toBe(3_000);
    expect(changes).toEqual([id]);
  });

  it('does not store a read asked for before the CLB was invalidated (a write whose outcome is unknown)', async () => {
    const { w, o, changes, clock, heldRead } = await observedAt1000();
    const older = await heldRead();
    // The write's task went through, but its poll timed out: the executor forgets the CLB (writeOrForget).
    w.setSource(1);
    o.invalidate(id);
    w.release();
    await older.done;
    expect(o.cached(id)).toBeUndefined();
    expect(changes).toEqual([]);
    // The next read is stored as always.
    clock.now = 3_000;
    await o.observe([id], 60_000);
    expect(sourceOf(o.cached(id))).toBe(1);
    expect(o.observedAt(id)).toBe(3_000);
  });
});
