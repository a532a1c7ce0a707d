// The queue's whole-cluster units (src/runtime/cluster-units.ts): each key reaches its unit, every other key the rest,
// and leadership queues every unit once, so a probe plan or CoreDNS rules a previous leader left are brought to what
// the caches say even when no policy asks for them any more (a restart after the last Managed policy went).
import { describe, expect, it } from '@jest/globals';
import { clusterUnits } from '../../src/runtime/cluster-units.js';
import { DNS_RULES_KEY } from '../../src/controllers/policy/dns-rules.js';
import { PROBE_PLAN_KEY } from '../../src/probe/probe-control.js';

describe('clusterUnits', () => {
  const ran: string[] = [];
  const units = clusterUnits(
    { [PROBE_PLAN_KEY]: async (k) => void ran.push(`plan:${k}`), [DNS_RULES_KEY]: async (k) => void ran.push(`dns:${k}`) },
    async (k) => void ran.push(`rest:${k}`),
  );

  it('queues every unit once at start, with no policy in sight', () => {
    const queued: string[] = [];
    units.start({ add: (k) => queued.push(k) });
    expect(queued.sort()).toEqual([DNS_RULES_KEY, PROBE_PLAN_KEY].sort());
  });

  it("sends a unit's key to its unit and every other key to the rest", async () => {
    const signal = new AbortController().signal;
    for (const k of [PROBE_PLAN_KEY, DNS_RULES_KEY, 'ClusterLoopbackPolicy/tke', 'shop/p', 'constructor']) await units.handle(k, signal);
    expect(ran).toEqual([`plan:${PROBE_PLAN_KEY}`, `dns:${DNS_RULES_KEY}`, 'rest:ClusterLoopbackPolicy/tke', 'rest:shop/p', 'rest:constructor']);
  });
});
