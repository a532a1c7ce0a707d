// Lease election against the real apiserver: one leader at a time, hand-over on release and on a crash.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { LeaderElector } from '../../src/runtime/leader-election.js';
import { createNamespace, deleteNamespace, kubeConfig, waitFor } from '../support/kube.js';

const FAST = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 400 };

describe('LeaderElector', () => {
  let ns: string;
  const electors: LeaderElector[] = [];
  beforeAll(async () => {
    ns = await createNamespace('lease');
  });
  afterAll(async () => {
    for (const e of electors) await e.stop();
    await deleteNamespace(ns);
  });

  function candidate(identity: string, log: string[]): LeaderElector {
    const e = new LeaderElector(kubeConfig(), {
      namespace: ns,
      name: 'loopguard-leader',
      identity,
      ...FAST,
      onStartedLeading: () => log.push(`${identity}:start`),
      onStoppedLeading: () => log.push(`${identity}:stop`),
      logger: { info: () => undefined, warn: (m, x) => log.push(`${identity}:warn:${m}:${JSON.stringify(x)}`) },
    });
    electors.push(e);
    return e;
  }

  it('elects exactly one leader and hands over when it releases the lease', async () => {
    const log: string[] = [];
    const a = candidate('a', log);
    const b = candidate('b', log);
    a.start();
    await waitFor('a leads', () => (a.isLeader ? true : undefined));
    b.start();
    // b keeps observing a valid lease held by a for several retry periods.
    await new Promise((r) => setTimeout(r, FAST.retryPeriodMs * 4));
    expect(b.isLeader).toBe(false);
    const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'loopguard-leader', namespace: ns });
    expect(lease.spec?.holderIdentity).toBe('a');
    expect(lease.spec?.renewTime).toBeDefined();

    const released = Date.now();
    await a.stop();
    await waitFor('b leads', () => (b.isLeader ? true : undefined), { timeoutMs: 10_000 });
    // Released leases are taken over without waiting out the lease duration.
    expect(Date.now() - released).toBeLessThan(FAST.leaseDurationMs);
    const after = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'loopguard-leader', namespace: ns });
    expect(after.spec?.holderIdentity).toBe('b');
    expect(after.spec?.leaseTransitions).toBe(1);
    expect(log).toEqual(['a:start', 'b:start']);
    await b.stop();
  });

  it('a leader that stops releases the lease: empty holder, 1 s duration', async () => {
    const log: string[] = [];
    const c = candidate('c', log);
    c.start();
    await waitFor('c leads', () => (c.isLeader ? true : undefined), { timeoutMs: 10_000 });
    await c.stop();
    const lease = await kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: 'loopguard-leader', namespace: ns });
    expect(lease.spec?.holderIdentity).toBeUndefined();
    expect(lease.spec?.leaseDurationSeconds).toBe(1);
    expect(log.filter((l) => l.includes(':warn:'))).toEqual([]);
  });

  it('fences a leader whose process stalled past the renew deadline: mayWrite is false and the leadership ends, before any renewal could tell', async () => {
    const log: string[] = [];
    const a = candidate('fenced', log);
    a.start();
    await waitFor('it leads', () => (a.isLeader ? true : undefined));
    expect(a.mayWrite()).toBe(true);
    // A stall of the whole process (the event loop blocked, as SIGSTOP or a long GC would): no timer, no renewal runs.
    const until = performance.now() + FAST.renewDeadlineMs + 200;
    while (performance.now() < until) {
      // busy: nothing else runs
    }
    // The first write asked after the stall is refused, synchronously, and the leadership ends there.
    expect(a.mayWrite()).toBe(false);
    expect(a.isLeader).toBe(false);
    expect(log.filter((l) => l.startsWith('fenced:stop'))).toHaveLength(1);
    expect(log.find((l) => l.includes('was it paused?'))).toBeDefined();
    await a.stop();
  });
});
